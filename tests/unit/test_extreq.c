/* Reading ExtenderArgs (scorer/parse/extreq.c) on bytes alone: both modes, the
 * pod's annotations (exact map keys, escapes decoded only in keys), what a
 * node name may hold, the limits, and that *rq is untouched on error. The
 * replies built from requests are tested in test_extender.c; the JSON
 * grammar in test_json.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/file.h"
#include "scorer/parse/extreq.h"

static const struct extreq_limits limits = { .max_nodes = 10000,
					     .max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS };

struct parse_row {
	const char *name;
	const char *body;
	int rc;
	const char *error;		/* part of the message when rc != 0 */
	enum extreq_mode mode;		/* when rc == 0 */
	size_t n;
	const char *last;		/* the last node's name */
};

static const struct parse_row parse_rows[] = {
	{ "names", "{\"NodeNames\":[\"a\",\"b\"]}", 0, NULL, EXTREQ_NAMES, 2, "b" },
	{ "full objects", "{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"x\"}}]}}", 0, NULL,
	  EXTREQ_FULL, 1, "x" },
	{ "keys fold like Go's", "{\"nodenames\":[\"a\"],\"POD\":null}", 0, NULL, EXTREQ_NAMES, 1, "a" },
	{ "last duplicate wins", "{\"NodeNames\":[\"a\"],\"NodeNames\":[\"b\",\"c\"]}", 0, NULL,
	  EXTREQ_NAMES, 2, "c" },
	{ "items null is empty", "{\"Nodes\":{\"items\":null}}", 0, NULL, EXTREQ_FULL, 0, NULL },
	{ "empty list", "{\"NodeNames\":[]}", 0, NULL, EXTREQ_NAMES, 0, NULL },
	{ "both lists", "{\"Nodes\":{},\"NodeNames\":[]}", -EINVAL, "both Nodes and NodeNames", 0, 0, NULL },
	{ "no list", "{\"Pod\":{}}", -EINVAL, "neither Nodes nor NodeNames", 0, 0, NULL },
	{ "an array at the top", "[1]", -EINVAL, "got an array", 0, 0, NULL },
	{ "a name that is a number", "{\"NodeNames\":[\"a\",7]}", -EINVAL,
	  "NodeNames[1] is a number", 0, 0, NULL },
	{ "a name that is an object", "{\"NodeNames\":[{},\"b\"]}", -EINVAL,
	  "NodeNames[0] is an object", 0, 0, NULL },
	{ "an empty name", "{\"NodeNames\":[\"\"]}", -EINVAL, "NodeNames[0] is empty", 0, 0, NULL },
	{ "an escaped name", "{\"NodeNames\":[\"a\\u0041\"]}", -EINVAL, "not a DNS subdomain: byte 1 is '\\'", 0, 0, NULL },
	{ "no metadata", "{\"Nodes\":{\"items\":[{}]}}", -EINVAL, "Nodes.items[0].metadata is missing",
	  0, 0, NULL },
	{ "no name", "{\"Nodes\":{\"items\":[{\"metadata\":{}}]}}", -EINVAL,
	  "Nodes.items[0].metadata.name is missing", 0, 0, NULL },
	{ "items not a list", "{\"Nodes\":{\"items\":{}}}", -EINVAL, "Nodes.items is an object", 0, 0,
	  NULL },
	{ "a pod that is a string", "{\"Pod\":\"x\",\"NodeNames\":[]}", -EINVAL, "Pod is a string", 0,
	  0, NULL },
	{ "a uid that is a number", "{\"Pod\":{\"metadata\":{\"uid\":7}},\"NodeNames\":[]}", -EINVAL,
	  "Pod.metadata.uid is a number", 0, 0, NULL },
	{ "a uid over 64 bytes", "{\"Pod\":{\"metadata\":{\"uid\":\"0123456789012345678901234567890"
	  "12345678901234567890123456789012345\"}},\"NodeNames\":[]}", -EINVAL,
	  "Pod.metadata.uid is longer than the 64 bytes allowed", 0, 0, NULL },
	/* Strict JSON everywhere in the body, not only where it is read. */
	{ "invalid UTF-8 in an annotation we do not read",
	  "{\"Pod\":{\"metadata\":{\"annotations\":{\"note\":\"\xe9t\xe9\"}}},\"NodeNames\":[\"a\"]}",
	  -EINVAL, "near byte 43: invalid UTF-8 in a string (byte 0xe9)", 0, 0, NULL },
	{ "invalid UTF-8 in the pod's name",
	  "{\"Pod\":{\"metadata\":{\"name\":\"p\xff\"}},\"NodeNames\":[\"a\"]}", -EINVAL,
	  "invalid UTF-8 in a string (byte 0xff)", 0, 0, NULL },
	{ "a raw control byte in the spec",
	  "{\"Pod\":{\"spec\":{\"x\":\"\x1b[31m\"}},\"NodeNames\":[\"a\"]}", -EINVAL,
	  "control byte 0x1b inside a string", 0, 0, NULL },
	{ "a 100-digit number in the spec",
	  "{\"Pod\":{\"spec\":{\"priority\":1000000000000000000000000000000000000000000000000000"
	  "000000000000000000000000000000000000000000000000}},\"NodeNames\":[\"a\"]}", -EINVAL,
	  "a number of 100 characters, limit 64", 0, 0, NULL },
	{ "an annotation that is a number",
	  "{\"Pod\":{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress-bandwidth\":1}}},"
	  "\"NodeNames\":[]}", -EINVAL, "ingress-bandwidth\"] is a number", 0, 0, NULL },
};

static void test_extreq_parse(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(parse_rows) / sizeof(parse_rows[0]); r++) {
		const struct parse_row *row = &parse_rows[r];
		struct extreq rq = { .n = 42 };
		char err[256] = "";
		int rc = extreq_parse(row->body, strlen(row->body), &limits, &rq, err, sizeof(err));

		if (rc != row->rc)
			fail_msg("%s: extreq_parse gave %d (%s), want %d", row->name, rc, err, row->rc);
		if (rc) {
			if (!strstr(err, row->error))
				fail_msg("%s: \"%s\" does not say \"%s\"", row->name, err, row->error);
			if (rq.n != 42)
				fail_msg("%s: *rq was touched on error", row->name);
			continue;
		}
		if (rq.mode != row->mode || rq.n != row->n)
			fail_msg("%s: mode %d with %zu nodes, want %d with %zu", row->name, rq.mode, rq.n,
				 row->mode, row->n);
		if (row->last && (rq.nodes[rq.n - 1].name_len != strlen(row->last) ||
				  memcmp(rq.nodes[rq.n - 1].name, row->last, strlen(row->last))))
			fail_msg("%s: last node %.*s, want %s", row->name,
				 (int)rq.nodes[rq.n - 1].name_len, rq.nodes[rq.n - 1].name, row->last);
		extreq_free(&rq);
	}
}

static void test_extreq_annotations(void **state)
{
	const char *req = "{\"Pod\":{\"metadata\":{\"annotations\":{"
			  "\"kubernetes.io/ingress-bandwidth\":\"10M\","
			  "\"Kubernetes.io/egress-bandwidth\":\"ignored: map keys are exact\","
			  "\"kubernetes.io\\/egress-bandwidth\":\"1G\"}}},\"NodeNames\":[\"a\"]}";
	struct extreq rq;
	char err[256];

	(void)state;
	assert_int_equal(extreq_parse(req, strlen(req), &limits, &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.mode, EXTREQ_NAMES);
	assert_int_equal(rq.n, 1);
	assert_int_equal(rq.ingress_bandwidth.len, 3);
	assert_memory_equal(rq.ingress_bandwidth.s, "10M", 3);
	assert_int_equal(rq.egress_bandwidth.len, 2);
	assert_memory_equal(rq.egress_bandwidth.s, "1G", 2);
	extreq_free(&rq);

	req = "{\"Pod\":{\"metadata\":{\"annotations\":null}},\"NodeNames\":[\"a\"]}";
	assert_int_equal(extreq_parse(req, strlen(req), &limits, &rq, err, sizeof(err)), 0);
	assert_null(rq.ingress_bandwidth.s);
	assert_null(rq.egress_bandwidth.s);
	extreq_free(&rq);
}

/* The pod's UID is read as the pod watch reads it (poduid.h): escapes
 * decoded, so the in-flight pod the request assumes is the one the watch
 * sees bound. */
static void test_extreq_uid(void **state)
{
	const char *req = "{\"Pod\":{\"metadata\":{\"UID\":\"6f1c\\u002d9a\\/b\"}},\"NodeNames\":[\"a\"]}";
	struct extreq rq;
	char err[256];

	(void)state;
	assert_int_equal(extreq_parse(req, strlen(req), &limits, &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.pod_uid.len, 9);
	assert_memory_equal(rq.pod_uid.s, "6f1c-9a/b", 9);
	extreq_free(&rq);
	req = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}";
	assert_int_equal(extreq_parse(req, strlen(req), &limits, &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.pod_uid.len, 0);
	extreq_free(&rq);
}

static void test_extreq_error_codes(void **state)
{
	const char *body = "{\"NodeNames\":[\"a\",\"b\",\"c\"]}";
	struct extreq_limits two = { .max_nodes = 2, .max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS };
	struct extreq rq = { .n = 42 };
	size_t len = strlen(body);
	char err[256];

	(void)state;
	assert_int_equal(extreq_parse(body, len, &two, &rq, err, sizeof(err)), -E2BIG);
	assert_int_equal(rq.n, 42); /* untouched on error */
	assert_int_equal(extreq_parse("{", 1, &limits, &rq, err, sizeof(err)), -EINVAL);
	assert_int_equal(rq.n, 42);
}

/* The preempt verb's requests (ExtenderPreemptionArgs), both modes, from
 * the fixtures (run from the repository root): candidates in request order,
 * each with its victims' UIDs (and, in full mode, their annotations), and
 * NumPDBViolations as sent. */
static void test_extreq_preemption(void **state)
{
	static const char *const dir = "tests/fixtures/extender/synthetic/";
	char path[256], err[256], *body;
	struct extreq_preemption p = { .n = 42 };
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%spreempt_request_nodeCacheCapable_true.json", dir);
	assert_int_equal(file_read_small(path, 1 << 20, &body, &len, NULL, err, sizeof(err)), 0);
	if (extreq_parse_preemption(body, len, &limits, &p, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	assert_int_equal(p.pod.mode, EXTREQ_NAMES);
	assert_int_equal(p.pod.pod_uid.len, 36);
	assert_int_equal(p.pod.ingress_bandwidth.len, 4);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.candidates[1].name_len, 6);
	assert_memory_equal(p.candidates[1].name, "node-b", 6);
	assert_int_equal(p.candidates[1].n_victims, 2);
	assert_memory_equal(p.candidates[1].victims[1].uid.s, "0b7d6c5e-1a2b-4c3d-8e9f-00000000b002",
			    36);
	assert_null(p.candidates[1].victims[0].ingress.s);
	assert_int_equal(p.candidates[1].pdb.len, 1);
	assert_memory_equal(p.candidates[1].pdb.s, "1", 1);
	extreq_preemption_free(&p);
	free(body);

	snprintf(path, sizeof(path), "%spreempt_request_nodeCacheCapable_false.json", dir);
	assert_int_equal(file_read_small(path, 1 << 20, &body, &len, NULL, err, sizeof(err)), 0);
	if (extreq_parse_preemption(body, len, &limits, &p, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	assert_int_equal(p.pod.mode, EXTREQ_FULL);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.candidates[0].n_victims, 2);
	assert_int_equal(p.candidates[0].victims[0].ingress.len, 4);
	assert_memory_equal(p.candidates[0].victims[0].ingress.s, "400M", 4);
	assert_int_equal(p.candidates[1].n_victims, 1);
	assert_memory_equal(p.candidates[1].victims[0].uid.s, "0b7d6c5e-1a2b-4c3d-8e9f-00000000c001",
			    36);
	extreq_preemption_free(&p);
	/* Tighter limits: -E2BIG, *p untouched. */
	{
		struct extreq_limits one = { .max_nodes = 1,
					     .max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS };

		p.n = 42;
		assert_int_equal(extreq_parse_preemption(body, len, &one, &p, err, sizeof(err)), -E2BIG);
		assert_non_null(strstr(err, "2 candidate nodes, limit 1"));
		assert_int_equal(p.n, 42);
	}
	free(body);
	extreq_preemption_free(&(struct extreq_preemption){ 0 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extreq_parse),
		cmocka_unit_test(test_extreq_annotations),
		cmocka_unit_test(test_extreq_uid),
		cmocka_unit_test(test_extreq_error_codes),
		cmocka_unit_test(test_extreq_preemption),
	};
	return cmocka_run_group_tests_name("extreq", tests, NULL, NULL);
}
