#include "serve/extender.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "parse/extreq.h"
#include "parse/bwannot.h"
#include "parse/podlabel.h"
#include "rules/filter.h"
#include "rules/fit.h"
#include "pods/inflight.h"
#include "pods/moves.h"
#include "pods/workload.h"
#include "log.h"
#include "nodename.h"
#include "pods/podweight.h"
#include "serve/reply.h"
#include "scratch.h"
#include "scorer.h"
#include "units.h"
#include "nodes/view.h"

/* A reply holds at most the request's names or node objects plus this much
 * per node ({"Host":"","Score":10}, separators, a filter reason), so its
 * size is bounded by the request's; the cap only stops a bug. */
#define EXT_REPLY_PER_NODE 160u
#define EXT_REPLY_FIXED 1024u
_Static_assert(FILTER_REASON_MAX + 8 <= EXT_REPLY_PER_NODE,
	       "a filter reason (plain ASCII: no escapes) fits a node's share of the reply");
/* A debug line per node, for this many nodes of a decision. */
#define EXT_DEBUG_NODES 100u

static struct log_limit bad_request_log;
static struct log_limit busy_log;

/* Answers a request that did not parse (rc, err): 400, or 500 when memory
 * ran out, 503 when the request memory budget is full. */
static void answer_parse_error(struct scorer *s, const char *verb, int rc, const char *err,
			       struct reply *out)
{
	unsigned long bad;

	if (rc == -ENOMEM) {
		log_error("ext", "%s: %s", verb, err);
		reply_error(500, err, out);
		return;
	}
	if (rc == -EBUSY) {
		/* Not the client's fault: the budget is full (http.h). */
		atomic_fetch_add(&s->counters.http_busy, 1);
		log_limited(&busy_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ext", "%s: %s",
			    verb, err);
		reply_error(503, err, out);
		return;
	}
	/* A misconfigured client repeats the same mistake at scheduling
	 * speed: count them all, log a line a second. */
	bad = atomic_fetch_add(&s->counters.requests_bad, 1) + 1;
	log_limited(&bad_request_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ext",
		    "%s: bad request (%lu so far): %s", verb, bad, err);
	reply_error(400, err, out);
}

/* Parses the request, or answers it. 0 when the caller goes on with *rq. */
static int parse(struct scorer *s, const char *verb, const char *body, size_t len,
		 struct extreq *rq, struct reply *out)
{
	char err[256];
	int rc = extreq_parse(body, len, &s->limits.request, rq, err, sizeof(err));

	if (rc)
		answer_parse_error(s, verb, rc, err, out);
	return rc;
}

static const char *printable(const struct extreq_str *v, char *out, size_t cap)
{
	return log_printable(v->s, v->len, out, cap);
}

/* "namespace/name" of the pod (podlabel.h). */
static const char *pod_id(const struct extreq *rq, char *out, size_t cap)
{
	return podlabel_format(rq->pod_namespace.s, rq->pod_namespace.len, rq->pod_name.s,
			       rq->pod_name.len, out, cap);
}

/* The view of a requested node for this pod (view.h: never its own
 * in-flight share). */
static void node_view(struct scorer *s, const struct extreq *rq, const struct extreq_node *node,
		      uint64_t now, struct view_node *v)
{
	view_get(&s->view, node->name, node->name_len, rq->pod_uid.s, rq->pod_uid.len, now, v);
}

/* The rebalancer's moves of the request pod's workload (moves.h): where
 * its pods are held off and what room it reserved. None (n 0) when
 * nothing is being moved, at the cost of one atomic read. */
static void pod_moves(struct scorer *s, const struct extreq *rq, uint64_t now,
		      struct moves_mine *out)
{
	struct kubepod_str ns = { rq->pod_namespace.s, rq->pod_namespace.len };
	struct kubepod_str name = { rq->pod_name.s, rq->pod_name.len };
	char label[WORKLOAD_LABEL_MAX + 1];
	struct workload_key k;

	out->n = 0;
	if (!moves_active(s->view.moves) || workload_key_of(&ns, &rq->owner, &name, &k))
		return;
	workload_label(&k, label, sizeof(label));
	moves_mine(s->view.moves, label, strlen(label), now, out);
}

static bool is_node(const struct moves_mine_row *r, bool from, const struct namekey *key)
{
	const char *name = from ? r->from : r->to;

	return (from ? r->from_hash : r->to_hash) == key->hash && strlen(name) == key->len &&
	       !memcmp(name, key->s, key->len);
}

/* The move of the pod's workload that holds it off node key, or NULL. */
static const struct moves_mine_row *held_by(const struct moves_mine *mine,
					    const struct namekey *key)
{
	for (size_t j = 0; mine && j < mine->n; j++)
		if (is_node(&mine->rows[j], true, key))
			return &mine->rows[j];
	return NULL;
}

static uint64_t less_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A pod of the moved workload is never judged against its own
 * reservation (moves.h), as it is never judged against its own in-flight
 * share (view.h). */
static void unreserve_mine(const struct moves_mine *mine, const struct namekey *key,
			   struct view_node *v)
{
	for (size_t j = 0; mine && j < mine->n; j++) {
		const struct moves_mine_row *r = &mine->rows[j];
		uint64_t rx = r->rx < v->reserved_rx ? r->rx : v->reserved_rx;
		uint64_t tx = r->tx < v->reserved_tx ? r->tx : v->reserved_tx;

		if (!is_node(r, false, key) || (!rx && !tx))
			continue;
		v->reserved_rx -= rx;
		v->reserved_tx -= tx;
		v->inflight.rx_bytes_per_second = less_sat(v->inflight.rx_bytes_per_second, rx);
		v->inflight.tx_bytes_per_second = less_sat(v->inflight.tx_bytes_per_second, tx);
		v->inflight.reserved_rx_bytes_per_second =
			less_sat(v->inflight.reserved_rx_bytes_per_second, rx);
		v->inflight.reserved_tx_bytes_per_second =
			less_sat(v->inflight.reserved_tx_bytes_per_second, tx);
	}
}

/* At node i, a multiple of VIEW_BATCH: the views of nodes i.. (as many as
 * VIEW_BATCH, or the rest) into v[], as node_view() would give them, with
 * one chunk's lookups at once (view_get_many()); the pod's own
 * reservations (mine, may be NULL) taken out. */
static void node_views(struct scorer *s, const struct extreq *rq, size_t i, uint64_t now,
		       const struct moves_mine *mine, struct view_node v[VIEW_BATCH])
{
	/* Zeroed: with a fourth caller GCC no longer sees that n >= 1 fills
	 * what is read (-Wmaybe-uninitialized); 1.5 KB per 64 nodes. */
	struct namekey keys[VIEW_BATCH] = { 0 };
	size_t n = rq->n - i < VIEW_BATCH ? rq->n - i : VIEW_BATCH;

	for (size_t k = 0; k < n; k++)
		keys[k] = namekey_of(rq->nodes[i + k].name, rq->nodes[i + k].name_len);
	view_get_many(&s->view, keys, n, rq->pod_uid.s, rq->pod_uid.len, now, v);
	/* Rare (a move of this very workload): hashed again. */
	for (size_t k = 0; mine && mine->n && k < n; k++) {
		struct namekey key = namekey_of(rq->nodes[i + k].name, rq->nodes[i + k].name_len);

		unreserve_mine(mine, &key, &v[k]);
	}
}

/* Whether requested node i is held off for the pod (mine). */
static const struct moves_mine_row *node_held(const struct moves_mine *mine,
					      const struct extreq_node *node)
{
	struct namekey key;

	if (!mine || !mine->n)
		return NULL;
	key = namekey_of(node->name, node->name_len);
	return held_by(mine, &key);
}

/* The policy's input for every requested node (view.h decides where the
 * data comes from, in-flight pods included). Returns how many have data. */
static size_t lookup(struct scorer *s, const struct extreq *rq, uint64_t now,
		     const struct moves_mine *mine, struct policy_node *pn)
{
	struct view_node v[VIEW_BATCH];
	size_t fresh = 0;

	for (size_t i = 0; i < rq->n; i++) {
		if (i % VIEW_BATCH == 0)
			node_views(s, rq, i, now, mine, v);
		view_policy_input(&s->view, &v[i % VIEW_BATCH], &pn[i]);
		fresh += pn[i].has_data;
	}
	return fresh;
}

/* Latency from start to now into h; a clock that went backwards (only a
 * test's fake one can) counts as zero. */
static void observe(struct scorer *s, struct registry_histogram *h, uint64_t start)
{
	uint64_t end = s->now_ns();

	registry_observe(h, end > start ? end - start : 0);
}

/* Scores 0..10 as JSON integers; clamped again so no policy bug can send
 * the scheduler a value it does not clamp itself. */
static int clamp_score(int score)
{
	return score < 0 ? 0 : score > POLICY_MAX_SCORE ? POLICY_MAX_SCORE : score;
}

/* Appends ,{"Host":"name","Score":7} in one piece: thousands a reply, and
 * a fragment a call was a fifth of a 5,000-name prioritize (perf). The name
 * passed nodename_check() (extreq.c), so it needs no escaping. */
static void put_host_score(struct buf *b, bool first, const struct extreq_node *node, int score)
{
	static const char head[] = ",{\"Host\":\"", mid[] = "\",\"Score\":";
	char line[sizeof(head) + NODENAME_MAX_LEN + sizeof(mid) + 4];
	size_t k = 0;

	if (node->name_len > NODENAME_MAX_LEN) {	/* never: extreq.c refuses it */
		b->failed = true;
		return;
	}
	score = clamp_score(score);
	memcpy(line, head + first, sizeof(head) - 1 - first);
	k += sizeof(head) - 1 - first;
	memcpy(line + k, node->name, node->name_len);
	k += node->name_len;
	memcpy(line + k, mid, sizeof(mid) - 1);
	k += sizeof(mid) - 1;
	if (score >= 10)
		line[k++] = (char)('0' + score / 10);
	line[k++] = (char)('0' + score % 10);
	line[k++] = '}';
	buf_append(b, line, k);
}

/* Appends ,"name" in one piece (as put_host_score()). */
static void put_name(struct buf *b, bool first, const struct extreq_node *node)
{
	char line[NODENAME_MAX_LEN + 4];
	size_t k = 0;

	if (node->name_len > NODENAME_MAX_LEN) {	/* never: extreq.c refuses it */
		b->failed = true;
		return;
	}
	if (!first)
		line[k++] = ',';
	line[k++] = '"';
	memcpy(line + k, node->name, node->name_len);
	k += node->name_len;
	line[k++] = '"';
	buf_append(b, line, k);
}

static size_t reply_max(size_t body_len, size_t n)
{
	return body_len + n * EXT_REPLY_PER_NODE + EXT_REPLY_FIXED;
}

/* What a reply naming (or, in full mode, echoing) every requested node
 * takes, with per_node bytes of its own for each: its buffer starts that
 * large (buf_start()), so it never grows by copying. */
static size_t reply_hint(const struct extreq *rq, size_t per_node)
{
	size_t n = EXT_REPLY_FIXED;

	for (size_t i = 0; i < rq->n; i++)
		n += (rq->nodes[i].raw ? rq->nodes[i].raw_len : rq->nodes[i].name_len) + per_node;
	return n;
}

/* The pod's bandwidth annotation v of key k (bwannot.h; NULL: none), in
 * bits per second; a malformed one is ignored (it never fails the pod) and
 * logged once per distinct value. */
static uint64_t pod_bandwidth(const struct extreq *rq, const struct extreq_str *v,
			      const struct bwannot_key *k)
{
	char pod[200], value[65];
	uint64_t bps;

	if (!v->s || !k)
		return 0;
	/* Escapes are not decoded: a bandwidth never needs one. */
	if (bwannot_parse(k, v->s, v->len, &bps) == 0)
		return bps;
	/* Once per distinct value (a pod is retried every second), and a line
	 * a second at most (a client can send distinct values at will). */
	static struct log_limit limit;

	if (filter_warn_once(v->s, v->len))
		log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ext",
			    "pod %s: %s \"%s\" is not %s: ignored", pod_id(rq, pod, sizeof(pod)),
			    k->key, printable(v, value, sizeof(value)),
			    k->unit == BWANNOT_MBIT ? "a number of Mbit/s such as 100 (Kube-OVN's unit)" :
						      "a quantity such as 10M or 1G (bits per second)");
	return 0;
}

/* The request pod's declared ingress and egress, bits per second. */
static void pod_declared(const struct extreq *rq, uint64_t *ingress_bps, uint64_t *egress_bps)
{
	*ingress_bps = pod_bandwidth(rq, &rq->ingress_bandwidth, rq->ingress_key);
	*egress_bps = pod_bandwidth(rq, &rq->egress_bandwidth, rq->egress_key);
}

/* The pod as podweight.h reads it; ns and name hold its strings. Absurd
 * owner references (extreq.h) are logged, a line a second at most. */
static void pod_of(const struct extreq *rq, uint64_t ingress_bps, uint64_t egress_bps,
		   struct kubepod_str *ns, struct kubepod_str *name, struct podweight_pod *out)
{
	static struct log_limit limit;
	char pod[200];

	*ns = (struct kubepod_str){ rq->pod_namespace.s, rq->pod_namespace.len };
	*name = (struct kubepod_str){ rq->pod_name.s, rq->pod_name.len };
	*out = (struct podweight_pod){ ingress_bps, egress_bps, ns, name, &rq->owner, NULL };
	if (rq->owner_absurd[0])
		log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ext",
			    "pod %s: owner references ignored: %s; it weighs as a pod of no known "
			    "workload", pod_id(rq, pod, sizeof(pod)), rq->owner_absurd);
}

/* What the request's pod weighs in flight and moves, per direction
 * (podweight.h), from its declared bandwidth; label (INFLIGHT_LABEL_MAX + 1
 * bytes) gets "namespace/name" and stays the pod's label. The source of
 * each direction goes to *rx_from and *tx_from. */
static void weigh(struct scorer *s, const struct extreq *rq, uint64_t ingress_bps,
		  uint64_t egress_bps, char *label, struct inflight_pod *out,
		  enum podweight_source *rx_from, enum podweight_source *tx_from)
{
	struct kubepod_str ns, name;
	struct podweight_pod pw;

	pod_of(rq, ingress_bps, egress_bps, &ns, &name, &pw);
	pw.label = pod_id(rq, label, INFLIGHT_LABEL_MAX + 1);
	podweight_of(&s->view.weights, &pw, out, rx_from, tx_from);
}

/* Counts the pod, weighing pod (weigh()), in flight on nodes[0..n)
 * (inflight.h). A pod without a UID (hand-made requests) is not counted. */
static void record(struct scorer *s, const struct extreq *rq, const struct inflight_pod *pod,
		   const struct inflight_name *nodes, size_t n, uint64_t now)
{
	int rc;

	if (!s->view.inflight || !rq->pod_uid.len || n == 0)
		return;
	rc = inflight_assume(s->view.inflight, rq->pod_uid.s, rq->pod_uid.len, pod, nodes, n, now);
	if (rc == -ENOSPC)
		log_debug("ext", "%s: not counted in flight: the in-flight table is full", pod->label);
	else if (rc && rc != -EALREADY)
		log_debug("ext", "%s: not counted in flight: %s", pod->label, strerror(-rc));
}

/* Records the pod against the node it will most likely go to: the best
 * score, or split among the nodes sharing it (the first INFLIGHT_TIE_MAX
 * in the scheduler's order; inflight.h says why), so the next pod of a
 * burst already sees it. */
static void assume(struct scorer *s, const struct extreq *rq, const struct policy_node *pn,
		   const struct inflight_pod *pod, uint64_t now)
{
	struct inflight_name best[INFLIGHT_TIE_MAX];
	size_t n = 0;
	int top = -1;

	if (!s->view.inflight || !rq->pod_uid.len || rq->n == 0)
		return;
	for (size_t i = 0; i < rq->n; i++)
		if (pn[i].score > top)
			top = pn[i].score;
	for (size_t i = 0; i < rq->n && n < INFLIGHT_TIE_MAX; i++)
		if (pn[i].score == top)
			best[n++] = (struct inflight_name){ rq->nodes[i].name, rq->nodes[i].name_len,
							    pn[i].link_bytes_per_second };
	record(s, rq, pod, best, n, now);
}

/* The lowest of n scores (0 for none), clamped as put_host_score() sends them. */
static int lowest_score(const struct policy_node *pn, size_t n)
{
	int least = POLICY_MAX_SCORE;

	for (size_t i = 0; i < n; i++)
		if (clamp_score(pn[i].score) < least)
			least = clamp_score(pn[i].score);
	return n ? least : 0;
}

static void prioritize(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	char label[INFLIGHT_LABEL_MAX + 1];
	uint64_t declared_in, declared_eg;
	struct inflight_pod weight;
	struct fit_demand demand;
	struct moves_mine mine;
	struct policy_node *pn;
	struct extreq rq;
	size_t fresh, listed = 0, held = 0;
	int least;
	uint64_t now;
	struct buf b;

	atomic_fetch_add(&s->counters.requests_prioritize, 1);
	if (parse(s, "prioritize", body, len, &rq, out))
		return;
	buf_init(&b, reply_max(len, rq.n));
	/* {"Host":"","Score":10}, */
	buf_start(&b, reply_hint(&rq, 24));
	pn = scratch_take_zeroed(rq.n, sizeof(*pn));
	if (!pn) {
		log_error("ext", "prioritize: out of memory for %zu nodes", rq.n);
		reply_error(500, "out of memory", out);
		goto out_free_request;
	}
	now = s->now_ns();
	pod_declared(&rq, &declared_in, &declared_eg);
	weigh(s, &rq, declared_in, declared_eg, label, &weight, NULL, NULL);
	demand = (struct fit_demand){ weight.rx_bytes_per_second, weight.tx_bytes_per_second };
	pod_moves(s, &rq, now, &mine);
	fresh = lookup(s, &rq, now, &mine, pn);
	fit_score_by(s->view.policy, s->view.direction, &demand, pn, rq.n);
	/* The nodes the rebalancer is relieving of this workload (moves.h). */
	for (size_t i = 0; mine.n && i < rq.n; i++)
		if (node_held(&mine, &rq.nodes[i])) {
			pn[i].score = 0;
			held++;
		}
	assume(s, &rq, pn, &weight, now);

	/* HostPriorityList: requested hosts in request order, each once; all of
	 * them, or (compact) those above the lowest score, less it. */
	least = s->compact_scores ? lowest_score(pn, rq.n) : 0;
	buf_puts(&b, "[");
	for (size_t i = 0; i < rq.n; i++) {
		int score = clamp_score(pn[i].score);

		if (s->compact_scores && score <= least)
			continue;
		put_host_score(&b, listed == 0, &rq.nodes[i], score - least);
		listed++;
	}
	buf_puts(&b, "]");
	reply_take(&b, out);
	log_debug("ext", "prioritize %s: %zu nodes (%s), %zu with fresh data, policy %s, direction "
		  "%s, pod moves rx %llu B/s tx %llu B/s; %zu held by the rebalancer; %zu listed, "
		  "less %d", label, rq.n,
		  rq.mode == EXTREQ_NAMES ? "names" : "full objects", fresh,
		  policy_kind_name(s->view.policy), policy_direction_name(s->view.direction),
		  (unsigned long long)demand.rx, (unsigned long long)demand.tx, held, listed, least);
	if (log_enabled(LOG_LVL_DEBUG))
		for (size_t i = 0; i < rq.n && i < EXT_DEBUG_NODES; i++)
			log_debug("ext", "  %.*s: %s %llu B/s (rx %llu, tx %llu), link %llu B/s, "
				  "cost %u/1000 -> score %d", (int)rq.nodes[i].name_len,
				  rq.nodes[i].name,
				  pn[i].has_data ? policy_direction_name(s->view.direction) : "no data",
				  (unsigned long long)pn[i].rate,
				  (unsigned long long)fit_level(s->view.policy, &pn[i].rx),
				  (unsigned long long)fit_level(s->view.policy, &pn[i].tx),
				  (unsigned long long)pn[i].link_bytes_per_second, pn[i].cost_milli,
				  pn[i].score);
	scratch_give(pn);
out_free_request:
	extreq_free(&rq);
}

/* What the filter knows of a requested node from its view; v owns the
 * label. */
static void filter_input(const struct view_node *v, struct filter_node *fn)
{
	*fn = (struct filter_node){
		.traffic = v->source != VIEW_NONE ? &v->traffic : NULL,
		.label = v->label,
		.reserved_rx_bytes_per_second = v->inflight.reserved_rx_bytes_per_second,
		.reserved_tx_bytes_per_second = v->inflight.reserved_tx_bytes_per_second,
		.held = v->held,
		.over_for_ns = v->over_for_ns,
	};
}

/* The fit rule (fit.h, --fit-filter): a node the pod's known demand
 * (declared or learned, per direction) would push over its link is left
 * out while another node takes the pod, so the scheduler's own plugins
 * never pick a full node over one with room. on: the rule applies to
 * this request. */
struct fit_rule {
	bool on;
	bool rx_known, tx_known;
	struct fit_demand demand;
};

/* Whether the pod fits node v by the rule: its measured level (the larger
 * of average and recent, as the filter judges) plus the pods in flight
 * there (their weights, split among the nodes they tied on: what the node
 * is expected to carry; not the doubt that unknown ones bring) plus the
 * pod. Counting tied pods whole on each node instead would, a few ties
 * into a burst, make every node look full and turn the rule off. A node
 * without fresh agent data or of unknown speed fits. */
static bool node_fits(const struct fit_rule *r, const struct view_node *v, const char **which,
		      uint64_t *used_rx, uint64_t *used_tx)
{
	const struct traffic *t = &v->traffic;
	uint64_t rx, tx;

	*used_rx = *used_tx = 0;
	if (v->source != VIEW_AGENT)
		return true;
	rx = t->rx.recent > t->rx.average ? t->rx.recent : t->rx.average;
	tx = t->tx.recent > t->tx.average ? t->tx.recent : t->tx.average;
	*used_rx = units_add_sat(rx, v->inflight.rx_bytes_per_second - v->doubt_rx);
	*used_tx = units_add_sat(tx, v->inflight.tx_bytes_per_second - v->doubt_tx);
	return fit_fits(&r->demand, r->rx_known, r->tx_known, *used_rx, *used_tx,
			t->link_bytes_per_second, which);
}

/* Whether some requested node passes the filter's rules and, with fit,
 * fits the pod; with unheld, only among the nodes the rebalancer does not
 * hold the pod off (moves.h). The fit rule and the hold leave the other
 * nodes out only when one passes, so neither makes a pod unschedulable
 * that the scheduler could place. */
static bool some_node_passes(struct scorer *s, const struct extreq *rq,
			     const struct filter_pod *asks, const struct fit_rule *r,
			     const struct moves_mine *mine, uint64_t now, bool unheld, bool fit)
{
	struct view_node v[VIEW_BATCH];

	for (size_t i = 0; i < rq->n; i++) {
		struct filter_node fn;
		struct filter_why why;
		uint64_t urx, utx;

		if (i % VIEW_BATCH == 0)
			node_views(s, rq, i, now, mine, v);
		if (unheld && node_held(mine, &rq->nodes[i]))
			continue;
		filter_input(&v[i % VIEW_BATCH], &fn);
		if (filter_check(&s->filter, s->view.direction, asks, &fn, &why) &&
		    (!fit || node_fits(r, &v[i % VIEW_BATCH], NULL, &urx, &utx)))
			return true;
	}
	return false;
}

/* The hold's reason for node (the scheduler's event shows it):
 * "node-3 is being relieved of web: held for 300 s by the rebalancer".
 * Within a node's share of the reply (EXT_REPLY_PER_NODE), truncated. */
static void hold_reason(const struct extreq_node *node, const struct moves_mine_row *h,
			const char *workload, char *out, size_t cap)
{
	snprintf(out, cap, "netsched: %.*s is being relieved of %s: held for %u s by the rebalancer",
		 (int)(node->name_len < 48 ? node->name_len : 48), node->name,
		 moves_workload_short(workload), h->hold_s);
}

/* The fit rule's texts for a node it leaves out (filter.h's conventions:
 * the reason the same for every such node, the numbers in the detail). */
static void fit_why(const struct fit_rule *r, const char *which, uint64_t used_rx, uint64_t used_tx,
		    uint64_t link, struct filter_why *why)
{
	bool rx = which[0] == 'r';

	/* A direction fails only where the pod moves something (fit_fits()). */
	snprintf(why->reason, sizeof(why->reason), "netsched: no room on %s for the pod's %s it moves",
		 which, which);
	snprintf(why->detail, sizeof(why->detail),
		 "%s %llu B/s used (in flight counted) + the pod's %llu B/s > link %llu B/s; other "
		 "nodes fit", which, (unsigned long long)(rx ? used_rx : used_tx),
		 (unsigned long long)(rx ? r->demand.rx : r->demand.tx), (unsigned long long)link);
	why->unresolvable = false;
}

static void filter(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	char label[INFLIGHT_LABEL_MAX + 1];
	enum podweight_source rx_from, tx_from;
	struct inflight_pod weight;
	struct filter_pod asks;
	struct kubepod_str ns, name;
	struct podweight_pod pw;
	struct fit_rule rule;
	uint64_t declared_in, declared_eg;
	struct buf b, failed, unresolvable;
	size_t kept = 0, n_failed = 0, n_unresolvable = 0, n_unfit = 0;
	struct inflight_name only = { NULL, 0, 0 };
	struct view_node v[VIEW_BATCH];
	struct moves_mine mine;
	struct extreq rq;
	char held_reason[EXT_REPLY_PER_NODE - 10];
	char wl[WORKLOAD_LABEL_MAX + 1] = "";
	size_t n_held = 0;
	uint64_t now;
	bool full, hold_on;

	atomic_fetch_add(&s->counters.requests_filter, 1);
	if (parse(s, "filter", body, len, &rq, out))
		return;
	full = rq.mode == EXTREQ_FULL;
	buf_init(&b, reply_max(len, rq.n));
	buf_start(&b, reply_hint(&rq, 4));
	buf_init(&failed, reply_max(0, rq.n));
	buf_init(&unresolvable, reply_max(0, rq.n));
	pod_declared(&rq, &declared_in, &declared_eg);
	pod_of(&rq, declared_in, declared_eg, &ns, &name, &pw);
	podweight_filter(&s->view.weights, &pw, &asks);
	weigh(s, &rq, declared_in, declared_eg, label, &weight, &rx_from, &tx_from);
	now = s->now_ns();
	rule = (struct fit_rule){
		.rx_known = rx_from != PODWEIGHT_FALLBACK,
		.tx_known = tx_from != PODWEIGHT_FALLBACK,
		.demand = { weight.rx_bytes_per_second, weight.tx_bytes_per_second },
	};
	pod_moves(s, &rq, now, &mine);
	rule.on = s->fit_filter && (rule.rx_known || rule.tx_known) &&
		  some_node_passes(s, &rq, &asks, &rule, &mine, now, false, true);
	hold_on = mine.n && some_node_passes(s, &rq, &asks, &rule, &mine, now, true, rule.on);
	if (hold_on) {
		struct workload_key k;

		if (!workload_key_of(&ns, &rq.owner, &name, &k))
			workload_label(&k, wl, sizeof(wl));
	}

	/* ExtenderFilterResult in Go's field order. In full mode the scheduler
	 * reads only Nodes and hands these objects to later extenders, so
	 * they go back byte for byte; in names mode only NodeNames counts.
	 * The unused one is null, the used one a list even when empty. */
	buf_puts(&b, full ? "{\"Nodes\":{\"metadata\":{},\"items\":[" : "{\"Nodes\":null,\"NodeNames\":[");
	for (size_t i = 0; i < rq.n; i++) {
		const struct extreq_node *node = &rq.nodes[i];
		const struct moves_mine_row *h;
		struct filter_node fn;
		struct filter_why why;
		const char *which = "rx", *reason;
		uint64_t urx, utx;
		bool pass;

		if (i % VIEW_BATCH == 0)
			node_views(s, &rq, i, now, &mine, v);
		filter_input(&v[i % VIEW_BATCH], &fn);
		pass = filter_check(&s->filter, s->view.direction, &asks, &fn, &why);
		reason = why.reason;
		if (pass && rule.on && !node_fits(&rule, &v[i % VIEW_BATCH], &which, &urx, &utx)) {
			fit_why(&rule, which, urx, utx, v[i % VIEW_BATCH].traffic.link_bytes_per_second,
				&why);
			pass = false;
			n_unfit++;
		}
		if (pass && hold_on && (h = node_held(&mine, node))) {
			hold_reason(node, h, wl, held_reason, sizeof(held_reason));
			snprintf(why.detail, sizeof(why.detail), "%u s of the hold left; other nodes "
				 "pass", h->remaining_s);
			why.unresolvable = false;
			reason = held_reason;
			pass = false;
			n_held++;
		}
		if (pass) {
			only = (struct inflight_name){ node->name, node->name_len,
						       fn.traffic ? fn.traffic->link_bytes_per_second : 0 };
			if (full) {
				if (kept)
					buf_puts(&b, ",");
				buf_append(&b, node->raw, node->raw_len);
			} else {
				put_name(&b, kept == 0, node);
			}
			kept++;
			continue;
		}
		buf_puts(&failed, n_failed++ ? "," : "");
		buf_json_str(&failed, node->name, node->name_len);
		buf_puts(&failed, ":");
		buf_json_cstr(&failed, reason);
		/* In both maps: 1.20 reads only FailedNodes (the pod's event
		 * counts the node there), 1.21+ lets this one take precedence
		 * and leaves the node out of preemption. */
		if (why.unresolvable) {
			buf_puts(&unresolvable, n_unresolvable++ ? "," : "");
			buf_json_str(&unresolvable, node->name, node->name_len);
			buf_puts(&unresolvable, ":");
			buf_json_cstr(&unresolvable, reason);
		}
		if (n_failed <= EXT_DEBUG_NODES)
			log_debug("ext", "  %.*s filtered out: %s (%s)", (int)node->name_len,
				  node->name, reason, why.detail);
		/* names are validated: no escapes, no control bytes */
	}
	buf_puts(&b, full ? "]},\"NodeNames\":null" : "]");
	buf_puts(&b, ",\"FailedNodes\":{");
	if (failed.len)
		buf_append(&b, failed.data, failed.len);
	buf_puts(&b, "},\"FailedAndUnresolvableNodes\":{");
	if (unresolvable.len)
		buf_append(&b, unresolvable.data, unresolvable.len);
	buf_puts(&b, "},\"Error\":\"\"}");
	if (buf_failed(&failed) || buf_failed(&unresolvable))
		b.failed = true;
	/* One node left: the scheduler binds the pod there without asking
	 * prioritize (kube-scheduler skips scoring a lone feasible node), so
	 * this is where it is counted in flight. */
	if (kept == 1)
		record(s, &rq, &weight, &only, 1, now);
	reply_take(&b, out);
	log_debug("ext", "filter %s: %zu nodes (%s), %zu kept, %zu failed (%zu for want of room: "
		  "the fit rule %s; %zu held by the rebalancer); pod asks rx %llu b/s, tx %llu b/s; "
		  "moves rx %llu B/s (%s), tx %llu B/s (%s)", label, rq.n, full ? "full objects" : "names", kept, n_failed,
		  n_unfit, rule.on ? "on" : "off", n_held, (unsigned long long)asks.ingress_bps,
		  (unsigned long long)asks.egress_bps, (unsigned long long)rule.demand.rx,
		  podweight_source_name(rx_from), (unsigned long long)rule.demand.tx,
		  podweight_source_name(tx_from));
	buf_free(&failed);
	buf_free(&unresolvable);
	buf_free(&b);
	extreq_free(&rq);
}

/* ---------------------------------------------------------------- preempt */

/* What a node's victims declared, bits per second per direction: taken as
 * what evicting them frees. Names mode carries only their UIDs: nothing. */
static void victims_declared(const struct extreq_preemption *p, const struct extreq_candidate *c,
			     uint64_t *rx_bps, uint64_t *tx_bps)
{
	*rx_bps = *tx_bps = 0;
	for (size_t i = 0; i < c->n_victims; i++) {
		const struct extreq_pod *v = &c->victims[i];
		uint64_t bps;

		if (v->ingress.s && bwannot_parse(v->ingress_key, v->ingress.s, v->ingress.len, &bps) == 0)
			*rx_bps = units_add_sat(*rx_bps, bps);
		if (v->egress.s && bwannot_parse(v->egress_key, v->egress.s, v->egress.len, &bps) == 0)
			*tx_bps = units_add_sat(*tx_bps, bps);
	}
	(void)p;
}

/* {"Pods":[{"UID":"..."},...],"NumPDBViolations":N}: the node's victims as
 * MetaVictims, whichever way they came. */
static void put_meta_victims(struct buf *b, const struct extreq_candidate *c)
{
	buf_puts(b, "{\"Pods\":[");
	for (size_t i = 0; i < c->n_victims; i++) {
		buf_puts(b, i ? ",{\"UID\":" : "{\"UID\":");
		buf_json_str(b, c->victims[i].uid.s, c->victims[i].uid.len);
		buf_puts(b, "}");
	}
	buf_puts(b, "],\"NumPDBViolations\":");
	buf_append(b, c->pdb.s, c->pdb.len);
	buf_puts(b, "}");
}

/* The scheduler's preemption judges candidate nodes by its own plugins
 * only, never by extender filters: it would evict pods from a node our
 * rules reject, and the pod would still not fit there. The reply keeps
 * the candidates where, with the victims gone, our filter passes the pod
 * (their declared bandwidth taken as freed), with their victims as sent;
 * the others are left out, which takes them out of preemption. */
static void preempt(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	struct extreq_preemption p;
	uint64_t declared_in, declared_eg;
	struct filter_pod asks;
	struct kubepod_str ns, name;
	struct podweight_pod pw;
	char err[256], pod[200];
	size_t kept = 0;
	uint64_t now;
	struct buf b;
	int rc;

	atomic_fetch_add(&s->counters.requests_preempt, 1);
	rc = extreq_parse_preemption(body, len, &s->limits.request, &p, err, sizeof(err));
	if (rc) {
		answer_parse_error(s, "preempt", rc, err, out);
		return;
	}
	buf_init(&b, reply_max(len, p.n));
	/* What the filter holds the pod to, as filter does (podweight.h). */
	pod_declared(&p.pod, &declared_in, &declared_eg);
	pod_of(&p.pod, declared_in, declared_eg, &ns, &name, &pw);
	podweight_filter(&s->view.weights, &pw, &asks);
	now = s->now_ns();
	buf_puts(&b, "{\"NodeNameToMetaVictims\":{");
	for (size_t i = 0; i < p.n; i++) {
		const struct extreq_candidate *c = &p.candidates[i];
		const struct extreq_node node = { c->name, c->name_len, NULL, 0 };
		uint64_t rx_bps, tx_bps;
		struct filter_node fn;
		struct view_node v;
		struct filter_why why;

		node_view(s, &p.pod, &node, now, &v);
		filter_input(&v, &fn);
		victims_declared(&p, c, &rx_bps, &tx_bps);
		fn.freed_rx_bytes_per_second = rx_bps / 8;
		fn.freed_tx_bytes_per_second = tx_bps / 8;
		if (!filter_check(&s->filter, s->view.direction, &asks, &fn, &why)) {
			log_debug("ext", "  %.*s: no preemption: %s (%s)", (int)c->name_len, c->name,
				  why.reason, why.detail);
			continue;
		}
		buf_puts(&b, kept++ ? "," : "");
		buf_json_str(&b, c->name, c->name_len);
		buf_puts(&b, ":");
		put_meta_victims(&b, c);
	}
	buf_puts(&b, "}}");
	reply_take(&b, out);
	log_debug("ext", "preempt %s: %zu candidate nodes (%s), %zu kept",
		  pod_id(&p.pod, pod, sizeof(pod)), p.n,
		  p.pod.mode == EXTREQ_NAMES ? "names" : "full objects", kept);
	buf_free(&b);
	extreq_preemption_free(&p);
}

void ext_preempt(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	uint64_t start = s->now_ns();

	preempt(s, body, len, out);
	observe(s, &s->counters.latency_preempt, start);
}

void ext_prioritize(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	uint64_t start = s->now_ns();

	prioritize(s, body, len, out);
	observe(s, &s->counters.latency_prioritize, start);
}

void ext_filter(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	uint64_t start = s->now_ns();

	filter(s, body, len, out);
	observe(s, &s->counters.latency_filter, start);
}
