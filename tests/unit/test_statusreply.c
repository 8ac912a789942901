/* Shared status replies (scorer/serve/statusreply.c): requests waiting for one
 * render share it; an expensive render is reused for a while; every reply's
 * bytes are charged while anyone holds it, and no room is -EBUSY. The
 * render is a stand-in that counts its calls and takes the time it is told. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/membudget.h"
#include "scorer/serve/reply.h"
#include "scorer/serve/statusreply.h"

static unsigned renders;
static size_t render_bytes = 1000;
static uint64_t render_sleep_ns;

static void fake_render(struct scorer *s, struct reply *out)
{
	struct buf b;

	(void)s;
	renders++;
	if (render_sleep_ns)
		nanosleep(&(struct timespec){ .tv_nsec = (long)render_sleep_ns }, NULL);
	buf_init(&b, 1 << 20);
	for (size_t i = 0; i < render_bytes; i++)
		buf_append(&b, "x", 1);
	reply_take(&b, out);
}

static void test_statusreply_shared_and_charged(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *b, *d;
	struct membudget budget;
	uint64_t asked;

	(void)state;
	renders = 0;
	render_bytes = 1000;
	render_sleep_ns = 0;
	membudget_init(&budget, 2500, 0, 0);
	statusreply_cache_init(&c, fake_render);
	/* Two requests that arrived before the render began share it. */
	asked = clock_mono_ns();
	assert_int_equal(statusreply_get(&c, NULL, &budget, asked, &a), 0);
	assert_int_equal(statusreply_get(&c, NULL, &budget, asked, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(renders, 1);
	assert_int_equal(a->reply.len, 1000);
	assert_int_equal(membudget_used(&budget), 1001);
	/* A request after it began: a cheap render is never reused. */
	assert_int_equal(statusreply_get(&c, NULL, &budget, clock_mono_ns() + 1, &d), 0);
	assert_ptr_not_equal(d, a);
	assert_int_equal(renders, 2);
	assert_int_equal(membudget_used(&budget), 2002);	/* both held */
	/* No room for a third while both are held: refused, nothing rendered. */
	statusreply_put(d);	/* the cache still holds the newest */
	assert_int_equal(membudget_used(&budget), 2002);
	assert_int_equal(statusreply_get(&c, NULL, &budget, clock_mono_ns() + 1, &d), 0);
	assert_int_equal(renders, 3);	/* the newest was dropped first: room */
	statusreply_put(d);
	render_bytes = 2000;		/* the next would not fit beside a */
	assert_int_equal(statusreply_get(&c, NULL, &budget, clock_mono_ns() + 1, &d), -EBUSY);
	/* Readers gone: every byte back once the cache lets go too. */
	statusreply_put(a);
	statusreply_put(b);
	statusreply_put(NULL);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

/* A render of 2 ms is reused for requests arriving up to STATUSREPLY_REUSE
 * x 2 ms after it began, then rendered anew. */
static void test_statusreply_reuse_window(void **state)
{
	struct statusreply_cache c;
	struct statusreply *a, *b, *d;
	struct membudget budget;

	(void)state;
	renders = 0;
	render_bytes = 100;
	render_sleep_ns = 2000000;
	membudget_init(&budget, 1 << 20, 0, 0);
	statusreply_cache_init(&c, fake_render);
	assert_int_equal(statusreply_get(&c, NULL, &budget, clock_mono_ns(), &a), 0);
	assert_true(a->render_ns >= STATUSREPLY_MIN_REUSE_NS);
	assert_int_equal(statusreply_get(&c, NULL, &budget, a->started_ns + a->render_ns, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(statusreply_get(&c, NULL, &budget,
					 a->started_ns + STATUSREPLY_REUSE * a->render_ns + 1, &d), 0);
	assert_ptr_not_equal(d, a);
	assert_int_equal(renders, 2);
	statusreply_put(a);
	statusreply_put(b);
	statusreply_put(d);
	statusreply_cache_destroy(&c);
	assert_int_equal(membudget_used(&budget), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statusreply_shared_and_charged),
		cmocka_unit_test(test_statusreply_reuse_window),
	};
	return cmocka_run_group_tests_name("statusreply", tests, NULL, NULL);
}
