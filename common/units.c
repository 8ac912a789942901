#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int units_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Parses "digits[.digits]" at s; returns the integer part, the fraction
 * scaled to 1e9 and the first unparsed character. */
static int parse_decimal(const char *s, uint64_t *whole, uint64_t *nano, const char **end)
{
	uint64_t w = 0, f = 0, scale = 100000000ULL;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (w > (UINT64_MAX - d) / 10)
			return -ERANGE;
		w = w * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale == 0)
				return -EINVAL; /* more than 9 fraction digits */
			f += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	*whole = w;
	*nano = f;
	*end = p;
	return 0;
}

/* whole.nano * mult, rounded up, overflow-checked. */
static int scale_up(uint64_t whole, uint64_t nano, uint64_t mult, uint64_t *out)
{
	unsigned __int128 v = (unsigned __int128)whole * mult;
	unsigned __int128 frac = (unsigned __int128)nano * mult;

	v += frac / 1000000000ULL;
	if (frac % 1000000000ULL)
		v += 1;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int units_parse_duration_ms(const char *s, uint64_t *out_ms)
{
	static const struct { const char *suffix; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	uint64_t whole, nano;
	const char *end;
	int rc;

	if (!s)
		return -EINVAL;
	if (strcmp(s, "0") == 0) {
		*out_ms = 0;
		return 0;
	}
	rc = parse_decimal(s, &whole, &nano, &end);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0)
			return scale_up(whole, nano, units[i].ms, out_ms);
	}
	return -EINVAL;
}

int units_parse_quantity(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; uint64_t mult; } units[] = {
		{ "", 1ULL },
		{ "k", 1000ULL }, { "M", 1000000ULL }, { "G", 1000000000ULL },
		{ "T", 1000000000000ULL }, { "P", 1000000000000000ULL },
		{ "E", 1000000000000000000ULL },
		{ "Ki", 1ULL << 10 }, { "Mi", 1ULL << 20 }, { "Gi", 1ULL << 30 },
		{ "Ti", 1ULL << 40 }, { "Pi", 1ULL << 50 }, { "Ei", 1ULL << 60 },
	};
	uint64_t whole, nano;
	const char *end;
	int rc;

	if (!s)
		return -EINVAL;
	rc = parse_decimal(s, &whole, &nano, &end);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0)
			return scale_up(whole, nano, units[i].mult, out);
	}
	return -EINVAL;
}

int units_parse_quantity_n(const char *s, size_t len, uint64_t *out)
{
	char buf[UNITS_QUANTITY_MAX_LEN + 1];

	if (!s || len == 0 || len > UNITS_QUANTITY_MAX_LEN || memchr(s, '\0', len))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return units_parse_quantity(buf, out);
}

static void format_si(char *buf, size_t len, double v, const char *unit)
{
	static const char *const prefix[] = { "", "k", "M", "G", "T", "P" };
	size_t i = 0;

	if (!(v > 0)) /* also catches NaN */
		v = 0;
	while (v >= 1000.0 && i + 1 < sizeof(prefix) / sizeof(prefix[0])) {
		v /= 1000.0;
		i++;
	}
	if (v >= 100.0 || i == 0)
		snprintf(buf, len, "%.0f %s%s", v, prefix[i], unit);
	else
		snprintf(buf, len, "%.3g %s%s", v, prefix[i], unit);
}

void units_format_bytes_rate(char *buf, size_t len, double bytes_per_second)
{
	format_si(buf, len, bytes_per_second, "B/s");
}

void units_format_bits_rate(char *buf, size_t len, double bits_per_second)
{
	format_si(buf, len, bits_per_second, "b/s");
}
