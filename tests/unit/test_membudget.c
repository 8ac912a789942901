/* The shared request memory budget: bounded, given back whole, and its
 * reserve only for small holders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/membudget.h"

static void test_membudget_bounded(void **state)
{
	struct membudget b;
	size_t big = 0, big2 = 0, small = 0, small2 = 0;

	(void)state;
	/* 100 bytes, the last 20 for holders of at most 10. */
	membudget_init(&b, 100, 20, 10);
	assert_true(membudget_take(&b, &big, 50));
	assert_true(membudget_take(&b, &big, 30));	/* 80: up to the reserve */
	assert_false(membudget_take(&b, &big2, 11));	/* would dip into it */
	assert_int_equal(big2, 0);
	assert_int_equal(membudget_used(&b), 80);
	assert_true(membudget_take(&b, &small, 6));	/* small: the reserve is theirs */
	assert_true(membudget_take(&b, &small, 4));	/* 10 in all: still small */
	assert_false(membudget_take(&b, &small, 1));	/* 11 would not be */
	assert_true(membudget_take(&b, &small2, 10));
	assert_false(membudget_take(&b, &small2, 1));	/* the budget is full */
	assert_int_equal(membudget_used(&b), 100);
	membudget_give(&b, &big);
	assert_int_equal(big, 0);
	assert_int_equal(membudget_used(&b), 20);
	assert_true(membudget_take(&b, &big2, 60));
	membudget_give(&b, &big2);
	membudget_give(&b, &small);
	membudget_give(&b, &small2);
	assert_int_equal(membudget_used(&b), 0);
	/* Shrinking gives back the excess only. */
	assert_true(membudget_take(&b, &big, 50));
	membudget_shrink(&b, &big, 80);		/* holds less: nothing */
	assert_int_equal(big, 50);
	membudget_shrink(&b, &big, 30);
	assert_int_equal(big, 30);
	assert_int_equal(membudget_used(&b), 30);
	membudget_give(&b, &big);
	assert_int_equal(membudget_used(&b), 0);
	/* No budget: anything goes, and it is still counted per holder. */
	assert_true(membudget_take(NULL, &big, (size_t)1 << 40));
	assert_int_equal(big, (size_t)1 << 40);
	membudget_give(NULL, &big);
	assert_int_equal(big, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_membudget_bounded),
	};
	return cmocka_run_group_tests_name("membudget", tests, NULL, NULL);
}
