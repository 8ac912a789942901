#include "rules/fit.h"

#include "units.h"

uint64_t fit_level(enum policy_kind kind, const struct policy_rates *r)
{
	return kind == POLICY_PRESSURE ? policy_pressure(r->rate, r->recent, r->p95) : r->rate;
}

/* (level + demand) / link in thousandths, capped at FIT_COST_CAP. */
static uint32_t cost_of(uint64_t level, uint64_t demand, uint64_t link)
{
	uint64_t used = units_add_sat(level, demand), c;

	if (!link)
		return FIT_COST_CAP;
	/* 64-bit division on every real rate (under 18 PB/s); a 128-bit one
	 * costs several times more, per node and direction. */
	if (used <= UINT64_MAX / 1000u)
		c = used * 1000u / link;
	else
		c = used / link > FIT_COST_CAP / 1000u ? FIT_COST_CAP :
			(uint64_t)((unsigned __int128)used * 1000u / link);
	return c > FIT_COST_CAP ? FIT_COST_CAP : (uint32_t)c;
}

/* Each direction's weight, in thousandths (the header's w_d). */
static void weights(const struct fit_demand *pod, uint32_t *w_rx, uint32_t *w_tx)
{
	uint64_t top = pod->rx > pod->tx ? pod->rx : pod->tx;

	if (!top) {
		*w_rx = *w_tx = 1000;
		return;
	}
	*w_rx = (uint32_t)((unsigned __int128)pod->rx * 1000u / top);
	*w_tx = (uint32_t)((unsigned __int128)pod->tx * 1000u / top);
}

/* What a node of unknown link speed is judged against: the widest known
 * link among the nodes with data, else (or under the relative policy) the
 * busiest node's level plus the pod, in either direction. */
static uint64_t reference_link(enum policy_kind kind, const struct fit_demand *pod,
				const struct policy_node *nodes, size_t n)
{
	uint64_t widest = 0, busiest = 0;

	for (size_t i = 0; i < n; i++) {
		const struct policy_node *p = &nodes[i];
		uint64_t rx, tx;

		if (!p->has_data)
			continue;
		if (kind != POLICY_RELATIVE && p->link_bytes_per_second > widest)
			widest = p->link_bytes_per_second;
		rx = units_add_sat(fit_level(kind, &p->rx), pod->rx);
		tx = units_add_sat(fit_level(kind, &p->tx), pod->tx);
		if (rx > busiest)
			busiest = rx;
		if (tx > busiest)
			busiest = tx;
	}
	return widest ? widest : busiest;
}

/* The node's cost (the header's max_d(w_d x cost_d)) and the level of the
 * direction that set it. */
static void node_cost(enum policy_kind kind, const struct fit_demand *pod, uint32_t w_rx,
		      uint32_t w_tx, uint64_t link, struct policy_node *p)
{
	uint64_t lrx = fit_level(kind, &p->rx), ltx = fit_level(kind, &p->tx);
	uint64_t crx = (uint64_t)cost_of(lrx, pod->rx, link) * w_rx / 1000u;
	uint64_t ctx = (uint64_t)cost_of(ltx, pod->tx, link) * w_tx / 1000u;

	if (crx >= ctx) {
		p->cost_milli = (uint32_t)crx;
		p->pressure = lrx;
	} else {
		p->cost_milli = (uint32_t)ctx;
		p->pressure = ltx;
	}
	p->rate = p->pressure;
}

/* round(10 x (headroom - floor) / (top - floor)), headroom = 1000 - cost,
 * half up; 0 at or below the floor, 10 at or above the top. */
static int stretched_score(uint32_t cost, int64_t floor, int64_t top)
{
	int64_t head = 1000 - (int64_t)cost, span = top - floor;

	if (head <= floor)
		return 0;
	if (head >= top)
		return POLICY_MAX_SCORE;
	return (int)((2 * POLICY_MAX_SCORE * (head - floor) + span) / (2 * span));
}

void fit_score(enum policy_kind kind, const struct fit_demand *pod, struct policy_node *nodes,
	       size_t n)
{
	uint64_t ref = reference_link(kind, pod, nodes, n);
	int64_t floor = 0, best = INT64_MIN, top = 1000;
	uint32_t w_rx, w_tx;

	weights(pod, &w_rx, &w_tx);
	for (size_t i = 0; i < n; i++) {
		struct policy_node *p = &nodes[i];
		uint64_t link = kind != POLICY_RELATIVE && p->link_bytes_per_second ?
					p->link_bytes_per_second : ref;
		int64_t head;

		if (!p->has_data)
			continue;
		if (!link) {
			/* Every node idle and the pod moves nothing known. */
			p->cost_milli = 0;
			p->rate = p->pressure = 0;
			continue;
		}
		node_cost(kind, pod, w_rx, w_tx, link, p);
		head = 1000 - (int64_t)p->cost_milli;
		if (head < floor)
			floor = head;
		if (head > best)
			best = head;
	}
	if (best < 0 && best != INT64_MIN) {
		/* No node fits: ranked among themselves, the least over 10,
		 * down to 0 at one link more. */
		top = best;
		floor = best - 1000;
	} else if (floor < FIT_FLOOR_MILLI) {
		floor = FIT_FLOOR_MILLI;
	}
	for (size_t i = 0; i < n; i++) {
		struct policy_node *p = &nodes[i];

		if (!p->has_data)
			p->score = POLICY_NEUTRAL_SCORE;
		else if (kind == POLICY_PRESSURE && p->dropping)
			p->score = 0; /* it already loses packets (policy.h) */
		else
			p->score = stretched_score(p->cost_milli, floor, top);
	}
}

void fit_score_by(enum policy_kind kind, enum policy_direction dir, const struct fit_demand *pod,
		  struct policy_node *nodes, size_t n)
{
	static const struct fit_demand nothing;

	if (dir == POLICY_DIR_FIT)
		fit_score(kind, pod ? pod : &nothing, nodes, n);
	else
		policy_score(kind, nodes, n);
}

bool fit_fits(const struct fit_demand *pod, bool rx_known, bool tx_known, uint64_t used_rx,
	      uint64_t used_tx, uint64_t link, const char **which)
{
	if (!link)
		return true;
	if (rx_known && pod->rx && units_add_sat(used_rx, pod->rx) > link) {
		if (which)
			*which = "rx";
		return false;
	}
	if (tx_known && pod->tx && units_add_sat(used_tx, pod->tx) > link) {
		if (which)
			*which = "tx";
		return false;
	}
	return true;
}
