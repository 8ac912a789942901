/* When the rebalancer nudges the scheduler (rebalancer/nudge.c), as a row
 * table: two nodes seen at one cycle (the base) and the next (now), the
 * pending pods netsched refused, and what the rules say: whether the
 * pending pods are looked at, and which node is labelled for which pod.
 * Then the rules over several cycles (the base is the least room seen, a
 * look resets it, the interval between nudges), the configuration's checks,
 * and the PodList reader (rebalancer/pending.c) as its own row table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rebalancer/nudge.h"
#include "rebalancer/pending.h"

#define MB 1000000ULL
#define LINK 12500000ULL	/* 100 Mb/s in bytes per second */
#define NOW 1800000000ULL

struct nstate {
	uint64_t rx, tx, in_rx, in_tx;
	bool stale;
	uint64_t link;		/* 0: LINK; UINT64_MAX: unknown (0) */
};

struct ask {
	uint64_t rx, tx;	/* bytes per second */
};

struct row {
	const char *what;
	struct nstate before[2], now[2];	/* n1, n2 */
	struct ask pods[3];			/* ends at the first {0, 0} */
	bool nothing_declared;			/* one pod asking {0, 0} */
	bool off;
	uint64_t nudged_ago_s;			/* 0: never */
	bool look;
	const char *node[3];			/* the nodes labelled, in order */
	int pod[3];				/* and the pod each is for */
};

/* Node states and asks, by direction (designated: the rest are zero). */
#define RX(x) { .rx = (x) }
#define TX(x) { .tx = (x) }
#define RXTX(x, y) { .rx = (x), .tx = (y) }
#define BUSY RX(11 * MB)
#define BOTH_BUSY RXTX(11 * MB, 11 * MB)
#define ROW(w, b1, b2, n1, n2) .what = (w), .before = { b1, b2 }, .now = { n1, n2 }

static const struct row rows[] = {
	{ ROW("room grew past the ask on n1: n1 labelled for it", BUSY, BUSY, RX(1 * MB), BUSY),
	  .pods = { RX(5 * MB) }, .look = true, .node = { "n1" } },
	{ ROW("both grew: the one with more room in the pod's direction", BUSY, BUSY, RX(4 * MB),
	      RX(1 * MB)), .pods = { RX(5 * MB) }, .look = true, .node = { "n2" } },
	{ ROW("no node changed: nothing is looked at (no request)", BUSY, BUSY, BUSY, BUSY),
	  .pods = { RX(5 * MB) } },
	{ ROW("growth under the step (5% of the link) is noise: nothing looked at", BUSY, BUSY,
	      RX(11 * MB - 600000), BUSY), .pods = { RX(1000) } },
	{ ROW("growth of the step exactly: looked at; the pod fits now, not before", BUSY, BUSY,
	      RX(11 * MB - 625000), BUSY), .pods = { RX(2000000) }, .look = true, .node = { "n1" } },
	{ ROW("grew, but not enough for the pod: looked at, nothing labelled", BUSY, BUSY,
	      RX(9 * MB), BUSY), .pods = { RX(5 * MB) }, .look = true },
	{ ROW("grew, but the pod already fitted at the base: not this room's doing", RX(6 * MB),
	      BUSY, RX(1 * MB), BUSY), .pods = { RX(5 * MB) }, .look = true },
	{ ROW("fits now with exactly its ask free", BUSY, BUSY, RX(7500000), BUSY),
	  .pods = { RX(5 * MB) }, .look = true, .node = { "n1" } },
	{ ROW("one byte short of its ask: nothing", BUSY, BUSY, RX(7500001), BUSY),
	  .pods = { RX(5 * MB) }, .look = true },
	{ ROW("in flight counts against the room", BUSY, BUSY,
	      ((struct nstate){ .rx = 1 * MB, .in_rx = 8 * MB }), BUSY), .pods = { RX(5 * MB) },
	  .look = true },
	{ ROW("egress: tx room grew past the egress ask", TX(11 * MB), TX(11 * MB), TX(1 * MB),
	      TX(11 * MB)), .pods = { TX(5 * MB) }, .look = true, .node = { "n1" } },
	{ ROW("both directions asked: rx room grew, tx still short", BOTH_BUSY, BOTH_BUSY,
	      RXTX(1 * MB, 11 * MB), BOTH_BUSY), .pods = { RXTX(5 * MB, 5 * MB) }, .look = true },
	{ ROW("both directions asked, both grew on n2", BOTH_BUSY, BOTH_BUSY, RXTX(1 * MB, 11 * MB),
	      RXTX(1 * MB, 1 * MB)), .pods = { RXTX(5 * MB, 5 * MB) }, .look = true,
	  .node = { "n2" } },
	{ ROW("stale figures are no room (and their growth makes no look)", BUSY, BUSY,
	      ((struct nstate){ .rx = 1 * MB, .stale = true }), BUSY), .pods = { RX(5 * MB) } },
	{ ROW("a link of unknown speed is no room", BUSY, BUSY,
	      ((struct nstate){ .rx = 1 * MB, .link = UINT64_MAX }), BUSY), .pods = { RX(5 * MB) } },
	{ ROW("a node coming back fresh: its room grew from none",
	      ((struct nstate){ .rx = 11 * MB, .stale = true }), BUSY, RX(1 * MB), BUSY),
	  .pods = { RX(5 * MB) }, .look = true, .node = { "n1" } },
	{ ROW("a pod declaring nothing is never the reason for a label", BUSY, BUSY, RX(1 * MB),
	      BUSY), .nothing_declared = true, .look = true },
	{ ROW("two pods that fit the same node: one label (it moves every pod)", BUSY, BUSY,
	      RX(1 * MB), BUSY), .pods = { RX(5 * MB), RX(4 * MB) }, .look = true,
	  .node = { "n1" } },
	{ ROW("two pods, two nodes: both labelled, in the pods' order", BOTH_BUSY, BOTH_BUSY,
	      RXTX(1 * MB, 11 * MB), RXTX(11 * MB, 1 * MB)), .pods = { TX(5 * MB), RX(5 * MB) },
	  .look = true, .node = { "n2", "n1" }, .pod = { 0, 1 } },
	{ ROW("nudge off: never looks", BUSY, BUSY, RX(1 * MB), BUSY), .pods = { RX(5 * MB) },
	  .off = true },
	{ ROW("the last nudge 5 s ago, the interval 10 s: no look yet", BUSY, BUSY, RX(1 * MB),
	      BUSY), .pods = { RX(5 * MB) }, .nudged_ago_s = 5 },
	{ ROW("the last nudge 10 s ago: looks", BUSY, BUSY, RX(1 * MB), BUSY),
	  .pods = { RX(5 * MB) }, .nudged_ago_s = 10, .look = true, .node = { "n1" } },
};

static void fill(struct decide_snapshot *s, const struct nstate st[2], uint64_t now_s)
{
	static const char *names[2] = { "n1", "n2" };

	memset(s, 0, sizeof(*s));
	s->nodes = calloc(2, sizeof(*s->nodes));
	assert_non_null(s->nodes);
	s->n_nodes = 2;
	s->now_s = now_s;
	for (int i = 0; i < 2; i++) {
		struct decide_node *n = &s->nodes[i];

		snprintf(n->name, sizeof(n->name), "%s", names[i]);
		n->fresh = !st[i].stale;
		n->link = st[i].link == UINT64_MAX ? 0 : st[i].link ? st[i].link : LINK;
		n->rate[DECIDE_RX] = st[i].rx;
		n->rate[DECIDE_TX] = st[i].tx;
		n->inflight[DECIDE_RX] = st[i].in_rx;
		n->inflight[DECIDE_TX] = st[i].in_tx;
	}
}

static size_t pods_of(const struct row *r, struct nudge_pod *pods)
{
	size_t n = 0;

	for (; n < 3 && (r->pods[n].rx || r->pods[n].tx || (n == 0 && r->nothing_declared)); n++) {
		memset(&pods[n], 0, sizeof(pods[n]));
		snprintf(pods[n].namespace, sizeof(pods[n].namespace), "default");
		snprintf(pods[n].name, sizeof(pods[n].name), "p%zu", n);
		pods[n].ask[DECIDE_RX] = r->pods[n].rx;
		pods[n].ask[DECIDE_TX] = r->pods[n].tx;
	}
	return n;
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct nudge_config cfg;
		struct nudge_memory m = { 0 };
		struct decide_snapshot before, now;
		struct nudge_pod pods[3];
		struct nudge_pick picks[NUDGE_NODES_MAX];
		size_t n_pods = pods_of(r, pods), n, want = 0;
		bool look = true;

		nudge_config_defaults(&cfg);
		cfg.on = !r->off;
		fill(&before, r->before, NOW - 1);
		fill(&now, r->now, NOW);
		assert_int_equal(nudge_observe(&m, &cfg, &before, &look), 0);
		if (look) {
			print_error("row %zu (%s): looked at the first sight\n", i, r->what);
			fail();
		}
		if (r->nudged_ago_s)
			nudge_done(&m, NOW - r->nudged_ago_s);
		assert_int_equal(nudge_observe(&m, &cfg, &now, &look), 0);
		if (look != r->look) {
			print_error("row %zu (%s): look %d, want %d\n", i, r->what, look, r->look);
			fail();
		}
		n = look ? nudge_plan(&cfg, &m, &now, pods, n_pods, picks, NUDGE_NODES_MAX) : 0;
		while (want < 3 && r->node[want])
			want++;
		if (n != want) {
			print_error("row %zu (%s): %zu nodes labelled, want %zu\n", i, r->what, n, want);
			fail();
		}
		for (size_t k = 0; k < n; k++) {
			if (strcmp(now.nodes[picks[k].node].name, r->node[k]) ||
			    picks[k].pod != (size_t)r->pod[k]) {
				print_error("row %zu (%s): label %zu on %s for pod %zu, want %s for %d\n",
					    i, r->what, k, now.nodes[picks[k].node].name, picks[k].pod,
					    r->node[k], r->pod[k]);
				fail();
			}
		}
		nudge_memory_free(&m);
		decide_snapshot_free(&before);
		decide_snapshot_free(&now);
	}
}

/* The base is the least room since the last look: growth in small steps
 * adds up; a look makes the room now the base, so the same room does not
 * make another look. */
static void test_base_over_cycles(void **state)
{
	struct nudge_config cfg;
	struct nudge_memory m = { 0 };
	struct decide_snapshot s;
	struct nudge_pod pod = { "default", "p", { 5 * MB, 0 } };
	struct nudge_pick pick;
	const uint64_t rx[] = { 11 * MB, 12 * MB, 11800000, 11600000, 11400000, 11200000 };
	const bool look_at[] = { false, false, false, false, false, true };
	bool look;

	(void)state;
	nudge_config_defaults(&cfg);
	for (size_t c = 0; c < sizeof(rx) / sizeof(rx[0]); c++) {
		struct nstate st[2] = { RX(rx[c]), BUSY };

		fill(&s, st, NOW + c);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		if (look != look_at[c]) {
			print_error("cycle %zu: look %d\n", c, look);
			fail();
		}
		decide_snapshot_free(&s);
	}
	/* 0.2 MB/s more room a cycle: under the step each time, 0.8 MB/s
	 * above the least (0.5 MB/s) at the last. Looked at (1.3 MB/s free:
	 * the pod does not fit): every base is the room now. */
	{
		struct nstate st[2] = { RX(11200000), BUSY };

		fill(&s, st, NOW + 10);
		assert_int_equal(nudge_plan(&cfg, &m, &s, &pod, 1, &pick, 1), 0);
		nudge_looked(&m, &s);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_false(look);
		decide_snapshot_free(&s);
	}
	/* Then room for the pod: a look and a label; after the nudge, the
	 * same room again makes no look (its base is that room now). */
	{
		struct nstate st[2] = { RX(1 * MB), BUSY };

		fill(&s, st, NOW + 20);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_true(look);
		assert_int_equal(nudge_plan(&cfg, &m, &s, &pod, 1, &pick, 1), 1);
		assert_string_equal(s.nodes[pick.node].name, "n1");
		assert_int_equal(pick.free, LINK - 1 * MB);
		assert_int_equal(pick.base, LINK - 11200000);
		nudge_looked(&m, &s);
		nudge_done(&m, s.now_s);
		decide_snapshot_free(&s);
		fill(&s, st, NOW + 40);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_false(look);
		decide_snapshot_free(&s);
	}
	nudge_memory_free(&m);
	nudge_memory_free(&m);	/* twice is fine */
}

/* Nodes gone from the snapshot are forgotten; a new one starts at its
 * room (its arrival is a Node add: the scheduler retries on its own). */
static void test_nodes_come_and_go(void **state)
{
	struct nudge_config cfg;
	struct nudge_memory m = { 0 };
	struct decide_snapshot s = { 0 };
	bool look;

	(void)state;
	nudge_config_defaults(&cfg);
	assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
	assert_false(look);
	assert_int_equal(m.n_nodes, 0);
	{
		struct nstate st[2] = { RX(0), RX(0) };

		fill(&s, st, NOW);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_false(look);
		assert_int_equal(m.n_nodes, 2);
		s.n_nodes = 1;
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_int_equal(m.n_nodes, 1);
		s.n_nodes = 2;
		decide_snapshot_free(&s);
	}
	nudge_memory_free(&m);
}

static void test_free_room(void **state)
{
	struct decide_node n = { .fresh = true, .link = LINK };

	(void)state;
	n.rate[DECIDE_RX] = 2 * MB;
	n.inflight[DECIDE_RX] = 3 * MB;
	assert_int_equal(nudge_free(&n, DECIDE_RX), LINK - 5 * MB);
	assert_int_equal(nudge_free(&n, DECIDE_TX), LINK);
	n.rate[DECIDE_TX] = UINT64_MAX;
	n.inflight[DECIDE_TX] = 5;
	assert_int_equal(nudge_free(&n, DECIDE_TX), 0);	/* saturating, not wrapping */
	n.rate[DECIDE_RX] = 20 * MB;
	assert_int_equal(nudge_free(&n, DECIDE_RX), 0);
	n.rate[DECIDE_RX] = 0;
	n.fresh = false;
	assert_int_equal(nudge_free(&n, DECIDE_RX), 0);
}

static void test_config(void **state)
{
	struct nudge_config cfg;
	char err[256];

	(void)state;
	nudge_config_defaults(&cfg);
	assert_true(cfg.on);
	assert_int_equal(nudge_config_check(&cfg, err, sizeof(err)), 0);
	cfg.step = 0;
	assert_int_equal(nudge_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--nudge-step"));
	nudge_config_defaults(&cfg);
	cfg.min_interval_s = 0;
	assert_int_equal(nudge_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--nudge-interval"));
	nudge_config_defaults(&cfg);
	cfg.max_nodes = NUDGE_NODES_MAX + 1;
	assert_int_equal(nudge_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--nudge-max-nodes"));
	/* max_nodes caps the labels of one nudge. */
	{
		struct nudge_memory m = { 0 };
		struct decide_snapshot s;
		struct nstate before[2] = { BOTH_BUSY, BOTH_BUSY };
		struct nstate now[2] = { RXTX(1 * MB, 11 * MB), RXTX(11 * MB, 1 * MB) };
		struct nudge_pod pods[2] = { { "d", "a", { 0, 5 * MB } }, { "d", "b", { 5 * MB, 0 } } };
		struct nudge_pick picks[4];
		bool look;

		nudge_config_defaults(&cfg);
		cfg.max_nodes = 1;
		fill(&s, before, NOW);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		decide_snapshot_free(&s);
		fill(&s, now, NOW + 1);
		assert_int_equal(nudge_observe(&m, &cfg, &s, &look), 0);
		assert_true(look);
		assert_int_equal(nudge_plan(&cfg, &m, &s, pods, 2, picks, 4), 1);
		assert_string_equal(s.nodes[picks[0].node].name, "n2");
		decide_snapshot_free(&s);
		nudge_memory_free(&m);
	}
}

/* ------------------------------------------------------------ pending.c */

#define REFUSED "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"," \
		"\"message\":\"0/2 nodes are available: 2 netsched: free rx below the 40 Mb/s the pod asks.\"}"
#define OTHER "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"," \
	      "\"message\":\"0/2 nodes are available: 2 Insufficient cpu.\"}"

struct prow {
	const char *what;
	const char *ann;	/* the annotations object, or NULL */
	const char *cond;	/* the conditions array's inside */
	int kept, skipped;
	uint64_t rx, tx;
};

static const struct prow prows[] = {
	{ "refused by netsched, asks 40M ingress", "{\"kubernetes.io/ingress-bandwidth\":\"40M\"}",
	  REFUSED, 1, 0, 5000000, 0 },
	{ "egress, bits rounded up to bytes", "{\"kubernetes.io/egress-bandwidth\":\"9\"}", REFUSED,
	  1, 0, 0, 2 },
	{ "both", "{\"kubernetes.io/ingress-bandwidth\":\"1G\",\"kubernetes.io/egress-bandwidth\":\"8k\"}",
	  REFUSED, 1, 0, 125000000, 1000 },
	{ "refused for cpu only: not ours", "{\"kubernetes.io/ingress-bandwidth\":\"40M\"}", OTHER,
	  0, 0, 0, 0 },
	{ "scheduled", "{\"kubernetes.io/ingress-bandwidth\":\"40M\"}",
	  "{\"type\":\"PodScheduled\",\"status\":\"True\"}", 0, 0, 0, 0 },
	{ "no condition yet", "{\"kubernetes.io/ingress-bandwidth\":\"40M\"}", "", 0, 0, 0, 0 },
	{ "declares nothing (refused for learned demand)", NULL, REFUSED, 0, 0, 0, 0 },
	{ "an annotation that is not a quantity: skipped, counted",
	  "{\"kubernetes.io/ingress-bandwidth\":\"lots\"}", REFUSED, 0, 1, 0, 0 },
	{ "an annotation that is a number, not a string",
	  "{\"kubernetes.io/ingress-bandwidth\":40}", REFUSED, 0, 1, 0, 0 },
};

static void test_pending_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(prows) / sizeof(prows[0]); i++) {
		const struct prow *r = &prows[i];
		struct nudge_pod out[2];
		struct pending_counts c;
		char js[2048], err[256];

		snprintf(js, sizeof(js), "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"namespace\":"
			 "\"default\",\"name\":\"p\"%s%s},\"spec\":{},\"status\":{\"phase\":\"Pending\","
			 "\"conditions\":[%s]}}]}", r->ann ? ",\"annotations\":" : "",
			 r->ann ? r->ann : "", r->cond);
		if (pending_parse(js, strlen(js), out, 2, &c, err, sizeof(err))) {
			print_error("row %zu (%s): %s\n", i, r->what, err);
			fail();
		}
		if ((int)c.kept != r->kept || (int)c.skipped != r->skipped) {
			print_error("row %zu (%s): kept %zu skipped %zu\n", i, r->what, c.kept,
				    c.skipped);
			fail();
		}
		if (c.kept) {
			assert_string_equal(out[0].namespace, "default");
			assert_string_equal(out[0].name, "p");
			assert_int_equal(out[0].ask[DECIDE_RX], r->rx);
			assert_int_equal(out[0].ask[DECIDE_TX], r->tx);
		}
	}
}

static void test_pending_errors(void **state)
{
	struct nudge_pod out[1];
	struct pending_counts c;
	char err[256], js[1024];
	const char *item = "{\"metadata\":{\"namespace\":\"d\",\"name\":\"p\",\"annotations\":"
			   "{\"kubernetes.io/ingress-bandwidth\":\"1M\"}},\"status\":{\"conditions\":["
			   REFUSED "]}}";

	(void)state;
	assert_int_equal(pending_parse("[]", 2, out, 1, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a PodList"));
	assert_int_equal(pending_parse("{\"items\":[", 10, out, 1, &c, err, sizeof(err)), -EINVAL);
	snprintf(js, sizeof(js), "{\"items\":[{\"metadata\":{\"namespace\":\"d\"}}]}");
	assert_int_equal(pending_parse(js, strlen(js), out, 1, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "items[0]"));
	assert_int_equal(c.kept, 0);
	snprintf(js, sizeof(js), "{\"items\":[%s,%s,%s]}", item, item, item);
	assert_int_equal(pending_parse(js, strlen(js), out, 1, &c, err, sizeof(err)), 0);
	assert_int_equal(c.kept, 1);
	assert_int_equal(c.over, 2);
	assert_int_equal(pending_parse(js, PENDING_BODY_MAX + 1, out, 1, &c, err, sizeof(err)),
			 -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_base_over_cycles),
		cmocka_unit_test(test_nodes_come_and_go),
		cmocka_unit_test(test_free_room),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_pending_rows),
		cmocka_unit_test(test_pending_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
