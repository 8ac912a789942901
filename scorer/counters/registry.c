#include "counters/registry.h"

static const uint64_t bucket_us[REGISTRY_LATENCY_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 1000000,
};

void registry_observe(struct registry_histogram *h, uint64_t ns)
{
	size_t i = 0;

	while (i < REGISTRY_LATENCY_BUCKETS && ns > bucket_us[i] * 1000)
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

double registry_bucket_seconds(size_t i)
{
	return i < REGISTRY_LATENCY_BUCKETS ? (double)bucket_us[i] / 1e6 : 0;
}
