/* The rebalancer's moves (scorer/parse/movereq.c, scorer/pods/moves.c):
 *  - parsing as a row table: every field's kind and bounds, unknown,
 *    repeated and missing fields, oversized bodies, each error naming the
 *    field, the number and the limit;
 *  - the table: holds and reservations by node, expiry by time, a second
 *    move of the same UID replacing the first, a full table refusing (and
 *    taking a row again once one expires), landing by the pod watch (a pod
 *    of the workload bound to the destination, not the moved pod itself,
 *    not a pod bound before the move), the per-workload view the extender
 *    reads, the list. */
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
#include "common/namekey.h"
#include "scorer/pods/moves.h"

#define T0 (1000ULL * NS_PER_SEC)

static const char good[] =
	"{\"namespace\":\"default\",\"pod\":\"web-7f9c-x\",\"uid\":\"8c1f-1\","
	"\"workload\":\"default/Deployment/web\",\"from\":\"node-3\",\"to\":\"node-5\","
	"\"rxBytesPerSecond\":30000000,\"txBytesPerSecond\":100000,\"holdSeconds\":300}";

static void test_parse_good(void **state)
{
	struct movereq rq;
	char err[256];

	(void)state;
	assert_int_equal(movereq_parse(good, strlen(good), &rq, err, sizeof(err)), 0);
	assert_string_equal(rq.ns, "default");
	assert_string_equal(rq.pod, "web-7f9c-x");
	assert_string_equal(rq.uid, "8c1f-1");
	assert_string_equal(rq.workload, "default/Deployment/web");
	assert_string_equal(rq.from, "node-3");
	assert_string_equal(rq.to, "node-5");
	assert_int_equal(rq.rx_bytes_per_second, 30000000);
	assert_int_equal(rq.tx_bytes_per_second, 100000);
	assert_int_equal(rq.hold_s, 300);
}

/* good with field key's value replaced by value (NULL: the field left
 * out), into out. */
static void with(const char *key, const char *value, char *out, size_t cap)
{
	static const char *const keys[] = { "namespace", "pod", "uid", "workload", "from", "to",
					    "rxBytesPerSecond", "txBytesPerSecond", "holdSeconds" };
	static const char *const vals[] = { "\"default\"", "\"web-7f9c-x\"", "\"8c1f-1\"",
					    "\"default/Deployment/web\"", "\"node-3\"", "\"node-5\"",
					    "30000000", "100000", "300" };
	size_t n = 0;

	n += (size_t)snprintf(out + n, cap - n, "{");
	for (size_t i = 0; i < 9; i++) {
		const char *v = strcmp(keys[i], key) ? vals[i] : value;

		if (!v)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s\"%s\":%s", n > 1 ? "," : "", keys[i], v);
	}
	snprintf(out + n, cap - n, "}");
}

struct bad_row {
	const char *what;
	const char *key;	/* NULL: body is the whole body */
	const char *value;
	int rc;
	const char *says;	/* in the message */
};

static const struct bad_row bad_rows[] = {
	{ "not JSON", NULL, "{\"namespace\":", -EINVAL, "not a move" },
	{ "an array", NULL, "[1,2]", -EINVAL, "expected an object" },
	{ "empty object", NULL, "{}", -EINVAL, "namespace is missing" },
	{ "unknown field", NULL, "{\"namespace\":\"a\",\"color\":\"red\"}", -EINVAL, "unknown field \"color\"" },
	{ "field twice", NULL, "{\"pod\":\"a\",\"pod\":\"b\"}", -EINVAL, "pod is given twice" },
	{ "missing uid", "uid", NULL, -EINVAL, "uid is missing" },
	{ "missing holdSeconds", "holdSeconds", NULL, -EINVAL, "holdSeconds is missing" },
	{ "namespace a number", "namespace", "7", -EINVAL, "namespace is a number, expected a string" },
	{ "namespace upper case", "namespace", "\"Default\"", -EINVAL, "namespace is not a namespace name" },
	{ "namespace too long", "namespace", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", -EINVAL,
	  "namespace is longer than its limit of 63 bytes" },
	{ "empty pod", "pod", "\"\"", -EINVAL, "pod is empty" },
	{ "pod with a slash", "pod", "\"a/b\"", -EINVAL, "pod is " },
	{ "uid with a quote", "uid", "\"a\\\"b\"", -EINVAL, "uid holds a space, a quote" },
	{ "uid with a control byte", "uid", "\"a\\u0001b\"", -EINVAL, "uid holds" },
	{ "workload null", "workload", "null", -EINVAL, "workload is null, expected a string" },
	{ "from not a node name", "from", "\"Node_3\"", -EINVAL, "from is " },
	{ "to an object", "to", "{}", -EINVAL, "to is an object, expected a string" },
	{ "rx negative", "rxBytesPerSecond", "-5", -EINVAL, "rxBytesPerSecond -5 is not a whole number" },
	{ "rx a fraction", "rxBytesPerSecond", "1.5", -EINVAL, "rxBytesPerSecond 1.5 is not a whole number" },
	{ "rx an exponent", "rxBytesPerSecond", "1e9", -EINVAL, "not a whole number" },
	{ "rx a string", "rxBytesPerSecond", "\"5\"", -EINVAL, "rxBytesPerSecond is a string, expected a whole number" },
	{ "tx absurd", "txBytesPerSecond", "400000000001", -ERANGE, "txBytesPerSecond 400000000001 is over its limit of 400000000000" },
	{ "tx 20 digits", "txBytesPerSecond", "99999999999999999999", -ERANGE, "over its limit" },
	{ "hold 0", "holdSeconds", "0", -ERANGE, "holdSeconds 0 is under its minimum of 1" },
	{ "hold 3601", "holdSeconds", "3601", -ERANGE, "holdSeconds 3601 is over its limit of 3600" },
	{ "hold true", "holdSeconds", "true", -EINVAL, "holdSeconds is a boolean" },
};

static void test_parse_bad(void **state)
{
	char body[1024], err[256];
	struct movereq rq;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		int rc;

		if (r->key)
			with(r->key, r->value, body, sizeof(body));
		else
			snprintf(body, sizeof(body), "%s", r->value);
		err[0] = '\0';
		rc = movereq_parse(body, strlen(body), &rq, err, sizeof(err));
		if (rc != r->rc || !strstr(err, r->says)) {
			print_error("row \"%s\": %s -> %d \"%s\", expected %d with \"%s\"\n", r->what,
				    body, rc, err, r->rc, r->says);
			fail();
		}
	}
}

static void test_parse_bounds(void **state)
{
	char body[MOVEREQ_BODY_MAX + 64], err[256];
	struct movereq rq;
	size_t n;

	(void)state;
	/* The longest of every name is taken, one more byte is not. */
	with("workload", NULL, body, sizeof(body));
	n = strlen(body) - 1;
	n += (size_t)snprintf(body + n, sizeof(body) - n, ",\"workload\":\"");
	memset(body + n, 'w', WORKLOAD_LABEL_MAX);
	n += WORKLOAD_LABEL_MAX;
	snprintf(body + n, sizeof(body) - n, "\"}");
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
	assert_int_equal(strlen(rq.workload), WORKLOAD_LABEL_MAX);
	memmove(body + n + 1, body + n, strlen(body + n) + 1);
	body[n] = 'w';
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), -EINVAL);
	{
		char want[80];

		snprintf(want, sizeof(want), "workload is longer than its limit of %u bytes",
			 WORKLOAD_LABEL_MAX);
		assert_non_null(strstr(err, want));
	}
	/* A body over 4 KiB is refused before it is read. */
	memset(body, ' ', MOVEREQ_BODY_MAX + 1);
	assert_int_equal(movereq_parse(body, MOVEREQ_BODY_MAX + 1, &rq, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "4097 bytes is over the limit of 4096"));
	/* The limits themselves are taken. */
	with("holdSeconds", "3600", body, sizeof(body));
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
	with("holdSeconds", "1", body, sizeof(body));
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
	with("rxBytesPerSecond", "400000000000", body, sizeof(body));
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
	with("rxBytesPerSecond", "0", body, sizeof(body));
	assert_int_equal(movereq_parse(body, strlen(body), &rq, err, sizeof(err)), 0);
}

static struct movereq move(const char *uid, const char *wl, const char *from, const char *to,
				 uint64_t rx, uint64_t tx, uint32_t hold_s)
{
	struct movereq rq;

	memset(&rq, 0, sizeof(rq));
	snprintf(rq.ns, sizeof(rq.ns), "default");
	snprintf(rq.pod, sizeof(rq.pod), "pod-%s", uid);
	snprintf(rq.uid, sizeof(rq.uid), "%s", uid);
	snprintf(rq.workload, sizeof(rq.workload), "%s", wl);
	snprintf(rq.from, sizeof(rq.from), "%s", from);
	snprintf(rq.to, sizeof(rq.to), "%s", to);
	rq.rx_bytes_per_second = rx;
	rq.tx_bytes_per_second = tx;
	rq.hold_s = hold_s;
	return rq;
}

struct got {
	uint64_t rx[4], tx[4];
	size_t calls;
};

static void got_reserved(size_t i, uint64_t rx, uint64_t tx, void *ctx)
{
	struct got *g = ctx;

	g->rx[i] = rx;
	g->tx[i] = tx;
	g->calls++;
}

/* What keys a, b, c, d have reserved at now. */
static struct got reserved(struct moves *m, uint64_t now)
{
	struct namekey k[4] = { namekey_of("node-a", 6), namekey_of("node-b", 6),
				namekey_of("node-c", 6), namekey_of("node-d", 6) };
	struct got g;

	memset(&g, 0, sizeof(g));
	moves_reserved_each(m, k, 4, now, got_reserved, &g);
	return g;
}

static void test_hold_reserve_expire(void **state)
{
	struct moves *m = moves_create(8);
	struct movereq a = move("u1", "ns/Deployment/web", "node-a", "node-b", 1000, 10, 60);
	struct movereq b = move("u2", "ns/Deployment/web", "node-c", "node-b", 500, 5, 30);
	struct moves_mine mine;
	struct got g;

	(void)state;
	assert_non_null(m);
	assert_false(moves_active(m));
	g = reserved(m, T0);
	assert_int_equal(g.calls, 0);
	assert_int_equal(moves_put(m, &a, T0), 0);
	assert_int_equal(moves_put(m, &b, T0), 0);
	assert_true(moves_active(m));
	/* Both reservations on node-b, added up; none elsewhere. */
	g = reserved(m, T0 + NS_PER_SEC);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.rx[1], 1500);
	assert_int_equal(g.tx[1], 15);
	assert_int_equal(moves_held_on(m, "node-a", 6, T0), 1);
	assert_int_equal(moves_held_on(m, "node-c", 6, T0), 1);
	assert_int_equal(moves_held_on(m, "node-b", 6, T0), 0);
	/* The workload's own view: both holds, what they reserve. */
	moves_mine(m, "ns/Deployment/web", 17, T0 + 10 * NS_PER_SEC, &mine);
	assert_int_equal(mine.n, 2);
	moves_mine(m, "ns/Deployment/other", 19, T0, &mine);
	assert_int_equal(mine.n, 0);
	/* At 30 s the second has ended, at 60 s the first. */
	g = reserved(m, T0 + 30 * NS_PER_SEC);
	assert_int_equal(g.rx[1], 1000);
	assert_int_equal(moves_held_on(m, "node-c", 6, T0 + 30 * NS_PER_SEC), 0);
	moves_mine(m, "ns/Deployment/web", 17, T0 + 59 * NS_PER_SEC, &mine);
	assert_int_equal(mine.n, 1);
	assert_string_equal(mine.rows[0].from, "node-a");
	assert_int_equal(mine.rows[0].remaining_s, 1);
	assert_int_equal(mine.rows[0].hold_s, 60);
	g = reserved(m, T0 + 60 * NS_PER_SEC);
	assert_int_equal(g.calls, 0);
	assert_int_equal(moves_held_on(m, "node-a", 6, T0 + 60 * NS_PER_SEC), 0);
	/* The tick frees the rows: nothing is looked up any more. */
	moves_tick(m, T0 + 60 * NS_PER_SEC);
	assert_false(moves_active(m));
	moves_destroy(m);
}

static void test_replace_by_uid(void **state)
{
	struct moves *m = moves_create(4);
	struct movereq a = move("u1", "ns/Deployment/web", "node-a", "node-b", 1000, 0, 60);
	struct movereq again = move("u1", "ns/Deployment/web", "node-a", "node-c", 700, 0, 120);
	struct moves_entry *e;
	struct moves_stats st;
	struct got g;
	long n;

	(void)state;
	assert_int_equal(moves_put(m, &a, T0), 0);
	assert_int_equal(moves_put(m, &again, T0 + NS_PER_SEC), 1);
	g = reserved(m, T0 + 2 * NS_PER_SEC);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.rx[1], 0);
	assert_int_equal(g.rx[2], 700);
	n = moves_list(m, T0 + 2 * NS_PER_SEC, &e);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].rq.to, "node-c");
	assert_int_equal(e[0].remaining_ns, 119 * NS_PER_SEC);
	free(e);
	/* Replaced, it holds its new time: 120 s from the second post. */
	assert_int_equal(moves_held_on(m, "node-a", 6, T0 + 100 * NS_PER_SEC), 1);
	moves_stats(m, T0 + 2 * NS_PER_SEC, &st);
	assert_int_equal(st.accepted, 2);
	assert_int_equal(st.replaced, 1);
	assert_int_equal(st.holds, 1);
	moves_destroy(m);
}

static void test_full(void **state)
{
	struct moves *m = moves_create(3);
	struct moves_stats st;
	char uid[16];

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct movereq rq;

		snprintf(uid, sizeof(uid), "u%d", i);
		rq = move(uid, "ns/Deployment/web", "node-a", "node-b", 1, 1, (uint32_t)(10 + i));
		assert_int_equal(moves_put(m, &rq, T0), 0);
	}
	{
		struct movereq rq = move("u9", "ns/Deployment/web", "node-a", "node-b", 1, 1, 10);

		/* Every row unexpired: refused, nothing changed. */
		assert_int_equal(moves_put(m, &rq, T0 + 5 * NS_PER_SEC), -ENOSPC);
		assert_int_equal(moves_held_on(m, "node-a", 6, T0 + 5 * NS_PER_SEC), 3);
		/* A UID already held replaces itself even when full. */
		rq = move("u1", "ns/Deployment/web", "node-a", "node-d", 1, 1, 10);
		assert_int_equal(moves_put(m, &rq, T0 + 5 * NS_PER_SEC), 1);
		/* Once the first has expired (10 s), its row is taken at once,
		 * before any tick. */
		rq = move("u9", "ns/Deployment/web", "node-a", "node-b", 1, 1, 10);
		assert_int_equal(moves_put(m, &rq, T0 + 10 * NS_PER_SEC), 0);
	}
	moves_stats(m, T0 + 10 * NS_PER_SEC, &st);
	assert_int_equal(st.full, 1);
	assert_int_equal(st.holds, 3);
	assert_int_equal(st.max, 3);
	assert_null(moves_create(0));
	assert_null(moves_create(MOVES_MAX_MAX + 1));
	moves_destroy(m);
}

static void test_landing(void **state)
{
	struct moves *m = moves_create(8);
	struct movereq a = move("u1", "ns/Deployment/web", "node-a", "node-b", 1000, 10, 60);
	const char *wl = "ns/Deployment/web";
	struct moves_mine mine;
	struct moves_stats st;
	struct got g;

	(void)state;
	assert_int_equal(moves_put(m, &a, T0 + 10 * NS_PER_SEC), 0);
	/* Not landings: the moved pod itself, another workload, another
	 * node, a pod bound before the move (a status update of an old
	 * replica). */
	assert_int_equal(moves_bound(m, "u1", 2, "node-b", 6, wl, strlen(wl), T0 + 11 * NS_PER_SEC,
				     T0 + 11 * NS_PER_SEC), 0);
	assert_int_equal(moves_bound(m, "u7", 2, "node-b", 6, "ns/Deployment/db", 16,
				     T0 + 11 * NS_PER_SEC, T0 + 11 * NS_PER_SEC), 0);
	assert_int_equal(moves_bound(m, "u7", 2, "node-c", 6, wl, strlen(wl), T0 + 11 * NS_PER_SEC,
				     T0 + 11 * NS_PER_SEC), 0);
	assert_int_equal(moves_bound(m, "u7", 2, "node-b", 6, wl, strlen(wl), T0,
				     T0 + 11 * NS_PER_SEC), 0);
	g = reserved(m, T0 + 11 * NS_PER_SEC);
	assert_int_equal(g.rx[1], 1000);
	/* The replacement, bound within the second the binding time is
	 * rounded to: landed; the reservation ends, the hold stays. */
	assert_int_equal(moves_bound(m, "u8", 2, "node-b", 6, wl, strlen(wl), T0 + 9500000000ULL,
				     T0 + 12 * NS_PER_SEC), 1);
	g = reserved(m, T0 + 12 * NS_PER_SEC);
	assert_int_equal(g.calls, 0);
	assert_int_equal(moves_held_on(m, "node-a", 6, T0 + 12 * NS_PER_SEC), 1);
	moves_mine(m, wl, strlen(wl), T0 + 12 * NS_PER_SEC, &mine);
	assert_int_equal(mine.n, 1);
	assert_int_equal(mine.rows[0].rx, 0);
	moves_stats(m, T0 + 12 * NS_PER_SEC, &st);
	assert_int_equal(st.landed, 1);
	assert_int_equal(st.reservations, 0);
	assert_int_equal(st.holds, 1);
	moves_destroy(m);
}

static void test_list_sorted_and_null(void **state)
{
	struct moves *m = moves_create(8);
	struct movereq a = move("u2", "w", "node-b", "node-a", 1, 1, 60);
	struct movereq b = move("u1", "w", "node-a", "node-c", 1, 1, 60);
	struct moves_entry *e;
	struct moves_mine mine;
	long n;

	(void)state;
	assert_int_equal(moves_put(m, &a, T0), 0);
	assert_int_equal(moves_put(m, &b, T0), 0);
	n = moves_list(m, T0, &e);
	assert_int_equal(n, 2);
	assert_string_equal(e[0].rq.from, "node-a");
	assert_string_equal(e[1].rq.from, "node-b");
	free(e);
	moves_destroy(m);
	/* No table: nothing anywhere. */
	n = moves_list(NULL, T0, &e);
	assert_int_equal(n, 0);
	free(e);
	moves_mine(NULL, "w", 1, T0, &mine);
	assert_int_equal(mine.n, 0);
	assert_int_equal(moves_held_on(NULL, "node-a", 6, T0), 0);
	assert_string_equal(moves_workload_short("default/Deployment/web"), "web");
	assert_string_equal(moves_workload_short("web"), "web");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_bounds),
		cmocka_unit_test(test_hold_reserve_expire),
		cmocka_unit_test(test_replace_by_uid),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_landing),
		cmocka_unit_test(test_list_sorted_and_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
