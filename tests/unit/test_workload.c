/* Workloads (scorer/pods/workload.c): which workload a pod belongs to, and the
 * learned demand: a high percentile across pods that one outlier does not
 * move, decay of old measurements, a pod counted once, eviction of the
 * idle workload seen least recently, refusal when every workload is live,
 * a workload whose pods all left (kept, then forgotten), and a flood of
 * one-pod workloads that never pushes a live one out. Time by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/pods/workload.h"

#define T0 (1000ULL * NS_PER_SEC)
#define HALF (60ULL * NS_PER_SEC)

static struct kubepod_str str(const char *s)
{
	return (struct kubepod_str){ s, s ? strlen(s) : 0 };
}

struct key_case {
	const char *name;
	const char *ns, *pod, *kind, *owner, *hash;
	const char *want;	/* "ns/Kind/name"; NULL: no workload */
};

static const struct key_case key_cases[] = {
	{ "deployment's replicaset", "shop", "web-6d4cf56db6-x7k2p", "ReplicaSet", "web-6d4cf56db6",
	  "6d4cf56db6", "shop/Deployment/web" },
	{ "a rollout: another hash, the same deployment", "shop", "web-7f9b8c-aaaaa", "ReplicaSet",
	  "web-7f9b8c", "7f9b8c", "shop/Deployment/web" },
	{ "a replicaset of its own (no hash label)", "shop", "rs-x1", "ReplicaSet", "rs", NULL,
	  "shop/ReplicaSet/rs" },
	{ "a hash the name does not end in", "shop", "rs-x1", "ReplicaSet", "rs-abc", "def",
	  "shop/ReplicaSet/rs-abc" },
	{ "a name that is only the hash", "shop", "p", "ReplicaSet", "abc", "abc",
	  "shop/ReplicaSet/abc" },
	{ "statefulset", "db", "pg-0", "StatefulSet", "pg", NULL, "db/StatefulSet/pg" },
	{ "daemonset", "kube-system", "proxy-x", "DaemonSet", "proxy", NULL,
	  "kube-system/DaemonSet/proxy" },
	{ "a cronjob's job (scheduled minute)", "batch", "backup-29012345-abcde", "Job",
	  "backup-29012345", NULL, "batch/CronJob/backup" },
	{ "a cronjob's job (seconds, older controllers)", "batch", "b-1790000000-x", "Job",
	  "b-1790000000", NULL, "batch/CronJob/b" },
	{ "a job of its own", "batch", "migrate-42-x", "Job", "migrate-42", NULL,
	  "batch/Job/migrate-42" },
	{ "a custom controller", "ml", "train-0", "TFJob", "train", NULL, "ml/TFJob/train" },
	{ "a bare pod is its own workload", "default", "debug", NULL, NULL, NULL,
	  "default/Pod/debug" },
	{ "no namespace", NULL, "debug", NULL, NULL, NULL, NULL },
	{ "a namespace with a dot", "a.b", "debug", NULL, NULL, NULL, NULL },
	{ "a namespace too long", "n234567890123456789012345678901234567890123456789012345678901234",
	  "p", NULL, NULL, NULL, NULL },
	{ "no pod name, no owner", "default", NULL, NULL, NULL, NULL, NULL },
	{ "a pod name with a capital", "default", "Debug", NULL, NULL, NULL, NULL },
};

static void test_workload_keys(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(key_cases) / sizeof(key_cases[0]); i++) {
		const struct key_case *c = &key_cases[i];
		struct kubepod_owner o = { 0 };
		struct kubepod_str ns = str(c->ns), pod = str(c->pod);
		struct workload_key k;
		char label[WORKLOAD_LABEL_MAX + 1];
		int rc;

		if (c->kind) {
			o.kind = str(c->kind);
			o.name = str(c->owner);
			o.template_hash = str(c->hash);
		}
		rc = workload_key_of(&ns, &o, &pod, &k);
		if (c->want ? rc != 0 : rc != -EINVAL)
			fail_msg("%s: rc %d", c->name, rc);
		if (c->want && strcmp(workload_label(&k, label, sizeof(label)), c->want))
			fail_msg("%s: %s, want %s", c->name, label, c->want);
	}
}

static struct workload_key key(const char *name)
{
	struct workload_key k = { "ns", "Deployment", "" };

	snprintf(k.name, sizeof(k.name), "%s", name);
	return k;
}

static struct workload *model(size_t max)
{
	struct workload_config c = { .max_workloads = max, .half_life_ns = HALF };
	struct workload *w = workload_create(&c);

	assert_non_null(w);
	return w;
}

static struct workload_demand demand(struct workload *w, const char *name)
{
	struct workload_key k = key(name);
	struct workload_demand d;

	assert_true(workload_demand_of(w, &k, &d));
	return d;
}

static bool knows(struct workload *w, const char *name)
{
	struct workload_key k = key(name);
	struct workload_demand d;

	return workload_demand_of(w, &k, &d);
}

/* pods[0..n) of the workload measured at rx (tx = rx / 10), at now. */
static void measure(struct workload *w, int32_t id, uint64_t first_pod, const uint64_t *rx,
		    size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++)
		workload_sample(w, id, first_pod + i, rx[i], rx[i] / 10, now);
}

struct learn_case {
	const char *name;
	size_t n;
	uint64_t rx[WORKLOAD_SAMPLES];
	uint64_t want;
};

static const struct learn_case learn_cases[] = {
	{ "one pod", 1, { 700 }, 700 },
	{ "two pods: the larger", 2, { 100, 900 }, 900 },
	{ "one outlier in ten is left out", 10, { 10, 10, 10, 10, 10, 10, 10, 10, 10, 5000 }, 10 },
	{ "two in ten are the demand", 10, { 10, 10, 10, 10, 10, 10, 10, 10, 5000, 5000 }, 5000 },
	{ "an idle pod among busy ones", 5, { 0, 800, 810, 790, 805 }, 810 },
	{ "nothing moves: zero is learned", 3, { 0, 0, 0 }, 0 },
	{ "sixteen pods, spread", 16, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }, 15 },
};

static void test_workload_learn(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(learn_cases) / sizeof(learn_cases[0]); i++) {
		const struct learn_case *c = &learn_cases[i];
		struct workload *w = model(4);
		struct workload_key k = key("web");
		int32_t id = workload_ref(w, &k, T0);
		struct workload_demand d;

		assert_true(id >= 0);
		measure(w, id, 1, c->rx, c->n, T0);
		/* Nothing learned until the tick. */
		if (workload_demand_of(w, &k, &d))
			fail_msg("%s: learned before the tick", c->name);
		workload_tick(w, T0);
		d = demand(w, "web");
		if (d.rx_bytes_per_second != c->want || d.tx_bytes_per_second != c->want / 10 ||
		    d.pods != c->n)
			fail_msg("%s: rx %llu tx %llu from %u pods, want %llu from %zu", c->name,
				 (unsigned long long)d.rx_bytes_per_second,
				 (unsigned long long)d.tx_bytes_per_second, d.pods,
				 (unsigned long long)c->want, c->n);
		workload_destroy(w);
	}
}

/* A pod measured again counts once (its latest); a seventeenth pod takes
 * the place of the oldest measurement. */
static void test_workload_pod_once(void **state)
{
	struct workload *w = model(4);
	struct workload_key k = key("web");
	int32_t id = workload_ref(w, &k, T0);
	static const uint64_t busy[WORKLOAD_SAMPLES] = { 100, 100, 100, 100, 100, 100, 100, 100,
							 100, 100, 100, 100, 100, 100, 100, 100 };

	(void)state;
	/* One pod, measured 20 times, high then low: one sample, the latest. */
	for (int r = 0; r < 20; r++)
		workload_sample(w, id, 7, r < 19 ? 9000 : 50, 0, T0 + (uint64_t)r * NS_PER_SEC);
	workload_tick(w, T0 + 20 * NS_PER_SEC);
	assert_int_equal(demand(w, "web").pods, 1);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 50);
	/* Sixteen more pods: pod 7's sample, the oldest, is the one replaced. */
	measure(w, id, 100, busy, WORKLOAD_SAMPLES, T0 + 30 * NS_PER_SEC);
	workload_tick(w, T0 + 30 * NS_PER_SEC);
	assert_int_equal(demand(w, "web").pods, WORKLOAD_SAMPLES);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 100);
	workload_destroy(w);
}

/* Old measurements decay: pods that left at 800 B/s, new pods at 100. A
 * half-life later the old ones still make the top decile; four half-lives
 * later (1/16 each, under a tenth of the weight) the new ones are the
 * demand. */
static void test_workload_decay(void **state)
{
	static const uint64_t old[4] = { 800, 800, 800, 800 }, young[4] = { 100, 100, 100, 100 };
	struct workload *w = model(4);
	struct workload_key k = key("web");
	int32_t id = workload_ref(w, &k, T0);

	(void)state;
	measure(w, id, 1, old, 4, T0);
	measure(w, id, 10, young, 4, T0 + HALF);
	workload_tick(w, T0 + HALF);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 800);
	measure(w, id, 10, young, 4, T0 + 4 * HALF);
	workload_tick(w, T0 + 4 * HALF);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 100);
	assert_int_equal(demand(w, "web").pods, 8);
	workload_destroy(w);
}

/* A workload whose pods all left keeps its demand (for its next pods)
 * until WORKLOAD_FORGET_HALF_LIVES half-lives after its last pod; a pod
 * coming back in time keeps it. */
static void test_workload_pods_left(void **state)
{
	static const uint64_t rx[2] = { 300, 300 };
	struct workload *w = model(4);
	struct workload_key k = key("web");
	struct workload_stats st;
	int32_t id = workload_ref(w, &k, T0);
	uint64_t gone = T0 + NS_PER_SEC, forget = WORKLOAD_FORGET_HALF_LIVES * HALF;

	(void)state;
	measure(w, id, 1, rx, 2, T0);
	workload_unref(w, id, gone);
	workload_tick(w, gone + forget - 1);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 300);
	workload_stats(w, &st);
	assert_int_equal(st.live, 0);
	assert_int_equal(st.learned, 1);
	/* Back before it was forgotten: still known; gone again, forgotten. */
	assert_int_equal(workload_ref(w, &k, gone + forget - 1), id);
	workload_unref(w, id, gone + forget);
	workload_tick(w, gone + 2 * forget - 1);
	assert_true(knows(w, "web"));
	workload_tick(w, gone + 2 * forget);
	assert_false(knows(w, "web"));
	workload_stats(w, &st);
	assert_int_equal(st.forgotten, 1);
	assert_int_equal(st.tracked, 0);
	assert_int_equal(st.learned, 0);
	workload_destroy(w);
}

/* Full: a new workload evicts the idle one seen least recently, never a
 * live one; with every workload live it is refused. */
static void test_workload_eviction(void **state)
{
	struct workload *w = model(3);
	struct workload_key a = key("a"), b = key("b"), c = key("c"), d = key("d"), e = key("e");
	struct workload_stats st;
	int32_t ia = workload_ref(w, &a, T0), ib = workload_ref(w, &b, T0), ic;

	(void)state;
	ic = workload_ref(w, &c, T0);
	assert_true(ia >= 0 && ib >= 0 && ic >= 0);
	workload_sample(w, ia, 1, 10, 10, T0);
	workload_sample(w, ib, 2, 20, 20, T0);
	workload_tick(w, T0);
	workload_unref(w, ib, T0 + 1);	/* idle first */
	workload_unref(w, ic, T0 + 2);	/* idle second */
	assert_true(workload_ref(w, &d, T0 + 3) >= 0);	/* evicts b */
	assert_false(knows(w, "b"));
	assert_true(knows(w, "a"));
	assert_true(workload_ref(w, &e, T0 + 4) >= 0);	/* evicts c */
	/* a, d, e are live: f is refused, a keeps what it learned. */
	assert_int_equal(workload_ref(w, &(struct workload_key){ "ns", "Pod", "f" }, T0 + 5),
			 -ENOSPC);
	assert_int_equal(demand(w, "a").rx_bytes_per_second, 10);
	workload_stats(w, &st);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.tracked, 3);
	assert_int_equal(st.live, 3);
	workload_destroy(w);
}

/* A flood: 5,000 one-pod workloads come and go through a table of 100
 * that holds 40 live, learned workloads. Not one of those is evicted;
 * the table never grows; the flood's own live ones beyond the room are
 * refused, not admitted by evicting. */
static void test_workload_flood(void **state)
{
	struct workload *w = model(100);
	struct workload_stats st;
	char name[32];
	int32_t live[40], flood[200];
	size_t held = 0;

	(void)state;
	for (int i = 0; i < 40; i++) {
		struct workload_key k;

		snprintf(name, sizeof(name), "live-%d", i);
		k = key(name);
		live[i] = workload_ref(w, &k, T0);
		assert_true(live[i] >= 0);
		workload_sample(w, live[i], (uint64_t)i + 1, 1000 + (uint64_t)i, 0, T0);
	}
	workload_tick(w, T0);
	for (int i = 0; i < 5000; i++) {
		struct workload_key k = { "flood", "Pod", "" };
		int32_t id;

		snprintf(k.name, sizeof(k.name), "p-%d", i);
		id = workload_ref(w, &k, T0 + (uint64_t)i);
		/* Every tenth stays live a while: the table fills with live ones. */
		if (id >= 0 && i % 10 == 0 && held < 200)
			flood[held++] = id;
		else if (id >= 0)
			workload_unref(w, id, T0 + (uint64_t)i);
		workload_stats(w, &st);
		assert_true(st.tracked <= 100);
	}
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "live-%d", i);
		assert_int_equal(demand(w, name).rx_bytes_per_second, 1000 + (uint64_t)i);
	}
	workload_stats(w, &st);
	assert_int_equal(st.live, 100);
	assert_true(st.refused > 0);
	assert_true(st.evicted > 0);
	printf("flood of 5000: %zu tracked, %llu evicted, %llu refused, 40 live kept\n", st.tracked,
	       (unsigned long long)st.evicted, (unsigned long long)st.refused);
	for (size_t i = 0; i < held; i++)
		workload_unref(w, flood[i], T0 + 10000);
	workload_destroy(w);
}

/* The listing: sorted, with pods, demand and age; NULL model knows nothing. */
/* Samples that name their node (issue 39): one node's are clipped into
 * the range of the others'; /v1/workloads lists the nodes by share; a node
 * that stops vouching stops counting silent_ns later. */
static void test_workload_nodes(void **state)
{
	struct workload_config c = { .max_workloads = 4, .half_life_ns = HALF, .max_nodes = 4,
				     .silent_ns = 6 * NS_PER_SEC };
	struct workload *w = workload_create(&c);
	struct workload_node a = { 0, 1 }, b = { 1, 1 }, b_reused = { 1, 2 };
	struct workload_key k = key("web");
	struct workload_entry *e = NULL;
	int32_t id;

	(void)state;
	assert_non_null(w);
	id = workload_ref(w, &k, T0);
	for (uint64_t p = 1; p <= 3; p++)
		workload_sample_from(w, id, p, a, 100, 10, T0);
	workload_sample_from(w, id, 4, b, 5000, 500, T0);
	workload_vouch(w, a, T0);
	workload_vouch(w, b, T0);
	workload_tick(w, T0);
	assert_int_equal(demand(w, "web").rx_bytes_per_second, 100);
	assert_int_equal(workload_list(w, T0 + NS_PER_SEC, &e), 1);
	assert_int_equal(e[0].n_sources, 2);
	assert_int_equal(e[0].sources[0].node.id, 0);
	assert_int_equal(e[0].sources[0].share_pct, 75);
	assert_int_equal(e[0].sources[1].pods, 1);
	assert_int_equal(e[0].sources[1].age_ns, NS_PER_SEC);
	free(e);
	/* a keeps vouching; b's slot went to another node: b's sample
	 * counts until 6 s after it was taken. */
	workload_vouch(w, a, T0 + 7 * NS_PER_SEC);
	workload_vouch(w, b_reused, T0 + 7 * NS_PER_SEC);
	workload_tick(w, T0 + 5 * NS_PER_SEC);
	assert_int_equal(demand(w, "web").pods, 4);
	workload_tick(w, T0 + 6 * NS_PER_SEC);
	assert_int_equal(demand(w, "web").pods, 3);
	/* a falls silent too: nothing is learned any more. */
	workload_tick(w, T0 + 13 * NS_PER_SEC);
	assert_false(knows(w, "web"));
	workload_destroy(w);
}

static void test_workload_list(void **state)
{
	struct workload *w = model(8);
	struct workload_key b = key("b"), a = key("a");
	struct workload_entry *e;
	struct workload_demand d;
	int32_t ib = workload_ref(w, &b, T0);

	(void)state;
	assert_true(workload_ref(w, &a, T0) >= 0);
	workload_sample(w, ib, 1, 500, 50, T0);
	workload_tick(w, T0 + 3 * NS_PER_SEC);
	assert_int_equal(workload_list(w, T0 + 5 * NS_PER_SEC, &e), 2);
	assert_string_equal(e[0].key.name, "a");
	assert_false(e[0].learned);
	assert_string_equal(e[1].key.name, "b");
	assert_true(e[1].learned);
	assert_int_equal(e[1].pods, 1);
	assert_int_equal(e[1].demand.rx_bytes_per_second, 500);
	assert_int_equal(e[1].age_ns, 5 * NS_PER_SEC);
	free(e);
	assert_false(workload_demand_of(NULL, &a, &d));
	assert_null(workload_create(&(struct workload_config){ .max_workloads = 0, .half_life_ns = HALF }));
	assert_null(workload_create(&(struct workload_config){ .max_workloads = 4, .half_life_ns = 0 }));
	workload_destroy(NULL);
	workload_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_keys),
		cmocka_unit_test(test_workload_learn),
		cmocka_unit_test(test_workload_pod_once),
		cmocka_unit_test(test_workload_decay),
		cmocka_unit_test(test_workload_pods_left),
		cmocka_unit_test(test_workload_eviction),
		cmocka_unit_test(test_workload_flood),
		cmocka_unit_test(test_workload_nodes),
		cmocka_unit_test(test_workload_list),
	};
	return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
