#include "serve/pressure.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "errmsg.h"
#include "pods/moves.h"
#include "pods/podindex.h"
#include "rules/fit.h"
#include "serve/reply.h"
#include "nodes/table.h"
#include "scorer.h"
#include "units.h"
#include "nodes/view.h"

/* The whole reply at most: 5,000 nodes take ~1.5 MB, and the pods of
 * PRESSURE_MAX_POD_NODES nodes at most ~11 MB more. */
#define PRESSURE_MAX_BODY (32u * 1024u * 1024u)

int pressure_hot(const char *v, uint32_t *milli, char *err, size_t errlen)
{
	uint32_t whole = 0, frac = 0, digits = 0;
	const char *p = v;

	if (!v) {
		*milli = PRESSURE_HOT_DEFAULT_MILLI;
		return 0;
	}
	if (*p < '0' || *p > '9')
		goto bad;
	/* One digit: the range ends at 1. */
	whole = (uint32_t)(*p++ - '0');
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9' && digits < 3) {
			frac = frac * 10 + (uint32_t)(*p++ - '0');
			digits++;
		}
		if (!digits)
			goto bad;
	}
	if (*p)
		goto bad;
	while (digits++ < 3)
		frac *= 10;
	*milli = whole * 1000 + frac;
	if (*milli >= PRESSURE_HOT_MIN_MILLI && *milli <= PRESSURE_HOT_MAX_MILLI)
		return 0;
bad:
	return errmsg(err, errlen, -EINVAL, "hot=%.16s%s is not a fraction of the link in [0.05, 1.0] "
		      "with at most 3 decimals, such as 0.90", v, strlen(v) > 16 ? "..." : "");
}

/* One tracked node, as the reply shows it. */
struct row {
	char name[NODENAME_MAX_LEN + 1];
	struct view_node v;
	uint64_t rx, tx;		/* levels without the pods in flight */
	uint32_t util_milli;		/* the larger, of the link; 0: not hot */
	bool hot, with_pods;
};

struct names {
	struct row *rows;
	size_t n, cap;
};

static void add_name(const struct table_node *tn, void *ctx)
{
	struct names *nm = ctx;

	if (nm->n < nm->cap)
		memcpy(nm->rows[nm->n++].name, tn->name, sizeof(tn->name));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static int by_util_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Each direction's level as the view's policy input has it, less what
 * is in flight (shown apart). */
static void levels(const struct view_sources *vs, struct row *r)
{
	struct view_node bare = r->v;
	struct policy_node pn;

	memset(&bare.inflight, 0, sizeof(bare.inflight));
	view_policy_input(vs, &bare, &pn);
	r->rx = pn.has_data && bare.source == VIEW_AGENT ? fit_level(vs->policy, &pn.rx) : 0;
	r->tx = pn.has_data && bare.source == VIEW_AGENT ? fit_level(vs->policy, &pn.tx) : 0;
}

static uint32_t util_milli(uint64_t level, uint64_t link)
{
	unsigned __int128 u = (unsigned __int128)level * 1000u / link;

	return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

/* The view of every row, its levels and whether it is hot; how many are. */
static size_t look(struct scorer *s, struct row *rows, size_t n, uint32_t hot, uint64_t now)
{
	struct view_node v[VIEW_BATCH];
	struct namekey keys[VIEW_BATCH];
	size_t hot_n = 0;

	for (size_t i = 0; i < n; i += VIEW_BATCH) {
		size_t m = n - i < VIEW_BATCH ? n - i : VIEW_BATCH;

		for (size_t k = 0; k < m; k++)
			keys[k] = namekey_of(rows[i + k].name, strlen(rows[i + k].name));
		view_get_many(&s->view, keys, m, NULL, 0, now, v);
		for (size_t k = 0; k < m; k++) {
			struct row *r = &rows[i + k];
			uint64_t link = v[k].traffic.link_bytes_per_second;
			uint32_t urx, utx;

			r->v = v[k];
			levels(&s->view, r);
			if (r->v.source != VIEW_AGENT || !link)
				continue;
			urx = util_milli(r->rx, link);
			utx = util_milli(r->tx, link);
			r->util_milli = urx > utx ? urx : utx;
			r->hot = r->util_milli >= hot;
			hot_n += r->hot;
		}
	}
	return hot_n;
}

/* Which hot rows list their pods: all, or the PRESSURE_MAX_POD_NODES
 * hottest (ties at the cut: the first by name). */
static int choose(struct row *rows, size_t n, size_t hot_n)
{
	uint32_t cut = 0, *u;
	size_t k = 0, taken = 0;

	if (hot_n > PRESSURE_MAX_POD_NODES) {
		u = malloc(hot_n * sizeof(*u));
		if (!u)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (rows[i].hot)
				u[k++] = rows[i].util_milli;
		qsort(u, k, sizeof(*u), by_util_desc);
		cut = u[PRESSURE_MAX_POD_NODES - 1];
		free(u);
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].hot && rows[i].util_milli > cut && taken < PRESSURE_MAX_POD_NODES) {
			rows[i].with_pods = true;
			taken++;
		}
	for (size_t i = 0; i < n && taken < PRESSURE_MAX_POD_NODES; i++)
		if (rows[i].hot && !rows[i].with_pods && rows[i].util_milli == cut) {
			rows[i].with_pods = true;
			taken++;
		}
	return 0;
}

static uint64_t larger(const struct podindex_pod *p)
{
	return p->rx_bytes_per_second > p->tx_bytes_per_second ? p->rx_bytes_per_second :
								  p->tx_bytes_per_second;
}

static int by_rate_desc(const void *a, const void *b)
{
	uint64_t x = larger(a), y = larger(b);
	int c = x < y ? 1 : x > y ? -1 : 0;

	return c ? c : strcmp(((const struct podindex_pod *)a)->uid,
			      ((const struct podindex_pod *)b)->uid);
}

/* ,"key":v in one append: printf's formatting was two thirds of a
 * 5,000-node render (perf). */
static void put_u64(struct buf *b, const char *key, uint64_t v)
{
	char line[64], digits[24];
	size_t k = strlen(key), n = 0, d = 0;

	if (k > sizeof(line) - sizeof(digits) - 4) {	/* never: keys are ours */
		b->failed = true;
		return;
	}
	line[n++] = ',';
	line[n++] = '"';
	memcpy(line + n, key, k);
	n += k;
	line[n++] = '"';
	line[n++] = ':';
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (d)
		line[n++] = digits[--d];
	buf_append(b, line, n);
}

/* "pods":[...] of a hot node: the largest PRESSURE_MAX_PODS first. */
static void put_pods(struct buf *b, struct podindex *x, const char *name,
		     struct podindex_pod pods[REPORT_MAX_PODS])
{
	size_t n = podindex_node_pods(x, name, strlen(name), pods, REPORT_MAX_PODS);

	qsort(pods, n, sizeof(*pods), by_rate_desc);
	buf_puts(b, ",\"pods\":[");
	for (size_t i = 0; i < n && i < PRESSURE_MAX_PODS; i++) {
		const struct podindex_pod *p = &pods[i];
		const char *slash = strchr(p->label, '/');
		bool whole = slash && strlen(p->label) < PODINDEX_LABEL_MAX;

		buf_puts(b, i ? ",{\"namespace\":" : "{\"namespace\":");
		buf_json_str(b, p->label, whole ? (size_t)(slash - p->label) : 0);
		buf_puts(b, ",\"name\":");
		buf_json_cstr(b, whole ? slash + 1 : "");
		buf_puts(b, ",\"uid\":");
		buf_json_cstr(b, p->uid);
		buf_puts(b, ",\"workload\":");
		buf_json_cstr(b, p->workload);
		put_u64(b, "rxBytesPerSecond", p->rx_bytes_per_second);
		put_u64(b, "txBytesPerSecond", p->tx_bytes_per_second);
		buf_puts(b, "}");
	}
	buf_puts(b, "]");
}

static void put_node(struct buf *b, struct scorer *s, const struct row *r, bool first,
		     uint64_t now, struct podindex_pod *pods)
{
	const struct view_node *v = &r->v;

	buf_puts(b, first ? "{\"name\":" : ",{\"name\":");
	buf_json_cstr(b, r->name);
	buf_puts(b, v->source == VIEW_AGENT ? ",\"fresh\":true" : ",\"fresh\":false");
	put_u64(b, "reports", v->reports);
	put_u64(b, "linkBytesPerSecond", v->traffic.link_bytes_per_second);
	put_u64(b, "rxBytesPerSecond", r->rx);
	put_u64(b, "txBytesPerSecond", r->tx);
	put_u64(b, "inflightRxBytesPerSecond", v->inflight.rx_bytes_per_second);
	put_u64(b, "inflightTxBytesPerSecond", v->inflight.tx_bytes_per_second);
	put_u64(b, "heldForWorkloads", moves_held_on(s->view.moves, r->name, strlen(r->name), now));
	if (r->with_pods)
		put_pods(b, s->view.weights.pods, r->name, pods);
	buf_puts(b, "}");
}

/* The window the agents' figures cover: the longest among fresh nodes. */
static uint64_t window_seconds(const struct row *rows, size_t n)
{
	uint64_t ms = 0;

	for (size_t i = 0; i < n; i++)
		if (rows[i].v.source == VIEW_AGENT && rows[i].v.traffic.covered_ms > ms)
			ms = rows[i].v.traffic.covered_ms;
	return (ms + 500) / 1000;
}

void pressure_reply(struct scorer *s, const char *hot_arg, struct reply *out)
{
	struct names nm = { 0 };
	struct podindex_pod *pods = NULL;
	size_t hot_n, without = 0;
	char err[200];
	uint32_t hot;
	uint64_t now;
	struct buf b;

	if (pressure_hot(hot_arg, &hot, err, sizeof(err))) {
		atomic_fetch_add(&s->counters.requests_bad, 1);
		reply_error(400, err, out);
		return;
	}
	now = s->now_ns();
	/* Room for every node the table holds now, and a few that join
	 * while it is walked (those are left for the next poll). */
	nm.cap = table_count(s->view.table) + 64;
	nm.rows = calloc(nm.cap, sizeof(*nm.rows));
	pods = calloc(REPORT_MAX_PODS, sizeof(*pods));
	if (!nm.rows || !pods)
		goto oom;
	table_each(s->view.table, add_name, &nm);
	qsort(nm.rows, nm.n, sizeof(*nm.rows), by_name);
	hot_n = look(s, nm.rows, nm.n, hot, now);
	if (choose(nm.rows, nm.n, hot_n))
		goto oom;
	buf_init(&b, PRESSURE_MAX_BODY);
	buf_start(&b, 256 + nm.n * 320);
	buf_printf(&b, "{\"hot\":%u.%03u", hot / 1000, hot % 1000);
	put_u64(&b, "windowSeconds", window_seconds(nm.rows, nm.n));
	buf_puts(&b, ",\"nodes\":[");
	for (size_t i = 0; i < nm.n; i++) {
		put_node(&b, s, &nm.rows[i], i == 0, now, pods);
		without += nm.rows[i].hot && !nm.rows[i].with_pods;
	}
	buf_puts(&b, "]");
	put_u64(&b, "hotNodesWithoutPods", without);
	buf_puts(&b, "}");
	reply_take(&b, out);
	atomic_fetch_add(&s->counters.pressure_replies, 1);
	free(nm.rows);
	free(pods);
	return;
oom:
	free(nm.rows);
	free(pods);
	reply_error(500, "out of memory for /v1/pressure", out);
}
