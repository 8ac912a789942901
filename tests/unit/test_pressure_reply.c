/* GET /v1/pressure's reply (scorer/serve/pressure.c), read back as JSON:
 * every tracked node sorted by name with its levels, link, reports
 * accepted, in-flight (a move's reservation included) and holds; pods only
 * on hot nodes, the largest by max(rx, tx) first, at most 32, joined to
 * their namespace, name, uid and workload; a stale node shown as not
 * fresh, never hot; a link of unknown speed never hot; hot= read strictly.
 * A fake scorer, a pod index fed by hand and a report joined as the ingest
 * would. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/json.h"
#include "scorer/pods/moves.h"
#include "scorer/pods/podindex.h"
#include "scorer/pods/workload.h"
#include "scorer/serve/pressure.h"
#include "scorer/serve/reply.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define UNIX_MS 1800000000000ULL
#define LINK_BPS 1000000000ULL		/* 125,000,000 B/s */
#define HOT_PODS 40u

static struct kubepod replica(const char *uid, const char *node, unsigned ip)
{
	struct kubepod p = { .ns = { "shop", 4 }, .running = true, .n_ips = 1,
			     .owner = { .kind = { "ReplicaSet", 10 }, .name = { "web-abc12", 9 },
					.template_hash = { "abc12", 5 } } };
	char addr[32];

	p.node = (struct kubepod_str){ node, strlen(node) };
	p.uid.len = strlen(uid);
	memcpy(p.uid.s, uid, p.uid.len);
	p.name = (struct kubepod_str){ uid, strlen(uid) };
	p.started_unix_s = (int64_t)(UNIX_MS / 1000) - 3600;
	snprintf(addr, sizeof(addr), "10.0.%u.%u", ip / 200, ip % 200 + 1);
	assert_int_equal(report_ip_parse(addr, &p.ips[0]), 0);
	return p;
}

static char uids[HOT_PODS + 2][16];

/* hot: 120 MB/s in of 125 (96%), HOT_PODS pods p0..p39 at (j+1) x 100 kB/s
 * in, and "tx" sending 10 MB/s (the largest by max(rx, tx)); cool: 10%
 * with one pod; old: hot figures, but stale; unk: busy, link unknown. */
static struct scorer *scorer_with_nodes(void)
{
	struct scorer *s = fake_scorer_new(8, START_NS, STALE_NS);
	struct workload_config wc = { .max_workloads = 8, .half_life_ns = 600 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = 64, .max_nodes = 8, .stale_ns = STALE_NS };
	struct report hot = fake_report("hot", 120000000, 12000000, LINK_BPS);
	struct report cool = fake_report("cool", 12500000, 0, LINK_BPS);
	struct report old = fake_report("old", 124000000, 0, LINK_BPS);
	struct report unk = fake_report("unk", 120000000, 0, 0);
	struct kubepod p;

	assert_non_null(s);
	s->view.weights.workloads = workload_create(&wc);
	s->view.weights.pods = podindex_create(&xc, s->view.weights.workloads);
	s->view.moves = moves_create(16);
	assert_non_null(s->view.weights.pods);
	assert_non_null(s->view.moves);
	hot.has_pods = true;
	hot.n_pods = HOT_PODS + 1;
	hot.pods_seen = HOT_PODS + 1;
	for (unsigned j = 0; j <= HOT_PODS; j++) {
		snprintf(uids[j], sizeof(uids[j]), j < HOT_PODS ? "p%u" : "tx", j);
		p = replica(uids[j], "hot", j);
		podindex_update(s->view.weights.pods, &p, fake_now, UNIX_MS);
		hot.pods[j].n_ips = 1;
		hot.pods[j].ips[0] = p.ips[0];
		if (j < HOT_PODS)
			report_pod_count(&hot.pods[j], (j + 1) * 100000ULL * 10, 0, 10000);
		else
			report_pod_count(&hot.pods[j], 0, 10000000ULL * 10, 10000);
	}
	snprintf(uids[HOT_PODS + 1], sizeof(uids[0]), "c0");
	p = replica(uids[HOT_PODS + 1], "cool", 300);
	podindex_update(s->view.weights.pods, &p, fake_now, UNIX_MS);
	cool.has_pods = true;
	cool.n_pods = cool.pods_seen = 1;
	cool.pods[0].n_ips = 1;
	cool.pods[0].ips[0] = p.ips[0];
	report_pod_count(&cool.pods[0], 1000000ULL * 10, 0, 10000);
	/* hot reports twice: two accepted reports. */
	assert_int_equal(table_apply(s->view.table, &hot, fake_now - NS_PER_SEC), TABLE_APPLIED);
	hot = fake_report("hot", 120000000, 12000000, LINK_BPS);
	hot.has_pods = true;
	hot.n_pods = hot.pods_seen = HOT_PODS + 1;
	for (unsigned j = 0; j <= HOT_PODS; j++) {
		hot.pods[j].n_ips = 1;
		p = replica(uids[j], "hot", j);
		hot.pods[j].ips[0] = p.ips[0];
		if (j < HOT_PODS)
			report_pod_count(&hot.pods[j], (j + 1) * 100000ULL * 10, 0, 10000);
		else
			report_pod_count(&hot.pods[j], 0, 10000000ULL * 10, 10000);
	}
	assert_int_equal(table_apply(s->view.table, &hot, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &cool, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &old, fake_now - 10 * NS_PER_SEC), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &unk, fake_now), TABLE_APPLIED);
	podindex_join(s->view.weights.pods, &hot, fake_now);
	podindex_join(s->view.weights.pods, &cool, fake_now);
	podindex_tick(s->view.weights.pods, fake_now);
	workload_tick(s->view.weights.workloads, fake_now);
	return s;
}

static void scorer_free(struct scorer *s)
{
	moves_destroy(s->view.moves);
	podindex_destroy(s->view.weights.pods);
	workload_destroy(s->view.weights.workloads);
	fake_scorer_free(s);
}

/* The reply, parsed. */
struct doc {
	struct reply r;
	struct json d;
};

static void get(struct scorer *s, const char *hot, struct doc *out)
{
	char err[200];

	pressure_reply(s, hot, &out->r);
	assert_int_equal(out->r.status, 200);
	assert_int_equal(json_parse(&out->d, out->r.body, out->r.len, 100000, err, sizeof(err)), 0);
}

static void put(struct doc *d)
{
	json_free(&d->d);
	free(d->r.body);
}

static unsigned long long num(const struct json *d, int obj, const char *key)
{
	int v = json_member(d, obj, key, false);
	size_t len;
	const char *t = json_text(d, v, &len);

	assert_int_equal(json_type(d, v), JSMN_PRIMITIVE);
	return strtoull(t, NULL, 10);
}

/* The node object named name, checking the names come sorted. */
static int node(const struct json *d, const char *name)
{
	int nodes = json_member(d, 0, "nodes", false), i, found = -1;
	char prev[64] = "";

	assert_int_equal(json_type(d, nodes), JSMN_ARRAY);
	i = nodes + 1;
	for (int k = 0; k < d->t[nodes].size; k++, i = json_skip(d, i)) {
		int nm = json_member(d, i, "name", false);
		size_t len;
		const char *t = json_text(d, nm, &len);
		char cur[64];

		snprintf(cur, sizeof(cur), "%.*s", (int)len, t);
		assert_true(strcmp(prev, cur) < 0);
		snprintf(prev, sizeof(prev), "%s", cur);
		if (!strcmp(cur, name))
			found = i;
	}
	return found;
}

static void test_pressure_nodes(void **state)
{
	struct scorer *s = scorer_with_nodes();
	struct doc d;
	int n;

	(void)state;
	get(s, NULL, &d);
	assert_true(json_text_is(&d.d, json_member(&d.d, 0, "hot", false), "0.900"));
	assert_int_equal(num(&d.d, 0, "windowSeconds"), 10);
	assert_int_equal(d.d.t[json_member(&d.d, 0, "nodes", false)].size, 4);
	n = node(&d.d, "hot");
	assert_true(n > 0);
	assert_true(json_text_is(&d.d, json_member(&d.d, n, "fresh", false), "true"));
	assert_int_equal(num(&d.d, n, "reports"), 2);
	assert_int_equal(num(&d.d, n, "linkBytesPerSecond"), 125000000);
	assert_int_equal(num(&d.d, n, "rxBytesPerSecond"), 120000000);
	assert_int_equal(num(&d.d, n, "txBytesPerSecond"), 12000000);
	assert_int_equal(num(&d.d, n, "heldForWorkloads"), 0);
	assert_true(json_member(&d.d, n, "pods", false) > 0);
	/* Cool: no pods key at all. */
	n = node(&d.d, "cool");
	assert_int_equal(num(&d.d, n, "reports"), 1);
	assert_int_equal(json_member(&d.d, n, "pods", false), -1);
	/* Stale: not fresh, no figures, never hot. */
	n = node(&d.d, "old");
	assert_true(json_text_is(&d.d, json_member(&d.d, n, "fresh", false), "false"));
	assert_int_equal(num(&d.d, n, "rxBytesPerSecond"), 0);
	assert_int_equal(json_member(&d.d, n, "pods", false), -1);
	/* Link unknown: fresh, busy, never hot. */
	n = node(&d.d, "unk");
	assert_int_equal(num(&d.d, n, "linkBytesPerSecond"), 0);
	assert_int_equal(num(&d.d, n, "rxBytesPerSecond"), 120000000);
	assert_int_equal(json_member(&d.d, n, "pods", false), -1);
	assert_int_equal(num(&d.d, 0, "hotNodesWithoutPods"), 0);
	put(&d);
	/* At 0.97 of the link nothing is hot: no pods anywhere. */
	get(s, "0.97", &d);
	assert_int_equal(json_member(&d.d, node(&d.d, "hot"), "pods", false), -1);
	put(&d);
	get(s, "0.1", &d);
	assert_true(json_text_is(&d.d, json_member(&d.d, 0, "hot", false), "0.100"));
	/* cool at exactly 10%: hot at 0.1 (>=), with its one pod. */
	n = node(&d.d, "cool");
	assert_int_equal(d.d.t[json_member(&d.d, n, "pods", false)].size, 1);
	put(&d);
	scorer_free(s);
}

static void test_pressure_pods(void **state)
{
	struct scorer *s = scorer_with_nodes();
	unsigned long long last = ~0ULL;
	struct doc d;
	int pods, i;

	(void)state;
	get(s, "0.95", &d);
	pods = json_member(&d.d, node(&d.d, "hot"), "pods", false);
	assert_int_equal(json_type(&d.d, pods), JSMN_ARRAY);
	assert_int_equal(d.d.t[pods].size, PRESSURE_MAX_PODS);
	i = pods + 1;
	for (int k = 0; k < d.d.t[pods].size; k++, i = json_skip(&d.d, i)) {
		unsigned long long rx = num(&d.d, i, "rxBytesPerSecond");
		unsigned long long tx = num(&d.d, i, "txBytesPerSecond");
		unsigned long long big = rx > tx ? rx : tx;

		assert_true(big <= last);
		last = big;
		assert_true(json_is_string(&d.d, json_member(&d.d, i, "namespace", false), "shop"));
		assert_true(json_is_string(&d.d, json_member(&d.d, i, "workload", false),
					   "shop/Deployment/web"));
		if (k == 0) {
			/* The sender first: 10 MB/s out beats 4 MB/s in. */
			assert_true(json_is_string(&d.d, json_member(&d.d, i, "name", false), "tx"));
			assert_true(json_is_string(&d.d, json_member(&d.d, i, "uid", false), "tx"));
			assert_int_equal(tx, 10000000);
		}
		if (k == 1)
			assert_true(json_is_string(&d.d, json_member(&d.d, i, "name", false), "p39"));
	}
	/* The 32nd: p9 (1 MB/s); the 9 lightest are left out. */
	assert_int_equal(last, 1000000);
	put(&d);
	scorer_free(s);
}

static void test_pressure_moves(void **state)
{
	struct scorer *s = scorer_with_nodes();
	struct movereq rq;
	char err[200];
	struct doc d;
	int n;
	static const char body[] =
		"{\"namespace\":\"shop\",\"pod\":\"p39\",\"uid\":\"p39\",\"workload\":"
		"\"shop/Deployment/web\",\"from\":\"hot\",\"to\":\"cool\",\"rxBytesPerSecond\":4000000,"
		"\"txBytesPerSecond\":0,\"holdSeconds\":60}";

	(void)state;
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
	assert_int_equal(moves_put(s->view.moves, &rq, fake_now), 0);
	get(s, NULL, &d);
	assert_int_equal(num(&d.d, node(&d.d, "hot"), "heldForWorkloads"), 1);
	n = node(&d.d, "cool");
	assert_int_equal(num(&d.d, n, "heldForWorkloads"), 0);
	/* The reservation is in flight there, not in its measured level. */
	assert_int_equal(num(&d.d, n, "inflightRxBytesPerSecond"), 4000000);
	assert_int_equal(num(&d.d, n, "rxBytesPerSecond"), 12500000);
	put(&d);
	/* Once the hold ends, nothing. */
	fake_now += 60 * NS_PER_SEC;
	assert_int_equal(moves_held_on(s->view.moves, "hot", 3, fake_now), 0);
	scorer_free(s);
}

static void test_pressure_hot_arg(void **state)
{
	static const char *const bad[] = { "", "0.04", "1.001", "2", "-0.5", "0.9x", ".9", "0.",
					   "0.9000", "1e-1", "nan", "0,9", "00000000000000000000.9" };
	static const struct { const char *v; uint32_t milli; } good[] = {
		{ "0.05", 50 }, { "0.9", 900 }, { "0.90", 900 }, { "0.925", 925 }, { "1", 1000 },
		{ "1.0", 1000 }, { "1.000", 1000 },
	};
	struct scorer *s = fake_scorer_new(4, START_NS, STALE_NS);
	struct reply r;
	char err[200];
	uint32_t m;

	(void)state;
	assert_int_equal(pressure_hot(NULL, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 900);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(pressure_hot(good[i].v, &m, err, sizeof(err)), 0);
		assert_int_equal(m, good[i].milli);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (pressure_hot(bad[i], &m, err, sizeof(err)) != -EINVAL) {
			print_error("hot=%s taken as %u\n", bad[i], m);
			fail();
		}
		assert_non_null(strstr(err, "is not a fraction of the link in [0.05, 1.0]"));
		pressure_reply(s, bad[i], &r);
		assert_int_equal(r.status, 400);
		free(r.body);
	}
	/* An empty table: an empty list. */
	pressure_reply(s, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"nodes\":[]"));
	free(r.body);
	fake_scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pressure_nodes),
		cmocka_unit_test(test_pressure_pods),
		cmocka_unit_test(test_pressure_moves),
		cmocka_unit_test(test_pressure_hot_arg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
