/* The filter: maxUtilization and the pod's bandwidth annotations as tables
 * (no data, unknown speed, each direction, exact boundaries, huge values),
 * and the filter verb end to end on a fake scorer:
 * the exact reply, reasons shared by every node failing a rule (no '%', no
 * per-node number) beside the per-node detail, a malformed annotation that
 * is ignored. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/log.h"
#include "scorer/serve/extender.h"
#include "scorer/rules/filter.h"
#include "scorer/nodes/table.h"
#include "scorer/serve/reply.h"
#include "tests/unit/fake_scorer.h"

#define GBIT (1000000000ULL / 8) /* 1 Gb/s in bytes per second */

/* What the node table does with each report: judges the maxUtilization
 * rule on the node's traffic at now_ns. */
static void judge(const struct filter_config *cfg, enum policy_direction dir,
		  struct filter_node *n, uint64_t now_ns)
{
	const char *which;

	filter_step(cfg, &n->held, filter_rate(dir, n->traffic, &which),
		    n->traffic->link_bytes_per_second, now_ns);
}

struct filter_row {
	const char *name;
	unsigned max_pct;
	bool bandwidth;
	enum policy_direction dir;
	uint64_t ingress_bps, egress_bps;
	bool has_data;
	uint64_t rx, tx, link;	/* bytes per second */
	const char *want;	/* NULL: passes; else the exact reason */
	const char *detail;	/* the exact detail when it fails */
	bool unresolvable;	/* when it fails: no eviction can make it pass */
};

static const struct filter_row rows[] = {
	{ "no rules: everything passes", 0, false, POLICY_DIR_RX, 0, 0, true, GBIT, GBIT, GBIT, NULL, NULL, false },
	{ "no data: never filtered", 50, true, POLICY_DIR_RX, 900000000, 0, false, GBIT, 0, GBIT,
	  NULL, NULL, false },
	{ "unknown link speed: never filtered", 50, true, POLICY_DIR_RX, 900000000, 0, true,
	  GBIT, 0, 0, NULL, NULL, false },
	{ "utilization above the limit", 80, false, POLICY_DIR_RX, 0, 0, true, 108750000, 0, GBIT,
	  "netsched: rx above 80 percent of link",
	  "ens192 rx 870 Mb/s is 87% of 1 Gb/s, above maxUtilization 80%", true },
	{ "utilization exactly at the limit passes", 80, false, POLICY_DIR_RX, 0, 0, true,
	  100000000, 0, GBIT, NULL, NULL, false },
	{ "rx policy ignores a busy tx", 80, false, POLICY_DIR_RX, 0, 0, true, 0, GBIT, GBIT, NULL, NULL, false },
	{ "max direction judges the busier tx", 80, false, POLICY_DIR_MAX, 0, 0, true, 0, 118750000,
	  GBIT, "netsched: tx above 80 percent of link",
	  "ens192 tx 950 Mb/s is 95% of 1 Gb/s, above maxUtilization 80%", true },
	{ "pod asks more than the free rx", 0, true, POLICY_DIR_RX, 500000000, 0, true, 108750000, 0,
	  GBIT, "netsched: free rx below the 500 Mb/s the pod asks",
	  "ens192 rx 870 Mb/s of 1 Gb/s, free 130 Mb/s, pod asks 500 Mb/s "
	  "(kubernetes.io/ingress-bandwidth)", false },
	{ "pod asks exactly the free rx", 0, true, POLICY_DIR_RX, 130000000, 0, true, 108750000, 0,
	  GBIT, NULL, NULL, false },
	{ "egress checked against tx", 0, true, POLICY_DIR_RX, 0, 10000000, true, 0, GBIT, GBIT,
	  "netsched: free tx below the 10 Mb/s the pod asks",
	  "ens192 tx 1 Gb/s of 1 Gb/s, free 0 b/s, pod asks 10 Mb/s "
	  "(kubernetes.io/egress-bandwidth)", false },
	{ "bandwidth rule off", 0, false, POLICY_DIR_RX, 500000000, 0, true, 108750000, 0, GBIT,
	  NULL, NULL, false },
	{ "rx over the link: free is zero, not negative", 0, true, POLICY_DIR_RX, 1, 0, true,
	  2 * GBIT, 0, GBIT, "netsched: free rx below the 1 b/s the pod asks",
	  "ens192 rx 2 Gb/s of 1 Gb/s, free 0 b/s, pod asks 1 b/s "
	  "(kubernetes.io/ingress-bandwidth)", false },
	{ "pod asks more than the whole link", 0, true, POLICY_DIR_RX, 1500000000, 0, true, 0, 0,
	  GBIT, "netsched: free rx below the 1.5 Gb/s the pod asks",
	  "ens192 rx 0 b/s of 1 Gb/s, free 1 Gb/s, pod asks 1.5 Gb/s "
	  "(kubernetes.io/ingress-bandwidth)", true },
	{ "huge values do not overflow", 99, true, POLICY_DIR_RX, UINT64_MAX, 0, true,
	  UINT64_MAX / 2, 0, UINT64_MAX, NULL, NULL, false /* 50% used; free 2^63 B/s > 2^64 b/s asked */ },
};

static void test_filter_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct filter_row *row = &rows[r];
		struct filter_config cfg = { .max_utilization_pct = row->max_pct,
					     .bandwidth = row->bandwidth };
		struct filter_pod pod = { .ingress_bps = row->ingress_bps,
					  .egress_bps = row->egress_bps };
		struct traffic t = { .rx.average = row->rx, .tx.average = row->tx,
				     .link_bytes_per_second = row->link };
		struct filter_node node = { .traffic = row->has_data ? &t : NULL, .label = "ens192" };
		struct filter_why why;
		bool pass;

		if (node.traffic)
			judge(&cfg, row->dir, &node, 0);
		pass = filter_check(&cfg, row->dir, &pod, &node, &why);

		if (pass != (row->want == NULL))
			fail_msg("%s: %s (reason '%s')", row->name, pass ? "passed" : "failed",
				 why.reason);
		if (pass && (why.reason[0] || why.detail[0]))
			fail_msg("%s: passed with a reason '%s' / '%s'", row->name, why.reason,
				 why.detail);
		if (row->want && strcmp(why.reason, row->want))
			fail_msg("%s: reason '%s', want '%s'", row->name, why.reason, row->want);
		if (row->want && strcmp(why.detail, row->detail))
			fail_msg("%s: detail '%s', want '%s'", row->name, why.detail, row->detail);
		if (why.unresolvable != (row->want && row->unresolvable))
			fail_msg("%s: unresolvable %d, want %d", row->name, why.unresolvable,
				 row->want && row->unresolvable);
		/* The scheduler formats the event printf-style: a '%' is mangled. */
		if (strchr(why.reason, '%'))
			fail_msg("%s: reason '%s' holds a '%%'", row->name, why.reason);
	}
}

/* --learned-filter: a pod that declares nothing is held to what its
 * workload moves, with its own reason, shared by every node and free of
 * '%'; a figure that fits passes. */
static void test_filter_learned(void **state)
{
	struct filter_config cfg = { .bandwidth = true };
	struct traffic busy = { .rx.average = 108750000, .tx.average = 108750000,
				.link_bytes_per_second = GBIT };
	struct traffic other = { .rx.average = 237500000, .link_bytes_per_second = 2 * GBIT };
	struct filter_node node = { .traffic = &busy, .label = "ens192" };
	struct filter_pod pod = { .ingress_bps = 400000000, .learned_ingress = true };
	struct filter_why why;

	(void)state;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &node, &why));
	assert_string_equal(why.reason, "netsched: free rx below the 400 Mb/s its workload moves");
	assert_string_equal(why.detail, "ens192 rx 870 Mb/s of 1 Gb/s, free 130 Mb/s, pod asks "
			    "400 Mb/s (its workload's learned demand)");
	assert_null(strchr(why.reason, '%'));
	/* Another node, another link and label: the same reason. */
	node = (struct filter_node){ .traffic = &other, .label = "eth0" };
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &node, &why));
	assert_string_equal(why.reason, "netsched: free rx below the 400 Mb/s its workload moves");
	pod = (struct filter_pod){ .egress_bps = 400000000, .learned_egress = true };
	node.traffic = &busy;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &node, &why));
	assert_string_equal(why.reason, "netsched: free tx below the 400 Mb/s its workload moves");
	pod = (struct filter_pod){ .ingress_bps = 100000000, .learned_ingress = true };
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &node, &why));
}

/* Nodes failing the same rule with different numbers, links and interfaces
 * get one identical reason (the scheduler groups identical reasons, so the
 * pod's event stays short at any cluster size), and each its own detail. */
static void test_filter_reasons_shared(void **state)
{
	struct filter_config cfg = { .max_utilization_pct = 80, .bandwidth = true };
	struct filter_pod pod = { .ingress_bps = 5000000000ULL };
	struct traffic ta = { .rx.average = 108750000, .link_bytes_per_second = GBIT };
	struct traffic tb = { .rx.average = 12000000000ULL / 8, .link_bytes_per_second = 10 * GBIT };
	struct filter_node a = { .traffic = &ta, .label = "ens192" };
	struct filter_node b = { .traffic = &tb, .label = "eth0,eth1" };
	struct filter_why wa, wb;

	(void)state;
	judge(&cfg, POLICY_DIR_RX, &a, 0);
	judge(&cfg, POLICY_DIR_RX, &b, 0);
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &a, &wa));
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &b, &wb));
	assert_string_equal(wa.reason, wb.reason);
	assert_string_not_equal(wa.detail, wb.detail);
	/* Under the utilization limit, both fail the bandwidth rule alike. */
	cfg.max_utilization_pct = 0;
	judge(&cfg, POLICY_DIR_RX, &a, 0);
	judge(&cfg, POLICY_DIR_RX, &b, 0);
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &a, &wa));
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &b, &wb));
	assert_string_equal(wa.reason, "netsched: free rx below the 5 Gb/s the pod asks");
	assert_string_equal(wa.reason, wb.reason);
	assert_string_not_equal(wa.detail, wb.detail);
}

/* What pods just placed on a node declared and the counters do not show
 * yet counts as used: a node with 50M free and 30M reserved fails a pod
 * asking 30M, and passes it without the reservation; tx likewise. The
 * reservation never touches maxUtilization (measured traffic only). */
static void test_filter_reserved(void **state)
{
	const uint64_t mbit = 1000000 / 8;
	struct filter_config cfg = { .max_utilization_pct = 80, .bandwidth = true };
	struct filter_pod pod = { .ingress_bps = 30000000, .egress_bps = 30000000 };
	struct traffic t = { .rx.average = 50 * mbit, .link_bytes_per_second = 100 * mbit };
	struct filter_node n = { .traffic = &t, .label = "eth0" };
	struct filter_why why;

	(void)state;
	judge(&cfg, POLICY_DIR_RX, &n, 0);
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	n.reserved_rx_bytes_per_second = 30 * mbit;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_string_equal(why.reason, "netsched: free rx below the 30 Mb/s the pod asks");
	assert_string_equal(why.detail, "eth0 rx 50 Mb/s + 30 Mb/s reserved of "
			    "100 Mb/s, free 20 Mb/s, pod asks 30 Mb/s (kubernetes.io/ingress-bandwidth)");
	n.reserved_rx_bytes_per_second = 20 * mbit;
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	n.reserved_tx_bytes_per_second = 71 * mbit;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_string_equal(why.reason, "netsched: free tx below the 30 Mb/s the pod asks");
	/* Reserved far beyond the link: no overflow, nothing free. */
	n.reserved_tx_bytes_per_second = UINT64_MAX;
	t.tx.average = 1;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	/* A pod asking nothing passes whatever is reserved; so does
	 * maxUtilization, which judges the counters alone. */
	pod.ingress_bps = pod.egress_bps = 0;
	n.reserved_rx_bytes_per_second = UINT64_MAX;
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
}

/* Preemption: what the victims declared counts as freed, against the
 * measured rate and what pods in flight reserved; maxUtilization is the
 * node's measured traffic and stays failed whatever is freed. */
static void test_filter_freed(void **state)
{
	const uint64_t mbit = 1000000 / 8;
	struct filter_config cfg = { .max_utilization_pct = 0, .bandwidth = true };
	struct filter_pod pod = { .ingress_bps = 30000000 };
	struct traffic t = { .rx.average = 80 * mbit, .link_bytes_per_second = 100 * mbit };
	struct filter_node n = { .traffic = &t, .label = "eth0", .reserved_rx_bytes_per_second = 5 * mbit };
	struct filter_why why;

	(void)state;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_false(why.unresolvable);
	n.freed_rx_bytes_per_second = 14 * mbit;	/* 1 Mb/s short */
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	n.freed_rx_bytes_per_second = 15 * mbit;
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	n.freed_rx_bytes_per_second = UINT64_MAX;	/* more than was used: all free */
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	/* Freed rx frees nothing in tx. */
	pod.egress_bps = 30000000;
	t.tx.average = 90 * mbit;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_string_equal(why.reason, "netsched: free tx below the 30 Mb/s the pod asks");
	/* Over maxUtilization: failed, unresolvable, whatever is freed. */
	cfg.max_utilization_pct = 50;
	pod.egress_bps = 0;
	judge(&cfg, POLICY_DIR_RX, &n, 0);
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_true(why.unresolvable);
}

static void test_filter_warn_once(void **state)
{
	(void)state;
	assert_true(filter_warn_once("fast", 4));
	assert_false(filter_warn_once("fast", 4));
	assert_true(filter_warn_once("faster", 6));
}

/* busy: 870 Mb/s rx of 1 Gb/s; idle: nothing on 1 Gb/s; ghost: unknown. */
static void feed_busy_idle(struct scorer *s, uint64_t seq)
{
	struct report r = { .instance_id = 1, .seq = seq, .n_ifaces = 1 };

	r.window_end_unix_ms = seq;
	strcpy(r.ifaces[0].name, "ens192");
	r.ifaces[0].traffic.link_bytes_per_second = 125000000;
	strcpy(r.node, "busy");
	report_iface_count(&r.ifaces[0], 108750000, 0, 1000);
	assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	strcpy(r.node, "idle");
	report_iface_count(&r.ifaces[0], 0, 0, 1000);
	assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
}

static struct scorer *busy_idle(void)
{
	struct scorer *s = fake_scorer_new(16, 1000ULL * NS_PER_SEC, 6 * NS_PER_SEC);

	assert_non_null(s);
	s->filter.bandwidth = true;
	feed_busy_idle(s, 1);
	return s;
}

static void filter_expect(struct scorer *s, const char *req, const char *want)
{
	struct reply out;

	ext_filter(s, req, strlen(req), &out);
	assert_int_equal(out.status, 200);
	if (strcmp(out.body, want))
		fail_msg("reply\n  %s\nwant\n  %s", out.body, want);
	free(out.body);
}

static void test_filter_verb(void **state)
{
	struct scorer *s = busy_idle();

	(void)state;
	/* The pod asks 500 Mb/s in: busy has 130 free and fails with the
	 * numbers; idle passes; ghost has no data and is never filtered. */
	filter_expect(s,
		      "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"annotations\":"
		      "{\"kubernetes.io/ingress-bandwidth\":\"500M\"}}},\"Nodes\":null,"
		      "\"NodeNames\":[\"busy\",\"idle\",\"ghost\"]}",
		      "{\"Nodes\":null,\"NodeNames\":[\"idle\",\"ghost\"],\"FailedNodes\":{\"busy\":"
		      "\"netsched: free rx below the 500 Mb/s the pod asks\"},"
		      "\"FailedAndUnresolvableNodes\":{},"
		      "\"Error\":\"\"}");
	/* A malformed annotation never fails the pod: every node is kept. */
	filter_expect(s,
		      "{\"Pod\":{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress-bandwidth\":"
		      "\"lots\"}}},\"Nodes\":null,\"NodeNames\":[\"busy\",\"idle\"]}",
		      "{\"Nodes\":null,\"NodeNames\":[\"busy\",\"idle\"],\"FailedNodes\":{},"
		      "\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	/* Full-node mode: the kept object goes back byte for byte. */
	filter_expect(s,
		      "{\"Pod\":{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress-bandwidth\":"
		      "\"500M\"}}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"busy\"}},"
		      "{\"metadata\":{\"name\":\"idle\"},\"spec\":{ }}]},\"NodeNames\":null}",
		      "{\"Nodes\":{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"idle\"},"
		      "\"spec\":{ }}]},\"NodeNames\":null,\"FailedNodes\":{\"busy\":\"netsched: "
		      "free rx below the 500 Mb/s the pod asks\"},\"FailedAndUnresolvableNodes\":{},"
		      "\"Error\":\"\"}");
	/* maxUtilization at 80%, judged from the next reports on: busy (87%)
	 * fails without any annotation. */
	s->filter.max_utilization_pct = 80;
	table_filter(s->view.table, &s->filter, s->view.direction);
	feed_busy_idle(s, 2);
	filter_expect(s, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"busy\",\"idle\"]}",
		      "{\"Nodes\":null,\"NodeNames\":[\"idle\"],\"FailedNodes\":{\"busy\":\"netsched: "
		      "rx above 80 percent of link\"},"
		      "\"FailedAndUnresolvableNodes\":{\"busy\":\"netsched: rx above 80 percent of "
		      "link\"},\"Error\":\"\"}");
	/* A pod asking more than any link: unresolvable everywhere it fails
	 * (busy); idle's maxUtilization passes, its bandwidth does not. */
	filter_expect(s,
		      "{\"Pod\":{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress-bandwidth\":"
		      "\"2G\"}}},\"NodeNames\":[\"busy\",\"idle\"]}",
		      "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"busy\":\"netsched: "
		      "rx above 80 percent of link\",\"idle\":\"netsched: free rx below the 2 Gb/s "
		      "the pod asks\"},\"FailedAndUnresolvableNodes\":{\"busy\":\"netsched: rx above "
		      "80 percent of link\",\"idle\":\"netsched: free rx below the 2 Gb/s the pod "
		      "asks\"},\"Error\":\"\"}");
	/* Stale data is no data: after 7 s busy passes again. */
	fake_now += 7 * NS_PER_SEC;
	filter_expect(s, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"busy\",\"idle\"]}",
		      "{\"Nodes\":null,\"NodeNames\":[\"busy\",\"idle\"],\"FailedNodes\":{},"
		      "\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	fake_scorer_free(s);
}

static void preempt_expect(struct scorer *s, const char *req, unsigned status, const char *want)
{
	struct reply out;

	ext_preempt(s, req, strlen(req), &out);
	if (out.status != status || !strstr(out.body, want))
		fail_msg("reply %u\n  %s\nwant %u with\n  %s", out.status, out.body, status, want);
	free(out.body);
}

#define ASKS_500M "\"Pod\":{\"metadata\":{\"name\":\"high\",\"namespace\":\"ns\",\"uid\":\"h1\"," \
		  "\"annotations\":{\"kubernetes.io/ingress-bandwidth\":\"500M\"}}}"
#define VICTIM(uid, ingress) "{\"metadata\":{\"uid\":\"" uid "\",\"annotations\":" \
			     "{\"kubernetes.io/ingress-bandwidth\":\"" ingress "\"}},\"spec\":{}}"

/* The preempt verb keeps the candidates where the filter passes the pod
 * once their victims are gone, with the victims as sent (MetaVictims, by
 * UID, whichever way they came), and leaves out the others: busy has 130
 * Mb/s free of 1 Gb/s for a pod asking 500M. Names mode carries no victim's
 * bandwidth: busy is left out; full mode frees what they declared (400M:
 * busy is kept). Over maxUtilization nothing frees it. A node without data
 * (ghost) is never left out. Bad requests are 400s naming the problem. */
static void test_filter_preempt_verb(void **state)
{
	struct scorer *s = busy_idle();

	(void)state;
	preempt_expect(s, "{" ASKS_500M ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
			  "\"busy\":{\"Pods\":[{\"UID\":\"b1\"},{\"UID\":\"b2\"}],\"NumPDBViolations\":0},"
			  "\"idle\":{\"Pods\":[{\"UID\":\"i1\"}],\"NumPDBViolations\":0},"
			  "\"ghost\":{\"Pods\":[{\"UID\":\"g1\"}],\"NumPDBViolations\":2}}}",
		       200, "{\"NodeNameToMetaVictims\":{\"idle\":{\"Pods\":[{\"UID\":\"i1\"}],"
			    "\"NumPDBViolations\":0},\"ghost\":{\"Pods\":[{\"UID\":\"g1\"}],"
			    "\"NumPDBViolations\":2}}}");
	preempt_expect(s, "{" ASKS_500M ",\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
			  "\"busy\":{\"Pods\":[" VICTIM("b1", "300M") "," VICTIM("b2", "100M") "],"
			  "\"NumPDBViolations\":1},\"idle\":{\"Pods\":[]}}}",
		       200, "{\"NodeNameToMetaVictims\":{\"busy\":{\"Pods\":[{\"UID\":\"b1\"},"
			    "{\"UID\":\"b2\"}],\"NumPDBViolations\":1},\"idle\":{\"Pods\":[],"
			    "\"NumPDBViolations\":0}}}");
	/* 90 Mb/s short. */
	preempt_expect(s, "{" ASKS_500M ",\"NodeNameToVictims\":{\"busy\":{\"Pods\":["
			  VICTIM("b1", "300M") "]}}}", 200, "{\"NodeNameToMetaVictims\":{}}");
	s->filter.max_utilization_pct = 80;
	table_filter(s->view.table, &s->filter, s->view.direction);
	feed_busy_idle(s, 2);
	preempt_expect(s, "{" ASKS_500M ",\"NodeNameToVictims\":{\"busy\":{\"Pods\":["
			  VICTIM("b1", "900M") "]},\"idle\":{\"Pods\":[]}}}",
		       200, "{\"NodeNameToMetaVictims\":{\"idle\":{\"Pods\":[],\"NumPDBViolations\":0}}}");
	/* Bad requests. */
	preempt_expect(s, "{\"NodeNameToVictims\":{},\"NodeNameToMetaVictims\":{}}", 400,
		       "both NodeNameToVictims and NodeNameToMetaVictims are set");
	preempt_expect(s, "{\"Pod\":{}}", 400, "neither NodeNameToVictims nor NodeNameToMetaVictims");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":[{}]}}}", 400,
		       "NodeNameToMetaVictims[\\\"a\\\"].Pods[0] has no UID");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":[{\"UID\":\"x\"}],"
			  "\"NumPDBViolations\":1.5}}}", 400, "NumPDBViolations is a number, expected an integer");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"A b\":{}}}", 400, "not a DNS subdomain");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"a\":null}}", 400,
		       "NodeNameToMetaVictims[\\\"a\\\"] is null, expected an object");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":{}}}}", 400,
		       ".Pods is an object, expected an array");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":[]}", 400,
		       "NodeNameToMetaVictims is an array, expected an object or null");
	preempt_expect(s, "{\"NodeNameToVictims\":{\"a\":{\"Pods\":[{\"metadata\":{\"uid\":7}}]}}}",
		       400, "NodeNameToVictims[\\\"a\\\"].Pods[0].metadata.uid is a number");
	preempt_expect(s, "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":[{\"UID\":\"\xff\"}]}}}", 400,
		       "invalid UTF-8 in a string");
	fake_scorer_free(s);
}

/* The maxUtilization rule's hold as a table of transitions: each row is a
 * rule setting and a sequence of reports (time, rate, link), each with the
 * event it must cause and whether the node is held afterwards. */
#define HYST_STEPS 8
struct hyst_step {
	uint64_t t_s;
	uint64_t rate, link;	/* bytes per second; link 0 = unknown */
	enum filter_event ev;
	bool over;
};

struct hyst_row {
	const char *name;
	unsigned limit, margin;
	uint64_t hold_ms;
	struct hyst_step steps[HYST_STEPS];
	size_t n;
};

#define S FILTER_SAME
#define C FILTER_CROSSED
#define R FILTER_RELEASED
static const struct hyst_row hyst_rows[] = {
	{ "crosses, held through a dip and before the hold, released after both", 80, 10, 30000,
	  { { 0, 500, 1000, S, false }, { 1, 850, 1000, C, true }, { 2, 750, 1000, S, true },
	    { 5, 600, 1000, S, true }, { 31, 650, 1000, R, false }, { 32, 790, 1000, S, false },
	    { 33, 810, 1000, C, true } }, 7 },
	{ "exactly at the limit is not over; exactly at limit - margin releases", 80, 10, 30000,
	  { { 0, 800, 1000, S, false }, { 1, 801, 1000, C, true }, { 31, 701, 1000, S, true },
	    { 32, 700, 1000, R, false } }, 4 },
	{ "held for long, stays until clearly below", 80, 10, 30000,
	  { { 0, 900, 1000, C, true }, { 100, 790, 1000, S, true }, { 200, 710, 1000, S, true },
	    { 201, 0, 1000, R, false } }, 4 },
	{ "the hold counts from crossing, not from the last report above", 80, 10, 30000,
	  { { 0, 900, 1000, C, true }, { 29, 950, 1000, S, true }, { 30, 100, 1000, R, false } }, 3 },
	{ "margin 0 and hold 0: a plain threshold", 80, 0, 0,
	  { { 0, 810, 1000, C, true }, { 1, 800, 1000, R, false }, { 2, 810, 1000, C, true } }, 3 },
	{ "rule off: never over", 0, 10, 30000,
	  { { 0, 1000, 1000, S, false }, { 1, 2000, 1000, S, false } }, 2 },
	{ "link speed becomes unknown: released at once", 80, 10, 30000,
	  { { 0, 900, 1000, C, true }, { 1, 900, 0, R, false }, { 2, 900, 1000, C, true } }, 3 },
	{ "margin as large as the limit: only idle releases", 10, 20, 0,
	  { { 0, 500, 1000, C, true }, { 1, 1, 1000, S, true }, { 2, 0, 1000, R, false } }, 3 },
	{ "huge values do not overflow", 99, 10, 1000,
	  { { 0, UINT64_MAX, UINT64_MAX, C, true }, { 2, UINT64_MAX / 2, UINT64_MAX, R, false } },
	  2 },
};
#undef S
#undef C
#undef R

static void test_filter_hysteresis_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(hyst_rows) / sizeof(hyst_rows[0]); r++) {
		const struct hyst_row *row = &hyst_rows[r];
		struct filter_config cfg = { .max_utilization_pct = row->limit,
					     .margin_pct = row->margin, .hold_ms = row->hold_ms };
		struct filter_held st = { false, false, 0 };

		for (size_t i = 0; i < row->n; i++) {
			const struct hyst_step *s = &row->steps[i];
			enum filter_event ev = filter_step(&cfg, &st, s->rate, s->link,
							   1000 + s->t_s * 1000000000ULL);
			bool above = row->limit && s->link &&
				     (unsigned __int128)s->rate * 100 >
					     (unsigned __int128)s->link * row->limit;

			if (ev != s->ev || st.over != s->over || st.above != above)
				fail_msg("%s: step %zu (t %llu s, rate %llu of %llu) gave event %d "
					 "over %d, want %d over %d", row->name, i,
					 (unsigned long long)s->t_s, (unsigned long long)s->rate,
					 (unsigned long long)s->link, ev, st.over, s->ev, s->over);
		}
	}
}

/* The rule judges max(average, recent) per direction, and a held node
 * fails below the limit with a reason of its own (configured numbers only,
 * so held nodes group) and its numbers in the detail, until the hold is
 * over and it is clearly below. */
static void test_filter_recent_and_held(void **state)
{
	struct filter_config cfg = { .max_utilization_pct = 80, .margin_pct = 10,
				     .hold_ms = 30000 };
	struct filter_pod pod = { 0 };
	struct traffic t = { .rx = { .average = 50000000, .recent = 112500000 },
			     .link_bytes_per_second = GBIT };
	struct filter_node n = { .traffic = &t, .label = "eth0" };
	struct filter_why why;
	const char *which;

	(void)state;
	judge(&cfg, POLICY_DIR_RX, &n, 0);
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_string_equal(why.reason, "netsched: rx above 80 percent of link");
	assert_string_equal(why.detail, "eth0 rx 900 Mb/s is 90% of 1 Gb/s, above maxUtilization 80%");
	t.rx.recent = 0;
	judge(&cfg, POLICY_DIR_RX, &n, 12500000000ULL);
	n.over_for_ns = 12500000000ULL;
	assert_false(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	assert_string_equal(why.reason, "netsched: was above 80 percent of link, held until 70");
	assert_string_equal(why.detail, "eth0 rx 400 Mb/s is 40% of 1 Gb/s; over maxUtilization 80% "
			    "since 12 s ago, held until at most 70% after 30 s");
	assert_null(strchr(why.reason, '%'));
	judge(&cfg, POLICY_DIR_RX, &n, 30000000000ULL);
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	/* The rule off: a held state left over means nothing. */
	n.held.over = n.held.above = true;
	cfg.max_utilization_pct = 0;
	assert_true(filter_check(&cfg, POLICY_DIR_RX, &pod, &n, &why));
	/* Directions: the busier of max(avg, recent) each. */
	t = (struct traffic){ .rx = { .average = 10, .recent = 30 }, .tx = { .average = 20, .recent = 5 } };
	assert_int_equal(filter_rate(POLICY_DIR_MAX, &t, &which), 30);
	assert_string_equal(which, "rx");
	t = (struct traffic){ .rx = { .average = 10 }, .tx = { .average = 20, .recent = 25 } };
	assert_int_equal(filter_rate(POLICY_DIR_BOTH, &t, &which), 25);
	assert_string_equal(which, "tx");
	t = (struct traffic){ .rx = { .average = 100, .recent = 300 }, .tx = { .average = 20, .recent = 5 } };
	assert_int_equal(filter_rate(POLICY_DIR_TX, &t, &which), 20);
}

/* The table judges every node's rule on each report with the rule it was
 * given; the state lives in the node (bounded memory) and the extender's
 * filter verb only reads it. */
static void test_filter_hysteresis_in_table(void **state)
{
	struct scorer *s = fake_scorer_new(4, 1000, 600 * NS_PER_SEC);
	struct filter_config cfg = { .max_utilization_pct = 80, .margin_pct = 10,
				     .hold_ms = 5000 };
	struct table_node tn;
	struct reply out;
	char body[256];
	const uint64_t link_bps = 8000; /* 1000 B/s */
	const struct { uint64_t t_s, rx; bool held; } steps[] = {
		{ 0, 500, false }, { 1, 900, true }, { 2, 750, true }, { 4, 100, true },
		{ 6, 750, true }, { 7, 700, false },
	};

	(void)state;
	assert_non_null(s);
	s->filter = cfg;
	table_filter(s->view.table, &cfg, POLICY_DIR_RX);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct report r = fake_report("n1", steps[i].rx, 0, link_bps);

		fake_now = 1000 + steps[i].t_s * NS_PER_SEC;
		assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
		assert_true(table_get(s->view.table, "n1", 2, &tn));
		if (tn.held.over != steps[i].held)
			fail_msg("report %zu (t %llu s, rx %llu of 1000 B/s): held %d, want %d", i,
				 (unsigned long long)steps[i].t_s, (unsigned long long)steps[i].rx,
				 tn.held.over, steps[i].held);
		snprintf(body, sizeof(body), "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},"
			 "\"NodeNames\":[\"n1\"]}");
		ext_filter(s, body, strlen(body), &out);
		assert_int_equal(out.status, 200);
		if ((strstr(out.body, "\"FailedNodes\":{\"n1\"") != NULL) != steps[i].held)
			fail_msg("report %zu: filter reply %s", i, out.body);
		free(out.body);
	}
	fake_scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_rows),
		cmocka_unit_test(test_filter_learned),
		cmocka_unit_test(test_filter_reasons_shared),
		cmocka_unit_test(test_filter_reserved),
		cmocka_unit_test(test_filter_freed),
		cmocka_unit_test(test_filter_warn_once),
		cmocka_unit_test(test_filter_verb),
		cmocka_unit_test(test_filter_preempt_verb),
		cmocka_unit_test(test_filter_hysteresis_rows),
		cmocka_unit_test(test_filter_recent_and_held),
		cmocka_unit_test(test_filter_hysteresis_in_table),
	};
	log_init("test_filter");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
