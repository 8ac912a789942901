/* The scorer's /v1/pressure reply as the rebalancer reads it
 * (rebalancer/pressure.c): the contract's example to the byte, then each
 * kind of bad reply as a row, refused with a message naming the field and
 * nothing kept. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rebalancer/pressure.h"

static const char example[] =
	"{\"hot\":0.900,\"windowSeconds\":30,\"nodes\":["
	"{\"name\":\"node-5\",\"fresh\":true,\"reports\":99,\"linkBytesPerSecond\":125000000,"
	"\"rxBytesPerSecond\":1000,\"txBytesPerSecond\":2000,\"inflightRxBytesPerSecond\":5,"
	"\"inflightTxBytesPerSecond\":6,\"heldForWorkloads\":1},"
	"{\"name\":\"node-3\",\"fresh\":true,\"reports\":1234,"
	"\"linkBytesPerSecond\":125000000,"
	"\"rxBytesPerSecond\":118000000,\"txBytesPerSecond\":2000000,"
	"\"inflightRxBytesPerSecond\":0,\"inflightTxBytesPerSecond\":0,"
	"\"heldForWorkloads\":0,"
	"\"pods\":[{\"namespace\":\"default\",\"name\":\"web-7f9c-x\",\"uid\":\"8c1f\",\"workload\":\"default/web\","
	"\"rxBytesPerSecond\":30000000,\"txBytesPerSecond\":100000},"
	"{\"rxBytesPerSecond\":10,\"txBytesPerSecond\":0}]},"
	"{\"name\":\"node-9\",\"fresh\":false,\"reports\":0,\"linkBytesPerSecond\":0,"
	"\"rxBytesPerSecond\":0,\"txBytesPerSecond\":0,\"futureField\":{\"a\":[1]}}"
	"]}";

static void test_pressure_example(void **state)
{
	struct decide_snapshot s = { .now_s = 77 };
	char err[256] = "";

	(void)state;
	assert_int_equal(pressure_parse(example, strlen(example), &s, err, sizeof(err)), 0);
	assert_int_equal(s.now_s, 77);
	assert_int_equal(s.n_nodes, 3);
	/* Sorted by name. */
	assert_string_equal(s.nodes[0].name, "node-3");
	assert_string_equal(s.nodes[1].name, "node-5");
	assert_string_equal(s.nodes[2].name, "node-9");
	assert_true(s.nodes[0].fresh);
	assert_int_equal(s.nodes[0].reports, 1234);
	assert_int_equal(s.nodes[0].link, 125000000);
	assert_int_equal(s.nodes[0].rate[DECIDE_RX], 118000000);
	assert_int_equal(s.nodes[0].rate[DECIDE_TX], 2000000);
	assert_int_equal(s.nodes[1].inflight[DECIDE_RX], 5);
	assert_int_equal(s.nodes[1].inflight[DECIDE_TX], 6);
	assert_int_equal(s.nodes[0].n_pods, 2);
	assert_string_equal(s.nodes[0].pods[0].namespace, "default");
	assert_string_equal(s.nodes[0].pods[0].name, "web-7f9c-x");
	assert_string_equal(s.nodes[0].pods[0].uid, "8c1f");
	assert_string_equal(s.nodes[0].pods[0].workload, "default/web");
	assert_int_equal(s.nodes[0].pods[0].rx, 30000000);
	assert_int_equal(s.nodes[0].pods[0].tx, 100000);
	assert_false(s.nodes[0].pods[0].known);
	/* A pod the scorer could not join: no names, never moved. */
	assert_string_equal(s.nodes[0].pods[1].name, "");
	assert_false(s.nodes[2].fresh);
	assert_int_equal(s.nodes[2].n_pods, 0);
	decide_snapshot_free(&s);
}

static const struct {
	const char *what, *json, *want;
	int rc;
} bad[] = {
	{ "not JSON", "{\"nodes\":[", "", -EINVAL },
	{ "no nodes", "{\"hot\":0.9}", "nodes is missing, not an array", -EINVAL },
	{ "nodes not an array", "{\"nodes\":{}}", "nodes is an object, not an array", -EINVAL },
	{ "a node not an object", "{\"nodes\":[1]}", "nodes[0] is a number, not an object", -EINVAL },
	{ "no name", "{\"nodes\":[{\"fresh\":true}]}", "nodes[0]: name is missing, not a string",
	  -EINVAL },
	{ "empty name", "{\"nodes\":[{\"name\":\"\",\"fresh\":true}]}", "nodes[0]: name is empty",
	  -EINVAL },
	{ "fresh a string", "{\"nodes\":[{\"name\":\"n\",\"fresh\":\"yes\"}]}",
	  "node n: fresh is a string, not true or false", -EINVAL },
	{ "rate missing", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1,\"txBytesPerSecond\":1}]}", "node n: rxBytesPerSecond is missing",
	  -EINVAL },
	{ "negative rate", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":-5,\"txBytesPerSecond\":1}]}",
	  "node n: rxBytesPerSecond is a number, not a whole number", -EINVAL },
	{ "fractional rate", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1.5,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1}]}",
	  "node n: linkBytesPerSecond is not a whole number below 2^64", -EINVAL },
	{ "rate over 2^64", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":18446744073709551616,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1}]}",
	  "linkBytesPerSecond is not a whole number below 2^64", -EINVAL },
	{ "pods not an array", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1,\"pods\":{}}]}",
	  "node n: pods is an object, not an array", -EINVAL },
	{ "a pod without rates", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1,"
	  "\"pods\":[{\"name\":\"p\"}]}]}", "node n pod 0: rxBytesPerSecond is missing", -EINVAL },
	{ "a pod's namespace a number", "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
	  "\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1,"
	  "\"pods\":[{\"namespace\":7,\"rxBytesPerSecond\":1,\"txBytesPerSecond\":1}]}]}",
	  "node n pod 0: namespace is a number, not a string", -EINVAL },
	{ "two nodes of one name", "{\"nodes\":["
	  "{\"name\":\"n\",\"fresh\":true,\"reports\":1,\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1},"
	  "{\"name\":\"n\",\"fresh\":true,\"reports\":1,\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,\"txBytesPerSecond\":1}]}",
	  "two nodes share a name", -EINVAL },
	{ "a name with an escaped NUL", "{\"nodes\":[{\"name\":\"a\\u0000b\",\"fresh\":true}]}",
	  "nodes[0]: name holds a NUL byte", -EINVAL },
};

static void test_pressure_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct decide_snapshot s = { .now_s = 5 };
		char err[256] = "";
		int rc = pressure_parse(bad[i].json, strlen(bad[i].json), &s, err, sizeof(err));

		if (rc != bad[i].rc || !strstr(err, bad[i].want))
			fail_msg("%s: rc %d, error '%s', want %d '%s'", bad[i].what, rc, err,
				 bad[i].rc, bad[i].want);
		assert_null(s.nodes);
		assert_int_equal(s.n_nodes, 0);
		assert_int_equal(s.now_s, 5);
	}
}

/* Bounds: 33 pods on a node, a name longer than Kubernetes allows. */
static void test_pressure_bounds(void **state)
{
	struct decide_snapshot s = { 0 };
	char err[256] = "", *js = malloc(64 * 1024);
	size_t n = 0;

	(void)state;
	assert_non_null(js);
	n += (size_t)sprintf(js + n, "{\"nodes\":[{\"name\":\"n\",\"fresh\":true,\"reports\":1,"
			     "\"linkBytesPerSecond\":1,\"rxBytesPerSecond\":5,"
			     "\"txBytesPerSecond\":1,\"pods\":[");
	for (int i = 0; i < 33; i++)
		n += (size_t)sprintf(js + n, "%s{\"rxBytesPerSecond\":1,\"txBytesPerSecond\":1}",
				     i ? "," : "");
	n += (size_t)sprintf(js + n, "]}]}");
	assert_int_equal(pressure_parse(js, n, &s, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "node n: 33 pods, more than the 32 the contract allows"));

	n = (size_t)sprintf(js, "{\"nodes\":[{\"name\":\"");
	memset(js + n, 'a', 300);
	n += 300;
	n += (size_t)sprintf(js + n, "\",\"fresh\":true}]}");
	assert_int_equal(pressure_parse(js, n, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nodes[0]: name is longer than 253 bytes"));
	free(js);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pressure_example),
		cmocka_unit_test(test_pressure_bad),
		cmocka_unit_test(test_pressure_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
