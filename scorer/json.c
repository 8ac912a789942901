/* jsmn is header-only and this is the one file that instantiates it, before
 * json.h declares its types with the same settings. STRICT refuses unquoted
 * keys and bare words; PARENT_LINKS gives every token its parent, which the
 * grammar check below relies on, and makes closing a container O(1) instead
 * of a scan back over every token. */
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

static int jsmn_fail(struct ctx *c, int r, unsigned pos)
{
	if (r == JSMN_ERROR_PART)
		return fail(c, -EINVAL, "JSON ends early: an object, array or string is not closed "
			    "(truncated body?)");
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

/* jsmn found no token: it stops at a NUL byte as if the input ended there. */
static int no_tokens(struct ctx *c, unsigned pos)
{
	if (pos < c->len)
		return fail(c, -EINVAL, "invalid JSON near byte %u: NUL byte", pos);
	return fail(c, -EINVAL, "empty body: no JSON value");
}

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

/* Whether the first n (1..8) of the 8 bytes at s are all in 0x20..0x7f;
 * the 8 must be readable. A byte over 0x7f has its top bit set in w; a
 * byte under 0x20 has it set in w - 0x2020...; a borrow carried into the
 * next byte can only set more top bits, never clear one, so a word this
 * calls clean is clean (a false "dirty" just takes the byte-by-byte path).
 * Bytes past n (the closing quote, what follows) read as spaces. */
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
	return ((w | (w - 0x2020202020202020ULL)) & 0x8080808080808080ULL) == 0;
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
 * no control byte there, and every other byte must be UTF-8 (jsmn checks
 * only the escapes). A word at a time while the bytes are plain ASCII, as
 * most of a Kubernetes object is. */
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

/* One linear scan before jsmn sees the body, for two things jsmn cannot
 * give cheaply:
 *  - The nesting depth. jsmn finds the container a ']' or '}' closes by
 *    walking up from the last token, one step per container already closed
 *    on the way, so 200,000 nested '[' took a minute. Kubernetes objects
 *    nest 12 or 13 deep; past JSON_MAX_DEPTH the body is refused here, which
 *    bounds jsmn at O(bytes x JSON_MAX_DEPTH).
 *  - How many tokens jsmn will make, so the array is charged and allocated
 *    once, at its size. The scan cuts the body where jsmn does: a token
 *    starts at '{', '[', a string's '"', or the first character of a
 *    primitive, which runs to whitespace, ',', ']' or '}' (JSMN_STRICT).
 *    For any body jsmn tokenizes the count is exact, so validate() still
 *    names what is wrong with it; for others it is at least jsmn's. A guess
 *    that grows reserved up to twice the memory, and counting with jsmn
 *    itself doubled the parse of a full-Node request.
 *  - Every string's bytes (check_string()), while memchr() has just brought
 *    them into the cache: a pass of its own over a 6.6 MB body cost a
 *    fifth more than the whole parse. The strings cut here are jsmn's for
 *    any body jsmn takes; a body it would refuse may be refused here for a
 *    byte instead of its grammar, as invalid JSON all the same. */
static int scan(struct ctx *c, size_t *tokens)
{
	unsigned depth = 0;
	size_t n = 0;
	bool in_primitive = false;

	for (size_t i = 0; i < c->len; i++) {
		char ch = c->js[i];

		if (in_primitive) {
			if (!is_space(ch) && ch != ',' && ch != ']' && ch != '}')
				continue;
			in_primitive = false;
		}
		if (ch == '"') {
			size_t end = string_end(c->js, c->len, i);

			if (check_string(c, i + 1, end))
				return -EINVAL;
			n++;
			i = end;
		} else if (ch == '[' || ch == '{') {
			if (++depth > JSON_MAX_DEPTH)
				return fail(c, -E2BIG, "JSON nested deeper than %u levels at byte %zu",
					    JSON_MAX_DEPTH, i);
			n++;
		} else if (ch == ']' || ch == '}') {
			if (depth)
				depth--;
		} else if (!is_space(ch) && ch != ',' && ch != ':') {
			n++;
			in_primitive = true;
		}
	}
	*tokens = n;
	return 0;
}

/* One jsmn pass into exactly the tokens scan() counted, charged to the
 * budget before they are allocated: dense input ([1,1,1]) needs 8 bytes of
 * tokens per byte of body, and input over the limit gets no array at all. */
static int tokenize(struct ctx *c, size_t cap, size_t max_tokens, jsmntok_t **out)
{
	jsmn_parser p;
	jsmntok_t *t, *smaller;
	int r;

	/* jsmn keeps offsets and counts in int. */
	if (c->len >= INT_MAX)
		return fail(c, -E2BIG, "body of %zu bytes is too large to parse", c->len);
	if (cap > max_tokens || cap > INT_MAX)
		return fail(c, -E2BIG, "%zu JSON tokens, limit %zu", cap, max_tokens);
	if (cap == 0)
		cap = 1; /* jsmn says why there is nothing: empty, or a NUL */
	if (!membudget_take(c->budget, &c->charged, cap * sizeof(*t)))
		return fail(c, -EBUSY, "no room for %zu JSON tokens (%zu bytes): other requests "
			    "hold the request memory budget; retry", cap, cap * sizeof(*t));
	t = scratch_take(cap * sizeof(*t), NULL);
	if (!t) {
		membudget_give(c->budget, &c->charged);
		return fail(c, -ENOMEM, "out of memory for %zu JSON tokens", cap);
	}
	jsmn_init(&p);
	r = jsmn_parse(&p, c->js, c->len, t, (unsigned)cap);
	if (r <= 0) {
		scratch_give(t);
		membudget_give(c->budget, &c->charged);
		return r < 0 ? jsmn_fail(c, r, p.pos) : no_tokens(c, p.pos);
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

/* Where a token's text begins (a string's opening quote), and where the
 * text after its own begins (a container's first byte inside). */
static int tok_begin(const jsmntok_t *t)
{
	return t->type == JSMN_STRING ? t->start - 1 : t->start;
}

static int tok_after(const jsmntok_t *t)
{
	switch (t->type) {
	case JSMN_OBJECT:
	case JSMN_ARRAY:
		return t->start + 1;
	case JSMN_STRING:
		return t->end + 1;
	default:
		return t->end;
	}
}

/* jsmn checks tokens and bracket pairs but not the punctuation between
 * tokens: it takes [1 2], [1,,2], [1,], {"a":1,} and {"a":1 "b":2}. Between
 * two tokens only whitespace may appear, then, where closed allows, the
 * closing brackets of the containers that ended (jsmn has matched those),
 * then exactly the separator the grammar expects there (none, ',' or ':').
 * Nothing closes between a container and its first member, or between a
 * key and its value: jsmn makes whatever follows a ':' the value of the
 * last string it saw, so [{"k"}:1] gave the closed object's "k" a value. */
static int check_gap(struct ctx *c, int from, int to, char sep, bool closed)
{
	bool seen = false;

	for (int i = from; i < to; i++) {
		char ch = c->js[i];

		if (is_space(ch))
			continue;
		if ((ch == '}' || ch == ']') && closed && !seen)
			continue;
		if (ch == sep && !seen) {
			seen = true;
			continue;
		}
		return fail(c, -EINVAL, "invalid JSON near byte %d: unexpected '%c'", i, ch);
	}
	if (sep && !seen)
		return fail(c, -EINVAL, "invalid JSON near byte %d: expected '%c'", to, sep);
	return 0;
}

/* A scalar that is not a string: a literal, and a number no longer than
 * JSON_MAX_NUMBER_LEN (is_literal() is linear, but nothing we read needs
 * more, and a 5,000-digit number is not data). */
static int check_primitive(struct ctx *c, const jsmntok_t *t)
{
	size_t n = (size_t)(t->end - t->start);

	if (n > JSON_MAX_NUMBER_LEN)
		return fail(c, -EINVAL, "invalid JSON near byte %d: a number of %zu characters, "
			    "limit %u", t->start, n, JSON_MAX_NUMBER_LEN);
	if (!is_literal(c->js + t->start, n))
		return fail(c, -EINVAL, "invalid JSON near byte %d: not a number, true, false or null",
			    t->start);
	return 0;
}

/* For messages about what follows the document. */
static const char *outer(const jsmntok_t *t)
{
	return t->type == JSMN_OBJECT ? "object" : t->type == JSMN_ARRAY ? "array" : "value";
}

/* Everything jsmn lets through that JSON does not allow. After this, every
 * object member is one string key with exactly one value. */
static int validate(struct ctx *c)
{
	const jsmntok_t *t = c->t;
	int pos, i;

	pos = tok_after(&t[0]);
	for (i = 1; i < c->n; i++) {
		int p = t[i].parent;
		char sep;

		if (p < 0)
			return fail(c, -EINVAL, "unexpected data after the JSON %s at byte %d",
				    outer(&t[0]), tok_begin(&t[i]));
		switch (t[p].type) {
		case JSMN_OBJECT:
			/* A key: a string followed by exactly one value. */
			if (t[i].type != JSMN_STRING || t[i].size != 1)
				return fail(c, -EINVAL, "invalid JSON near byte %d: expected \"key\": value",
					    tok_begin(&t[i]));
			sep = p == i - 1 ? 0 : ',';
			break;
		case JSMN_ARRAY:
			if (t[i].type == JSMN_STRING && t[i].size != 0)
				return fail(c, -EINVAL, "invalid JSON near byte %d: ':' inside an array",
					    t[i].end + 1);
			sep = p == i - 1 ? 0 : ',';
			break;
		case JSMN_STRING:
			/* A value: its parent must be a key, not itself a value
			 * ({"a":"b":"c"} makes "b" the parent of "c"). */
			if (t[p].parent < 0 || t[t[p].parent].type != JSMN_OBJECT)
				return fail(c, -EINVAL, "invalid JSON near byte %d: unexpected ':'",
					    t[p].end + 1);
			sep = ':';
			break;
		default:
			return fail(c, -EINVAL, "invalid JSON near byte %d", tok_begin(&t[i]));
		}
		if (check_gap(c, pos, tok_begin(&t[i]), sep, sep == ','))
			return -EINVAL;
		if (t[i].type == JSMN_PRIMITIVE && check_primitive(c, &t[i]))
			return -EINVAL;
		pos = tok_after(&t[i]);
	}
	if (t[0].type == JSMN_OBJECT || t[0].type == JSMN_ARRAY) {
		if (check_gap(c, pos, t[0].end - 1, 0, true))
			return -EINVAL;
		pos = t[0].end;
	} else if (t[0].type == JSMN_PRIMITIVE && check_primitive(c, &t[0])) {
		return -EINVAL;
	}
	for (i = pos; (size_t)i < c->len; i++)
		if (!is_space(c->js[i]))
			return fail(c, -EINVAL, "unexpected data after the JSON %s at byte %d",
				    outer(&t[0]), i);
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
	struct ctx c = { .js = js, .len = len, .err = err, .errlen = errlen, .budget = budget };
	jsmntok_t *tokens = NULL;
	size_t n = 0;
	int rc;

	rc = scan(&c, &n);
	if (rc)
		return rc;
	rc = tokenize(&c, n, max_tokens, &tokens);
	if (rc)
		return rc;
	rc = validate(&c);
	if (rc) {
		scratch_give(tokens);
		membudget_give(budget, &c.charged);
		return rc;
	}
	*doc = (struct json){ .js = js, .len = len, .t = tokens, .n = c.n, .budget = budget,
			      .charged = c.charged };
	return 0;
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
