/* Strict parsing and human formatting of durations and quantities, and
 * their saturating sums.
 * Every parser takes the whole string (no trailing junk, no sign, no
 * whitespace), checks overflow, and writes *out only on success.
 * Returns 0, or -EINVAL (malformed) / -ERANGE (overflow or out of range). */
#ifndef NETSCHED_UNITS_H
#define NETSCHED_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Decimal integer in [0, max]. */
int units_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* Go-style duration with one unit: "250ms", "2s", "5m", "1h" -> milliseconds.
 * A bare "0" is accepted; any other number needs a unit. */
int units_parse_duration_ms(const char *s, uint64_t *out_ms);

/* Kubernetes quantity as an integer: "500", "10M", "1.5G", "500k", "1Gi".
 * Decimal suffixes k M G T P E, binary Ki Mi Gi Ti Pi Ei; up to 9 fraction
 * digits; the result is rounded up to an integer (Kubernetes rounds up too). */
int units_parse_quantity(const char *s, uint64_t *out);

/* units_parse_quantity() of s[0..len), not NUL-terminated, as a value
 * arrives in JSON or YAML (a pod's bandwidth annotation, "10M"): at most
 * UNITS_QUANTITY_MAX_LEN bytes, and no NUL byte among them ("500\0k" is
 * not 500). */
#define UNITS_QUANTITY_MAX_LEN 32
int units_parse_quantity_n(const char *s, size_t len, uint64_t *out);

/* a + b, or UINT64_MAX where that would overflow: rates and packet counts
 * from outside add up without wrapping to small numbers. */
static inline uint64_t units_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* "1.5 GB/s", "812 MB/s", "0 B/s": bytes per second, SI prefixes. */
void units_format_bytes_rate(char *buf, size_t len, double bytes_per_second);
/* "870 Mb/s", "1 Gb/s": bits per second, SI prefixes. */
void units_format_bits_rate(char *buf, size_t len, double bits_per_second);

#endif
