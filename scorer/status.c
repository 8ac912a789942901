#include "status.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"

/* /v1/nodes may list every tracked node; bound the reply accordingly. */
#define STATUS_MAX_BODY (16u * 1024u * 1024u)

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct table_node *)a)->name, ((const struct table_node *)b)->name);
}

void status_nodes(struct scorer *s, struct ext_reply *out)
{
	size_t cap = table_capacity(s->table), n;
	struct table_node *nodes = NULL;
	struct policy_node *pn = NULL;
	uint64_t now = s->now_ns();
	struct buf b;

	buf_init(&b, STATUS_MAX_BODY);
	nodes = malloc(cap * sizeof(*nodes));
	pn = calloc(cap, sizeof(*pn));
	if (!nodes || !pn) {
		b.failed = true;
		goto out;
	}
	n = table_snapshot(s->table, nodes, cap);
	qsort(nodes, n, sizeof(*nodes), by_name);

	/* Score as if the scheduler had asked about every tracked node. */
	for (size_t i = 0; i < n; i++)
		ext_policy_input(s, &nodes[i], now, &pn[i]);
	policy_score(s->policy, pn, n);

	buf_puts(&b, "{\"nodes\":[");
	for (size_t i = 0; i < n; i++) {
		const struct table_node *t = &nodes[i];

		buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		buf_json_cstr(&b, t->name);
		buf_puts(&b, ",\"source\":");
		buf_json_cstr(&b, pn[i].has_data ? "agent" : "none");
		buf_puts(&b, ",\"ageSeconds\":");
		buf_json_double(&b, (double)table_node_age_ns(t, now) / (double)NS_PER_SEC);
		buf_puts(&b, ",\"rxBytesPerSecond\":");
		buf_json_u64(&b, t->rx_bytes_per_second);
		buf_puts(&b, ",\"txBytesPerSecond\":");
		buf_json_u64(&b, t->tx_bytes_per_second);
		buf_puts(&b, ",\"linkBytesPerSecond\":");
		buf_json_u64(&b, t->link_bytes_per_second);
		buf_puts(&b, ",\"score\":");
		buf_json_u64(&b, (uint64_t)pn[i].score);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "]}");
out:
	free(pn);
	free(nodes);
	ext_reply_take(&b, out);
}

void status_healthz(struct scorer *s, struct ext_reply *out)
{
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"status\":\"ok\",\"nodes\":%zu,\"uptimeSeconds\":%llu}",
		   table_count(s->table),
		   (unsigned long long)((s->now_ns() - s->started_mono_ns) / NS_PER_SEC));
	ext_reply_take(&b, out);
}

void status_readyz(struct scorer *s, struct ext_reply *out)
{
	uint64_t now = s->now_ns();
	uint64_t up = now > s->started_mono_ns ? now - s->started_mono_ns : 0;
	size_t fresh = table_count_fresh(s->table, now, s->stale_after_ns);
	bool ready = fresh > 0 || up >= s->warmup_ns;
	struct buf b;

	buf_init(&b, 256);
	buf_printf(&b, "{\"ready\":%s,\"freshNodes\":%zu,\"nodes\":%zu,\"warmupRemainingSeconds\":%.3f}",
		   ready ? "true" : "false", fresh, table_count(s->table),
		   up >= s->warmup_ns ? 0.0 : (double)(s->warmup_ns - up) / (double)NS_PER_SEC);
	ext_reply_take(&b, out);
	if (out->status == 200 && !ready)
		out->status = 503;
}
