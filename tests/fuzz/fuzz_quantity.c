/* libFuzzer: strict number parsing (units_parse_u64, units_parse_duration_ms,
 * units_parse_quantity) and a quantity as it arrives in JSON, a pod's
 * bandwidth annotation (units_parse_quantity_n). The input is copied to a
 * bounded NUL-terminated string for the others; units_parse_quantity_n takes
 * the bytes as they are. Besides the sanitizers, the parsers must agree with
 * each other and with themselves:
 *  - the same string parses the same way twice;
 *  - a plain decimal is the same number to u64 and to quantity;
 *  - u64 honours its maximum exactly;
 *  - "Xms" is quantity("X") milliseconds and "Xs" is quantity("Xk");
 *  - quantity_n accepts what quantity accepts, given the same bytes, and
 *    never a NUL or a backslash among them. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#define MAX_STR 64

static void check_u64(const char *s)
{
	uint64_t v = 0, w = 0, q = 0;
	int rc = units_parse_u64(s, UINT64_MAX, &v);

	check(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	check(units_parse_u64(s, UINT64_MAX, &w) == rc);
	if (rc)
		return;
	check(v == w);
	check(units_parse_quantity(s, &q) == 0 && q == v);
	check(units_parse_u64(s, v, &w) == 0 && w == v);
	if (v > 0)
		check(units_parse_u64(s, v - 1, &w) == -ERANGE);
}

static void check_quantity(const char *s)
{
	uint64_t v = 0, w = 0;
	int rc = units_parse_quantity(s, &v);
	char buf[32];

	check(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	check(units_parse_quantity(s, &w) == rc);
	if (rc)
		return;
	check(v == w);
	units_format_bits_rate(buf, sizeof(buf), (double)v);
	check(memchr(buf, '\0', sizeof(buf)));
}

/* s[0..keep) + suffix into out[MAX_STR + 2]; false when it does not fit. */
static bool with_suffix(char *out, const char *s, size_t keep, const char *suffix)
{
	size_t k = strlen(suffix);

	if (keep + k + 1 > MAX_STR + 2)
		return false;
	memcpy(out, s, keep);
	memcpy(out + keep, suffix, k + 1);
	return true;
}

static void check_duration(const char *s)
{
	uint64_t ms = 0, again = 0, q = 0;
	int rc = units_parse_duration_ms(s, &ms);
	size_t n = strlen(s);
	char other[MAX_STR + 2];

	check(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	check(units_parse_duration_ms(s, &again) == rc);
	if (rc)
		return;
	check(ms == again);
	if (strcmp(s, "0") == 0) {
		check(ms == 0);
		return;
	}
	if (n > 2 && strcmp(s + n - 2, "ms") == 0) {
		check(with_suffix(other, s, n - 2, ""));
		check(units_parse_quantity(other, &q) == 0 && q == ms);
	} else if (n > 1 && s[n - 1] == 's') {
		check(with_suffix(other, s, n - 1, "k"));
		check(units_parse_quantity(other, &q) == 0 && q == ms);
	} else {
		check(n > 1 && (s[n - 1] == 'm' || s[n - 1] == 'h'));
	}
}

static void check_bandwidth(const uint8_t *data, size_t size, const char *s)
{
	bool clean = size >= 1 && !memchr(data, '\\', size) && !memchr(data, '\0', size);
	uint64_t bps = 0, q = 0;
	int rc = units_parse_quantity_n((const char *)data, size, &bps);
	int qrc = size <= MAX_STR ? units_parse_quantity(s, &q) : -EINVAL;

	check(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc == 0)
		check(clean && qrc == 0 && q == bps);
	else
		check(!clean || qrc != 0 || size > UNITS_QUANTITY_MAX_LEN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[MAX_STR + 1];
	size_t n = size < MAX_STR ? size : MAX_STR;

	memcpy(s, data, n);
	s[n] = '\0';
	check_u64(s);
	check_quantity(s);
	check_duration(s);
	check_bandwidth(data, size, s);
	return 0;
}
