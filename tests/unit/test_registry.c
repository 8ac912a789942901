/* The scorer's counters and latency histograms (scorer/counters/registry.c): bucket
 * bounds are inclusive (le) as Prometheus defines them, anything over the
 * last bound lands in +Inf only, the sum and count keep every sample, and
 * observations from many threads at once all count. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/counters/registry.h"

static void test_registry_observe_buckets(void **state)
{
	static struct registry c;
	struct registry_histogram *h = &c.latency_filter;

	(void)state;
	registry_observe(h, 0);
	registry_observe(h, 50000);		/* exactly 50 us: first bucket */
	registry_observe(h, 50001);		/* second */
	registry_observe(h, 2 * NS_PER_SEC);	/* over the last bound: +Inf only */
	assert_int_equal(atomic_load(&h->buckets[0]), 2);
	assert_int_equal(atomic_load(&h->buckets[1]), 1);
	assert_int_equal(atomic_load(&h->buckets[REGISTRY_LATENCY_BUCKETS]), 1);
	assert_int_equal(atomic_load(&h->count), 4);
	assert_int_equal(atomic_load(&h->sum_ns), 100001 + 2 * NS_PER_SEC);
}

/* The bounds /metrics prints: increasing, 50 us to 1 s. */
static void test_registry_bucket_seconds(void **state)
{
	(void)state;
	assert_true(registry_bucket_seconds(0) == 50e-6);
	assert_true(registry_bucket_seconds(REGISTRY_LATENCY_BUCKETS - 1) == 1.0);
	for (size_t i = 1; i < REGISTRY_LATENCY_BUCKETS; i++)
		assert_true(registry_bucket_seconds(i) > registry_bucket_seconds(i - 1));
	assert_true(registry_bucket_seconds(REGISTRY_LATENCY_BUCKETS) == 0);
}

#define THREADS 4
#define PER_THREAD 10000

static void *observe_many(void *arg)
{
	for (unsigned i = 0; i < PER_THREAD; i++)
		registry_observe(arg, (uint64_t)i * 1000);
	return NULL;
}

/* Lock-free, but no sample is lost. */
static void test_registry_threads(void **state)
{
	static struct registry_histogram h;
	pthread_t t[THREADS];
	unsigned long in_buckets = 0;

	(void)state;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, observe_many, &h), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i <= REGISTRY_LATENCY_BUCKETS; i++)
		in_buckets += atomic_load(&h.buckets[i]);
	assert_int_equal(atomic_load(&h.count), THREADS * PER_THREAD);
	assert_int_equal(in_buckets, THREADS * PER_THREAD);
	assert_int_equal(atomic_load(&h.sum_ns),
			 THREADS * 1000ULL * ((uint64_t)PER_THREAD * (PER_THREAD - 1) / 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_observe_buckets),
		cmocka_unit_test(test_registry_bucket_seconds),
		cmocka_unit_test(test_registry_threads),
	};
	return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
