/* Kept request buffers: a block given back is the next one taken, and what
 * is kept stays within its bounds and goes back once idle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/scratch.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

static int empty_pool(void **state)
{
	(void)state;
	scratch_trim(UINT64_MAX);
	return 0;
}

static size_t kept_blocks(void)
{
	size_t blocks, bytes;

	scratch_stats(&blocks, &bytes);
	return blocks;
}

static size_t kept_bytes(void)
{
	size_t blocks, bytes;

	scratch_stats(&blocks, &bytes);
	return bytes;
}

static void test_scratch_reused(void **state)
{
	size_t cap = 0, cap2 = 0;
	char *a, *b;

	(void)state;
	a = scratch_take(200 * 1024, &cap);
	assert_non_null(a);
	assert_true(cap >= 200 * 1024);
	memset(a, 'x', cap);
	scratch_give(a);
	assert_int_equal(kept_blocks(), 1);
	/* A smaller need takes the same block, its pages still there. */
	b = scratch_take(100 * 1024, &cap2);
	assert_ptr_equal(a, b);
	assert_true(cap2 >= 200 * 1024);
	assert_int_equal(kept_blocks(), 0);
	/* A larger one cannot: a fresh block. */
	scratch_give(b);
	a = scratch_take(300 * 1024, &cap);
	assert_ptr_not_equal(a, b);
	assert_int_equal(kept_blocks(), 1);
	scratch_give(a);
	/* The smallest block that fits is the one taken. */
	b = scratch_take(150 * 1024, NULL);
	assert_int_equal(kept_blocks(), 1);
	assert_int_equal(kept_bytes() >= 300 * 1024, 1);
	scratch_give(b);
	/* Zeroed like calloc(), kept block or not, and refused like it when
	 * the size overflows. */
	b = scratch_take_zeroed(100, 1024);
	assert_non_null(b);
	for (size_t i = 0; i < 100 * 1024; i++)
		assert_int_equal(b[i], 0);
	assert_null(scratch_take_zeroed(SIZE_MAX / 8, 16));
	scratch_give(b);
}

static void test_scratch_bounded(void **state)
{
	void *blocks[SCRATCH_BLOCKS + 4];

	(void)state;
	/* Small and oversized blocks are never kept. */
	scratch_give(scratch_take(1024, NULL));
	scratch_give(scratch_take(SCRATCH_BLOCK_MAX + 64 * 1024, NULL));
	scratch_give(NULL);
	assert_int_equal(kept_blocks(), 0);
	/* More blocks than it keeps: the count and the bytes stay bounded. */
	for (size_t i = 0; i < SCRATCH_BLOCKS + 4; i++)
		blocks[i] = scratch_take(SCRATCH_BLOCK_MAX, NULL);
	for (size_t i = 0; i < SCRATCH_BLOCKS + 4; i++) {
		assert_non_null(blocks[i]);
		scratch_give(blocks[i]);
		assert_true(kept_blocks() <= SCRATCH_BLOCKS);
		assert_true(kept_bytes() <= SCRATCH_KEPT_MAX);
	}
	assert_true(kept_blocks() >= SCRATCH_KEPT_MAX / (SCRATCH_BLOCK_MAX + 4096));
	/* A block given back to a full pool is kept in place of the oldest:
	 * the last one given back is the first taken. */
	assert_ptr_equal(scratch_take(SCRATCH_BLOCK_MAX, NULL), blocks[SCRATCH_BLOCKS + 3]);
	scratch_give(blocks[SCRATCH_BLOCKS + 3]);
}

static void test_scratch_idle_blocks_freed(void **state)
{
	uint64_t now = clock_mono_ns();

	(void)state;
	scratch_give(scratch_take(SCRATCH_BLOCK_MIN, NULL));
	scratch_give(scratch_take(2 * SCRATCH_BLOCK_MIN, NULL));
	assert_int_equal(kept_blocks(), 2);
	scratch_trim(now);			/* just given back: kept */
	assert_int_equal(kept_blocks(), 2);
	scratch_trim(now + SCRATCH_IDLE_NS + NS_PER_SEC);
	assert_int_equal(kept_blocks(), 0);
	assert_int_equal(kept_bytes(), 0);
}

#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer build (make test runs it) sees a kept block as freed memory
 * and a taken one as only as large as asked. */
static void test_scratch_poisoned(void **state)
{
	char *p, *q;

	(void)state;
	p = scratch_take(200 * 1024, NULL);
	scratch_give(p);
	assert_true(__asan_address_is_poisoned(p));
	q = scratch_take(100 * 1024, NULL);
	assert_ptr_equal(p, q);
	assert_false(__asan_address_is_poisoned(q));
	assert_false(__asan_address_is_poisoned(q + 100 * 1024 - 1));
	assert_true(__asan_address_is_poisoned(q + 100 * 1024 + 8));
	scratch_give(q);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scratch_reused, empty_pool, empty_pool),
		cmocka_unit_test_setup_teardown(test_scratch_bounded, empty_pool, empty_pool),
		cmocka_unit_test_setup_teardown(test_scratch_idle_blocks_freed, empty_pool, empty_pool),
#if defined(__SANITIZE_ADDRESS__)
		cmocka_unit_test_setup_teardown(test_scratch_poisoned, empty_pool, empty_pool),
#endif
	};
	return cmocka_run_group_tests_name("scratch", tests, NULL, NULL);
}
