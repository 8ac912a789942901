/* Bandwidth annotations as CNIs write them (scorer/parse/bwannot.c): each
 * key in its CNI's unit, the upstream key first, and the extender request
 * and the pod watch reading the first key of each direction
 * (scorer/parse/extreq.c, scorer/parse/kubepod.c). A unit
 * mismatch reserves 8x (bytes for bits) or 10^6x (Mbit/s for bit/s) too
 * little, so each row is a value a user would write for that CNI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scorer/parse/bwannot.h"
#include "common/json.h"
#include "scorer/parse/kubepod.h"
#include "scorer/parse/extreq.h"

static const struct bwannot_key *key(const char *name)
{
	for (size_t i = 0; i < BWANNOT_KEYS; i++)
		if (!strcmp(bwannot_keys[i].key, name))
			return &bwannot_keys[i];
	fail_msg("no key %s", name);
	return NULL;
}

struct value_row {
	const char *key, *value;
	int rc;
	uint64_t bps;
};

static const struct value_row value_rows[] = {
	{ "kubernetes.io/ingress-bandwidth", "10M", 0, 10000000 },
	{ "kubernetes.io/egress-bandwidth", "1G", 0, 1000000000 },
	{ "kubernetes.io/ingress-bandwidth", "100", 0, 100 },
	{ "qos.projectcalico.org/ingressBandwidth", "50M", 0, 50000000 },
	{ "qos.projectcalico.org/egressBandwidth", "2.5G", 0, 2500000000 },
	{ "ovn.kubernetes.io/ingress_rate", "100", 0, 100000000 },
	{ "ovn.kubernetes.io/egress_rate", "2.5", 0, 2500000 },
	{ "ovn.kubernetes.io/ingress_rate", "100M", -22, 0 },	/* not Kube-OVN's */
	{ "ovn.kubernetes.io/ingress_rate", "1e3", -22, 0 },
	{ "ovn.kubernetes.io/ingress_rate", "1.2.3", -22, 0 },
	{ "ovn.kubernetes.io/ingress_rate", "", -22, 0 },
	{ "ovn.kubernetes.io/ingress_rate", "123456789012345678901234567890123", -22, 0 },
	{ "kubernetes.io/ingress-bandwidth", "ten", -22, 0 },
	{ "kubernetes.io/ingress-bandwidth", "", -22, 0 },
};

static void test_bwannot_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(value_rows) / sizeof(value_rows[0]); i++) {
		const struct value_row *r = &value_rows[i];
		uint64_t bps = 0;
		int rc = bwannot_parse(key(r->key), r->value, strlen(r->value), &bps);

		if (rc != r->rc || (rc == 0 && bps != r->bps))
			fail_msg("%s: \"%s\": rc %d, %llu b/s; want %d, %llu", r->key, r->value, rc,
				 (unsigned long long)bps, r->rc, (unsigned long long)r->bps);
	}
	assert_int_equal(bwannot_parse(NULL, "1M", 2, NULL), -22);
}

static const struct extreq_limits limits = { .max_nodes = 16,
					     .max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS };

/* A request whose pod carries annotations (a JSON object's members). */
static void parse(const char *annotations, struct extreq *rq)
{
	char body[1024], err[256];
	int n = snprintf(body, sizeof(body),
			 "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\","
			 "\"annotations\":{%s}}},\"NodeNames\":[\"a\"]}", annotations);

	assert_true(n > 0 && (size_t)n < sizeof(body));
	if (extreq_parse(body, (size_t)n, &limits, rq, err, sizeof(err)))
		fail_msg("%s", err);
}

static void test_bwannot_request(void **state)
{
	struct extreq rq;

	(void)state;
	/* Calico's and Kube-OVN's keys, each direction its own. */
	parse("\"qos.projectcalico.org/ingressBandwidth\":\"30M\","
	      "\"ovn.kubernetes.io/egress_rate\":\"20\"", &rq);
	assert_ptr_equal(rq.ingress_key, key("qos.projectcalico.org/ingressBandwidth"));
	assert_ptr_equal(rq.egress_key, key("ovn.kubernetes.io/egress_rate"));
	assert_int_equal(rq.egress_bandwidth.len, 2);
	extreq_free(&rq);
	/* The upstream key wins over a CNI's own, whatever the order. */
	parse("\"ovn.kubernetes.io/ingress_rate\":\"900\","
	      "\"kubernetes.io/ingress-bandwidth\":\"10M\"", &rq);
	assert_ptr_equal(rq.ingress_key, key("kubernetes.io/ingress-bandwidth"));
	assert_int_equal(rq.ingress_bandwidth.len, 3);
	assert_null(rq.egress_key);
	extreq_free(&rq);
	/* None: no key. */
	parse("\"app\":\"web\"", &rq);
	assert_null(rq.ingress_key);
	assert_null(rq.egress_key);
	extreq_free(&rq);
}

/* The pod watch reads the same keys in the same order (kubepod.c). */
static void test_bwannot_watch(void **state)
{
	static const char pod[] =
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"ns\",\"name\":\"p\",\"annotations\":{"
		"\"ovn.kubernetes.io/ingress_rate\":\"300\",\"qos.projectcalico.org/egressBandwidth\":"
		"\"40M\",\"kubernetes.io/egress-bandwidth\":\"10M\"}},\"spec\":{\"nodeName\":\"n1\"}}";
	struct json doc = { 0 };
	struct kubepod p;
	char err[256];
	uint64_t bps;

	(void)state;
	assert_int_equal(json_parse(&doc, pod, strlen(pod), 256, err, sizeof(err)), 0);
	if (kubepod_read(&doc, 0, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_ptr_equal(p.ingress_key, key("ovn.kubernetes.io/ingress_rate"));
	assert_int_equal(bwannot_parse(p.ingress_key, p.ingress.s, p.ingress.len, &bps), 0);
	assert_int_equal(bps, 300000000);
	assert_ptr_equal(p.egress_key, key("kubernetes.io/egress-bandwidth"));
	assert_int_equal(bwannot_parse(p.egress_key, p.egress.s, p.egress.len, &bps), 0);
	assert_int_equal(bps, 10000000);
	json_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bwannot_values),
		cmocka_unit_test(test_bwannot_request),
		cmocka_unit_test(test_bwannot_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
