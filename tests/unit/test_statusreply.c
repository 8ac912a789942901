/* Shared status replies (scorer/serve/statusreply.c): requests waiting for one
 * render share it; an expensive or big reply is reused for a while; a
 * failed render is remembered, not tried on every request; every reply's
 * bytes are charged while anyone holds it, and no room is -EBUSY.
 * The cache runs on a fake clock that only the stand-in render moves (by
 * the time it is told to take): no assertion depends on how fast this
 * machine, or a sanitizer build, runs the code. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/membudget.h"
#include "scorer/serve/reply.h"
#include "scorer/serve/statusreply.h"

static unsigned renders;
static size_t render_bytes = 1000;
static uint64_t render_cost_ns;	/* how far a render moves the clock */
static bool render_fails;	/* as over its size cap: no body */
static uint64_t now;

static uint64_t fake_now(void)
{
	return now;
}

static void fake_render(struct scorer *s, struct reply *out)
{
	static char chunk[4096];
	struct buf b;

	(void)s;
	renders++;
	now += render_cost_ns;
	memset(chunk, 'x', sizeof(chunk));
	buf_init(&b, render_fails ? render_bytes - 1 : render_bytes);
	for (size_t left = render_bytes; left;) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		buf_append(&b, chunk, n);
		left -= n;
	}
	reply_take(&b, out);
}

static atomic_ulong counted_renders, counted_failures;

static void setup_cache(struct statusreply_cache *c, size_t bytes, uint64_t cost_ns)
{
	renders = 0;
	render_bytes = bytes;
	render_cost_ns = cost_ns;
	render_fails = false;
	now = 1000 * 1000 * 1000;
	atomic_store(&counted_renders, 0);
	atomic_store(&counted_failures, 0);
	statusreply_cache_init(c, fake_render, &(struct statusreply_opts){
		.now_ns = fake_now,
		.path = "/v1/nodes",
		.renders = &counted_renders,
		.failures = &counted_failures,
	});
}

static void test_statusreply_shared_and_charged(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *b, *d;
	struct membudget budget;
	uint64_t asked;

	(void)state;
	setup_cache(&c, 1000, 0);
	membudget_init(&budget, 2500, 0, 0);
	/* Two requests that arrived before the render began share it. */
	asked = statusreply_now(&c);
	assert_int_equal(statusreply_get(&c, NULL, &budget, asked, &a), 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, asked, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(renders, 1);
	assert_int_equal(a->reply.len, 1000);
	assert_int_equal(membudget_used(&budget), 1001);
	/* A request after it began: a cheap small render is never reused. */
	now++;
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &d), 0);
	assert_ptr_not_equal(d, a);
	assert_int_equal(renders, 2);
	assert_int_equal(membudget_used(&budget), 2002);	/* both held */
	/* No room for a third while both are held: refused, nothing rendered. */
	statusreply_put(d);	/* the cache still holds the newest */
	assert_int_equal(membudget_used(&budget), 2002);
	now++;
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &d), 0);
	assert_int_equal(renders, 3);	/* the newest was dropped first: room */
	statusreply_put(d);
	render_bytes = 2000;		/* the next would not fit beside a */
	now++;
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &d), -EBUSY);
	/* Readers gone: every byte back once the cache lets go too. */
	statusreply_put(a);
	statusreply_put(b);
	statusreply_put(NULL);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
	assert_int_equal(atomic_load(&counted_renders), 4);	/* the last had no room */
	assert_int_equal(atomic_load(&counted_failures), 0);
}

/* A render of 2 ms is reused for requests arriving up to STATUSREPLY_REUSE
 * x 2 ms after it began, then rendered anew. */
static void test_statusreply_reuse_window(void **state)
{
	const uint64_t cost = 2 * STATUSREPLY_MIN_REUSE_NS;
	struct statusreply_cache c;
	struct statusreply *a, *b, *d;
	struct membudget budget;

	(void)state;
	setup_cache(&c, 100, cost);
	membudget_init(&budget, 1 << 20, 0, 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &a), 0);
	assert_int_equal(a->render_ns, cost);
	assert_int_equal(statusreply_get(&c, NULL, &budget, a->started_ns + STATUSREPLY_REUSE * cost,
					 &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(statusreply_get(&c, NULL, &budget,
					 a->started_ns + STATUSREPLY_REUSE * cost + 1, &d), 0);
	assert_ptr_not_equal(d, a);
	assert_int_equal(renders, 2);
	statusreply_put(a);
	statusreply_put(b);
	statusreply_put(d);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

/* A big reply, however cheap its render, is rendered at most once per
 * STATUSREPLY_MIN_INTERVAL_NS: clients looping on /v1/nodes share it. */
static void test_statusreply_big_min_interval(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *r;
	struct membudget budget;

	(void)state;
	setup_cache(&c, STATUSREPLY_BIG_BYTES, 0);
	membudget_init(&budget, 8u << 20, 0, 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &a), 0);
	for (unsigned i = 0; i < 1000; i++) {
		now = a->started_ns + i * (STATUSREPLY_MIN_INTERVAL_NS / 1000);
		assert_int_equal(statusreply_get(&c, NULL, &budget, now, &r), 0);
		assert_ptr_equal(r, a);
		statusreply_put(r);
	}
	assert_int_equal(renders, 1);
	now = a->started_ns + STATUSREPLY_MIN_INTERVAL_NS + 1;
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &r), 0);
	assert_ptr_not_equal(r, a);
	assert_int_equal(renders, 2);
	statusreply_put(r);
	statusreply_put(a);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

/* A render over its size cap (0.48 s of CPU for /v1/nodes over 16 MiB)
 * happens once per hold: every request meanwhile gets the small 500 it
 * left, and none renders again. */
static void test_statusreply_failure_remembered(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *r;
	struct membudget budget;

	(void)state;
	setup_cache(&c, 100000, 480 * STATUSREPLY_MIN_REUSE_NS);
	render_fails = true;
	membudget_init(&budget, 1 << 20, 0, 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &a), 0);
	assert_true(a->failed);
	assert_int_equal(a->reply.status, 500);
	assert_non_null(a->reply.body);
	assert_non_null(strstr(a->reply.body, "/v1/nodes could not be rendered"));
	assert_true(a->reply.len < 256);
	for (unsigned i = 0; i < 100; i++) {
		now = a->started_ns + i * (STATUSREPLY_FAIL_HOLD_NS / 100);
		assert_int_equal(statusreply_get(&c, NULL, &budget, now, &r), 0);
		assert_ptr_equal(r, a);
		statusreply_put(r);
	}
	assert_int_equal(renders, 1);
	assert_int_equal(atomic_load(&counted_failures), 1);
	/* After the hold it is tried again, and a table that shrank is served. */
	render_fails = false;
	now = a->started_ns + STATUSREPLY_FAIL_HOLD_NS + 1;
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &r), 0);
	assert_false(r->failed);
	assert_int_equal(r->reply.status, 200);
	assert_int_equal(renders, 2);
	assert_int_equal(atomic_load(&counted_renders), 2);
	statusreply_put(r);
	statusreply_put(a);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

/* The latest reply without a render, for a server whose status thread is
 * not running: none yet is -EAGAIN; any age will do. */
static void test_statusreply_latest_never_renders(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *r;
	struct membudget budget;

	(void)state;
	setup_cache(&c, 100, 0);
	membudget_init(&budget, 1 << 20, 0, 0);
	assert_int_equal(statusreply_latest(&c, &r), -EAGAIN);
	assert_int_equal(renders, 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, now, &a), 0);
	now += 3600 * STATUSREPLY_MIN_INTERVAL_NS;
	assert_int_equal(statusreply_latest(&c, &r), 0);
	assert_ptr_equal(r, a);
	assert_int_equal(renders, 1);
	statusreply_put(r);
	statusreply_put(a);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statusreply_shared_and_charged),
		cmocka_unit_test(test_statusreply_reuse_window),
		cmocka_unit_test(test_statusreply_big_min_interval),
		cmocka_unit_test(test_statusreply_failure_remembered),
		cmocka_unit_test(test_statusreply_latest_never_renders),
	};
	return cmocka_run_group_tests_name("statusreply", tests, NULL, NULL);
}
