/* The JSON layer every scorer reader shares: what parses (any value at the
 * top, whitespace around it), everything jsmn alone lets through that JSON
 * does not (each row names the error it must give), the token limit, and
 * the accessors on indexes inside and outside the document: -1 and n read
 * as absent, the last duplicate key wins, keys fold only when asked, and
 * nesting 100,000 deep costs no stack. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/file.h"
#include "common/json.h"
#include "tests/unit/json_shallow.h"

#define MAX_TOKENS 1024

struct parse_row {
	const char *name;
	const char *text;
	size_t len;		/* 0: strlen(text) */
	int rc;
	const char *error;	/* part of the message when rc != 0 */
	int tokens;		/* when rc == 0 */
};

static const struct parse_row parse_rows[] = {
	{ "object", "{\"a\":[1,-2.5e3,true,false,null,\"x\"]}", 0, 0, NULL, 9 },
	{ "array at the top", "[1,2]", 0, 0, NULL, 3 },
	{ "string at the top", "\"s\"", 0, 0, NULL, 1 },
	{ "whitespace around", " \r\n\t{} \n", 0, 0, NULL, 1 },
	{ "escapes", "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"]", 0, 0, NULL, 2 },
	{ "empty containers", "{\"a\":{},\"b\":[]}", 0, 0, NULL, 5 },
	{ "empty", "", 0, -EINVAL, "empty body", 0 },
	{ "only whitespace", "  \n", 0, -EINVAL, "empty body", 0 },
	{ "NUL first", "\0{}", 3, -EINVAL, "NUL byte", 0 },
	{ "NUL after the value", "{}\0", 3, -EINVAL, "after the JSON object at byte 2", 0 },
	{ "truncated object", "{\"a\":[1,", 0, -EINVAL, "ends early", 0 },
	{ "truncated string", "[\"ab", 0, -EINVAL, "ends early", 0 },
	{ "second value", "{}{}", 0, -EINVAL, "after the JSON object", 0 },
	{ "garbage after an array", "[1] x", 0, -EINVAL, "invalid JSON", 0 },
	{ "missing comma", "[1 2]", 0, -EINVAL, "expected ','", 0 },
	{ "double comma", "[1,,2]", 0, -EINVAL, "unexpected ','", 0 },
	{ "trailing comma in an array", "[1,]", 0, -EINVAL, "unexpected ','", 0 },
	{ "trailing comma in an object", "{\"a\":1,}", 0, -EINVAL, "unexpected ','", 0 },
	{ "missing comma between members", "{\"a\":1 \"b\":2}", 0, -EINVAL, "invalid JSON", 0 },
	{ "key without a value", "{\"a\"}", 0, -EINVAL, "invalid JSON", 0 },
	{ "two colons", "{\"a\":\"b\":\"c\"}", 0, -EINVAL, "invalid JSON", 0 },
	{ "colon in an array", "[\"a\":\"b\"]", 0, -EINVAL, "':' inside an array", 0 },
	{ "a value for a closed object's key", "[1,{\"mt\":{\"e\"}}:\"\"]", 0, -EINVAL,
	  "near byte 13: unexpected '}'", 0 },
	{ "a value for a key after its object closed", "[{\"a\":1,\"b\"}:2]", 0, -EINVAL,
	  "near byte 11: unexpected '}'", 0 },
	{ "a value for a key two containers back", "{\"k\":[{\"e\"}]:1}", 0, -EINVAL,
	  "near byte 10: unexpected '}'", 0 },
	{ "unquoted key", "{a:1}", 0, -EINVAL, "invalid JSON", 0 },
	{ "number as key", "{1:2}", 0, -EINVAL, "invalid JSON", 0 },
	{ "tru", "[tru]", 0, -EINVAL, "not a number, true, false or null", 0 },
	{ "leading zero", "[01]", 0, -EINVAL, "not a number", 0 },
	{ "two dots", "[1.2.3]", 0, -EINVAL, "not a number", 0 },
	{ "bare minus", "[-]", 0, -EINVAL, "not a number", 0 },
	{ "exponent without digits", "[1e]", 0, -EINVAL, "not a number", 0 },
	{ "bare word at the top", "nope ", 0, -EINVAL, "invalid JSON", 0 },
	{ "bad escape", "[\"\\q\"]", 0, -EINVAL, "near byte 2: invalid escape in a string", 0 },
	{ "a bad escape after 8 ASCII bytes", "[\"abcdefgh\\x\"]", 0, -EINVAL,
	  "near byte 10: invalid escape", 0 },
	{ "\\u with a non-hex digit", "[\"\\u12g4\"]", 0, -EINVAL, "near byte 2: invalid escape", 0 },
	{ "\\u cut by the closing quote", "[\"ab\\u12\"]", 0, -EINVAL, "near byte 4: invalid escape", 0 },
	{ "escaped quotes and backslashes across words", "[\"abcdefg\\\\hijklmn\\\"op\\u00E9\"]", 0, 0,
	  NULL, 2 },
	{ "mismatched brackets", "[1}", 0, -EINVAL, "invalid JSON", 0 },
	/* Inside strings: UTF-8 (RFC 3629) and no raw control bytes, keys
	 * and values alike, past the word-at-a-time ASCII path too. */
	{ "UTF-8 of every length", "[\"\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xed\x9f\xbf"
	  "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"]", 0, 0, NULL, 2 },
	{ "invalid UTF-8 in a key", "{\"a\xff\":1}", 0, -EINVAL,
	  "near byte 3: invalid UTF-8 in a string (byte 0xff)", 0 },
	{ "invalid UTF-8 in a string at the top", "\"\xfe\"", 0, -EINVAL,
	  "near byte 1: invalid UTF-8 in a string (byte 0xfe)", 0 },
	{ "a lone continuation byte", "[\"\x80\"]", 0, -EINVAL, "invalid UTF-8 in a string (byte 0x80)", 0 },
	{ "a lead byte without its continuation", "[\"\xc3(\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xc3)", 0 },
	{ "a sequence cut by the closing quote", "[\"\xe2\x82\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xe2)", 0 },
	{ "an overlong '/'", "[\"\xc0\xaf\"]", 0, -EINVAL, "invalid UTF-8 in a string (byte 0xc0)", 0 },
	{ "an overlong three-byte form", "[\"\xe0\x80\xaf\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xe0)", 0 },
	{ "an overlong four-byte form", "[\"\xf0\x8f\xbf\xbf\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xf0)", 0 },
	{ "a surrogate as UTF-8", "[\"\xed\xa0\x80\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xed)", 0 },
	{ "over U+10FFFF", "[\"\xf4\x90\x80\x80\"]", 0, -EINVAL, "invalid UTF-8 in a string (byte 0xf4)", 0 },
	{ "a five-byte form", "[\"\xf8\x88\x80\x80\x80\"]", 0, -EINVAL,
	  "invalid UTF-8 in a string (byte 0xf8)", 0 },
	{ "invalid UTF-8 after 16 ASCII bytes", "[\"abcdefghijklmnop\xff\"]", 0, -EINVAL,
	  "near byte 18: invalid UTF-8", 0 },
	{ "a control byte inside an ASCII word", "[\"abcdefg\x01hijklmnop\"]", 0, -EINVAL,
	  "near byte 9: control byte 0x01 inside a string", 0 },
	{ "a raw newline in a key", "{\"a\nb\":1}", 0, -EINVAL, "control byte 0x0a inside a string", 0 },
	{ "a raw tab", "[\"a\tb\"]", 0, -EINVAL, "control byte 0x09", 0 },
	{ "escaped control bytes are fine", "[\"a\\tb\\u0001\"]", 0, 0, NULL, 2 },
	/* Strings of up to 32 bytes are read a word at a time before the long
	 * way: their quote on each side of a word's edge, and what stops the
	 * short way early. */
	{ "quotes at the words' edges", "[\"1234567\",\"12345678\",\"123456789\","
	  "\"1234567890123456789012345678901\",\"12345678901234567890123456789012\","
	  "\"123456789012345678901234567890123\",\"\"]", 0, 0, NULL, 8 },
	{ "an escaped quote in the first word", "[\"ab\\\"cd\",\"x\"]", 0, 0, NULL, 3 },
	{ "an escape across the 32nd byte", "[\"1234567890123456789012345678901\\\"z\"]", 0, 0,
	  NULL, 2 },
	{ "a control byte before a short string's quote", "[\"a\x01" "b\"]", 0, -EINVAL,
	  "near byte 3: control byte 0x01", 0 },
	{ "invalid UTF-8 in a short string's second word", "[\"abcdefgh\xff\"]", 0, -EINVAL,
	  "near byte 10: invalid UTF-8", 0 },
	{ "a short string cut by the body's end", "[\"abc", 0, -EINVAL, "ends early", 0 },
	/* Numbers: at most JSON_MAX_NUMBER_LEN characters. */
	{ "a 64-character number", "[1234567890123456789012345678901234567890123456789012345678901234]",
	  0, 0, NULL, 2 },
	{ "a 65-character number", "[-1234567890123456789012345678901234567890123456789012345678901234]",
	  0, -EINVAL, "near byte 1: a number of 65 characters, limit 64", 0 },
	{ "a long number at the top", "12345678901234567890123456789012345678901234567890123456789012345 ",
	  0, -EINVAL, "near byte 0: a number of 65 characters, limit 64", 0 },
	{ "extra closing bracket", "[1]]", 0, -EINVAL, "invalid JSON", 0 },
	/* Before the value: the walk over jsmn's tokens that checked the
	 * grammar once started at the first token and took these. */
	{ "a colon before the value", " :{\"a\":1}", 0, -EINVAL,
	  "near byte 1: unexpected ':', expected a value", 0 },
	{ "a comma before the value", ",[1]", 0, -EINVAL, "near byte 0: unexpected ','", 0 },
	{ "a key without its colon", "{\"a\" 1}", 0, -EINVAL, "near byte 5: unexpected '1', expected ':'", 0 },
	{ "a value where a key goes", "{\"a\":1,2:3}", 0, -EINVAL,
	  "near byte 7: unexpected '2', expected \"key\": value", 0 },
	{ "a missing value", "{\"a\":}", 0, -EINVAL, "near byte 5: unexpected '}', expected a value", 0 },
	{ "a bare number at the top", "12", 0, -EINVAL, "ends early", 0 },
};

static void test_json_parse(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(parse_rows) / sizeof(parse_rows[0]); r++) {
		const struct parse_row *row = &parse_rows[r];
		size_t len = row->len ? row->len : strlen(row->text);
		struct json d = { 0 };
		char err[256] = "";
		struct membudget b;
		int rc;

		membudget_init(&b, SIZE_MAX, 0, 0);
		rc = json_parse_budget(&d, row->text, len, MAX_TOKENS, &b, err, sizeof(err));
		if (rc != row->rc)
			fail_msg("%s: json_parse gave %d (%s), want %d", row->name, rc, err, row->rc);
		if (rc == 0 && d.n != row->tokens)
			fail_msg("%s: %d tokens, want %d", row->name, d.n, row->tokens);
		if (rc && !strstr(err, row->error))
			fail_msg("%s: error \"%s\" does not say \"%s\"", row->name, err, row->error);
		if (rc && d.t)
			fail_msg("%s: the document was touched on error", row->name);
		/* The tokens were counted before the array was sized: exactly
		 * what the document holds, nothing while an error holds none. */
		if (membudget_used(&b) != (size_t)d.n * sizeof(d.t[0]))
			fail_msg("%s: %zu bytes charged for %d tokens", row->name,
				 membudget_used(&b), d.n);
		/* Containers at the top or one level down opaque: the same
		 * error, since every byte is still checked, or the full
		 * parse's shallow tokens. */
		for (unsigned depth = 0; depth < 3; depth++) {
			struct json s = { 0 };
			char why[256] = "";
			int src;

			src = json_parse_shallow(&s, row->text, len, MAX_TOKENS, depth, &b, why,
						 sizeof(why));
			if (src != rc || (rc && strcmp(why, err)))
				fail_msg("%s: opaque from depth %u gave %d (%s), full %d (%s)", row->name,
					 depth, src, why, rc, err);
			if (!rc && !json_shallow_same(&d, &s, depth, why, sizeof(why)))
				fail_msg("%s: opaque from depth %u: %s", row->name, depth, why);
			if (membudget_used(&b) != (size_t)(d.n + s.n) * sizeof(d.t[0]))
				fail_msg("%s: opaque from depth %u: %zu bytes charged for %d tokens",
					 row->name, depth, membudget_used(&b), d.n + s.n);
			json_free(&s);
		}
		json_free(&d);
		assert_int_equal(membudget_used(&b), 0);
	}
}

/* One token over the limit is -E2BIG with the count and the limit. */
static void test_json_token_limit(void **state)
{
	const char *text = "[1,2,3,4]";
	struct json d = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(json_parse(&d, text, strlen(text), 5, err, sizeof(err)), 0);
	json_free(&d);
	assert_int_equal(json_parse(&d, text, strlen(text), 4, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "5 JSON tokens, limit 4"));
	assert_int_equal(json_parse(&d, text, strlen(text), 0, err, sizeof(err)), -E2BIG);
	assert_null(d.t);
}

/* Token memory comes from the budget: dense input that needs more than it
 * holds is -EBUSY (and takes nothing), a parse that fits holds exactly its
 * tokens' bytes until json_free(). */
static void test_json_token_budget(void **state)
{
	static char dense[4001];
	struct membudget b;
	struct json d = { 0 };
	char err[256];

	(void)state;
	dense[0] = '[';
	for (size_t i = 0; i < 1999; i++)
		memcpy(dense + 1 + 2 * i, "1,", 2);
	dense[3998] = ']';
	/* ~2,000 tokens of 16 bytes: more than a 16 KiB budget. */
	membudget_init(&b, 16 * 1024, 0, 0);
	assert_int_equal(json_parse_budget(&d, dense, 3999, 4096, &b, err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "hold the request memory budget"));
	assert_int_equal(membudget_used(&b), 0);
	membudget_init(&b, 64 * 1024, 0, 0);
	assert_int_equal(json_parse_budget(&d, dense, 3999, 4096, &b, err, sizeof(err)), 0);
	assert_int_equal(membudget_used(&b), (size_t)d.n * sizeof(d.t[0]));
	json_free(&d);
	assert_int_equal(membudget_used(&b), 0);

	/* Tokens are counted before any array is asked for: dense input over
	 * the limit is refused first, so an empty budget says E2BIG, not
	 * EBUSY. */
	{
		size_t n = 2u * 1024u * 1024u;
		char *big = malloc(n);

		assert_non_null(big);
		big[0] = '[';
		for (size_t i = 1; i + 2 < n; i += 2)
			memcpy(big + i, "1,", 2);
		big[n - 2] = '1';
		big[n - 1] = ']';
		membudget_init(&b, 0, 0, 0);
		assert_int_equal(json_parse_budget(&d, big, n, 1000, &b, err, sizeof(err)), -E2BIG);
		assert_non_null(strstr(err, "1048576 JSON tokens, limit 1000"));
		free(big);
	}
}

/* The scheduler's real requests and our replies (the captured and synthetic
 * fixtures: full Node objects and names, filter, prioritize, preemption and
 * bind; run from the repository root). */
static const char *const real_files[] = {
	"tests/fixtures/extender/captured-k8s-1.20/filter-request.nodeCacheCapable-false.json",
	"tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json",
	"tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-false.json",
	"tests/fixtures/extender/captured-k8s-1.20/preempt-request.nodeCacheCapable-true.json",
	"tests/fixtures/extender/captured-k8s-1.20/bind-request.json",
	"tests/fixtures/extender/synthetic/filter_request_nodeCacheCapable_false.json",
	"tests/fixtures/extender/synthetic/preempt_request_nodeCacheCapable_false.json",
	"tests/fixtures/extender/synthetic/responses.json",
};
#define REAL_FILES (sizeof(real_files) / sizeof(real_files[0]))

/* The whole of fixture path (up to 16 MiB), or the test fails; the caller
 * frees it. */
static char *fixture(const char *path, size_t *len)
{
	char err[256], *text;

	if (file_read_small(path, 1 << 24, &text, len, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	return text;
}

/* Tokens counted before the parse are exactly the tokens jsmn makes. */
static void test_json_counts_real_requests(void **state)
{
	const char *const *files = real_files;

	(void)state;
	for (size_t f = 0; f < REAL_FILES; f++) {
		struct membudget b;
		struct json d = { 0 };
		char err[256], *text;
		size_t len;

		text = fixture(files[f], &len);
		membudget_init(&b, SIZE_MAX, 0, 0);
		if (json_parse_budget(&d, text, len, 1 << 20, &b, err, sizeof(err)))
			fail_msg("%s: %s", files[f], err);
		if (d.n < 5 || membudget_used(&b) != (size_t)d.n * sizeof(d.t[0]))
			fail_msg("%s: %zu bytes charged for %d tokens", files[f], membudget_used(&b),
				 d.n);
		json_free(&d);
		free(text);
	}
}

/* Every fixture, with containers opaque from each depth: the full parse
 * seen to that depth, only the tokens' memory charged once the parse is
 * done, and an opaque container answers for its whole text but has no
 * members. */
static void test_json_shallow_real_requests(void **state)
{
	const char *const *files = real_files;

	(void)state;
	for (size_t f = 0; f < REAL_FILES; f++) {
		struct membudget b;
		struct json full = { 0 };
		char err[256], *text;
		size_t len;
		int last_n = 0;

		text = fixture(files[f], &len);
		membudget_init(&b, SIZE_MAX, 0, 0);
		if (json_parse(&full, text, len, 1 << 20, err, sizeof(err)))
			fail_msg("%s: %s", files[f], err);
		for (unsigned depth = 0; depth <= 20; depth++) {
			struct json s = { 0 };

			if (json_parse_shallow(&s, text, len, 1 << 20, depth, &b, err, sizeof(err)))
				fail_msg("%s: opaque from depth %u: %s", files[f], depth, err);
			if (!json_shallow_same(&full, &s, depth, err, sizeof(err)))
				fail_msg("%s: opaque from depth %u: %s", files[f], depth, err);
			if (membudget_used(&b) != (size_t)s.n * sizeof(s.t[0]))
				fail_msg("%s: opaque from depth %u: %zu bytes charged for %d tokens",
					 files[f], depth, membudget_used(&b), s.n);
			/* Deeper keeps more, until nothing is that deep. */
			if (s.n < last_n || (depth && s.n == 1))
				fail_msg("%s: opaque from depth %u keeps %d tokens, from %u %d", files[f],
					 depth, s.n, depth - 1, last_n);
			last_n = s.n;
			json_free(&s);
		}
		assert_int_equal(last_n, full.n);
		json_free(&full);
		free(text);
	}
}

/* What the extender reads of a full-Node request is there with the Nodes'
 * insides opaque, and what it does not read is one token. */
static void test_json_shallow_members(void **state)
{
	const char *file = "tests/fixtures/extender/synthetic/filter_request_nodeCacheCapable_false.json";
	struct json d = { 0 };
	char err[256], *text;
	size_t len, raw;
	int items, node, md, labels;

	(void)state;
	text = fixture(file, &len);
	assert_int_equal(json_parse_shallow(&d, text, len, 1 << 20, 5, NULL, err, sizeof(err)), 0);
	items = json_member(&d, json_member(&d, 0, "Nodes", false), "items", false);
	assert_int_equal(json_type(&d, items), JSMN_ARRAY);
	assert_true(d.t[items].size >= 2);
	node = items + 1;
	md = json_member(&d, node, "metadata", false);
	assert_true(json_is_string(&d, json_member(&d, md, "name", false), "gpu-node-1"));
	labels = json_member(&d, md, "labels", false);
	assert_int_equal(json_type(&d, labels), JSMN_OBJECT);
	assert_int_equal(d.t[labels].size, 0);
	assert_int_equal(json_member(&d, labels, "kubernetes.io/hostname", false), -1);
	assert_non_null(strstr(json_text(&d, labels, &raw), "kubernetes.io/hostname"));
	/* The second node starts right after the first and all it holds. */
	assert_int_equal(json_member(&d, json_member(&d, json_skip(&d, node), "metadata", false),
				     "name", false) > 0, 1);
	json_free(&d);
	free(text);
}

/* The opaque containers' bookkeeping comes from the budget too: a body of
 * 2,000 of them does not fit in 8 KiB (-EBUSY, nothing held). */
static void test_json_shallow_budget(void **state)
{
	static char many[1 + 2 + 3 * 1999 + 1];
	struct membudget b;
	struct json d = { 0 };
	char err[256];

	(void)state;
	memcpy(many, "[[]", 3);
	for (size_t i = 0; i < 1999; i++)
		memcpy(many + 3 + 3 * i, ",[]", 3);
	many[sizeof(many) - 1] = ']';
	membudget_init(&b, 8 * 1024, 0, 0);
	assert_int_equal(json_parse_shallow(&d, many, sizeof(many), 4096, 1, &b, err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "opaque JSON containers"));
	assert_int_equal(membudget_used(&b), 0);
	assert_null(d.t);
}

static void test_json_accessors(void **state)
{
	const char *text = "{\"Name\":\"first\",\"n\\u0061me\":\"second\",\"list\":[\"a\",{\"x\":1},\"c\"],"
			   "\"none\":null,\"num\":-1.5,\"yes\":true}";
	struct json d;
	char err[256];
	size_t len;
	int v, list;

	(void)state;
	assert_int_equal(json_parse(&d, text, strlen(text), MAX_TOKENS, err, sizeof(err)), 0);

	/* Exact keys compare after unescaping; folded ones also match "Name";
	 * the last duplicate wins. */
	v = json_member(&d, 0, "name", false);
	assert_true(json_is_string(&d, v, "second"));
	v = json_member(&d, 0, "NAME", true);
	assert_true(json_is_string(&d, v, "second"));
	assert_int_equal(json_member(&d, 0, "NAME", false), -1);
	v = json_member(&d, 0, "Name", false);
	assert_true(json_is_string(&d, v, "first"));
	assert_int_equal(json_member(&d, 0, "missing", false), -1);

	/* Kinds, for messages. */
	assert_string_equal(json_kind(&d, 0), "an object");
	assert_string_equal(json_kind(&d, json_member(&d, 0, "list", false)), "an array");
	assert_string_equal(json_kind(&d, json_member(&d, 0, "none", false)), "null");
	assert_string_equal(json_kind(&d, json_member(&d, 0, "num", false)), "a number");
	assert_string_equal(json_kind(&d, json_member(&d, 0, "yes", false)), "a boolean");
	assert_string_equal(json_kind(&d, v), "a string");
	assert_true(json_is_null(&d, json_member(&d, 0, "none", false)));

	/* Elements are found up to the first container; after it, not. */
	list = json_member(&d, 0, "list", false);
	assert_true(json_is_string(&d, json_element(&d, list, 0), "a"));
	assert_int_equal(json_type(&d, json_element(&d, list, 1)), JSMN_OBJECT);
	assert_int_equal(json_element(&d, list, 2), -1);
	assert_int_equal(json_element(&d, list, 3), -1);
	assert_int_equal(json_element(&d, 0, 0), -1);
	assert_true(json_is_string(&d, json_skip(&d, json_element(&d, list, 1)), "c"));

	/* Text as received: a container from bracket to bracket. */
	assert_non_null(json_text(&d, json_element(&d, list, 1), &len));
	assert_int_equal(len, strlen("{\"x\":1}"));
	assert_true(json_text_is(&d, json_element(&d, list, 1), "{\"x\":1}"));

	/* Indexes outside the document read as absent, on every accessor. */
	for (int i = -2; i <= d.n + 1; i += (i == -1 ? d.n + 1 : 1)) {
		if (i >= 0 && i < d.n)
			continue;
		assert_int_equal(json_type(&d, i), JSMN_UNDEFINED);
		assert_null(json_text(&d, i, &len));
		assert_false(json_text_is(&d, i, ""));
		assert_false(json_is_null(&d, i));
		assert_false(json_is_string(&d, i, ""));
		assert_string_equal(json_kind(&d, i), "missing");
		assert_int_equal(json_member(&d, i, "Name", true), -1);
		assert_int_equal(json_element(&d, i, 0), -1);
		assert_int_equal(json_skip(&d, i), d.n);
	}
	assert_int_equal(json_skip(&d, 0), d.n);
	json_free(&d);
	json_free(&d);
	json_free(NULL);
}

/* Nested brackets: up to JSON_MAX_DEPTH, walked by loops, never the stack;
 * deeper is refused before the tokenizer, whose cost grows with depth
 * (100,000 levels took seconds). Brackets inside strings do not count. */
static char *nest(size_t depth)
{
	char *text = malloc(2 * depth + 1);

	assert_non_null(text);
	memset(text, '[', depth);
	memset(text + depth, ']', depth);
	text[2 * depth] = '\0';
	return text;
}

/* A string's contents decoded: escapes, UTF-16 pairs, a lone surrogate as
 * Go decodes it, raw UTF-8 kept, and the bound counted after decoding. */
struct string_row {
	const char *name;
	const char *json;	/* one JSON value */
	size_t cap;
	int rc;
	const char *want;	/* when rc == 0 */
	size_t want_len;
};

static const struct string_row string_rows[] = {
	{ "plain", "\"6f1c-9a\"", 64, 0, "6f1c-9a", 7 },
	{ "simple escapes", "\"a\\/\\\\\\\"\\n\"", 64, 0, "a/\\\"\n", 5 },
	{ "ASCII in \\u", "\"\\u0061\\u002d\"", 64, 0, "a-", 2 },
	{ "two-byte", "\"\\u00e9\"", 64, 0, "\xc3\xa9", 2 },
	{ "a surrogate pair", "\"\\ud83d\\ude00\"", 64, 0, "\xf0\x9f\x98\x80", 4 },
	{ "a lone high surrogate", "\"\\ud83dx\"", 64, 0, "\xef\xbf\xbdx", 4 },
	{ "a lone low surrogate", "\"\\ude00\"", 64, 0, "\xef\xbf\xbd", 3 },
	{ "a NUL", "\"a\\u0000b\"", 64, 0, "a\0b", 3 },
	{ "raw UTF-8 kept", "\"\xc3\xa9\"", 64, 0, "\xc3\xa9", 2 },
	{ "exactly the cap", "\"abcd\"", 4, 0, "abcd", 4 },
	{ "over the cap", "\"abcde\"", 4, -E2BIG, NULL, 0 },
	{ "over the cap once decoded", "\"abc\\u00e9\"", 4, -E2BIG, NULL, 0 },
	{ "under the cap once decoded", "\"\\u0061\\u0062\\u0063\\u0064\"", 4, 0, "abcd", 4 },
	{ "not a string", "{}", 64, -EINVAL, NULL, 0 },
};

static void test_json_string(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(string_rows) / sizeof(string_rows[0]); r++) {
		const struct string_row *row = &string_rows[r];
		struct json d;
		char out[64], err[128];
		size_t len = 0;
		int rc;

		if (json_parse(&d, row->json, strlen(row->json), 16, err, sizeof(err)))
			fail_msg("%s: not JSON: %s", row->name, err);
		rc = json_string(&d, 0, out, row->cap, &len);
		if (rc != row->rc)
			fail_msg("%s: rc %d, want %d", row->name, rc, row->rc);
		if (rc == 0 && (len != row->want_len || memcmp(out, row->want, len)))
			fail_msg("%s: got %zu bytes \"%.*s\"", row->name, len, (int)len, out);
		json_free(&d);
	}
}

static void test_json_deep_nesting(void **state)
{
	const int depth = (int)JSON_MAX_DEPTH;
	char *text = nest(JSON_MAX_DEPTH), err[256];
	const char *quoted = "[\"[[[[\\\"[[[[\", \"{{{{\"]";
	struct json d;

	(void)state;
	assert_int_equal(json_parse(&d, text, 2 * JSON_MAX_DEPTH, 1000, err, sizeof(err)), 0);
	assert_int_equal(d.n, depth);
	assert_int_equal(json_skip(&d, 0), depth);
	assert_int_equal(json_skip(&d, depth / 2), depth);
	assert_int_equal(json_type(&d, depth - 1), JSMN_ARRAY);
	assert_int_equal(json_element(&d, depth - 2, 0), depth - 1);
	json_free(&d);
	free(text);

	text = nest(JSON_MAX_DEPTH + 1);
	assert_int_equal(json_parse(&d, text, 2 * JSON_MAX_DEPTH + 2, 1000, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "nested deeper than 64 levels at byte 64"));
	free(text);
	text = nest(100000);
	assert_int_equal(json_parse(&d, text, 200000, 200000, err, sizeof(err)), -E2BIG);
	free(text);

	assert_int_equal(json_parse(&d, quoted, strlen(quoted), 100, err, sizeof(err)), 0);
	assert_int_equal(d.n, 3);
	json_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_parse),
		cmocka_unit_test(test_json_token_limit),
		cmocka_unit_test(test_json_token_budget),
		cmocka_unit_test(test_json_counts_real_requests),
		cmocka_unit_test(test_json_shallow_real_requests),
		cmocka_unit_test(test_json_shallow_members),
		cmocka_unit_test(test_json_shallow_budget),
		cmocka_unit_test(test_json_accessors),
		cmocka_unit_test(test_json_string),
		cmocka_unit_test(test_json_deep_nesting),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
