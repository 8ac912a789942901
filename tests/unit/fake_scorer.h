/* A scorer on a fake clock for unit tests that drive the extender and the
 * status endpoints without threads or sockets. Header-only: each test is
 * one translation unit. */
#ifndef NETSCHED_TEST_FAKE_SCORER_H
#define NETSCHED_TEST_FAKE_SCORER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "scorer/options.h"
#include "scorer/nodes/table.h"
#include "scorer/scorer.h"

static uint64_t fake_now;

static inline uint64_t fake_clock(void)
{
	return fake_now;
}

/* A scorer whose clock reads fake_now (set to start_ns), with the
 * options' default limits, the relative policy on rx, and a table of
 * table_nodes nodes. NULL when memory runs out. */
static inline struct scorer *fake_scorer_new(size_t table_nodes, uint64_t start_ns, uint64_t stale_ns)
{
	struct scorer *s = calloc(1, sizeof(*s));
	struct scorer_options o;
	char err[256];

	if (!s || scorer_options_defaults(&o, err, sizeof(err))) {
		free(s);
		return NULL;
	}
	s->view.table = table_create(table_nodes);
	if (!s->view.table) {
		free(s);
		return NULL;
	}
	fake_now = start_ns;
	s->view.policy = POLICY_RELATIVE;
	s->view.direction = POLICY_DIR_RX;
	s->view.stale_after_ns = stale_ns;
	s->view.warmup_ns = stale_ns;
	s->limits.max_body_bytes = o.max_body_bytes;
	s->limits.request.max_nodes = o.max_request_nodes;
	s->limits.connections_per_client = (unsigned)o.connections_per_client;
	s->limits.request.max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS;
	s->now_ns = fake_clock;
	s->view.started_mono_ns = start_ns;
	return s;
}

static inline void fake_scorer_free(struct scorer *s)
{
	if (!s)
		return;
	table_destroy(s->view.table);
	free(s);
}

/* A one-interface (eth0) report: node receives rx and sends tx bytes per
 * second over a 10 s window, on a link of link_bps (0 = unknown). */
static inline struct report fake_report(const char *node, uint64_t rx, uint64_t tx,
					uint64_t link_bps)
{
	static uint64_t seq;
	struct report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "%s", node);
	r.instance_id = 1;
	r.seq = ++seq;
	/* Windows advance with the sequence: each report is newer (table.h). */
	r.window_end_unix_ms = 1800000000000ULL + r.seq * 1000;
	r.window_start_unix_ms = r.window_end_unix_ms - 10000;
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "eth0");
	report_iface_count(&r.ifaces[0], rx * 10, tx * 10, 10000);
	r.ifaces[0].traffic.link_bytes_per_second = link_bps / 8;
	return r;
}

/* fake_report(node, rx_per_s, 0, unknown link), arriving at arrival_ns. */
static inline enum table_result fake_feed(struct scorer *s, const char *node, uint64_t rx_per_s,
					  uint64_t arrival_ns)
{
	struct report r = fake_report(node, rx_per_s, 0, 0);

	return table_apply(s->view.table, &r, arrival_ns);
}

#endif
