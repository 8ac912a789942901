/* The apiserver's facts about a hot node's pods (rebalancer/podfacts.c):
 * each protection read from a PodList as the apiserver writes it, the join
 * by namespace, name and UID, RFC 3339 times, and bad lists refused with
 * every pod left unknown. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rebalancer/podfacts.h"

#define META(ns, name, uid, extra) \
	"\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\",\"uid\":\"" uid "\"," \
	"\"creationTimestamp\":\"2026-11-27T20:00:00Z\"" extra "}"
#define OWNER(kind) ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"" kind "\"," \
	"\"name\":\"x\",\"uid\":\"o\",\"controller\":true}]"

static const char list[] = "{\"kind\":\"PodList\",\"items\":["
	"{" META("default", "web-a", "u1", OWNER("ReplicaSet")) ",\"spec\":{\"priority\":0,\"nodeName\":\"node-3\"}},"
	"{" META("default", "db-0", "u2", OWNER("StatefulSet")) ",\"spec\":{\"volumes\":[{\"name\":\"t\",\"emptyDir\":{}}]}},"
	"{" META("default", "job-x", "u3", OWNER("Job") ",\"deletionTimestamp\":\"2026-11-27T20:05:00Z\"") ",\"spec\":{}},"
	"{" META("kube-system", "agent-x", "u4", OWNER("DaemonSet")) ",\"spec\":{\"priority\":2000001000}},"
	"{" META("kube-system", "etcd-n", "u5", ",\"annotations\":{\"kubernetes.io/config.mirror\":\"abc\"}" OWNER("Node")) ",\"spec\":{\"volumes\":[{\"name\":\"d\",\"hostPath\":{\"path\":\"/x\"}}]}},"
	"{" META("default", "bare", "u6", ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\",\"uid\":\"z\"}]") ",\"spec\":{\"priority\":-5}},"
	"{" META("default", "custom", "u7", OWNER("Rollout")) ",\"spec\":{}},"
	"{" META("default", "renamed", "other-uid", OWNER("ReplicaSet")) ",\"spec\":{}},"
	"{" META("default", "not-hot", "u9", OWNER("ReplicaSet")) ",\"spec\":{}}"
	"]}";

static const char *const names[][2] = {
	{ "default", "web-a" }, { "default", "db-0" }, { "default", "job-x" },
	{ "kube-system", "agent-x" }, { "kube-system", "etcd-n" }, { "default", "bare" },
	{ "default", "custom" }, { "default", "renamed" }, { "default", "gone" },
};
#define N_PODS (sizeof(names) / sizeof(names[0]))

static void node_with_pods(struct decide_node *n, struct decide_pod *pods)
{
	memset(n, 0, sizeof(*n));
	memset(pods, 0, N_PODS * sizeof(*pods));
	for (size_t i = 0; i < N_PODS; i++) {
		snprintf(pods[i].namespace, DECIDE_NS_MAX, "%s", names[i][0]);
		snprintf(pods[i].name, DECIDE_POD_MAX, "%s", names[i][1]);
	}
	snprintf(pods[7].uid, DECIDE_UID_MAX, "u8");	/* the scorer knew another pod */
	n->pods = pods;
	n->n_pods = N_PODS;
}

static void test_podfacts_list(void **state)
{
	struct decide_pod pods[N_PODS];
	struct decide_node n;
	char err[256] = "";

	(void)state;
	node_with_pods(&n, pods);
	assert_int_equal(podfacts_join(list, strlen(list), &n, err, sizeof(err)), 0);
	assert_true(pods[0].known);
	assert_int_equal(pods[0].owner, DECIDE_OWNER_REPLICASET);
	assert_int_equal(pods[0].created_s, 1795809600ULL);	/* 2026-11-27T20:00:00Z */
	assert_string_equal(pods[0].uid, "u1");
	assert_false(pods[0].local_storage || pods[0].deleting || pods[0].mirror);
	assert_int_equal(pods[1].owner, DECIDE_OWNER_STATEFULSET);
	assert_true(pods[1].local_storage);
	assert_int_equal(pods[2].owner, DECIDE_OWNER_JOB);
	assert_true(pods[2].deleting);
	assert_int_equal(pods[3].owner, DECIDE_OWNER_DAEMONSET);
	assert_int_equal(pods[3].priority, 2000001000);
	assert_true(pods[4].mirror);
	assert_true(pods[4].local_storage);
	assert_int_equal(pods[4].owner, DECIDE_OWNER_OTHER);
	/* An ownerReference without controller: true is no controller. */
	assert_int_equal(pods[5].owner, DECIDE_OWNER_NONE);
	assert_int_equal(pods[5].priority, -5);
	assert_int_equal(pods[6].owner, DECIDE_OWNER_OTHER);
	/* Same name, another UID: another pod, left unknown. */
	assert_false(pods[7].known);
	/* Not in the list. */
	assert_false(pods[8].known);
}

static void test_podfacts_time(void **state)
{
	static const struct { const char *s; uint64_t want; int rc; } rows[] = {
		{ "1970-01-01T00:00:00Z", 0, 0 },
		{ "2026-11-27T20:00:00Z", 1795809600ULL, 0 },
		{ "2026-11-27T20:00:00.123456Z", 1795809600ULL, 0 },
		{ "2026-11-27T21:00:00+01:00", 1795809600ULL, 0 },
		{ "2024-02-29T00:00:00Z", 1709164800ULL, 0 },
		{ "2026-11-27 20:00:00Z", 0, -EINVAL },
		{ "2026-13-27T20:00:00Z", 0, -EINVAL },
		{ "2026-11-27T20:00:00", 0, -EINVAL },
		{ "2026-11-27T20:00:00.Z", 0, -EINVAL },
		{ "1969-12-31T23:59:59Z", 0, -EINVAL },
		{ "", 0, -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t t = 42;
		int rc = podfacts_parse_time(rows[i].s, strlen(rows[i].s), &t);

		if (rc != rows[i].rc || (rc == 0 && t != rows[i].want))
			fail_msg("%s: rc %d t %llu", rows[i].s, rc, (unsigned long long)t);
		if (rc)
			assert_int_equal(t, 42);
	}
}

static void test_podfacts_bad(void **state)
{
	static const struct { const char *json, *want; } rows[] = {
		{ "{\"items\":{}}", "not a PodList: items is an object" },
		{ "[1]", "not a PodList" },
		{ "{\"items\":[{\"metadata\":1,\"spec\":{}}]}", "items[0]: metadata or spec is not an object" },
		{ "{\"items\":[{\"metadata\":{\"namespace\":\"default\",\"name\":\"web-a\","
		  "\"creationTimestamp\":\"yesterday\"},\"spec\":{}}]}",
		  "pod default/web-a: creationTimestamp is not an RFC 3339 time" },
		{ "{\"items\":[{\"metadata\":{\"namespace\":\"default\",\"name\":\"web-a\","
		  "\"creationTimestamp\":\"2026-11-27T20:00:00Z\"},\"spec\":{\"priority\":\"high\"}}]}",
		  "pod default/web-a: spec.priority is a string, not a number" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct decide_pod pods[N_PODS];
		struct decide_node n;
		char err[256] = "";

		node_with_pods(&n, pods);
		pods[0].known = true;
		if (podfacts_join(rows[i].json, strlen(rows[i].json), &n, err, sizeof(err)) == 0 ||
		    !strstr(err, rows[i].want))
			fail_msg("'%s': error '%s', want '%s'", rows[i].json, err, rows[i].want);
		for (size_t k = 0; k < N_PODS; k++)
			assert_false(pods[k].known);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podfacts_list),
		cmocka_unit_test(test_podfacts_time),
		cmocka_unit_test(test_podfacts_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
