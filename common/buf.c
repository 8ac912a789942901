#include "buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"

void buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void buf_start(struct buf *b, size_t hint)
{
	size_t cap;
	char *d;

	if (b->data || b->failed)
		return;
	if (hint > b->max)
		hint = b->max;
	d = scratch_take(hint + 1, &cap);
	if (!d)
		return;
	d[0] = '\0';
	b->data = d;
	b->cap = cap;
	b->scratch = true;
}

void buf_free(struct buf *b)
{
	scratch_drop(b->data, b->scratch);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

bool buf_failed(const struct buf *b)
{
	return b->failed;
}

char *buf_release(struct buf *b, size_t *len)
{
	char *d = b->data;

	if (b->failed || !d) {
		scratch_drop(d, b->scratch);
		d = NULL;
	} else if (len) {
		*len = b->len;
	}
	buf_init(b, b->max);
	return d;
}

/* Makes room for need more bytes plus a NUL. */
static bool buf_reserve(struct buf *b, size_t need)
{
	size_t want, cap;
	char *d;

	if (b->failed)
		return false;
	if (need > b->max || b->len > b->max - need) {
		b->failed = true;
		return false;
	}
	want = b->len + need + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->failed = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void buf_append(struct buf *b, const void *data, size_t len)
{
	if (!buf_reserve(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n)) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_json_str(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	buf_append(b, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		size_t n = 0;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			n = 2;
		} else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			n = 6;
		} else {
			continue;
		}
		buf_append(b, s + run, i - run);
		buf_append(b, esc, n);
		run = i + 1;
	}
	buf_append(b, s + run, len - run);
	buf_append(b, "\"", 1);
}

void buf_json_cstr(struct buf *b, const char *s)
{
	buf_json_str(b, s, strlen(s));
}

void buf_json_u64(struct buf *b, uint64_t v)
{
	buf_printf(b, "%llu", (unsigned long long)v);
}

void buf_json_double(struct buf *b, double v)
{
	if (!isfinite(v))
		v = 0;
	buf_printf(b, "%.3f", v);
}
