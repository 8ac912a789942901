/* jsmn is header-only and this is the one file that instantiates it, before
 * json.h declares its types with the same settings. STRICT refuses unquoted
 * keys and bare words; PARENT_LINKS gives every token its parent, which
 * json_element() relies on, and makes closing a container O(1) instead of a
 * scan back over every token. */
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#define JSMN_STATIC
#include <jsmn.h>

#include "json.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "scratch.h"

/* The parse in progress. */
struct ctx {
	const char *js;
	size_t len;
	const jsmntok_t *t;
	int n;
	char *err;
	size_t errlen;
	struct membudget *budget;	/* token memory taken from it; may be NULL */
	size_t charged;
	/* Containers opened at this depth are opaque (json_parse_shallow());
	 * JSON_MAX_DEPTH: none is. */
	unsigned opaque_depth;
	/* Each opaque container's opening and closing bracket, as pairs of
	 * offsets in document order (bodies are under INT_MAX bytes); ncuts
	 * pairs complete. Taken from scratch, charged to the budget with the
	 * tokens, freed when the parse ends. */
	uint32_t *cuts;
	size_t ncuts, cuts_cap;
};

#define fail(c, rc, ...) errmsg((c)->err, (c)->errlen, (rc), __VA_ARGS__)

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int ends_early(struct ctx *c)
{
	return fail(c, -EINVAL, "JSON ends early: an object, array or string is not closed "
		    "(truncated body?)");
}

/* What jsmn refuses after scan() passed the body: a bad escape, or a bare
 * number at the top with nothing after it (JSMN_STRICT). */
static int jsmn_fail(struct ctx *c, int r, unsigned pos)
{
	if (r == JSMN_ERROR_PART)
		return ends_early(c);
	return fail(c, -EINVAL, "invalid JSON near byte %u", pos);
}

#if defined(__SANITIZE_ADDRESS__)
#define JSON_TRIM_TOKENS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JSON_TRIM_TOKENS 1
#endif
#endif
#ifndef JSON_TRIM_TOKENS
#define JSON_TRIM_TOKENS 0
#endif

/* Where the string opened at js[open] ends: its closing '"', the first one
 * after an even run of backslashes; len when it is not closed. memchr()
 * skips a string many bytes at a time, and Kubernetes objects are mostly
 * strings: a loop over every byte made the scan below half of the parse. */
static size_t string_end(const char *js, size_t len, size_t open)
{
	size_t from = open + 1;

	for (;;) {
		const char *q = memchr(js + from, '"', len - from);
		size_t at, slashes = 0;

		if (!q)
			return len;
		at = (size_t)(q - js);
		while (at - slashes > open + 1 && js[at - slashes - 1] == '\\')
			slashes++;
		if (slashes % 2 == 0)
			return at;
		from = at + 1;
	}
}

#define WORD_ONES 0x0101010101010101ULL
#define WORD_TOPS 0x8080808080808080ULL

/* The top bit of each byte of w equal to ch: a zero byte of x = w ^ ch...,
 * which sets its top bit in (x - 0x0101...) & ~x. */
static uint64_t bytes_equal(uint64_t w, unsigned char ch)
{
	uint64_t x = w ^ (ch * WORD_ONES);

	return (x - WORD_ONES) & ~x & WORD_TOPS;
}

/* The top bit of each byte of w that check_string() must look at twice: over
 * 0x7f (its top bit set in w), under 0x20 (set in w - 0x2020...), or a
 * backslash. A borrow carried into the next byte can only set more top
 * bits, never clear one, so the lowest flagged byte is a real one and a word
 * with none flagged is clean (a false flag above a real one just takes the
 * byte-by-byte path). */
static uint64_t bytes_unplain(uint64_t w)
{
	return ((w | (w - 0x20 * WORD_ONES)) & WORD_TOPS) | bytes_equal(w, '\\');
}

/* Whether the first n (1..8) of the 8 bytes at s are all in 0x20..0x7f
 * and none is a backslash; the 8 must be readable. Bytes past n (the
 * closing quote, what follows) read as spaces. */
static bool ascii_word(const unsigned char *s, size_t n)
{
	uint64_t w;

	memcpy(&w, s, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n < 8) {
		uint64_t keep = (1ULL << (8 * n)) - 1;

		w = (w & keep) | (0x2020202020202020ULL & ~keep);
	}
#else
	if (n < 8)
		return false;
#endif
	return bytes_unplain(w) == 0;
}

static bool is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* How many bytes the escape at s[0] == '\\' takes, 0 when RFC 8259 has no
 * such escape; n bytes are readable (string_end() ended the string after
 * an even run of backslashes, so a backslash is never the last of them). */
static size_t escape_len(const unsigned char *s, size_t n)
{
	if (n >= 2 && s[1] && strchr("\"\\/bfnrt", s[1]))
		return 2;
	if (n >= 6 && s[1] == 'u' && is_hex(s[2]) && is_hex(s[3]) && is_hex(s[4]) && is_hex(s[5]))
		return 6;
	return 0;
}

/* How many bytes the UTF-8 sequence at s[0..n) takes (RFC 3629: no
 * overlong forms, no surrogates, nothing over U+10FFFF), 0 when it is not
 * one. s[0] >= 0x80. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;	/* overlong below U+0800 */
	else if (s[0] == 0xed)
		hi = 0x9f;	/* U+D800..U+DFFF, the surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;	/* overlong below U+10000 */
	else if (s[0] == 0xf4)
		hi = 0x8f;	/* over U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < len; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return len;
}

/* A string's raw bytes js[i..end) (between its quotes): RFC 8259 allows
 * no control byte there, every escape must be one it defines, and every
 * other byte must be UTF-8. jsmn checks escapes too, but never sees the
 * strings inside opaque containers. A word at a time while the bytes are
 * plain ASCII without a backslash, as most of a Kubernetes object is. */
static int check_string(struct ctx *c, size_t i, size_t end)
{
	const unsigned char *s = (const unsigned char *)c->js;

	while (i < end) {
		size_t n;

		/* A string ends at its quote, so most tails have 8 bytes to
		 * read; only the body's last few bytes go one at a time. */
		if (c->len - i >= 8) {
			size_t w = end - i < 8 ? end - i : 8;

			if (ascii_word(s + i, w)) {
				i += w;
				continue;
			}
		}
		if (s[i] == '\\') {
			n = escape_len(s + i, end - i);
			if (!n)
				return fail(c, -EINVAL, "invalid JSON near byte %zu: invalid escape in a "
					    "string", i);
			i += n;
			continue;
		}
		if (s[i] >= 0x20 && s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] < 0x20)
			return fail(c, -EINVAL, "invalid JSON near byte %zu: control byte 0x%02x inside "
				    "a string (it must be escaped)", i, s[i]);
		n = utf8_len(s + i, end - i);
		if (!n)
			return fail(c, -EINVAL, "invalid JSON near byte %zu: invalid UTF-8 in a string "
				    "(byte 0x%02x)", i, s[i]);
		i += n;
	}
	return 0;
}

/* Where the string opened at js[open] ends when it is short and plain:
 * its closing quote within the SHORT_STRING bytes after the opening one,
 * and only bytes check_string() passes without a second look (0x20..0x7f,
 * no backslash) before it. 0 otherwise, with *clean the bytes after the
 * quote found plain (whole words), so the long way starts past them. Most
 * keys and node names are that short, and up to four words here cost less
 * than a memchr() call and check_string()'s setup (32 bytes measured
 * against 16 and 64). The lowest byte a mask flags is exact (a borrow
 * only ever flags bytes above a flagged one), so the quote counts only when
 * no flag sits below it. */
#define SHORT_STRING 32u
static size_t short_string_end(const struct ctx *c, size_t open, size_t *clean)
{
	*clean = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (size_t at = open + 1; at < open + 1 + SHORT_STRING && c->len - at >= 8; at += 8) {
		uint64_t w, q, bad;

		memcpy(&w, c->js + at, sizeof(w));
		q = bytes_equal(w, '"');
		bad = bytes_unplain(w);
		if (q && (!bad || __builtin_ctzll(q) < __builtin_ctzll(bad)))
			return at + (size_t)__builtin_ctzll(q) / 8;
		if (bad)
			break;
		*clean += 8;
	}
#else
	(void)c;
	(void)open;
#endif
	return 0;
}

/* true, false, null, or a number as RFC 8259 spells it: jsmn takes any run
 * of printable characters that starts like one (tru, 01, 1.2.3, -). */
static bool is_literal(const char *s, size_t n)
{
	size_t i = 0;

	if ((n == 4 && !memcmp(s, "true", 4)) || (n == 5 && !memcmp(s, "false", 5)) ||
	    (n == 4 && !memcmp(s, "null", 4)))
		return true;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else if (i < n && s[i] >= '1' && s[i] <= '9') {
		while (i < n && is_digit(s[i]))
			i++;
	} else {
		return false;
	}
	if (i < n && s[i] == '.') {
		if (++i >= n || !is_digit(s[i]))
			return false;
		while (i < n && is_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !is_digit(s[i]))
			return false;
		while (i < n && is_digit(s[i]))
			i++;
	}
	return i == n;
}

/* What the grammar allows at the next byte that is not whitespace. */
enum want {
	WANT_VALUE,		/* the document, an element after ',', a member's after ':' */
	WANT_FIRST_VALUE,	/* just inside '[': a value or ']' */
	WANT_KEY,		/* after ',' in an object */
	WANT_FIRST_KEY,		/* just inside '{': a key or '}' */
	WANT_COLON,		/* after a key */
	WANT_NEXT,		/* after a value in a container: ',' or its close */
	WANT_END,		/* after the document: nothing */
};

/* The grammar's state while scan() walks the body. */
struct grammar {
	enum want want;
	unsigned depth;
	uint64_t objects;	/* bit d: the container at depth d + 1 is an object */
	size_t comma;		/* where the last ',' was */
};

_Static_assert(JSON_MAX_DEPTH <= 64, "grammar.objects holds one bit per open container");

static bool in_object(const struct grammar *g)
{
	return g->depth && (g->objects >> (g->depth - 1) & 1);
}

static bool takes_value(const struct grammar *g)
{
	return g->want == WANT_VALUE || g->want == WANT_FIRST_VALUE;
}

static void value_done(struct grammar *g)
{
	g->want = g->depth ? WANT_NEXT : WANT_END;
}

static const char *expected(const struct grammar *g)
{
	switch (g->want) {
	case WANT_VALUE:
		return "a value";
	case WANT_FIRST_VALUE:
		return "a value or ']'";
	case WANT_KEY:
		return "\"key\": value";
	case WANT_FIRST_KEY:
		return "\"key\": value or '}'";
	case WANT_COLON:
		return "':'";
	case WANT_NEXT:
		return in_object(g) ? "',' or '}'" : "',' or ']'";
	default:
		return "nothing";
	}
}

/* Byte i is not what the grammar allows there. */
static int unexpected(struct ctx *c, const struct grammar *g, size_t i)
{
	unsigned char ch = (unsigned char)c->js[i];
	size_t top = 0;

	if (g->want == WANT_END) {
		while (is_space(c->js[top]))
			top++;
		return fail(c, -EINVAL, "invalid JSON: unexpected data after the JSON %s at byte %zu",
			    c->js[top] == '{' ? "object" : c->js[top] == '[' ? "array" : "value", i);
	}
	if (ch == '\0')
		return fail(c, -EINVAL, "invalid JSON near byte %zu: NUL byte", i);
	/* [1,] and {"a":1,}: the comma is what is wrong. Inside an array a
	 * value is wanted only after a comma (the first is WANT_FIRST_VALUE);
	 * inside an object a key. */
	if (g->depth && ch == (in_object(g) ? '}' : ']') &&
	    g->want == (in_object(g) ? WANT_KEY : WANT_VALUE))
		return fail(c, -EINVAL, "invalid JSON near byte %zu: unexpected ',' before '%c'",
			    g->comma, ch);
	if (ch == ':' && g->want == WANT_NEXT && !in_object(g))
		return fail(c, -EINVAL, "invalid JSON near byte %zu: ':' inside an array", i);
	if (ch < 0x20 || ch >= 0x7f)
		return fail(c, -EINVAL, "invalid JSON near byte %zu: unexpected byte 0x%02x, expected %s",
			    i, ch, expected(g));
	return fail(c, -EINVAL, "invalid JSON near byte %zu: unexpected '%c', expected %s", i, ch,
		    expected(g));
}

/* Where the primitive starting at js[i] ends: where jsmn ends it
 * (JSMN_STRICT), at whitespace, ',', ']' or '}', or at a NUL, where jsmn
 * stops reading. */
static size_t primitive_end(const struct ctx *c, size_t i)
{
	for (; i < c->len; i++) {
		char ch = c->js[i];

		if (is_space(ch) || ch == ',' || ch == ']' || ch == '}' || ch == '\0')
			break;
	}
	return i;
}

/* A scalar that is not a string, js[i..end): a literal, and a number no
 * longer than JSON_MAX_NUMBER_LEN (is_literal() is linear, but nothing we
 * read needs more, and a 5,000-digit number is not data). */
static int check_primitive(struct ctx *c, size_t i, size_t end)
{
	if (end - i > JSON_MAX_NUMBER_LEN)
		return fail(c, -EINVAL, "invalid JSON near byte %zu: a number of %zu characters, "
			    "limit %u", i, end - i, JSON_MAX_NUMBER_LEN);
	if (!is_literal(c->js + i, end - i))
		return fail(c, -EINVAL, "invalid JSON near byte %zu: not a number, true, false or null",
			    i);
	return 0;
}

/* An opaque container opens at js[i]: room for its pair is made here (the
 * array doubles, charged to the budget first, as the tokens are), so its
 * close only writes. */
static int cut_open(struct ctx *c, size_t i)
{
	if (2 * c->ncuts + 2 > c->cuts_cap) {
		size_t cap = c->cuts_cap ? 2 * c->cuts_cap : 1024, had = c->cuts_cap;
		uint32_t *more;

		if (!membudget_take(c->budget, &c->charged, (cap - had) * sizeof(*more)))
			return fail(c, -EBUSY, "no room for %zu opaque JSON containers: other requests "
				    "hold the request memory budget; retry", cap / 2);
		more = scratch_take(cap * sizeof(*more), NULL);
		if (!more)
			return fail(c, -ENOMEM, "out of memory for %zu opaque JSON containers", cap / 2);
		if (had)
			memcpy(more, c->cuts, 2 * c->ncuts * sizeof(*more));
		scratch_give(c->cuts);
		c->cuts = more;
		c->cuts_cap = cap;
	}
	c->cuts[2 * c->ncuts] = (uint32_t)i;
	return 0;
}

static void cut_close(struct ctx *c, size_t i)
{
	c->cuts[2 * c->ncuts + 1] = (uint32_t)i;
	c->ncuts++;
}

/* The whole of RFC 8259 in one linear pass, before jsmn sees the body: jsmn
 * checks tokens and bracket pairs but not what lies between them ([1 2],
 * [1,,2], {"a":1,}, {"a"} and [{"k"}:1] all tokenize), nor UTF-8, nor
 * literals (tru, 01). Checking the grammar here, while the bytes are in the
 * cache, instead of walking jsmn's tokens afterwards, took the parse of a
 * 500-Node request (1.6 MB) from 3.1 to 2.3 ms. It checks the escapes
 * too, since jsmn never reads an opaque container; jsmn still refuses a
 * bare number at the top with nothing after it. The pass also gives what
 * jsmn cannot give cheaply:
 *  - The nesting depth. jsmn finds the container a ']' or '}' closes by
 *    walking up from the last token, one step per container already closed
 *    on the way, so 200,000 nested '[' took a minute. Kubernetes objects
 *    nest 12 or 13 deep; past JSON_MAX_DEPTH the body is refused here, which
 *    bounds jsmn at O(bytes x JSON_MAX_DEPTH).
 *  - How many tokens jsmn will make, so the array is charged and allocated
 *    once, at its size: for a body that passes here the count is exact
 *    (an opaque container is one token, its inside none). A
 *    guess that grows reserved up to twice the memory, and counting with
 *    jsmn itself doubled the parse of a full-Node request.
 *  - Every string's bytes (check_string()), while memchr() has just brought
 *    them into the cache: a pass of its own over a 6.6 MB body cost a
 *    fifth more than the whole parse.
 *  - Where each opaque container opens and closes (cut_open()). */
static int scan(struct ctx *c, size_t *tokens)
{
	struct grammar g = { .want = WANT_VALUE };
	const unsigned opaque = c->opaque_depth;	/* in a register: cut_*() store through c */
	size_t n = 0;

	for (size_t i = 0; i < c->len; i++) {
		char ch = c->js[i];
		size_t end, clean;

		if (is_space(ch))
			continue;
		switch (ch) {
		case '"':
			if (g.want == WANT_KEY || g.want == WANT_FIRST_KEY)
				g.want = WANT_COLON;
			else if (takes_value(&g))
				value_done(&g);
			else
				return unexpected(c, &g, i);
			end = short_string_end(c, i, &clean);
			if (!end) {
				end = string_end(c->js, c->len, i + clean);
				if (end == c->len)
					return ends_early(c);
				if (check_string(c, i + 1 + clean, end))
					return -EINVAL;
			}
			n += g.depth <= opaque;
			i = end;
			continue;
		case '{':
		case '[':
			if (!takes_value(&g))
				return unexpected(c, &g, i);
			if (g.depth == JSON_MAX_DEPTH)
				return fail(c, -E2BIG, "JSON nested deeper than %u levels at byte %zu",
					    JSON_MAX_DEPTH, i);
			if (g.depth == opaque) {
				int rc = cut_open(c, i);

				if (rc)
					return rc;
			}
			n += g.depth <= opaque;
			if (ch == '{')
				g.objects |= 1ULL << g.depth;
			else
				g.objects &= ~(1ULL << g.depth);
			g.depth++;
			g.want = ch == '{' ? WANT_FIRST_KEY : WANT_FIRST_VALUE;
			break;
		case '}':
		case ']':
			if (!g.depth || (ch == '}') != in_object(&g) ||
			    !(g.want == WANT_NEXT || g.want == (ch == '}' ? WANT_FIRST_KEY : WANT_FIRST_VALUE)))
				return unexpected(c, &g, i);
			g.depth--;
			if (g.depth == opaque)
				cut_close(c, i);
			value_done(&g);
			continue;	/* closes a token, starts none */
		case ',':
			if (g.want != WANT_NEXT)
				return unexpected(c, &g, i);
			g.want = in_object(&g) ? WANT_KEY : WANT_VALUE;
			g.comma = i;
			continue;
		case ':':
			if (g.want != WANT_COLON)
				return unexpected(c, &g, i);
			g.want = WANT_VALUE;
			continue;
		default:
			if (!takes_value(&g))
				return unexpected(c, &g, i);
			end = primitive_end(c, i);
			if (end == i)
				return unexpected(c, &g, i);	/* a NUL */
			if (check_primitive(c, i, end))
				return -EINVAL;
			n += g.depth <= opaque;
			value_done(&g);
			i = end - 1;
			continue;
		}
	}
	if (g.want != WANT_END)
		return n ? ends_early(c) : fail(c, -EINVAL, "empty body: no JSON value");
	*tokens = n;
	return 0;
}

/* jsmn over the body, stepping over each opaque container's inside: jsmn
 * can be called again to go on where it stopped, as it is when a stream
 * brings more bytes, so each call ends just past an opening bracket and
 * the next starts at its closing one. jsmn keeps the container as a token
 * with its whole extent and no members. Until the last call a container
 * is still open, so jsmn says JSMN_ERROR_PART; scan() has matched every
 * bracket, so only the last call's answer counts. */
static int tokenize_around(struct ctx *c, jsmntok_t *t, unsigned cap, jsmn_parser *p)
{
	jsmn_init(p);
	/* One call site, so the compiler still inlines jsmn here: two made
	 * jsmn 10% slower. */
	for (size_t k = 0;; k++) {
		bool last = k == c->ncuts;
		int r = jsmn_parse(p, c->js, last ? c->len : (size_t)c->cuts[2 * k] + 1, t, cap);

		if (last)
			return r;
		if (r != JSMN_ERROR_PART)
			return r < 0 ? r : JSMN_ERROR_INVAL;
		p->pos = c->cuts[2 * k + 1];
	}
}

/* One jsmn pass into exactly the tokens scan() counted (at least one: scan()
 * passes only a body holding a value), charged to the budget before they
 * are allocated: dense input ([1,1,1]) needs 8 bytes of tokens per byte of
 * body, and input over the limit gets no array at all. On failure the
 * caller gives back what was charged. */
static int tokenize(struct ctx *c, size_t cap, size_t max_tokens, jsmntok_t **out)
{
	jsmn_parser p;
	jsmntok_t *t, *smaller;
	int r;

	if (cap > max_tokens || cap > INT_MAX)
		return fail(c, -E2BIG, "%zu JSON tokens, limit %zu", cap, max_tokens);
	if (!membudget_take(c->budget, &c->charged, cap * sizeof(*t)))
		return fail(c, -EBUSY, "no room for %zu JSON tokens (%zu bytes): other requests "
			    "hold the request memory budget; retry", cap, cap * sizeof(*t));
	t = scratch_take(cap * sizeof(*t), NULL);
	if (!t)
		return fail(c, -ENOMEM, "out of memory for %zu JSON tokens", cap);
	r = tokenize_around(c, t, (unsigned)cap, &p);
	if (r <= 0) {
		scratch_give(t);
		return jsmn_fail(c, r, p.pos);
	}
	/* Under the sanitizers (tests, fuzzers), exactly the tokens jsmn
	 * filled, so a read past the last one is a heap overflow they catch,
	 * not a stale token. */
	if (JSON_TRIM_TOKENS && (size_t)r < cap) {
		smaller = realloc(t, (size_t)r * sizeof(*t));
		if (smaller)
			t = smaller;
	}
	c->t = t;
	c->n = r;
	*out = t;
	return 0;
}


int json_parse(struct json *doc, const char *js, size_t len, size_t max_tokens, char *err,
	       size_t errlen)
{
	return json_parse_budget(doc, js, len, max_tokens, NULL, err, errlen);
}

int json_parse_budget(struct json *doc, const char *js, size_t len, size_t max_tokens,
		      struct membudget *budget, char *err, size_t errlen)
{
	return json_parse_shallow(doc, js, len, max_tokens, JSON_MAX_DEPTH, budget, err, errlen);
}

int json_parse_shallow(struct json *doc, const char *js, size_t len, size_t max_tokens,
		       unsigned opaque_depth, struct membudget *budget, char *err, size_t errlen)
{
	struct ctx c = { .js = js, .len = len, .err = err, .errlen = errlen, .budget = budget,
			 .opaque_depth = opaque_depth < JSON_MAX_DEPTH ? opaque_depth : JSON_MAX_DEPTH };
	jsmntok_t *tokens = NULL;
	size_t n = 0;
	int rc;

	/* jsmn keeps offsets and counts in int, and the cuts in 32 bits. */
	if (len >= INT_MAX)
		return fail(&c, -E2BIG, "body of %zu bytes is too large to parse", len);
	rc = scan(&c, &n);
	if (rc)
		goto out;
	rc = tokenize(&c, n, max_tokens, &tokens);
	if (rc)
		goto out;
	membudget_shrink(budget, &c.charged, n * sizeof(*tokens));
	*doc = (struct json){ .js = js, .len = len, .t = tokens, .n = c.n, .budget = budget,
			      .charged = c.charged };
out:
	if (rc)
		membudget_give(budget, &c.charged);
	scratch_give(c.cuts);
	return rc;
}

void json_free(struct json *doc)
{
	if (!doc)
		return;
	scratch_give(doc->t);
	membudget_give(doc->budget, &doc->charged);
	doc->t = NULL;
	doc->n = 0;
}

jsmntype_t json_type(const struct json *doc, int i)
{
	return i >= 0 && i < doc->n ? doc->t[i].type : JSMN_UNDEFINED;
}

/* The first token after token i and everything nested in it. Tokens are in
 * document order, so that is the first token starting at or past i's end:
 * a binary search, which keeps skipping large node objects cheap. */
int json_skip(const struct json *doc, int i)
{
	const jsmntok_t *t = doc->t;
	int lo = i + 1, hi = doc->n;

	if (i < 0 || i >= doc->n)
		return doc->n;
	if (t[i].type != JSMN_OBJECT && t[i].type != JSMN_ARRAY)
		return i + 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (t[mid].start < t[i].end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static unsigned hex_value(char ch)
{
	if (is_digit(ch))
		return (unsigned)(ch - '0');
	return (unsigned)((ch | 0x20) - 'a' + 10);
}

/* Decodes the escape at s[*i] (a backslash) and moves past it. jsmn has
 * checked that it is complete; \uXXXX yields the UTF-16 unit (a key
 * compares it as is: one >= 0x80 never equals an ASCII key). */
static unsigned unescape(const char *s, size_t n, size_t *i)
{
	unsigned v = 0;
	char e = *i + 1 < n ? s[*i + 1] : '\\';

	*i += 2;
	switch (e) {
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case 'u':
		for (int k = 0; k < 4 && *i < n; k++)
			v = v * 16 + hex_value(s[(*i)++]);
		return v;
	default:
		return (unsigned char)e;
	}
}

static unsigned ascii_lower(unsigned ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch;
}

/* Whether string token k, unescaped, equals key (ASCII case-insensitively
 * when fold: Go matches struct fields that way; map keys match exactly). */
static bool key_equals(const struct json *doc, int k, const char *key, bool fold)
{
	const char *s = doc->js + doc->t[k].start;
	size_t n = (size_t)(doc->t[k].end - doc->t[k].start), i = 0;

	for (; *key; key++) {
		unsigned ch, want = (unsigned char)*key;

		if (i >= n)
			return false;
		ch = s[i] == '\\' ? unescape(s, n, &i) : (unsigned char)s[i++];
		if (fold) {
			ch = ascii_lower(ch);
			want = ascii_lower(want);
		}
		if (ch != want)
			return false;
	}
	return i == n;
}

int json_member(const struct json *doc, int obj, const char *key, bool fold)
{
	int found = -1, k = obj + 1;

	if (json_type(doc, obj) != JSMN_OBJECT)
		return -1;
	/* After the grammar check every member is a string key with one
	 * value; k < doc->n only guards against a bug. */
	for (int m = 0; m < doc->t[obj].size && k < doc->n; m++) {
		if (key_equals(doc, k, key, fold))
			found = k + 1;
		k = json_skip(doc, k + 1);
	}
	return found;
}


int json_element(const struct json *doc, int arr, int m)
{
	int k;

	if (json_type(doc, arr) != JSMN_ARRAY || m < 0 || m >= doc->t[arr].size)
		return -1;
	/* Element m sits at arr + 1 + m only while every element before it is
	 * a scalar; the parent link tells. */
	k = arr + 1 + m;
	return k < doc->n && doc->t[k].parent == arr ? k : -1;
}

const char *json_text(const struct json *doc, int i, size_t *len)
{
	if (json_type(doc, i) == JSMN_UNDEFINED)
		return NULL;
	*len = (size_t)(doc->t[i].end - doc->t[i].start);
	return doc->js + doc->t[i].start;
}

/* Code point cp as UTF-8 into out[*k..cap); false when it does not fit. */
static bool put_utf8(char *out, size_t cap, size_t *k, unsigned cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (n > cap - *k)
		return false;
	memcpy(out + *k, b, n);
	*k += n;
	return true;
}

int json_string(const struct json *doc, int i, char *out, size_t cap, size_t *len)
{
	const char *s;
	size_t n, j = 0, k = 0;

	if (json_type(doc, i) != JSMN_STRING)
		return -EINVAL;
	s = doc->js + doc->t[i].start;
	n = (size_t)(doc->t[i].end - doc->t[i].start);
	while (j < n) {
		unsigned cp;

		if (s[j] != '\\') {
			if (k == cap)
				return -E2BIG;
			out[k++] = s[j++];
			continue;
		}
		cp = unescape(s, n, &j);
		if (cp >= 0xd800 && cp <= 0xdbff && j + 1 < n && s[j] == '\\' && s[j + 1] == 'u') {
			size_t at = j;
			unsigned lo = unescape(s, n, &at);

			if (lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				j = at;
			}
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd;
		if (!put_utf8(out, cap, &k, cp))
			return -E2BIG;
	}
	*len = k;
	return 0;
}

bool json_text_is(const struct json *doc, int i, const char *text)
{
	size_t n = 0, want = strlen(text);
	const char *s = json_text(doc, i, &n);

	return s && n == want && !memcmp(s, text, n);
}

bool json_is_string(const struct json *doc, int i, const char *s)
{
	return json_type(doc, i) == JSMN_STRING && json_text_is(doc, i, s);
}

bool json_is_null(const struct json *doc, int i)
{
	return json_type(doc, i) == JSMN_PRIMITIVE && json_text_is(doc, i, "null");
}

const char *json_kind(const struct json *doc, int i)
{
	switch (json_type(doc, i)) {
	case JSMN_OBJECT:
		return "an object";
	case JSMN_ARRAY:
		return "an array";
	case JSMN_STRING:
		return "a string";
	case JSMN_PRIMITIVE:
		if (json_is_null(doc, i))
			return "null";
		if (doc->js[doc->t[i].start] == 't' || doc->js[doc->t[i].start] == 'f')
			return "a boolean";
		return "a number";
	case JSMN_UNDEFINED:
	default:
		return "missing";
	}
}
