/* The scorer's one JSON reader: jsmn's tokens, checked against the whole
 * JSON grammar, and bounded lookups over them. Every JSON the scorer reads
 * goes through here: extender requests (extreq.c), Prometheus replies
 * (promquery.c), and the tests' reply walker.
 *
 * jsmn alone takes [1 2], [1,,2], {"a":1,}, tru and 01, raw control bytes
 * and invalid UTF-8 inside strings; json_parse() refuses all of them, so a
 * document that parses is JSON (RFC 8259), every string UTF-8 (RFC 3629:
 * no overlong forms or surrogates), and every number at most
 * JSON_MAX_NUMBER_LEN characters. Exactly one value, and nothing but
 * whitespace after it. The checks are one pass over the bytes, and cover
 * the parts json_parse_shallow() does not tokenize.
 *
 * Tokens are in document order and point into the text, which must outlive
 * the document; each token has its parent (JSMN_PARENT_LINKS). Every walk
 * here is iterative, so nesting depth costs no stack, and every accessor
 * takes any index: one outside the document's tokens (such as -1 for "not
 * found") reads as absent, never past the last token jsmn filled. */
#ifndef NETSCHED_JSON_H
#define NETSCHED_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* jsmn's token layout depends on these: every includer must agree. */
#if defined(JSMN_H) && !defined(JSMN_PARENT_LINKS)
#error "jsmn.h included without JSMN_PARENT_LINKS before json.h"
#endif
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#define JSMN_HEADER
#include <jsmn.h>

#include "membudget.h"

/* Deeper nesting is refused (-E2BIG): Kubernetes objects nest 12 or 13
 * levels, and the tokenizer's cost grows with depth. */
#define JSON_MAX_DEPTH 64u
/* Longer numbers are refused (-EINVAL): the longest an int64 or a float64
 * prints is 24 characters (Go's -1.2345678901234567e-308); nothing in a
 * Kubernetes object or a Prometheus reply comes near 64. */
#define JSON_MAX_NUMBER_LEN 64u

struct json {
	const char *js;		/* the text; not owned */
	size_t len;
	jsmntok_t *t;		/* n tokens; owned, freed by json_free() */
	int n;			/* >= 1 after a successful parse */
	struct membudget *budget;	/* the tokens' memory came from here; may be NULL */
	size_t charged;
};

/* Tokenizes len bytes of js (need not be NUL-terminated) into at most
 * max_tokens tokens and checks the grammar. 0 and *doc filled; or -EINVAL
 * (not JSON: err says what and at which byte, never echoing the input),
 * -E2BIG (more than max_tokens tokens, nesting over JSON_MAX_DEPTH, or a
 * text over INT_MAX bytes: err says how many and the limit) or -ENOMEM, with *doc untouched. */
int json_parse(struct json *doc, const char *js, size_t len, size_t max_tokens, char *err,
	       size_t errlen);

/* json_parse(), taking the token array's memory from budget as it grows
 * (NULL: no budget): -EBUSY when the budget has no room for it. */
int json_parse_budget(struct json *doc, const char *js, size_t len, size_t max_tokens,
		      struct membudget *budget, char *err, size_t errlen);

/* json_parse_budget(), but every object or array that opens at nesting
 * depth opaque_depth (the top-level value is at depth 0, its members' values
 * at 1) is opaque: checked as every byte is, then kept as one token with its
 * whole text (json_text(), json_skip()) and no members, so json_member()
 * and json_element() find nothing in it, and jsmn never reads its inside.
 * A reader that needs only the shallow levels of a big document (the name
 * of each of 500 Nodes, not their status) skips most of its tokenizing;
 * max_tokens counts the tokens kept. JSON_MAX_DEPTH or more: none is
 * opaque. The cost: 8 bytes per opaque container (up to twice that while
 * the array doubles), charged to budget while the parse runs. */
int json_parse_shallow(struct json *doc, const char *js, size_t len, size_t max_tokens,
		       unsigned opaque_depth, struct membudget *budget, char *err, size_t errlen);

/* Frees the tokens; accepts a zeroed struct and NULL. */
void json_free(struct json *doc);

/* Token i's type; JSMN_UNDEFINED when i is not a token of doc. */
jsmntype_t json_type(const struct json *doc, int i);

/* The first token after token i and everything nested in it (doc->n when
 * none is left). */
int json_skip(const struct json *doc, int i);

/* The value of the last member of object obj named key (Go's decoder keeps
 * the last duplicate), or -1 when obj is not an object or has no such key.
 * Keys are compared after unescaping; fold: ASCII case-insensitively, as Go
 * matches struct fields (map keys such as annotations match exactly). */
int json_member(const struct json *doc, int obj, const char *key, bool fold);

/* Element m of array arr whose elements are all scalars, or -1. */
int json_element(const struct json *doc, int arr, int m);

/* Token i's text as received: a string's contents without the quotes
 * (escapes not decoded), a number or literal, or a container's bytes from
 * bracket to bracket. NULL when i is not a token. */
const char *json_text(const struct json *doc, int i, size_t *len);

/* String token i's contents with its escapes decoded, as UTF-8 (a UTF-16
 * surrogate without its pair becomes U+FFFD, as Go decodes it), into out:
 * at most cap bytes, not NUL-terminated; *len gets how many. 0, -EINVAL
 * (not a string) or -E2BIG (longer than cap). */
int json_string(const struct json *doc, int i, char *out, size_t cap, size_t *len);

/* Whether token i's text (as json_text()) is exactly text. */
bool json_text_is(const struct json *doc, int i, const char *text);

/* Whether token i is a string whose contents are exactly s (no escapes). */
bool json_is_string(const struct json *doc, int i, const char *s);

/* Whether token i is the literal null. */
bool json_is_null(const struct json *doc, int i);

/* For messages: "an object", "an array", "a string", "null", "a boolean",
 * "a number", or "missing". */
const char *json_kind(const struct json *doc, int i);

#endif
