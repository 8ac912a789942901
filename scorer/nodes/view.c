#include "nodes/view.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pods/moves.h"
#include "pods/podweight.h"
#include "prom/prom.h"
#include "rules/fit.h"
#include "nodes/table.h"
#include "units.h"

/* One direction's doubt (podweight.h): what unknown in-flight pods take of
 * what the node's level and the weighed pods leave of its link. */
static uint64_t doubt(const struct view_sources *s, const struct traffic_rates *r, uint64_t weighed,
		      uint32_t unknown_milli, uint64_t link)
{
	uint64_t level = r->recent > r->average ? r->recent : r->average;

	return podweight_doubt(s->weights.cfg.doubt_pct, link, units_add_sat(level, weighed),
			       unknown_milli);
}

/* The in-flight weights plus the doubt of the unknown pods among them. */
static void add_doubt(const struct view_sources *s, struct view_node *v)
{
	struct inflight_load *l = &v->inflight;
	uint64_t link = v->traffic.link_bytes_per_second;

	if (!l->unknown_rx_milli && !l->unknown_tx_milli)
		return;
	if (!link)
		link = atomic_load_explicit(&s->weights.reference_link, memory_order_relaxed);

	v->doubt_rx = doubt(s, &v->traffic.rx, l->rx_bytes_per_second, l->unknown_rx_milli, link);
	v->doubt_tx = doubt(s, &v->traffic.tx, l->tx_bytes_per_second, l->unknown_tx_milli, link);
	l->rx_bytes_per_second = units_add_sat(l->rx_bytes_per_second, v->doubt_rx);
	l->tx_bytes_per_second = units_add_sat(l->tx_bytes_per_second, v->doubt_tx);
}

static uint64_t at_most(uint64_t v, uint64_t cap)
{
	return v < cap ? v : cap;
}

/* Pods in flight make a node at most full: whatever they declare, and
 * whichever path counted them before its link was known (the watch's
 * first list, a pod bound before any report), they add no more than the
 * node's link (0: unknown, nothing to cap by). */
static void cap_at_link(struct inflight_load *l, uint64_t link)
{
	if (!link)
		return;
	l->rx_bytes_per_second = at_most(l->rx_bytes_per_second, link);
	l->tx_bytes_per_second = at_most(l->tx_bytes_per_second, link);
	l->reserved_rx_bytes_per_second = at_most(l->reserved_rx_bytes_per_second, link);
	l->reserved_tx_bytes_per_second = at_most(l->reserved_tx_bytes_per_second, link);
}

/* What one view_get_many() call fills, for the lookups' callbacks. */
struct batch {
	const struct view_sources *s;
	uint64_t now_ns;
	struct view_node *out;
};

static void got_inflight(size_t i, const struct inflight_load *load, void *ctx)
{
	struct batch *b = ctx;

	b->out[i].inflight = *load;
}

/* A move's reservation (moves.h) counts as a pod in flight that declared
 * its rates: in the weights and held from the bandwidth filter. */
static void got_reserved(size_t i, uint64_t rx, uint64_t tx, void *ctx)
{
	struct batch *b = ctx;
	struct view_node *v = &b->out[i];
	struct inflight_load *l = &v->inflight;

	v->reserved_rx = rx;
	v->reserved_tx = tx;
	l->rx_bytes_per_second = units_add_sat(l->rx_bytes_per_second, rx);
	l->tx_bytes_per_second = units_add_sat(l->tx_bytes_per_second, tx);
	l->reserved_rx_bytes_per_second = units_add_sat(l->reserved_rx_bytes_per_second, rx);
	l->reserved_tx_bytes_per_second = units_add_sat(l->reserved_tx_bytes_per_second, tx);
}

/* Straight from the table's node into the view, under its lock: no copy
 * of the node in between. */
static void got_node(size_t i, const struct table_node *tn, void *ctx)
{
	struct batch *b = ctx;
	struct view_node *v = &b->out[i];
	uint64_t age;

	v->known = true;
	v->clock_skew_ms = tn->clock_skew_ms;
	v->reports = tn->reports;
	/* The figures' age, not the report's: a fresh report that says its
	 * NIC could not be read carries no fresh data (neutral, not idle).
	 * One with no figures at all shows the report's age. */
	age = table_node_data_age_ns(tn, b->now_ns);
	v->age_ns = age == UINT64_MAX ? table_node_age_ns(tn, b->now_ns) : age;
	if (age > b->s->stale_after_ns)
		return;
	v->source = VIEW_AGENT;
	v->traffic = tn->traffic;
	v->held = tn->held;
	if (tn->held.over && b->now_ns > tn->held.since_ns)
		v->over_for_ns = b->now_ns - tn->held.since_ns;
	memcpy(v->label, tn->ifaces_label, sizeof(v->label));
}

void view_get_many(struct view_sources *s, const struct namekey *keys, size_t n, const char *uid,
		   size_t uid_len, uint64_t now_ns, struct view_node *out)
{
	struct batch b = { s, now_ns, out };
	uint64_t rx, tx, age;

	memset(out, 0, n * sizeof(*out));
	/* The first nodes are fetched while the in-flight pods are looked
	 * up; table_get_each() fetches the others ahead itself. */
	for (size_t i = 0; i < n && i < TABLE_PREFETCH_AHEAD; i++)
		table_prefetch(s->table, &keys[i]);
	inflight_get_each(s->inflight, keys, n, uid, uid_len, got_inflight, &b);
	moves_reserved_each(s->moves, keys, n, now_ns, got_reserved, &b);
	table_get_each(s->table, keys, n, got_node, &b);
	for (size_t i = 0; i < n; i++) {
		struct view_node *v = &out[i];

		cap_at_link(&v->inflight, v->traffic.link_bytes_per_second);
		if (v->source != VIEW_AGENT && s->prom &&
		    prom_get(s->prom, keys[i].s, keys[i].len, now_ns, &rx, &tx, &age)) {
			v->source = VIEW_PROMETHEUS;
			v->traffic.rx.average = rx;
			v->traffic.tx.average = tx;
			v->age_ns = age;
			snprintf(v->label, sizeof(v->label), "prometheus");
		}
		if (v->source != VIEW_NONE)
			add_doubt(s, v);
	}
}

void view_get(struct view_sources *s, const char *name, size_t len, const char *uid, size_t uid_len,
	      uint64_t now_ns, struct view_node *out)
{
	struct namekey key;

	if (len == 0 || len > NODENAME_MAX_LEN) {
		memset(out, 0, sizeof(*out));
		return;
	}
	key = namekey_of(name, len);
	view_get_many(s, &key, 1, uid, uid_len, now_ns, out);
}

/* One direction's rates with the in-flight pods added; a source without
 * recent or p95 (Prometheus, an older agent) in either direction leaves
 * them 0 and the in-flight share alone, which the average carries. */
static struct policy_rates with_inflight(const struct traffic_rates *r, uint64_t inflight,
					 bool recent, bool p95)
{
	return (struct policy_rates){
		units_add_sat(r->average, inflight),
		recent ? units_add_sat(r->recent, inflight) : 0,
		p95 ? units_add_sat(r->p95, inflight) : 0,
	};
}

void view_policy_input(const struct view_sources *s, const struct view_node *v, struct policy_node *out)
{
	const struct traffic *t = &v->traffic;
	bool recent = t->rx.recent || t->tx.recent, p95 = t->rx.p95 || t->tx.p95;

	memset(out, 0, sizeof(*out));
	if (v->source == VIEW_NONE)
		return;
	out->has_data = true;
	out->rx = with_inflight(&t->rx, v->inflight.rx_bytes_per_second, recent, p95);
	out->tx = with_inflight(&t->tx, v->inflight.tx_bytes_per_second, recent, p95);
	/* The other directions judge one figure of the node. */
	out->rate = policy_rate(s->direction, out->rx.rate, out->tx.rate);
	out->recent = policy_rate(s->direction, out->rx.recent, out->tx.recent);
	out->p95 = policy_rate(s->direction, out->rx.p95, out->tx.p95);
	out->drops = units_add_sat(units_add_sat(t->rx_dropped, t->rx_missed), t->tx_dropped);
	out->dropping = policy_dropping(out->drops, t->covered_ms, s->max_drops_per_second);
	out->link_bytes_per_second = t->link_bytes_per_second;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct view_entry *)a)->name, ((const struct view_entry *)b)->name);
}

long view_list(struct view_sources *s, uint64_t now_ns, struct view_entry **out)
{
	size_t cap = table_capacity(s->table), n, m = 0, w = 0;
	struct table_node *nodes = malloc(cap * sizeof(*nodes));
	char(*names)[NODENAME_MAX_LEN + 1] = calloc(cap, sizeof(*names));
	struct view_entry *rows = calloc(2 * cap + 1, sizeof(*rows));

	if (!nodes || !names || !rows) {
		free(nodes);
		free(names);
		free(rows);
		return -ENOMEM;
	}
	n = table_snapshot(s->table, nodes, cap);
	for (size_t i = 0; i < n; i++)
		memcpy(rows[i].name, nodes[i].name, sizeof(rows[i].name));
	if (s->prom)
		m = prom_nodes(s->prom, now_ns, names, cap);
	for (size_t i = 0; i < m && i < cap; i++)
		snprintf(rows[n + i].name, sizeof(rows[n + i].name), "%s", names[i]);
	n += m < cap ? m : cap;
	qsort(rows, n, sizeof(*rows), by_name);
	for (size_t i = 0; i < n; i++)
		if (!w || strcmp(rows[w - 1].name, rows[i].name))
			rows[w++] = rows[i];
	for (size_t i = 0; i < w; i++)
		view_get(s, rows[i].name, strlen(rows[i].name), NULL, 0, now_ns, &rows[i].v);
	free(nodes);
	free(names);
	*out = rows;
	return (long)w;
}

int view_count(struct view_sources *s, uint64_t now_ns, struct view_counts *out)
{
	struct view_entry *rows;
	long n = view_list(s, now_ns, &rows);

	memset(out, 0, sizeof(*out));
	if (n < 0)
		return (int)n;
	for (long i = 0; i < n; i++) {
		const struct view_node *v = &rows[i].v;

		if (v->source == VIEW_AGENT)
			out->agent++;
		else if (v->source == VIEW_PROMETHEUS)
			out->prometheus++;
		else
			out->none++;
		if (v->known && v->source != VIEW_AGENT)
			out->stale++;
	}
	free(rows);
	return 0;
}

size_t view_count_agents(struct view_sources *s, uint64_t now_ns)
{
	/* The same rule as view_get(): fresh while age <= stale_after. */
	return table_count_fresh(s->table, now_ns, s->stale_after_ns);
}

const char *view_source_name(enum view_source src)
{
	switch (src) {
	case VIEW_AGENT:
		return "agent";
	case VIEW_PROMETHEUS:
		return "prometheus";
	case VIEW_NONE:
	default:
		return "none";
	}
}

long view_list_scored(struct view_sources *s, uint64_t now_ns, struct view_entry **out,
		      struct policy_node **scores)
{
	struct view_entry *rows = NULL;
	struct policy_node *pn;
	long n = view_list(s, now_ns, &rows);

	if (n < 0)
		return n;
	pn = calloc((size_t)n + 1, sizeof(*pn));
	if (!pn) {
		free(rows);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++)
		view_policy_input(s, &rows[i].v, &pn[i]);
	fit_score_by(s->policy, s->direction, NULL, pn, (size_t)n);
	*out = rows;
	*scores = pn;
	return n;
}

bool view_ready(struct view_sources *s, uint64_t now_ns, size_t *fresh)
{
	uint64_t up = now_ns > s->started_mono_ns ? now_ns - s->started_mono_ns : 0;

	*fresh = view_count_agents(s, now_ns);
	return *fresh > 0 || up >= s->warmup_ns;
}

/* The widest link and the busiest rate among fresh nodes. */
struct reference {
	uint64_t now_ns, stale_after_ns;
	uint64_t link, busiest;
};

static void add_to_reference(const struct table_node *n, void *ctx)
{
	struct reference *r = ctx;
	const struct traffic *t = &n->traffic;

	if (table_node_age_ns(n, r->now_ns) > r->stale_after_ns)
		return;
	if (t->link_bytes_per_second > r->link)
		r->link = t->link_bytes_per_second;
	r->busiest = t->rx.average > r->busiest ? t->rx.average : r->busiest;
	r->busiest = t->rx.recent > r->busiest ? t->rx.recent : r->busiest;
	r->busiest = t->tx.average > r->busiest ? t->tx.average : r->busiest;
	r->busiest = t->tx.recent > r->busiest ? t->tx.recent : r->busiest;
}

void view_reference_refresh(struct view_sources *s, uint64_t now_ns)
{
	struct reference r = { .now_ns = now_ns, .stale_after_ns = s->stale_after_ns };

	table_each(s->table, add_to_reference, &r);
	atomic_store(&s->weights.reference_link, r.link ? r.link : r.busiest);
}
