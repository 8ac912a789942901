/* Leader election on a Lease (rebalancer/lease.c): who acts when, as a
 * timeline of what two replicas read and wrote; the Lease's JSON both
 * ways. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rebalancer/lease.h"

static struct lease_record held_by(const char *holder, const char *renew)
{
	struct lease_record r = { .exists = true, .duration_s = 15 };

	snprintf(r.holder, sizeof(r.holder), "%s", holder);
	snprintf(r.renew, sizeof(r.renew), "%s", renew);
	snprintf(r.rv, sizeof(r.rv), "41");
	return r;
}

static void test_lease_timeline(void **state)
{
	struct lease_state a = { 0 }, b = { 0 };
	struct lease_record none = { 0 }, r;

	(void)state;
	/* No Lease: a creates it and leads. */
	assert_int_equal(lease_judge(&a, &none, "a", 15, 1000), LEASE_CREATE);
	lease_wrote(&a, LEASE_CREATE, true, 1000);
	assert_true(lease_is_leader(&a, 15, 1000));

	/* b sees a's Lease renewed and follows, however long that goes on. */
	r = held_by("a", "t1");
	assert_int_equal(lease_judge(&b, &r, "b", 15, 2000), LEASE_FOLLOW);
	assert_false(lease_is_leader(&b, 15, 2000));
	r = held_by("a", "t2");
	assert_int_equal(lease_judge(&b, &r, "b", 15, 16000), LEASE_FOLLOW);
	assert_int_equal(lease_judge(&a, &r, "a", 15, 16000), LEASE_RENEW);
	lease_wrote(&a, LEASE_RENEW, true, 16000);

	/* a stops renewing: b takes over once it saw t2 unchanged for 15 s by
	 * its own clock, not before. */
	assert_int_equal(lease_judge(&b, &r, "b", 15, 30999), LEASE_FOLLOW);
	assert_int_equal(lease_judge(&b, &r, "b", 15, 31000), LEASE_TAKE);
	/* a's own writes stopped at 16 s: it no longer acts from 31 s. */
	assert_false(lease_is_leader(&a, 15, 31000));
	assert_true(lease_is_leader(&a, 15, 30999));

	/* Two take at once: the apiserver takes one write (the other 409s). */
	lease_wrote(&b, LEASE_TAKE, false, 31000);
	assert_false(lease_is_leader(&b, 15, 31000));
	lease_wrote(&b, LEASE_TAKE, true, 31000);
	assert_true(lease_is_leader(&b, 15, 31000));

	/* a comes back and sees b's Lease: follows. */
	r = held_by("b", "t3");
	assert_int_equal(lease_judge(&a, &r, "a", 15, 32000), LEASE_FOLLOW);
	assert_false(lease_is_leader(&a, 15, 32000));

	/* A released Lease (holder empty) is taken at once. */
	r = held_by("", "t3");
	assert_int_equal(lease_judge(&a, &r, "a", 15, 33000), LEASE_TAKE);

	/* The Lease's own duration wins over ours. */
	{
		struct lease_state c = { 0 };

		r = held_by("a", "t9");
		r.duration_s = 60;
		assert_int_equal(lease_judge(&c, &r, "c", 15, 1000), LEASE_FOLLOW);
		assert_int_equal(lease_judge(&c, &r, "c", 15, 40000), LEASE_FOLLOW);
		assert_int_equal(lease_judge(&c, &r, "c", 15, 61000), LEASE_TAKE);
	}
}

static void test_lease_json(void **state)
{
	static const char get[] =
		"{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":"
		"{\"name\":\"netsched-rebalancer\",\"namespace\":\"netsched\",\"resourceVersion\":\"812\"},"
		"\"spec\":{\"holderIdentity\":\"rebal-0\",\"leaseDurationSeconds\":15,"
		"\"acquireTime\":\"2026-11-27T21:00:00.000000Z\",\"renewTime\":\"2026-11-27T21:00:10.500000Z\","
		"\"leaseTransitions\":2}}";
	struct lease_record r;
	struct buf b;
	char err[200] = "", now[LEASE_TIME_MAX];

	(void)state;
	assert_int_equal(lease_parse(get, strlen(get), &r, err, sizeof(err)), 0);
	assert_true(r.exists);
	assert_string_equal(r.holder, "rebal-0");
	assert_string_equal(r.rv, "812");
	assert_string_equal(r.renew, "2026-11-27T21:00:10.500000Z");
	assert_int_equal(r.duration_s, 15);
	assert_int_equal(r.transitions, 2);

	lease_micro_time(1795813215123456789ULL, now, sizeof(now));
	assert_string_equal(now, "2026-11-27T21:00:15.123456Z");

	buf_init(&b, 4096);
	lease_body(&b, "netsched-rebalancer", "netsched", "rebal-1", 15, &r, LEASE_TAKE, now);
	assert_false(buf_failed(&b));
	assert_string_equal(b.data,
		"{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":"
		"{\"name\":\"netsched-rebalancer\",\"namespace\":\"netsched\",\"resourceVersion\":\"812\"},"
		"\"spec\":{\"holderIdentity\":\"rebal-1\",\"leaseDurationSeconds\":15,"
		"\"acquireTime\":\"2026-11-27T21:00:15.123456Z\",\"renewTime\":\"2026-11-27T21:00:15.123456Z\","
		"\"leaseTransitions\":3}}");
	/* A renewal keeps the acquire time and the transitions. */
	buf_reset(&b);
	lease_body(&b, "l", "ns", "rebal-0", 15, &r, LEASE_RENEW, now);
	assert_non_null(strstr(b.data, "\"acquireTime\":\"2026-11-27T21:00:00.000000Z\""));
	assert_non_null(strstr(b.data, "\"leaseTransitions\":2}"));
	/* A creation carries no resourceVersion. */
	buf_reset(&b);
	lease_body(&b, "l", "ns", "rebal-0", 15, &r, LEASE_CREATE, now);
	assert_null(strstr(b.data, "resourceVersion"));
	buf_free(&b);

	assert_int_equal(lease_parse("{\"metadata\":3}", 14, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "Lease: metadata is a number"));
	assert_false(r.exists);
	assert_int_equal(lease_parse("{\"metadata\":{},\"spec\":{\"holderIdentity\":5}}", 43, &r, err,
				     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "Lease: holderIdentity is not a string"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_timeline),
		cmocka_unit_test(test_lease_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
