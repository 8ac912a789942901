/* The slot index (common/slotindex.c) behind the in-flight pods, the pod
 * index and the workloads: keys found through their hash chains (and told
 * apart on a shared hash), removal, the free list's reuse, a full index,
 * the queue's order (oldest first, re-queued as newest) and an LRU
 * eviction built on it, and bad sizes refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/slotindex.h"

#define CAP 8

/* A caller's records: keys beside the index, numbered as its slots. */
struct table {
	struct slotindex ix;
	char key[CAP][16];
};

/* A weak hash on purpose: "a1" and "b1" share one, so chains hold both. */
static uint32_t weak_hash(const char *k)
{
	return (uint32_t)(k[strlen(k) - 1]);
}

static int32_t find(const struct table *t, const char *k)
{
	for (int32_t i = slotindex_first(&t->ix, weak_hash(k)); i != SLOTINDEX_NONE;
	     i = slotindex_next(&t->ix, i))
		if (!strcmp(t->key[i], k))
			return i;
	return SLOTINDEX_NONE;
}

static int32_t add(struct table *t, const char *k)
{
	int32_t i = slotindex_take(&t->ix, weak_hash(k));

	if (i != SLOTINDEX_NONE)
		snprintf(t->key[i], sizeof(t->key[i]), "%s", k);
	return i;
}

static void test_slotindex_bad_sizes(void **state)
{
	struct slotindex ix;

	(void)state;
	assert_int_equal(slotindex_init(&ix, 0, 0), -EINVAL);
	assert_int_equal(slotindex_init(&ix, (size_t)SLOTINDEX_MAX_SLOTS + 1, 0), -EINVAL);
	slotindex_fini(&ix); /* a failed init is fine to fini */
}

static void test_slotindex_insert_find_remove(void **state)
{
	struct table t;
	int32_t a, b, c;

	(void)state;
	assert_int_equal(slotindex_init(&t.ix, CAP, 0), 0);
	assert_int_equal(find(&t, "a1"), SLOTINDEX_NONE);
	a = add(&t, "a1");
	b = add(&t, "b1"); /* the same hash as a1 */
	c = add(&t, "c2");
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 2);
	assert_int_equal(t.ix.used, 3);
	assert_int_equal(find(&t, "a1"), a);
	assert_int_equal(find(&t, "b1"), b);
	assert_int_equal(find(&t, "c2"), c);
	assert_int_equal(find(&t, "d1"), SLOTINDEX_NONE);
	assert_true(slotindex_used(&t.ix, b));
	assert_false(slotindex_used(&t.ix, 3));
	assert_false(slotindex_used(&t.ix, -1));

	/* Out of the middle of a chain: the other key on it stays. */
	slotindex_put(&t.ix, a);
	assert_false(slotindex_used(&t.ix, a));
	assert_int_equal(find(&t, "a1"), SLOTINDEX_NONE);
	assert_int_equal(find(&t, "b1"), b);
	assert_int_equal(t.ix.used, 2);
	slotindex_put(&t.ix, b);
	assert_int_equal(find(&t, "b1"), SLOTINDEX_NONE);
	assert_int_equal(find(&t, "c2"), c);
	slotindex_fini(&t.ix);
}

static void test_slotindex_full_and_reuse(void **state)
{
	struct table t;
	char k[16];

	(void)state;
	assert_int_equal(slotindex_init(&t.ix, CAP, SLOTINDEX_TOUCH), 0);
	for (int n = 0; n < CAP; n++) {
		snprintf(k, sizeof(k), "k%d", n);
		assert_false(slotindex_full(&t.ix));
		assert_int_equal(add(&t, k), n); /* in order while never used */
	}
	assert_true(slotindex_full(&t.ix));
	assert_int_equal(add(&t, "late"), SLOTINDEX_NONE);
	assert_int_equal(t.ix.used, CAP);

	/* The last put back is the first taken again, findable by its new key. */
	slotindex_put(&t.ix, 3);
	slotindex_put(&t.ix, 5);
	assert_false(slotindex_full(&t.ix));
	assert_int_equal(add(&t, "new5"), 5);
	assert_int_equal(add(&t, "new3"), 3);
	assert_true(slotindex_full(&t.ix));
	assert_int_equal(find(&t, "new3"), 3);
	assert_int_equal(find(&t, "k3"), SLOTINDEX_NONE);
	assert_int_equal(find(&t, "k4"), 4);
	slotindex_fini(&t.ix);
}

static void test_slotindex_queue_order(void **state)
{
	struct table t;

	(void)state;
	assert_int_equal(slotindex_init(&t.ix, CAP, 0), 0);
	for (int n = 0; n < 4; n++)
		add(&t, (const char *[]){ "q0", "q1", "q2", "q3" }[n]);
	assert_int_equal(slotindex_oldest(&t.ix), SLOTINDEX_NONE);
	slotindex_enqueue(&t.ix, 0);
	slotindex_enqueue(&t.ix, 1);
	slotindex_enqueue(&t.ix, 2);
	assert_true(slotindex_queued(&t.ix, 1));
	assert_false(slotindex_queued(&t.ix, 3));
	assert_int_equal(slotindex_oldest(&t.ix), 0);

	/* Queued again: the newest. */
	slotindex_enqueue(&t.ix, 0);
	assert_int_equal(slotindex_oldest(&t.ix), 1);
	/* Out of the middle, then the head. */
	slotindex_dequeue(&t.ix, 2);
	assert_false(slotindex_queued(&t.ix, 2));
	slotindex_dequeue(&t.ix, 2); /* not queued: nothing */
	slotindex_dequeue(&t.ix, 1);
	assert_int_equal(slotindex_oldest(&t.ix), 0);
	/* A slot put back leaves the queue. */
	slotindex_put(&t.ix, 0);
	assert_int_equal(slotindex_oldest(&t.ix), SLOTINDEX_NONE);
	slotindex_enqueue(&t.ix, 3);
	assert_int_equal(slotindex_oldest(&t.ix), 3);
	slotindex_fini(&t.ix);
}

/* What the workloads do with it: when full, the least recently used of
 * the evictable (queued) gives way; an unqueued slot never does. */
static int32_t add_evicting(struct table *t, const char *k, int *evicted)
{
	int32_t i = add(t, k);

	if (i != SLOTINDEX_NONE || slotindex_oldest(&t->ix) == SLOTINDEX_NONE)
		return i;
	slotindex_put(&t->ix, slotindex_oldest(&t->ix));
	(*evicted)++;
	return add(t, k);
}

static void test_slotindex_lru_eviction(void **state)
{
	struct table t;
	int evicted = 0;
	char k[16];

	(void)state;
	assert_int_equal(slotindex_init(&t.ix, 4, 0), 0);
	for (int n = 0; n < 4; n++) {
		snprintf(k, sizeof(k), "w%d", n);
		add_evicting(&t, k, &evicted);
	}
	/* w0 is live (never queued); w1..w3 idle, w2 used again since. */
	slotindex_enqueue(&t.ix, 1);
	slotindex_enqueue(&t.ix, 2);
	slotindex_enqueue(&t.ix, 3);
	slotindex_enqueue(&t.ix, 2);

	assert_int_equal(add_evicting(&t, "x5", &evicted), 1);
	assert_int_equal(find(&t, "w1"), SLOTINDEX_NONE);
	assert_int_equal(add_evicting(&t, "x6", &evicted), 3);
	assert_int_equal(add_evicting(&t, "x7", &evicted), 2);
	assert_int_equal(evicted, 3);
	/* Only the live one left, and it never gives way. */
	assert_int_equal(add_evicting(&t, "x8", &evicted), SLOTINDEX_NONE);
	assert_int_equal(find(&t, "w0"), 0);
	assert_int_equal(evicted, 3);
	slotindex_fini(&t.ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slotindex_bad_sizes),
		cmocka_unit_test(test_slotindex_insert_find_remove),
		cmocka_unit_test(test_slotindex_full_and_reuse),
		cmocka_unit_test(test_slotindex_queue_order),
		cmocka_unit_test(test_slotindex_lru_eviction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
