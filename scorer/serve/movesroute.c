#include "serve/movesroute.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "log.h"
#include "pods/moves.h"
#include "serve/reply.h"
#include "nodes/table.h"
#include "scorer.h"

/* The list: at most MOVES_MAX_MAX moves of ~1 KB each. */
#define MOVESROUTE_MAX_BODY (80u * 1024u * 1024u)

static struct log_limit refused_log;

static void refuse(struct scorer *s, enum registry_move_refusal why, unsigned status,
		   const char *msg, struct reply *out)
{
	atomic_fetch_add(&s->counters.moves_refused[why], 1);
	if (status < 500)
		atomic_fetch_add(&s->counters.requests_bad, 1);
	log_limited(&refused_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "moves",
		    "refused a move (%u): %s", status, msg);
	reply_error(status, msg, out);
}

void movesroute_too_large(struct scorer *s)
{
	atomic_fetch_add(&s->counters.moves_refused[REGISTRY_MOVE_TOO_LARGE], 1);
}

/* The link of node name, or false when the table does not track it. */
static bool node_link(struct scorer *s, const char *name, uint64_t *link)
{
	struct table_node n;

	if (!table_get(s->view.table, name, strlen(name), &n))
		return false;
	*link = n.traffic.link_bytes_per_second;
	return true;
}

/* Whether a rate is within MOVES_RATE_LINKS links (link 0: unknown, any
 * rate the parser took is). Both are under TRAFFIC_MAX_BYTES_PER_SECOND
 * (reports and the parser bound them): no overflow. */
static bool sane(uint64_t rate, uint64_t link)
{
	return !link || rate <= link * MOVES_RATE_LINKS;
}

void movesroute_post(struct scorer *s, const char *body, size_t len, struct reply *out)
{
	struct movereq rq;
	uint64_t lf = 0, lt = 0, link;
	char err[1024];	/* two node names of 253 bytes and numbers */
	struct buf b;
	int rc;

	rc = movereq_parse(body, len, &rq, err, sizeof(err));
	if (rc == -E2BIG)
		return refuse(s, REGISTRY_MOVE_TOO_LARGE, 413, err, out);
	if (rc == -ERANGE)
		return refuse(s, strncmp(err, "holdSeconds", 11) ? REGISTRY_MOVE_ABSURD_RATE :
			      REGISTRY_MOVE_HOLD, 400, err, out);
	if (rc)
		return refuse(s, REGISTRY_MOVE_MALFORMED, 400, err, out);
	if (!node_link(s, rq.from, &lf) || !node_link(s, rq.to, &lt)) {
		bool f = !node_link(s, rq.from, &lf);

		snprintf(err, sizeof(err), "unknown node %s (%s): the scorer has no report from it",
			 f ? rq.from : rq.to, f ? "from" : "to");
		return refuse(s, REGISTRY_MOVE_UNKNOWN_NODE, 400, err, out);
	}
	if (!strcmp(rq.from, rq.to)) {
		snprintf(err, sizeof(err), "from and to are the same node %s", rq.from);
		return refuse(s, REGISTRY_MOVE_SAME_NODE, 400, err, out);
	}
	link = lf > lt ? lf : lt;
	if (!sane(rq.rx_bytes_per_second, link) || !sane(rq.tx_bytes_per_second, link)) {
		bool rx = !sane(rq.rx_bytes_per_second, link);

		snprintf(err, sizeof(err), "%s %llu B/s is over %u x the link of %s and %s (%llu B/s)",
			 rx ? "rxBytesPerSecond" : "txBytesPerSecond",
			 (unsigned long long)(rx ? rq.rx_bytes_per_second : rq.tx_bytes_per_second),
			 MOVES_RATE_LINKS, rq.from, rq.to, (unsigned long long)link);
		return refuse(s, REGISTRY_MOVE_ABSURD_RATE, 400, err, out);
	}
	if (!s->view.moves) {
		reply_error(503, "moves are off in this scorer", out);
		return;
	}
	rc = moves_put(s->view.moves, &rq, s->now_ns());
	if (rc == -ENOSPC) {
		struct moves_stats st;

		moves_stats(s->view.moves, s->now_ns(), &st);
		snprintf(err, sizeof(err), "the move table is full: %zu moves held, its limit "
			 "(--moves-max); retry when one expires", st.max);
		return refuse(s, REGISTRY_MOVE_FULL, 503, err, out);
	}
	atomic_fetch_add(&s->counters.moves_accepted, 1);
	log_info("moves", "%s/%s (%s, uid %s) moves from %s to %s: %s held off %s for %u s, %s "
		 "reserves rx %llu B/s, tx %llu B/s%s", rq.ns, rq.pod, rq.workload, rq.uid, rq.from,
		 rq.to, moves_workload_short(rq.workload), rq.from, rq.hold_s, rq.to,
		 (unsigned long long)rq.rx_bytes_per_second,
		 (unsigned long long)rq.tx_bytes_per_second,
		 rc == 1 ? " (replacing its earlier move)" : "");
	buf_init(&b, 256);
	buf_printf(&b, "{\"accepted\":true,\"holdSeconds\":%u}", rq.hold_s);
	reply_take(&b, out);
}

static void put_str(struct buf *b, const char *key, const char *v, bool first)
{
	buf_printf(b, "%s\"%s\":", first ? "" : ",", key);
	buf_json_cstr(b, v);
}

void movesroute_list(struct scorer *s, struct reply *out)
{
	struct moves_entry *e;
	long n = moves_list(s->view.moves, s->now_ns(), &e);
	struct buf b;

	if (n < 0) {
		reply_error(500, "out of memory for /v1/moves", out);
		return;
	}
	buf_init(&b, MOVESROUTE_MAX_BODY);
	buf_start(&b, 64 + (size_t)n * 512);
	buf_puts(&b, "{\"moves\":[");
	for (long i = 0; i < n; i++) {
		const struct movereq *rq = &e[i].rq;

		buf_puts(&b, i ? ",{" : "{");
		put_str(&b, "namespace", rq->ns, true);
		put_str(&b, "pod", rq->pod, false);
		put_str(&b, "uid", rq->uid, false);
		put_str(&b, "workload", rq->workload, false);
		put_str(&b, "from", rq->from, false);
		put_str(&b, "to", rq->to, false);
		buf_printf(&b, ",\"rxBytesPerSecond\":%llu,\"txBytesPerSecond\":%llu,"
			   "\"holdSeconds\":%u,\"remainingSeconds\":%llu,\"landed\":%s}",
			   (unsigned long long)rq->rx_bytes_per_second,
			   (unsigned long long)rq->tx_bytes_per_second, rq->hold_s,
			   (unsigned long long)((e[i].remaining_ns + NS_PER_SEC - 1) / NS_PER_SEC),
			   e[i].landed ? "true" : "false");
	}
	buf_puts(&b, "]}");
	free(e);
	reply_take(&b, out);
}
