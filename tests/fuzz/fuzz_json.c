/* libFuzzer: the JSON layer (common/json.h) on any bytes. Traps when a
 * document that parses breaks the header's promises: tokens in document
 * order inside the text, each with an earlier parent and inside the text of
 * the container that holds it, every scalar a JSON literal or string,
 * nothing but whitespace after the value; and when an accessor, given any
 * index (inside, -1, n, n + 1), returns anything but a token of the
 * document or "absent". The token array is exactly as long as the
 * document, so a read past the last token is a heap overflow here; and the
 * tokens were counted before the parse: the memory charged for them is
 * exactly what the document needed, and a body jsmn itself tokenizes within
 * the limit is never refused for its token count. Every string of a
 * document that parses is UTF-8 without a raw control byte (judged here the
 * long way), and every number at most JSON_MAX_NUMBER_LEN characters.
 * With containers opaque from depth 0, 1 or 2 (json_parse_shallow()) the
 * same body gets the same error (every byte is still checked), or the full
 * parse's tokens to that depth (tests/unit/json_shallow.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A jsmn of our own, built as json.c builds its. */
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#define JSMN_STATIC
#include <jsmn.h>

#include "common/json.h"
#include "tests/unit/json_shallow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

/* Small, so the over-limit path runs too. */
#define MAX_TOKENS 512

/* What jsmn itself makes of the body with room for any number of tokens
 * (jsmn stops at a NUL byte; json.c counts past it): INT_MAX when it
 * refuses the body or holds a NUL. */
static size_t jsmn_tokens(const char *js, size_t size)
{
	static jsmntok_t t[MAX_TOKENS + 1];
	jsmn_parser p;
	int r;

	if (memchr(js, '\0', size))
		return INT_MAX;
	jsmn_init(&p);
	r = jsmn_parse(&p, js, size, t, MAX_TOKENS + 1);
	if (r == JSMN_ERROR_NOMEM)
		return MAX_TOKENS + 1;
	return r > 0 ? (size_t)r : INT_MAX;
}

/* A string token's raw bytes, judged one code point at a time the long
 * way (not json.c's table): no control byte, and every sequence decodes to
 * a scalar value in the shortest form (no surrogate, nothing over
 * U+10FFFF). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	static const uint32_t min_of[] = { 0, 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < n;) {
		size_t len = s[i] < 0x80 ? 1 : (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 :
			     (s[i] & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp;

		if (!len || len > n - i || s[i] < 0x20)
			return false;
		cp = len == 1 ? s[i] : s[i] & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min_of[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static bool in_doc(const struct json *d, int i)
{
	return i >= 0 && i < d->n;
}

/* A string decoded into a small buffer: never past it, never longer than
 * its escaped text (an escape is at least as long as what it decodes to,
 * but for a lone surrogate: 6 bytes to 3), and a string that fits once
 * fits again the same. */
static void probe_string(const struct json *d, int i)
{
	char out[16], again[16];
	size_t len = 0, len2 = 0, raw = 0;
	int rc = json_string(d, i, out, sizeof(out), &len);

	check(rc == 0 || rc == -EINVAL || rc == -E2BIG);
	check((rc == -EINVAL) == (json_type(d, i) != JSMN_STRING));
	if (rc)
		return;
	(void)json_text(d, i, &raw);
	check(len <= sizeof(out) && len <= raw);
	check(json_string(d, i, again, sizeof(again), &len2) == 0 && len2 == len &&
	      !memcmp(out, again, len));
}

/* Every accessor on index i, which may be anything. */
static void probe(const struct json *d, int i)
{
	size_t len = 0;
	const char *text = json_text(d, i, &len);
	int k;

	check(!text == !in_doc(d, i));
	check(in_doc(d, i) || json_type(d, i) == JSMN_UNDEFINED);
	check(in_doc(d, i) || !strcmp(json_kind(d, i), "missing"));
	check(!text || (text >= d->js && text + len <= d->js + d->len));
	k = json_skip(d, i);
	check(k <= d->n && (!in_doc(d, i) || k > i));
	for (int m = -1; m < 3; m++) {
		k = json_element(d, i, m);
		check(k == -1 || (in_doc(d, k) && d->t[k].parent == i));
	}
	k = json_member(d, i, "a", true);
	check(k == -1 || (in_doc(d, k) && in_doc(d, d->t[k].parent) &&
			  d->t[d->t[k].parent].parent == i));
	(void)json_is_null(d, i);
	(void)json_is_string(d, i, "a");
	probe_string(d, i);
}

/* The body with containers opaque from opaque_depth, against the full
 * parse's answer (rc, err; full when it parsed). */
static void check_shallow(const char *js, size_t size, unsigned opaque_depth, int rc,
			  const char *err, const struct json *full)
{
	struct membudget budget;
	struct json s;
	char why[256];
	int src;

	membudget_init(&budget, SIZE_MAX, 0, 0);
	src = json_parse_shallow(&s, js, size, MAX_TOKENS, opaque_depth, &budget, why, sizeof(why));
	if (src) {
		/* What the shallow parse refuses, the full one refuses for the
		 * same reason: over the token limit with more tokens, anything
		 * else in the same words. */
		if (src == -E2BIG && strstr(why, "JSON tokens"))
			check(rc == -E2BIG && strstr(err, "JSON tokens"));
		else
			check(src == rc && !strcmp(why, err));
		check(membudget_used(&budget) == 0);
		return;
	}
	check(rc == 0 || (rc == -E2BIG && strstr(err, "JSON tokens")));
	check(membudget_used(&budget) == (size_t)s.n * sizeof(s.t[0]));
	if (!rc)
		check(json_shallow_same(full, &s, opaque_depth, why, sizeof(why)));
	json_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *js = (const char *)data;
	struct membudget budget;
	struct json d;
	char err[256];
	int rc, end;

	memset(err, 0x55, sizeof(err));
	membudget_init(&budget, SIZE_MAX, 0, 0);
	rc = json_parse_budget(&d, js, size, MAX_TOKENS, &budget, err, sizeof(err));
	for (unsigned depth = 0; depth < 3; depth++)
		check_shallow(js, size, depth, rc, err, &d);
	if (rc) {
		check(rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
		check(memchr(err, '\0', sizeof(err)) && err[0]);
		check(membudget_used(&budget) == 0);
		if (rc == -E2BIG && strstr(err, "JSON tokens"))
			check(jsmn_tokens(js, size) > MAX_TOKENS);
		return 0;
	}
	check(membudget_used(&budget) == (size_t)d.n * sizeof(d.t[0]));
	check(d.n >= 1 && d.n <= MAX_TOKENS && d.js == js && d.len == size);
	check(d.t[0].parent == -1);
	for (int i = 0; i < d.n; i++) {
		const jsmntok_t *t = &d.t[i];

		check(t->start >= 0 && t->start <= t->end && (size_t)t->end <= size);
		check(i == 0 || (t->parent >= 0 && t->parent < i && t->start >= d.t[i - 1].start));
		/* Inside the container that holds it (a value's is its key's). */
		if (i > 0) {
			int box = d.t[t->parent].type == JSMN_STRING ? d.t[t->parent].parent : t->parent;

			check(box >= 0 && d.t[box].start < t->start && t->end < d.t[box].end);
		}
		if (t->type == JSMN_PRIMITIVE)
			check((js[t->start] == '-' || (js[t->start] >= '0' && js[t->start] <= '9') ||
			       json_is_null(&d, i) || json_text_is(&d, i, "true") ||
			       json_text_is(&d, i, "false")) &&
			      (size_t)(t->end - t->start) <= JSON_MAX_NUMBER_LEN);
		if (t->type == JSMN_STRING)
			check(utf8_ok(data + t->start, (size_t)(t->end - t->start)));
		probe(&d, i);
	}
	probe(&d, -1);
	probe(&d, d.n);
	probe(&d, d.n + 1);
	/* Whitespace only after the value. */
	end = d.t[0].type == JSMN_STRING ? d.t[0].end + 1 : d.t[0].end;
	for (size_t i = (size_t)end; i < size; i++)
		check(js[i] == ' ' || js[i] == '\t' || js[i] == '\n' || js[i] == '\r');
	json_free(&d);
	return 0;
}
