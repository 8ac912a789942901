/* The join of the agents' per-pod traffic onto the pods the watch said
 * are bound (podindex.h, "The join"): matching each listed entry to the
 * pod that owns its address on the reporting node, holding the figures to
 * what the node can vouch for, sampling whole windows into workloads, and
 * telling the in-flight pods what the agents measured. */
#include <string.h>

#include "clock.h"
#include "pods/inflight.h"
#include "pods/podindex_int.h"
#include "report.h"
#include "units.h"

enum match {
	MATCH_UNKNOWN,
	MATCH_ELSEWHERE,
	MATCH_NOT_RUNNING,
	MATCH_POD,
};

/* The member of node n that owns one of t's addresses: running, the
 * newest start if several claim it (the others' end was missed). */
static enum match lookup_here(const struct xnode *n, const struct report_pod *t, int32_t *member)
{
	enum match m = MATCH_UNKNOWN;

	*member = NONE;
	for (unsigned k = 0; k < t->n_ips && k < REPORT_MAX_POD_IPS; k++) {
		uint32_t h = ip_hash(&t->ips[k]);

		for (uint32_t at = h & n->tab_mask; n->tab[at].ref != NONE;
		     at = (at + 1) & n->tab_mask) {
			int32_t ref = n->tab[at].ref;
			const struct member *c = &n->m[ref / (int32_t)KUBEPOD_MAX_IPS];

			if (n->tab[at].hash != h ||
			    !report_ip_equal(&c->ips[ref % (int32_t)KUBEPOD_MAX_IPS], &t->ips[k]))
				continue;
			if (!c->running) {
				if (m < MATCH_NOT_RUNNING)
					m = MATCH_NOT_RUNNING;
			} else if (*member == NONE ||
				   c->started_ns > n->m[*member].started_ns) {
				*member = ref / (int32_t)KUBEPOD_MAX_IPS;
				m = MATCH_POD;
			}
		}
	}
	return m;
}

/* Whether some pod elsewhere has one of t's addresses (the global table:
 * asked only for entries the node does not own). */
static bool elsewhere(const struct podindex *x, const struct report_pod *t)
{
	for (unsigned k = 0; k < t->n_ips && k < REPORT_MAX_POD_IPS; k++)
		for (int32_t r = x->ip_buckets[ip_hash(&t->ips[k]) & x->ip_mask]; r != NONE;
		     r = x->pods[IPREF_POD(r)].ip_next[IPREF_K(r)])
			if (report_ip_equal(&x->pods[IPREF_POD(r)].ips[IPREF_K(r)], &t->ips[k]))
				return true;
	return false;
}

/* Keeps member m among the node's PODINDEX_TOP by rx + tx, most first. */
static void top_insert(struct xnode *n, const struct member *m)
{
	uint64_t sum = units_add_sat(m->rx, m->tx);
	unsigned at = n->n_top;

	while (at > 0 && units_add_sat(n->top[at - 1].rx, n->top[at - 1].tx) < sum)
		at--;
	if (at >= PODINDEX_TOP)
		return;
	if (n->n_top < PODINDEX_TOP)
		n->n_top++;
	memmove(&n->top[at + 1], &n->top[at], (n->n_top - 1 - at) * sizeof(n->top[0]));
	n->top[at] = (struct top){ m->pod, m->gen, m->rx, m->tx };
}

/* Whether the pod had run its start-up before a window of covered_ms
 * began. The agent reads pods' counters at most every half window and
 * copies that reading into each report until the next (README.md, "Pods"),
 * so the window ended up to half its length before now. */
static bool settled(const struct member *m, uint64_t covered_ms, uint64_t now)
{
	uint64_t need = PODINDEX_STARTUP_NS + (covered_ms + covered_ms / 2) * NS_PER_MS;

	return m->started_ns && now > m->started_ns && now - m->started_ns >= need;
}

/* The node's window: its longest interface's, in ms. */
static uint64_t node_window_ms(const struct report *r)
{
	uint64_t node = 0;

	for (uint32_t i = 0; i < r->n_ifaces && i < REPORT_MAX_INTERFACES; i++)
		if (r->ifaces[i].traffic.covered_ms > node)
			node = r->ifaces[i].traffic.covered_ms;
	return node;
}

/* Whether a pod's window of covered_ms is whole: as long as the node's
 * (one sample's leeway). A young interface's window starts when it
 * appeared, with its pod: start-up and all. */
static bool whole(uint64_t covered_ms, uint64_t node_ms, const struct report *r)
{
	uint64_t slack = r->sample_interval_ms ? r->sample_interval_ms : 1000;

	return covered_ms + slack >= node_ms;
}

/* Whether the figures (covered_ms, bytes each way, and what they are
 * shared by: 1 for a listed pod) are a new reading of m's interface, and
 * if so remembers them. The agent reads pods every --pod-interval and
 * copies the reading into each report until the next (README.md, "Pods"),
 * so the same figures come again and again: sampled once, a reading is
 * one measurement, as old as when it was first seen. The agent reads at
 * least every half window, so the same figures half a window after they
 * were first seen are a new reading that found them unchanged (an idle
 * pod's zeros). */
static bool new_reading(struct member *m, const struct report_pod *t, uint64_t shared,
			uint64_t node_ms, uint64_t now)
{
	/* A multiply-xorshift mix of the figures: a collision (odds 2^-64)
	 * skips one reading, no more. */
	uint64_t fp = t->rx_bytes;

	fp = (fp ^ t->tx_bytes) * 0x9e3779b97f4a7c15ULL;
	fp = (fp ^ (fp >> 29) ^ t->covered_ms) * 0xbf58476d1ce4e5b9ULL;
	fp = (fp ^ (fp >> 31) ^ shared) * 0x94d049bb133111ebULL;
	fp = (fp ^ (fp >> 32)) | 1;

	if (fp == m->reading && now >= m->read_ns && now - m->read_ns < node_ms / 2 * NS_PER_MS)
		return false;
	m->reading = fp;
	m->read_ns = now;
	return true;
}

/* What a node's agent says of its pods, held to what its node can vouch
 * for (podindex.h): per direction, the pods' figures add up to at most
 * what crossed its NIC, and none is over its link (or, unknown, the
 * cluster's fastest known link). */
struct vouched {
	uint64_t nic_rx, nic_tx;	/* the node's interfaces' rates, bytes a second */
	uint64_t sum_rx, sum_tx;	/* its pods' rates added up, listed and rest */
	uint64_t cap;			/* one pod at most; 0: no link known anywhere */
	struct workload_node node;
};

static uint64_t mul_div(uint64_t v, uint64_t num, uint64_t den)
{
	unsigned __int128 r = (unsigned __int128)v * num / (den ? den : 1);

	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* One pod's rate v, in a direction where the pods add up to sum and the
 * NIC counted nic, as its node vouches for it. */
static uint64_t vouch_rate(uint64_t v, uint64_t nic, uint64_t sum, uint64_t cap)
{
	if (sum > nic)
		v = mul_div(v, nic, sum);
	return cap && v > cap ? cap : v;
}

static void sample(struct podindex *x, const struct member *m, const struct vouched *v,
		   uint64_t rx, uint64_t tx, uint64_t now)
{
	workload_sample_from(x->wl, m->workload, pod_key(m), v->node,
			     vouch_rate(rx, v->nic_rx, v->sum_rx, v->cap),
			     vouch_rate(tx, v->nic_tx, v->sum_tx, v->cap), now);
}

/* The node's NIC, its pods' sums and the cap of one pod, from report r;
 * says so (a line a second) when the pods claim more than the NIC. */
static void vouch_figures(struct podindex *x, const struct report *r, struct vouched *v,
			  uint64_t now)
{
	uint64_t link = report_node_link(r);

	/* Rates, each over its own covered time, not bytes: a sample the
	 * agent dropped from the NIC's window (a spike over twice the link,
	 * as a starved agent's late sample looks) but kept in a pod's took
	 * bytes from the NIC alone, and scaled every pod of the node down to
	 * nearly nothing (tests/k8s/test_k8s_weight.sh on a busy machine). */
	v->nic_rx = v->nic_tx = 0;
	for (uint32_t i = 0; i < r->n_ifaces && i < REPORT_MAX_INTERFACES; i++) {
		v->nic_rx = units_add_sat(v->nic_rx, r->ifaces[i].traffic.rx.average);
		v->nic_tx = units_add_sat(v->nic_tx, r->ifaces[i].traffic.tx.average);
	}
	v->sum_rx = r->pods_rest.rx.average;
	v->sum_tx = r->pods_rest.tx.average;
	for (uint32_t e = 0; e < r->n_pods && e < REPORT_MAX_PODS; e++) {
		v->sum_rx = units_add_sat(v->sum_rx, r->pods[e].rx.average);
		v->sum_tx = units_add_sat(v->sum_tx, r->pods[e].tx.average);
	}
	v->cap = link ? link : x->link_ceiling;
	if (v->sum_rx > v->nic_rx || v->sum_tx > v->nic_tx) {
		bool rx = v->sum_rx > v->nic_rx;
		uint64_t sum = rx ? v->sum_rx : v->sum_tx, nic = rx ? v->nic_rx : v->nic_tx;
		char a[32], b[32];

		x->st.nic_scaled++;
		units_format_bytes_rate(a, sizeof(a), (double)sum);
		units_format_bytes_rate(b, sizeof(b), (double)nic);
		log_limited(&x->nic_log, now, NS_PER_SEC, LOG_LVL_INFO, "podindex",
			    "%s: pods' %s %s exceeds its NIC's %s; pod figures scaled to %.1f%% (traffic "
			    "between its own pods, or figures it cannot vouch for)", r->node,
			    rx ? "rx" : "tx", a, b, (double)nic * 100.0 / (double)sum);
	}
}

/* When every listed entry matched: the running pods the list left out,
 * if they are exactly the rest the agent counted, each at the rest's
 * average (the agent lists the busiest; these are lighter). */
static void sample_unlisted(struct podindex *x, struct xnode *n, const struct report *r,
			    const struct vouched *v, size_t matched, uint64_t node_ms, uint64_t now)
{
	const struct report_pod *rest = &r->pods_rest;
	size_t left = n->running > matched ? n->running - matched : 0;
	uint64_t rx, tx;

	if (!left || r->pods_seen < r->n_pods || left != r->pods_seen - r->n_pods)
		return;
	rx = rest->rx.average / left;
	tx = rest->tx.average / left;
	for (uint32_t i = 0; i < n->pods; i++) {
		struct member *m = &n->m[i];

		if (!m->running || m->joined == n->stamp)
			continue;
		m->rx = rx;
		m->tx = tx;
		if (m->workload != NONE && whole(rest->covered_ms, node_ms, r) &&
		    settled(m, rest->covered_ms, now) && new_reading(m, rest, left, node_ms, now))
			sample(x, m, v, rx, tx, now);
	}
}

/* The listed pods of a report that may still be in flight, copied out of
 * the index so they are told to the in-flight pods without its lock. */
struct measured {
	size_t n;
	struct inflight_measure m[REPORT_MAX_PODS];
	char uid[REPORT_MAX_PODS][POD_UID_MAX];
};

/* Adds member m, measured for covered_ms, if it may still be in flight:
 * it has run for less than horizon (it was bound before it ran). */
static void measured_add(struct measured *out, const struct podindex *x, const struct member *m,
			 uint64_t covered_ms, uint64_t horizon, uint64_t now)
{
	const struct xpod *p = &x->pods[m->pod];

	if (!horizon || !covered_ms || out->n >= REPORT_MAX_PODS || !m->started_ns ||
	    (now > m->started_ns && now - m->started_ns >= horizon))
		return;
	memcpy(out->uid[out->n], p->uid, p->uid_len);
	out->m[out->n] = (struct inflight_measure){ out->uid[out->n], p->uid_len, covered_ms };
	out->n++;
}

void podindex_join(struct podindex *x, const struct report *r, uint64_t now_ns)
{
	struct measured seen;
	uint64_t horizon = x ? inflight_horizon_ns(x->cfg.inflight) : 0;
	size_t len = strnlen(r->node, sizeof(r->node)), matched = 0;
	uint64_t node_ms = node_window_ms(r);
	uint64_t sum_rx = r->pods_rest.rx.average, sum_tx = r->pods_rest.tx.average;
	struct xnode *n = NULL;
	struct vouched v;
	int32_t node;

	if (!x || !r->has_pods)
		return;
	seen.n = 0;
	pthread_mutex_lock(&x->lock);
	node = podindex_find_node(x, r->node, len, hash32(r->node, len));
	if (node != NONE && podindex_node_table(&x->nodes[node]) == 0) {
		n = &x->nodes[node];
		n->stamp++;
		n->n_top = 0;
		vouch_figures(x, r, &v, now_ns);
		v.node = (struct workload_node){ node, n->gen };
		/* It still vouches for what it measured before (workload.h). */
		workload_vouch(x->wl, v.node, now_ns);
	}
	for (uint32_t e = 0; e < r->n_pods && e < REPORT_MAX_PODS; e++) {
		const struct report_pod *t = &r->pods[e];
		enum match how = MATCH_UNKNOWN;
		int32_t i = NONE;
		struct member *m;
		bool all;

		sum_rx = units_add_sat(sum_rx, t->rx.average);
		sum_tx = units_add_sat(sum_tx, t->tx.average);
		if (n)
			how = lookup_here(n, t, &i);
		if (how == MATCH_NOT_RUNNING) {
			x->st.not_running++;
			continue;
		}
		if (how == MATCH_UNKNOWN) {
			if (elsewhere(x, t))
				x->st.wrong_node++;
			else
				x->st.unknown_ip++;
			continue;
		}
		x->st.matched++;
		matched++;
		m = &n->m[i];
		m->rx = t->rx.average;
		m->tx = t->tx.average;
		m->joined = n->stamp;
		top_insert(n, m);
		/* Within a sample of the node's window is all of it, as for
		 * learning. */
		all = whole(t->covered_ms, node_ms, r);
		measured_add(&seen, x, m, all ? node_ms : t->covered_ms, horizon, now_ns);
		if (m->workload != NONE && all &&
		    settled(m, t->covered_ms, now_ns) && new_reading(m, t, 1, node_ms, now_ns))
			sample(x, m, &v, m->rx, m->tx, now_ns);
	}
	if (n) {
		if (matched == r->n_pods)
			sample_unlisted(x, n, r, &v, matched, node_ms, now_ns);
		n->reported_ns = now_ns ? now_ns : 1;
		n->pod_rx = vouch_rate(sum_rx, v.nic_rx, v.sum_rx, 0);
		n->pod_tx = vouch_rate(sum_tx, v.nic_tx, v.sum_tx, 0);
		n->pods_seen = r->pods_seen;
		n->link = report_node_link(r);
	}
	pthread_mutex_unlock(&x->lock);
	if (seen.n)
		inflight_measured(x->cfg.inflight, r->node, len, node_ms, seen.m, seen.n, now_ns);
}

