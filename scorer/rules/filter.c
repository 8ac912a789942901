#include "rules/filter.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "units.h"

/* rate above pct percent of link: rate * 100 > link * pct, in 128 bits. */
static bool above(uint64_t rate, uint64_t link, unsigned pct)
{
	return (unsigned __int128)rate * 100 > (unsigned __int128)link * pct;
}

static unsigned percent(uint64_t rate, uint64_t link)
{
	unsigned __int128 p = (unsigned __int128)rate * 100 / link;

	return p > 999 ? 999 : (unsigned)p;
}

static void bits(char *buf, size_t len, uint64_t bytes_per_second)
{
	units_format_bits_rate(buf, len, (double)bytes_per_second * 8.0);
}

uint64_t filter_rate(enum policy_direction dir, const struct traffic *t, const char **which)
{
	uint64_t rx = t->rx.recent > t->rx.average ? t->rx.recent : t->rx.average;
	uint64_t tx = t->tx.recent > t->tx.average ? t->tx.recent : t->tx.average;

	if (dir == POLICY_DIR_RX || (dir != POLICY_DIR_TX && rx >= tx)) {
		*which = "rx";
		return rx;
	}
	*which = "tx";
	return tx;
}

unsigned filter_release_pct(const struct filter_config *cfg)
{
	return cfg->max_utilization_pct > cfg->margin_pct ?
		       cfg->max_utilization_pct - cfg->margin_pct : 0;
}

enum filter_event filter_step(const struct filter_config *cfg, struct filter_held *st,
			      uint64_t rate, uint64_t link, uint64_t now_ns)
{
	uint64_t held;

	if (cfg->max_utilization_pct == 0 || link == 0) {
		bool was = st->over;

		st->over = st->above = false;
		return was ? FILTER_RELEASED : FILTER_SAME;
	}
	st->above = above(rate, link, cfg->max_utilization_pct);
	if (!st->over) {
		if (!st->above)
			return FILTER_SAME;
		st->over = true;
		st->since_ns = now_ns;
		return FILTER_CROSSED;
	}
	held = now_ns > st->since_ns ? now_ns - st->since_ns : 0;
	if (above(rate, link, filter_release_pct(cfg)) || held < cfg->hold_ms * NS_PER_MS)
		return FILTER_SAME;
	st->over = false;
	return FILTER_RELEASED;
}

/* The rule as the node's latest report left it; the numbers only say why. */
static bool check_utilization(const struct filter_config *cfg, enum policy_direction dir,
			      const struct filter_node *n, struct filter_why *why)
{
	const char *which;
	uint64_t rate = filter_rate(dir, n->traffic, &which);
	uint64_t link = n->traffic->link_bytes_per_second;
	char r[32], l[32];

	if (!n->held.over)
		return true;
	why->unresolvable = true;
	bits(r, sizeof(r), rate);
	bits(l, sizeof(l), link);
	if (n->held.above) {
		snprintf(why->reason, sizeof(why->reason), "netsched: %s above %u percent of link",
			 which, cfg->max_utilization_pct);
		snprintf(why->detail, sizeof(why->detail),
			 "%s %s %s is %u%% of %s, above maxUtilization %u%%", n->label, which, r,
			 percent(rate, link), l, cfg->max_utilization_pct);
		return false;
	}
	/* Only configured numbers in the reason, so held nodes group. */
	snprintf(why->reason, sizeof(why->reason),
		 "netsched: was above %u percent of link, held until %u", cfg->max_utilization_pct,
		 filter_release_pct(cfg));
	snprintf(why->detail, sizeof(why->detail),
		 "%s %s %s is %u%% of %s; over maxUtilization %u%% since %llu s ago, held until "
		 "at most %u%% after %llu s", n->label, which, r, percent(rate, link), l,
		 cfg->max_utilization_pct, (unsigned long long)(n->over_for_ns / NS_PER_SEC),
		 filter_release_pct(cfg), (unsigned long long)(cfg->hold_ms / 1000));
	return false;
}

static bool check_bandwidth(const struct filter_node *n, const char *which, uint64_t rate,
			    uint64_t reserved, uint64_t freed, uint64_t ask_bps, bool learned,
			    const char *annotation, struct filter_why *why)
{
	uint64_t link = n->traffic->link_bytes_per_second;
	uint64_t held = units_add_sat(rate, reserved);
	uint64_t used = held > freed ? held - freed : 0;
	uint64_t free_bytes = link > used ? link - used : 0;
	char r[32], l[32], f[32], a[32], res[32];

	if (ask_bps == 0 || (unsigned __int128)ask_bps <= (unsigned __int128)free_bytes * 8)
		return true;
	why->unresolvable = (unsigned __int128)ask_bps > (unsigned __int128)link * 8;
	units_format_bits_rate(a, sizeof(a), (double)ask_bps);
	/* Only the pod's number: the same for every node, so they group. */
	snprintf(why->reason, sizeof(why->reason), learned ?
		 "netsched: free %s below the %s its workload moves" :
		 "netsched: free %s below the %s the pod asks", which, a);
	if (learned)
		annotation = "its workload's learned demand";
	bits(r, sizeof(r), rate);
	bits(l, sizeof(l), link);
	bits(f, sizeof(f), free_bytes);
	if (reserved) {
		bits(res, sizeof(res), reserved);
		/* A label at its longest may cut the annotation's name short. */
		if ((size_t)snprintf(why->detail, sizeof(why->detail),
				     "%s %s %s + %s reserved of %s, free %s, pod asks %s (%s)",
				     n->label, which, r, res, l, f, a, annotation) >= sizeof(why->detail))
			why->detail[sizeof(why->detail) - 1] = '\0';
	} else {
		snprintf(why->detail, sizeof(why->detail), "%s %s %s of %s, free %s, pod asks %s (%s)",
			 n->label, which, r, l, f, a, annotation);
	}
	return false;
}

bool filter_check(const struct filter_config *cfg, enum policy_direction dir,
		  const struct filter_pod *pod, const struct filter_node *node,
		  struct filter_why *why)
{
	why->reason[0] = why->detail[0] = '\0';
	why->unresolvable = false;
	if (!node->traffic || node->traffic->link_bytes_per_second == 0)
		return true;
	if (cfg->max_utilization_pct && !check_utilization(cfg, dir, node, why))
		return false;
	if (!cfg->bandwidth)
		return true;
	return check_bandwidth(node, "rx", node->traffic->rx.average,
			       node->reserved_rx_bytes_per_second, node->freed_rx_bytes_per_second,
			       pod->ingress_bps, pod->learned_ingress, "kubernetes.io/ingress-bandwidth",
			       why) &&
	       check_bandwidth(node, "tx", node->traffic->tx.average,
			       node->reserved_tx_bytes_per_second, node->freed_tx_bytes_per_second,
			       pod->egress_bps, pod->learned_egress, "kubernetes.io/egress-bandwidth",
			       why);
}

bool filter_warn_once(const char *s, size_t len)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seen[FILTER_WARN_SLOTS];
	static unsigned next;
	uint64_t h = hash_fnv1a(s, len) | 1; /* 0 marks an empty slot */
	bool fresh = true;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < FILTER_WARN_SLOTS && fresh; i++)
		fresh = seen[i] != h;
	if (fresh) {
		seen[next] = h;
		next = (next + 1) % FILTER_WARN_SLOTS;
	}
	pthread_mutex_unlock(&lock);
	return fresh;
}
