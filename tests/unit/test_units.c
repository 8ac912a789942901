/* Strict number, duration and quantity parsing, and rate formatting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/units.h"

struct parse_row {
	const char *in;
	int rc;
	uint64_t want;
};

static const struct parse_row durations[] = {
	{ "0", 0, 0 },
	{ "250ms", 0, 250 },
	{ "2s", 0, 2000 },
	{ "1.5s", 0, 1500 },
	{ "5m", 0, 300000 },
	{ "1h", 0, 3600000 },
	{ "0.0001s", 0, 1 },		/* rounds up, never to zero */
	{ "5", -EINVAL, 0 },		/* a unit is required */
	{ "", -EINVAL, 0 },
	{ "-1s", -EINVAL, 0 },
	{ " 1s", -EINVAL, 0 },
	{ "1s ", -EINVAL, 0 },
	{ "1sec", -EINVAL, 0 },
	{ "1.s", -EINVAL, 0 },
	{ "99999999999999999999h", -ERANGE, 0 },
	{ "9999999999999999h", -ERANGE, 0 },
};

static const struct parse_row quantities[] = {
	{ "0", 0, 0 },
	{ "500", 0, 500 },
	{ "500k", 0, 500000 },
	{ "10M", 0, 10000000 },
	{ "1G", 0, 1000000000 },
	{ "1.5G", 0, 1500000000 },
	{ "1Gi", 0, 1073741824 },
	{ "2Ki", 0, 2048 },
	{ "1E", 0, 1000000000000000000ULL },
	{ "18E", 0, 18000000000000000000ULL },
	{ "19E", -ERANGE, 0 },
	{ "16Ei", -ERANGE, 0 },
	{ "0.1", 0, 1 },		/* rounds up like Kubernetes */
	{ "10m", -EINVAL, 0 },		/* milli makes no sense for bytes or bits */
	{ "10K", -EINVAL, 0 },		/* Kubernetes spells kilo with a small k */
	{ "1.2.3", -EINVAL, 0 },
	{ "1.0000000001G", -EINVAL, 0 },	/* more than 9 fraction digits */
	{ "G", -EINVAL, 0 },
	{ "+5", -EINVAL, 0 },
	{ "5 M", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
};

static void run_rows(const struct parse_row *rows, size_t n, int (*parse)(const char *, uint64_t *))
{
	for (size_t i = 0; i < n; i++) {
		uint64_t out = 12345;
		int rc = parse(rows[i].in, &out);

		if (rc != rows[i].rc)
			fail_msg("\"%s\": rc %d, want %d", rows[i].in, rc, rows[i].rc);
		if (rc == 0 && out != rows[i].want)
			fail_msg("\"%s\": got %llu, want %llu", rows[i].in, (unsigned long long)out,
				 (unsigned long long)rows[i].want);
		if (rc != 0 && out != 12345)
			fail_msg("\"%s\": output written on error", rows[i].in);
	}
}

static void test_units_duration(void **state)
{
	(void)state;
	run_rows(durations, sizeof(durations) / sizeof(durations[0]), units_parse_duration_ms);
}

static void test_units_quantity(void **state)
{
	(void)state;
	run_rows(quantities, sizeof(quantities) / sizeof(quantities[0]), units_parse_quantity);
}

/* A quantity as a JSON string's contents arrive: a length, no NUL. */
struct quantity_n_row {
	const char *in;
	size_t len;
	int rc;
	uint64_t want;
};

static const struct quantity_n_row quantities_n[] = {
	{ "10M", 3, 0, 10000000 },
	{ "1.5G", 4, 0, 1500000000 },
	{ "1Gi", 3, 0, 1073741824 },
	{ "10M\"}", 3, 0, 10000000 },		/* only the bytes given count */
	{ "", 0, -EINVAL, 0 },
	{ "10 M", 4, -EINVAL, 0 },
	{ "10MB", 4, -EINVAL, 0 },
	{ "1e3", 3, -EINVAL, 0 },
	{ "10\\u004d", 8, -EINVAL, 0 },	/* an escape, as it would arrive in JSON */
	{ "500\0\0k", 6, -EINVAL, 0 },	/* a NUL ended the copy early: was 500 */
	{ "10M\0", 4, -EINVAL, 0 },
	{ "99999999999999999999", 20, -ERANGE, 0 },
	{ "123456789012345678901234567890123", 33, -EINVAL, 0 }, /* over 32 bytes */
};

static void test_units_quantity_n(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(quantities_n) / sizeof(quantities_n[0]); i++) {
		const struct quantity_n_row *row = &quantities_n[i];
		uint64_t out = 42;
		int rc = units_parse_quantity_n(row->in, row->len, &out);

		if (rc != row->rc || (rc == 0 && out != row->want) || (rc && out != 42))
			fail_msg("\"%.*s\": rc %d out %llu, want rc %d out %llu", (int)row->len, row->in,
				 rc, (unsigned long long)out, row->rc, (unsigned long long)row->want);
	}
}

static void test_units_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(units_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(units_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(units_parse_u64("11", 10, &v), -ERANGE);
	assert_int_equal(units_parse_u64("0x10", 100, &v), -EINVAL);
	assert_int_equal(units_parse_u64("", 100, &v), -EINVAL);
	assert_int_equal(units_parse_u64(NULL, 100, &v), -EINVAL);
}

static void test_units_add_sat(void **state)
{
	(void)state;
	assert_true(units_add_sat(2, 3) == 5);
	assert_true(units_add_sat(UINT64_MAX - 1, 1) == UINT64_MAX);
	assert_true(units_add_sat(UINT64_MAX - 1, 2) == UINT64_MAX);
	assert_true(units_add_sat(UINT64_MAX, UINT64_MAX) == UINT64_MAX);
}

static void test_units_format(void **state)
{
	char b[32];

	(void)state;
	units_format_bytes_rate(b, sizeof(b), 812e6);
	assert_string_equal(b, "812 MB/s");
	units_format_bytes_rate(b, sizeof(b), 0);
	assert_string_equal(b, "0 B/s");
	units_format_bytes_rate(b, sizeof(b), 999);
	assert_string_equal(b, "999 B/s");
	units_format_bits_rate(b, sizeof(b), 1e9);
	assert_string_equal(b, "1 Gb/s");
	units_format_bits_rate(b, sizeof(b), 1.5e9);
	assert_string_equal(b, "1.5 Gb/s");
	units_format_bits_rate(b, sizeof(b), -5);
	assert_string_equal(b, "0 b/s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_duration),
		cmocka_unit_test(test_units_quantity),
		cmocka_unit_test(test_units_quantity_n),
		cmocka_unit_test(test_units_u64),
		cmocka_unit_test(test_units_add_sat),
		cmocka_unit_test(test_units_format),
	};
	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
