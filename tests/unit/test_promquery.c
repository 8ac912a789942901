/* The fallback's PromQL and reply parsing: each preset's query (always
 * rate/irate with the device filter, never sum_over_time), refused custom
 * queries and unsafe devices, and replies: good vectors, merged rx/tx,
 * dropped NaN/Inf/negative/absurd/unnamed values, and everything that is
 * not a successful vector. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/membudget.h"
#include "scorer/prom/promquery.h"

static struct promquery_config base(enum promquery_preset preset)
{
	struct promquery_config c = { .preset = preset };

	strcpy(c.device, "ens192");
	strcpy(c.range, "5m");
	strcpy(c.node_label, "node");
	return c;
}

static void test_promquery_build(void **state)
{
	struct promquery_config c;
	char q[PROMQUERY_MAX_LEN], why[256];

	(void)state;
	c = base(PROMQUERY_KUBE_PROMETHEUS);
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), 0);
	assert_string_equal(q,
		"label_replace(sum by (instance) (rate(node_network_receive_bytes_total"
		"{device=~\"ens192\"}[5m])), \"netsched_dir\", \"rx\", \"\", \"\") or "
		"label_replace(sum by (instance) (rate(node_network_transmit_bytes_total"
		"{device=~\"ens192\"}[5m])), \"netsched_dir\", \"tx\", \"\", \"\")");
	c = base(PROMQUERY_GO_PLUGIN);
	c.irate = true;
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), 0);
	assert_non_null(strstr(q, "sum by (kubernetes_node) (irate("));
	assert_string_equal(promquery_node_label(&c), "kubernetes_node");
	c = base(PROMQUERY_NODE_UNAME);
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), 0);
	assert_non_null(strstr(q, "group_left (nodename) node_uname_info"));
	c = base(PROMQUERY_CUSTOM);
	strcpy(c.custom, "max by (node) (rate($metric{device=\"$device\"}[$range]))");
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), 0);
	assert_non_null(strstr(q, "max by (node) (rate(node_network_transmit_bytes_total"
				  "{device=\"ens192\"}[5m]))"));
	assert_null(strstr(q, "sum_over_time"));

	strcpy(c.custom, "sum by (node) (sum_over_time($metric[5m]))");
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "sum_over_time"));
	strcpy(c.custom, "up");
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), -EINVAL);
	c = base(PROMQUERY_KUBE_PROMETHEUS);
	strcpy(c.device, "eth0\"}) or vector(1) #");
	assert_int_equal(promquery_build(&c, q, sizeof(q), why, sizeof(why)), -EINVAL);
	c = base(PROMQUERY_KUBE_PROMETHEUS);
	assert_int_equal(promquery_build(&c, q, 64, why, sizeof(why)), -E2BIG);
}

#define SERIES(node, dir, v) \
	"{\"metric\":{\"instance\":\"" node "\",\"netsched_dir\":\"" dir "\"},\"value\":[1.5,\"" v "\"]}"
#define VECTOR(...) \
	"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" __VA_ARGS__ "]}}"

struct parse_row {
	const char *name;
	const char *body;
	int rc;
	size_t n, dropped;
	const char *first;	/* first node after sorting */
	uint64_t first_rx, first_tx;
};

static const struct parse_row rows[] = {
	{ "empty vector", VECTOR(""), 0, 0, 0, NULL, 0, 0 },
	{ "rx and tx merge, sorted by node",
	  VECTOR(SERIES("n2", "rx", "5") "," SERIES("n1", "tx", "7.6") "," SERIES("n1", "rx", "100")),
	  0, 2, 0, "n1", 100, 8 },
	{ "NaN, Inf, negative and absurd are dropped",
	  VECTOR(SERIES("n1", "rx", "NaN") "," SERIES("n2", "rx", "+Inf") "," SERIES("n3", "rx", "-1")
		 "," SERIES("n4", "rx", "1e15") "," SERIES("n5", "rx", "12")),
	  0, 1, 4, "n5", 12, 0 },
	{ "no node label or a bad name is dropped",
	  VECTOR("{\"metric\":{\"netsched_dir\":\"rx\"},\"value\":[1,\"1\"]},"
		 SERIES("a b", "rx", "1") "," SERIES("ok", "rx", "1")),
	  0, 1, 2, "ok", 1, 0 },
	{ "an unknown direction or a value that is not a pair is dropped",
	  VECTOR(SERIES("n1", "up", "1") ","
		 "{\"metric\":{\"instance\":\"n2\",\"netsched_dir\":\"rx\"},\"value\":[1]}"),
	  0, 0, 2, NULL, 0, 0 },
	{ "error status", "{\"status\":\"error\",\"error\":\"bad\"}", -EBADMSG, 0, 0, NULL, 0, 0 },
	{ "matrix", "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
	  -EBADMSG, 0, 0, NULL, 0, 0 },
	{ "not JSON", "<html>", -EBADMSG, 0, 0, NULL, 0, 0 },
	{ "truncated JSON", "{\"status\":\"success\",\"data\":{", -EBADMSG, 0, 0, NULL, 0, 0 },
	{ "empty", "", -EBADMSG, 0, 0, NULL, 0, 0 },
	{ "more nodes than the limit",
	  VECTOR(SERIES("n1", "rx", "1") "," SERIES("n2", "rx", "1") "," SERIES("n3", "rx", "1") ","
		 SERIES("n4", "rx", "1") "," SERIES("n5", "rx", "1")),
	  -E2BIG, 0, 0, NULL, 0, 0 },
};

static void test_promquery_parse(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct parse_row *row = &rows[r];
		struct promquery_result res = { 0 };
		char err[256] = "";
		int rc = promquery_parse(row->body, strlen(row->body), "instance", 4, &res, err,
					 sizeof(err));

		if (rc != row->rc)
			fail_msg("%s: rc %d (%s), want %d", row->name, rc, err, row->rc);
		if (rc) {
			assert_true(err[0] != '\0');
			continue;
		}
		if (res.n != row->n || res.dropped != row->dropped)
			fail_msg("%s: %zu nodes %zu dropped, want %zu and %zu", row->name, res.n,
				 res.dropped, row->n, row->dropped);
		if (row->first && (strcmp(res.values[0].node, row->first) ||
				   res.values[0].rx_bytes_per_second != row->first_rx ||
				   res.values[0].tx_bytes_per_second != row->first_tx))
			fail_msg("%s: first %s rx %llu tx %llu", row->name, res.values[0].node,
				 (unsigned long long)res.values[0].rx_bytes_per_second,
				 (unsigned long long)res.values[0].tx_bytes_per_second);
		promquery_result_free(&res);
	}
}

/* The tokens come from the budget while the reply is parsed and go back
 * after: a budget without room for them refuses the reply and is left as
 * it was; one with room parses it and is empty again. */
static void test_promquery_parse_budget(void **state)
{
	static const char body[] = VECTOR(SERIES("n1", "rx", "1") "," SERIES("n2", "tx", "2"));
	const struct {
		const char *name;
		size_t limit;	/* bytes; the reply has 31 tokens of 20 */
		int rc;
	} cases[] = {
		{ "no room", 64, -EBUSY },
		{ "room", 4096, 0 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct promquery_result res = { 0 };
		struct membudget b;
		char err[256] = "";
		int rc;

		membudget_init(&b, cases[c].limit, 0, 0);
		rc = promquery_parse_budget(body, strlen(body), "instance", 4, &b, &res, err,
					    sizeof(err));
		if (rc != cases[c].rc)
			fail_msg("%s: rc %d (%s), want %d", cases[c].name, rc, err, cases[c].rc);
		assert_int_equal(membudget_used(&b), 0);
		if (rc)
			assert_non_null(strstr(err, "no room"));
		else
			assert_int_equal(res.n, 2);
		promquery_result_free(&res);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_promquery_build),
		cmocka_unit_test(test_promquery_parse),
		cmocka_unit_test(test_promquery_parse_budget),
	};
	return cmocka_run_group_tests_name("promquery", tests, NULL, NULL);
}
