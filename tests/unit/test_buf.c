/* The bounded buffer: growth up to its maximum, sticky failure, release,
 * and the JSON writers (escapes, integers, doubles that are not finite). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"

static void test_buf_bounded_and_sticky(void **state)
{
	struct buf b;
	char *out;
	size_t len;

	(void)state;
	buf_init(&b, 8);
	buf_puts(&b, "12345");
	buf_printf(&b, "%d", 678);
	assert_false(buf_failed(&b));
	assert_int_equal(b.len, 8);
	buf_puts(&b, "9");		/* over the maximum */
	assert_true(buf_failed(&b));
	buf_reset(&b);
	assert_true(buf_failed(&b) == false);
	buf_puts(&b, "ab");
	out = buf_release(&b, &len);
	assert_string_equal(out, "ab");
	assert_int_equal(len, 2);
	free(out);
	assert_int_equal(b.len, 0);
	buf_puts(&b, "123456789");
	assert_null(buf_release(&b, &len));
	buf_free(&b);
}

static void test_buf_json(void **state)
{
	struct buf b;
	char *out;
	size_t len;

	(void)state;
	buf_init(&b, 1024);
	buf_json_str(&b, "a\"b\\c\n\x01", 7);
	buf_puts(&b, " ");
	buf_json_u64(&b, UINT64_MAX);
	buf_puts(&b, " ");
	buf_json_double(&b, 1.5);
	buf_puts(&b, " ");
	buf_json_double(&b, NAN);
	buf_puts(&b, " ");
	buf_json_double(&b, -INFINITY);
	out = buf_release(&b, &len);
	assert_string_equal(out, "\"a\\\"b\\\\c\\u000a\\u0001\" 18446744073709551615 1.500 0.000 0.000");
	free(out);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_bounded_and_sticky),
		cmocka_unit_test(test_buf_json),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
