#include "serve/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "pods/inflight.h"
#include "serve/podstatus.h"
#include "serve/reply.h"
#include "nodes/table.h"
#include "scorer.h"
#include "nodes/view.h"

/* /v1/nodes may list every tracked node; bound the reply accordingly. */
#define STATUS_MAX_BODY (16u * 1024u * 1024u)

static void put_milli(struct buf *b, uint32_t milli)
{
	buf_printf(b, "%u.%03u", milli / 1000, milli % 1000);
}

/* ,"key":v */
static void put_u64(struct buf *b, const char *key, uint64_t v)
{
	buf_printf(b, ",\"%s\":", key);
	buf_json_u64(b, v);
}

/* "inflight": what pods just placed add to this node, and which they are;
 * e[*k..] are the entries for this node and later ones (both lists sorted
 * by node name). */
static void put_inflight(struct buf *b, const char *name, const struct view_node *v,
			 const struct inflight_entry *e, long n_e, long *k)
{
	const struct inflight_load *l = &v->inflight;
	bool first = true;

	buf_puts(b, ",\"inflight\":{\"pods\":");
	put_milli(b, l->milli_pods);
	put_u64(b, "rxBytesPerSecond", l->rx_bytes_per_second);
	put_u64(b, "txBytesPerSecond", l->tx_bytes_per_second);
	put_u64(b, "reservedRxBytesPerSecond", l->reserved_rx_bytes_per_second);
	put_u64(b, "reservedTxBytesPerSecond", l->reserved_tx_bytes_per_second);
	/* Pods of unknown demand, and the doubt they add (in the rates above). */
	buf_puts(b, ",\"unknownPods\":");
	put_milli(b, l->unknown_rx_milli > l->unknown_tx_milli ? l->unknown_rx_milli :
								 l->unknown_tx_milli);
	put_u64(b, "doubtRxBytesPerSecond", v->doubt_rx);
	put_u64(b, "doubtTxBytesPerSecond", v->doubt_tx);
	buf_puts(b, ",\"list\":[");
	while (*k < n_e && strcmp(e[*k].node, name) < 0)
		(*k)++;
	for (; *k < n_e && strcmp(e[*k].node, name) == 0; (*k)++) {
		buf_puts(b, first ? "{\"pod\":" : ",{\"pod\":");
		first = false;
		buf_json_cstr(b, e[*k].label);
		buf_puts(b, ",\"weighs\":");
		buf_json_cstr(b, inflight_basis_name(e[*k].basis));
		buf_puts(b, e[*k].bound ? ",\"bound\":true,\"share\":" : ",\"bound\":false,\"share\":");
		put_milli(b, e[*k].load.milli_pods);
		/* How much of it the node's window holds: its share gives way. */
		if (e[*k].window_ms) {
			put_u64(b, "measuredMs", e[*k].measured_ms);
			put_u64(b, "windowMs", e[*k].window_ms);
		}
		buf_puts(b, "}");
	}
	buf_puts(b, "]}");
}

/* The node's traffic figures, each under its key (traffic.h). */
static void put_traffic(struct buf *b, const struct traffic *t)
{
	for (size_t i = 0; i < traffic_n_figures; i++)
		if (traffic_figures[i].json)
			put_u64(b, traffic_figures[i].json, traffic_get(t, &traffic_figures[i]));
}

/* What the score was computed from, in the configured direction with the
 * in-flight pods added: an operator sees why a node ranks where it does. */
static void put_inputs(struct buf *b, const struct scorer *s, const struct policy_node *p)
{
	buf_puts(b, ",\"scoreInputs\":{\"policy\":");
	buf_json_cstr(b, policy_kind_name(s->view.policy));
	buf_puts(b, ",\"direction\":");
	buf_json_cstr(b, policy_direction_name(s->view.direction));
	put_u64(b, "averageBytesPerSecond", p->rate);
	put_u64(b, "recentBytesPerSecond", p->recent);
	put_u64(b, "p95BytesPerSecond", p->p95);
	put_u64(b, "drops", p->drops);
	buf_puts(b, p->dropping ? ",\"dropping\":true" : ",\"dropping\":false");
	put_u64(b, "scoredBytesPerSecond", p->pressure);
	buf_puts(b, "}");
}

void status_nodes(struct scorer *s, struct reply *out)
{
	uint64_t now = s->now_ns();
	struct policy_node *pn = NULL;
	struct view_entry *rows = NULL;
	struct inflight_entry *e = NULL;
	long n, n_e = 0, k = 0;
	struct buf b;

	buf_init(&b, STATUS_MAX_BODY);
	if (s->view.inflight) {
		n_e = inflight_list(s->view.inflight, &e);
		if (n_e < 0) {
			b.failed = true;
			goto out;
		}
	}
	n = view_list_scored(&s->view, now, &rows, &pn);
	if (n < 0) {
		b.failed = true;
		goto out;
	}

	buf_puts(&b, "{\"nodes\":[");
	for (long i = 0; i < n; i++) {
		const struct view_node *v = &rows[i].v;

		buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		buf_json_cstr(&b, rows[i].name);
		buf_puts(&b, ",\"source\":");
		buf_json_cstr(&b, view_source_name(v->source));
		buf_puts(&b, ",\"ageSeconds\":");
		buf_json_double(&b, (double)v->age_ns / (double)NS_PER_SEC);
		put_traffic(&b, &v->traffic);
		put_inputs(&b, s, &pn[i]);
		if (s->filter.max_utilization_pct) {
			/* The maxUtilization rule's state (filter.h). */
			buf_puts(&b, v->held.over ? ",\"filterHeld\":true,\"overSeconds\":" :
						      ",\"filterHeld\":false,\"overSeconds\":");
			buf_json_double(&b, (double)v->over_for_ns / (double)NS_PER_SEC);
		}
		buf_puts(&b, ",\"score\":");
		buf_json_u64(&b, (uint64_t)pn[i].score);
		if (s->view.inflight) /* --inflight-max-pods 0: not counted, not shown */
			put_inflight(&b, rows[i].name, v, e, n_e, &k);
		podstatus_node(&b, s, rows[i].name);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "]}");
out:
	free(e);
	free(pn);
	free(rows);
	reply_take(&b, out);
}

void status_workloads(struct scorer *s, struct reply *out)
{
	podstatus_workloads(s, out);
}

void status_healthz(struct scorer *s, struct reply *out)
{
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"status\":\"ok\",\"nodes\":%zu,\"uptimeSeconds\":%llu}",
		   table_count(s->view.table),
		   (unsigned long long)((s->now_ns() - s->view.started_mono_ns) / NS_PER_SEC));
	reply_take(&b, out);
}

void status_readyz(struct scorer *s, struct reply *out)
{
	uint64_t now = s->now_ns();
	uint64_t up = now > s->view.started_mono_ns ? now - s->view.started_mono_ns : 0;
	size_t fresh;
	bool ready = view_ready(&s->view, now, &fresh);
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"ready\":%s,\"freshNodes\":%zu,\"nodes\":%zu,\"warmupRemainingSeconds\":%.3f}",
		   ready ? "true" : "false", fresh, table_count(s->view.table),
		   up >= s->view.warmup_ns ? 0.0 : (double)(s->view.warmup_ns - up) / (double)NS_PER_SEC);
	reply_take(&b, out);
	if (out->status == 200 && !ready)
		out->status = 503;
}
