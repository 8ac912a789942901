#include "extender.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "extreq.h"
#include "log.h"
#include "metrics.h"

/* A reply holds at most the request's names or node objects plus this much
 * per node ({"Host":"","Score":10}, separators, a filter reason), so its
 * size is bounded by the request's; the cap only stops a bug. */
#define EXT_REPLY_PER_NODE 160u
#define EXT_REPLY_FIXED 1024u
/* Bad requests are logged this many times, then one in EXT_LOG_EVERY. */
#define EXT_LOG_FIRST 10u
#define EXT_LOG_EVERY 1000u

void ext_reply_take(struct buf *b, struct ext_reply *out)
{
	out->content_type = NULL;
	out->body = buf_release(b, &out->len);
	out->status = out->body ? 200 : 500;
	if (!out->body)
		out->len = 0;
}

void ext_error(unsigned status, const char *msg, struct ext_reply *out)
{
	size_t len = strlen(msg);
	struct buf b;

	/* Escaping grows a byte to at most six. */
	buf_init(&b, 6 * len + 16);
	buf_puts(&b, "{\"error\":");
	buf_json_str(&b, msg, len);
	buf_puts(&b, "}");
	ext_reply_take(&b, out);
	if (out->body)
		out->status = status;
}

/* Parses the request, or answers it with 400 (or 500 when memory ran out).
 * 0 when the caller goes on with *rq. */
static int parse(struct scorer *s, const char *verb, const char *body, size_t len,
		 struct extreq *rq, struct ext_reply *out)
{
	char err[256];
	unsigned long bad;
	int rc;

	rc = extreq_parse(body, len, &s->limits, rq, err, sizeof(err));
	if (rc == 0)
		return 0;
	if (rc == -ENOMEM) {
		log_error("ext", "%s: %s", verb, err);
		ext_error(500, err, out);
		return rc;
	}
	/* A misconfigured client repeats the same mistake at scheduling
	 * speed: log the first few and then a sample, count them all. */
	bad = atomic_fetch_add(&s->counters.requests_bad, 1) + 1;
	if (bad <= EXT_LOG_FIRST || bad % EXT_LOG_EVERY == 0)
		log_warn("ext", "%s: bad request (%lu so far): %s", verb, bad, err);
	ext_error(400, err, out);
	return rc;
}

void ext_policy_input(const struct scorer *s, const struct table_node *tn, uint64_t now_ns,
		      struct policy_node *out)
{
	memset(out, 0, sizeof(*out));
	if (table_node_age_ns(tn, now_ns) > s->stale_after_ns)
		return;
	out->has_data = true;
	out->rate = policy_rate(s->direction, tn->rx_bytes_per_second, tn->tx_bytes_per_second);
	out->link_bytes_per_second = tn->link_bytes_per_second;
}

/* The policy's input for every requested node; a node the table does not
 * know has no data. Returns how many have fresh data. */
static size_t lookup(struct scorer *s, const struct extreq *rq, struct policy_node *pn)
{
	uint64_t now = s->now_ns();
	size_t fresh = 0;

	for (size_t i = 0; i < rq->n; i++) {
		struct table_node tn;

		memset(&pn[i], 0, sizeof(pn[i]));
		if (!table_get(s->table, rq->nodes[i].name, rq->nodes[i].name_len, &tn))
			continue;
		ext_policy_input(s, &tn, now, &pn[i]);
		fresh += pn[i].has_data;
	}
	return fresh;
}

/* Latency from start to now into h; a clock that went backwards (only a
 * test's fake one can) counts as zero. */
static void observe(struct scorer *s, struct scorer_histogram *h, uint64_t start)
{
	uint64_t end = s->now_ns();

	metrics_observe(h, end > start ? end - start : 0);
}

/* Scores 0..10 as JSON integers; clamped again so no policy bug can send
 * the scheduler a value it does not clamp itself. */
static void put_score(struct buf *b, int score)
{
	static const char *const text[POLICY_MAX_SCORE + 1] = {
		"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
	};

	if (score < 0)
		score = 0;
	if (score > POLICY_MAX_SCORE)
		score = POLICY_MAX_SCORE;
	buf_puts(b, text[score]);
}

static size_t reply_max(size_t body_len, size_t n)
{
	return body_len + n * EXT_REPLY_PER_NODE + EXT_REPLY_FIXED;
}

static void prioritize(struct scorer *s, const char *body, size_t len, struct ext_reply *out)
{
	struct policy_node *pn;
	struct extreq rq;
	size_t fresh;
	struct buf b;

	atomic_fetch_add(&s->counters.requests_prioritize, 1);
	if (parse(s, "prioritize", body, len, &rq, out))
		return;
	buf_init(&b, reply_max(len, rq.n));
	pn = calloc(rq.n ? rq.n : 1, sizeof(*pn));
	if (!pn) {
		log_error("ext", "prioritize: out of memory for %zu nodes", rq.n);
		ext_error(500, "out of memory", out);
		goto out_free_request;
	}
	fresh = lookup(s, &rq, pn);
	policy_score(s->policy, pn, rq.n);

	/* HostPriorityList: every requested host once, in request order. */
	buf_puts(&b, "[");
	for (size_t i = 0; i < rq.n; i++) {
		buf_puts(&b, i ? ",{\"Host\":" : "{\"Host\":");
		buf_json_str(&b, rq.nodes[i].name, rq.nodes[i].name_len);
		buf_puts(&b, ",\"Score\":");
		put_score(&b, pn[i].score);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "]");
	ext_reply_take(&b, out);
	log_debug("ext", "prioritize: %zu nodes (%s), %zu with fresh data", rq.n,
		  rq.mode == EXTREQ_NAMES ? "names" : "full objects", fresh);
	free(pn);
out_free_request:
	extreq_free(&rq);
}

/* Whether a node passes the filter; when it does not, why goes to *reason
 * (shown to users in the pod's events). No rule exists yet, so every node
 * passes. Rules such as maxUtilization or the pod's bandwidth annotations
 * belong here: they see the request and the node's data. */
static bool filter_pass(const struct scorer *s, const struct extreq *rq,
			const struct policy_node *pn, struct buf *reason)
{
	(void)s;
	(void)rq;
	(void)pn;
	(void)reason;
	return true;
}

static void filter(struct scorer *s, const char *body, size_t len, struct ext_reply *out)
{
	struct policy_node *pn;
	struct buf b, failed, why;
	size_t kept = 0, n_failed = 0;
	struct extreq rq;
	bool full;

	atomic_fetch_add(&s->counters.requests_filter, 1);
	if (parse(s, "filter", body, len, &rq, out))
		return;
	full = rq.mode == EXTREQ_FULL;
	buf_init(&b, reply_max(len, rq.n));
	buf_init(&failed, reply_max(0, rq.n));
	buf_init(&why, EXT_REPLY_PER_NODE / 2);
	pn = calloc(rq.n ? rq.n : 1, sizeof(*pn));
	if (!pn) {
		log_error("ext", "filter: out of memory for %zu nodes", rq.n);
		ext_error(500, "out of memory", out);
		goto out_free_request;
	}
	lookup(s, &rq, pn);

	/* ExtenderFilterResult in Go's field order. In full mode the scheduler
	 * reads only Nodes and hands these objects to later extenders, so
	 * they go back byte for byte; in names mode only NodeNames counts.
	 * The unused one is null, the used one a list even when empty. */
	buf_puts(&b, full ? "{\"Nodes\":{\"metadata\":{},\"items\":[" : "{\"Nodes\":null,\"NodeNames\":[");
	for (size_t i = 0; i < rq.n; i++) {
		const struct extreq_node *node = &rq.nodes[i];

		buf_reset(&why);
		if (filter_pass(s, &rq, &pn[i], &why)) {
			if (kept++)
				buf_puts(&b, ",");
			if (full)
				buf_append(&b, node->raw, node->raw_len);
			else
				buf_json_str(&b, node->name, node->name_len);
			continue;
		}
		buf_puts(&failed, n_failed++ ? "," : "");
		buf_json_str(&failed, node->name, node->name_len);
		buf_puts(&failed, ":");
		buf_json_str(&failed, why.data ? why.data : "", why.len);
	}
	buf_puts(&b, full ? "]},\"NodeNames\":null" : "]");
	buf_puts(&b, ",\"FailedNodes\":{");
	if (failed.len)
		buf_append(&b, failed.data, failed.len);
	buf_puts(&b, "},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	if (buf_failed(&failed) || buf_failed(&why))
		b.failed = true;
	ext_reply_take(&b, out);
	log_debug("ext", "filter: %zu nodes (%s), %zu kept, %zu failed", rq.n,
		  full ? "full objects" : "names", kept, n_failed);
	free(pn);
out_free_request:
	buf_free(&why);
	buf_free(&failed);
	buf_free(&b);
	extreq_free(&rq);
}

void ext_prioritize(struct scorer *s, const char *body, size_t len, struct ext_reply *out)
{
	uint64_t start = s->now_ns();

	prioritize(s, body, len, out);
	observe(s, &s->counters.latency_prioritize, start);
}

void ext_filter(struct scorer *s, const char *body, size_t len, struct ext_reply *out)
{
	uint64_t start = s->now_ns();

	filter(s, body, len, out);
	observe(s, &s->counters.latency_filter, start);
}
