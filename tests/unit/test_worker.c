/* The periodic worker: it runs at once when asked, sleeps what the job
 * says, wakes early on worker_wake(), and stop cuts a long sleep short. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/worker.h"

struct job {
	atomic_uint rounds;
	uint64_t sleep_ms;
};

static uint64_t round_fn(void *ctx)
{
	struct job *j = ctx;

	atomic_fetch_add(&j->rounds, 1);
	return j->sleep_ms;
}

/* Polls for up to 10 s: the assertion is about what happens, not when. */
static void wait_rounds(struct job *j, unsigned n)
{
	uint64_t until = clock_mono_ns() + 10 * NS_PER_SEC;

	while (atomic_load(&j->rounds) < n && clock_mono_ns() < until)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	assert_true(atomic_load(&j->rounds) >= n);
}

static void test_worker_runs_and_repeats(void **state)
{
	struct job j = { .sleep_ms = 1 };
	char err[128];
	struct worker *w;

	(void)state;
	w = worker_start("test", round_fn, &j, 0, err, sizeof(err));
	assert_non_null(w);
	wait_rounds(&j, 5);
	worker_stop(w);
}

/* A job that asks for an hour's sleep runs again only when woken, and stop
 * does not wait out the hour. */
static void test_worker_wake_and_stop(void **state)
{
	struct job j = { .sleep_ms = 3600 * 1000 };
	char err[128];
	struct worker *w;
	uint64_t start;

	(void)state;
	w = worker_start("test", round_fn, &j, 0, err, sizeof(err));
	assert_non_null(w);
	wait_rounds(&j, 1);
	worker_wake(w);
	wait_rounds(&j, 2);
	start = clock_mono_ns();
	worker_stop(w);
	assert_int_equal(atomic_load(&j.rounds), 2);
	assert_true(clock_mono_ns() - start < 60 * NS_PER_SEC);
}

/* A first delay is honoured: stopped before it ends, the job never ran. */
static void test_worker_first_delay(void **state)
{
	struct job j = { .sleep_ms = 1 };
	char err[128];
	struct worker *w;

	(void)state;
	w = worker_start("test", round_fn, &j, 3600 * 1000, err, sizeof(err));
	assert_non_null(w);
	worker_stop(w);
	assert_int_equal(atomic_load(&j.rounds), 0);
	worker_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_runs_and_repeats),
		cmocka_unit_test(test_worker_wake_and_stop),
		cmocka_unit_test(test_worker_first_delay),
	};
	return cmocka_run_group_tests_name("worker", tests, NULL, NULL);
}
