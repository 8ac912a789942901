#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "reply.h"
#include "scorer.h"
#include "view.h"

/* /v1/nodes may list every tracked node; bound the reply accordingly. */
#define STATUS_MAX_BODY (16u * 1024u * 1024u)

void status_nodes(struct scorer *s, struct reply *out)
{
	uint64_t now = s->now_ns();
	struct policy_node *pn = NULL;
	struct view_entry *rows = NULL;
	long n;
	struct buf b;

	buf_init(&b, STATUS_MAX_BODY);
	n = view_list(s, now, &rows);
	if (n >= 0)
		pn = calloc((size_t)n + 1, sizeof(*pn));
	if (n < 0 || !pn) {
		b.failed = true;
		goto out;
	}
	/* Score as if the scheduler had asked about every node we know. */
	for (long i = 0; i < n; i++)
		view_policy_input(s, &rows[i].v, &pn[i]);
	policy_score(s->policy, pn, (size_t)n);

	buf_puts(&b, "{\"nodes\":[");
	for (long i = 0; i < n; i++) {
		const struct view_node *v = &rows[i].v;

		buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		buf_json_cstr(&b, rows[i].name);
		buf_puts(&b, ",\"source\":");
		buf_json_cstr(&b, view_source_name(v->source));
		buf_puts(&b, ",\"ageSeconds\":");
		buf_json_double(&b, (double)v->age_ns / (double)NS_PER_SEC);
		buf_puts(&b, ",\"rxBytesPerSecond\":");
		buf_json_u64(&b, v->rx_bytes_per_second);
		buf_puts(&b, ",\"txBytesPerSecond\":");
		buf_json_u64(&b, v->tx_bytes_per_second);
		buf_puts(&b, ",\"linkBytesPerSecond\":");
		buf_json_u64(&b, v->link_bytes_per_second);
		buf_puts(&b, ",\"score\":");
		buf_json_u64(&b, (uint64_t)pn[i].score);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "]}");
out:
	free(pn);
	free(rows);
	reply_take(&b, out);
}

void status_healthz(struct scorer *s, struct reply *out)
{
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"status\":\"ok\",\"nodes\":%zu,\"uptimeSeconds\":%llu}",
		   table_count(s->table),
		   (unsigned long long)((s->now_ns() - s->started_mono_ns) / NS_PER_SEC));
	reply_take(&b, out);
}

void status_readyz(struct scorer *s, struct reply *out)
{
	uint64_t now = s->now_ns();
	uint64_t up = now > s->started_mono_ns ? now - s->started_mono_ns : 0;
	size_t fresh = view_count_agents(s, now);
	bool ready = fresh > 0 || up >= s->warmup_ns;
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"ready\":%s,\"freshNodes\":%zu,\"nodes\":%zu,\"warmupRemainingSeconds\":%.3f}",
		   ready ? "true" : "false", fresh, table_count(s->table),
		   up >= s->warmup_ns ? 0.0 : (double)(s->warmup_ns - up) / (double)NS_PER_SEC);
	reply_take(&b, out);
	if (out->status == 200 && !ready)
		out->status = 503;
}
