#include "extreq.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jsmn is header-only and this is the one file that instantiates it. STRICT
 * refuses unquoted keys and bare words; PARENT_LINKS gives every token its
 * parent, which the grammar check below relies on, and makes closing a
 * container O(1) instead of a scan back over every token. */
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#define JSMN_STATIC
#include <jsmn.h>

struct ctx {
	const char *js;
	size_t len;
	const jsmntok_t *t;
	int n;
	char *err;
	size_t errlen;
};

static int fail(struct ctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_null(const struct ctx *c, int i)
{
	const jsmntok_t *t = &c->t[i];

	return t->type == JSMN_PRIMITIVE && t->end - t->start == 4 && !memcmp(c->js + t->start, "null", 4);
}

/* For messages: "is an array", "is a number", ... */
static const char *kind(const struct ctx *c, int i)
{
	switch (c->t[i].type) {
	case JSMN_OBJECT:
		return "an object";
	case JSMN_ARRAY:
		return "an array";
	case JSMN_STRING:
		return "a string";
	case JSMN_PRIMITIVE:
		if (is_null(c, i))
			return "null";
		if (c->js[c->t[i].start] == 't' || c->js[c->t[i].start] == 'f')
			return "a boolean";
		return "a number";
	default:
		return "nothing";
	}
}

static int jsmn_fail(struct ctx *c, int r, unsigned pos)
{
	if (r == JSMN_ERROR_PART)
		return fail(c, -EINVAL, "JSON ends early: an object, array or string is not closed "
			    "(truncated body?)");
	return fail(c, -EINVAL, "invalid JSON near byte %u", pos);
}

/* Kubernetes JSON averages 12-14 bytes per token; starting at one token per
 * 8 bytes means one allocation almost always, and only grows for dense
 * input such as [1,1,1]. */
#define EXTREQ_BYTES_PER_TOKEN_GUESS 8u

/* jsmn found no token: it stops at a NUL byte as if the input ended there. */
static int no_tokens(struct ctx *c, unsigned pos)
{
	if (pos < c->len)
		return fail(c, -EINVAL, "invalid JSON near byte %u: NUL byte", pos);
	return fail(c, -EINVAL, "empty body: expected a JSON object");
}

/* The exact token count, for the message when a request is over the limit:
 * only refused requests pay for this second pass. */
static int over_limit(struct ctx *c, size_t max_tokens)
{
	jsmn_parser p;
	int n;

	jsmn_init(&p);
	n = jsmn_parse(&p, c->js, c->len, NULL, 0);
	if (n < 0)
		return jsmn_fail(c, n, p.pos);
	if (n == 0)
		return no_tokens(c, p.pos);
	return fail(c, -E2BIG, "request has %d JSON tokens, limit %zu", n, max_tokens);
}

/* One pass into a guessed number of tokens, growing (jsmn resumes where it
 * ran out) up to max_tokens. A separate counting pass cost as much as
 * tokenizing itself: 40% of a 500-node request. */
static int tokenize(struct ctx *c, size_t max_tokens, jsmntok_t **out)
{
	jsmn_parser p;
	jsmntok_t *t = NULL, *bigger;
	size_t cap;
	int r;

	/* jsmn keeps offsets and counts in int. */
	if (c->len >= INT_MAX)
		return fail(c, -E2BIG, "body of %zu bytes is too large to parse", c->len);
	if (max_tokens > INT_MAX)
		max_tokens = INT_MAX;
	if (max_tokens == 0)
		return over_limit(c, max_tokens);
	cap = c->len / EXTREQ_BYTES_PER_TOKEN_GUESS + 16;
	if (cap > max_tokens)
		cap = max_tokens;
	jsmn_init(&p);
	for (;;) {
		bigger = realloc(t, cap * sizeof(*t));
		if (!bigger) {
			free(t);
			return fail(c, -ENOMEM, "out of memory for %zu JSON tokens", cap);
		}
		t = bigger;
		r = jsmn_parse(&p, c->js, c->len, t, (unsigned)cap);
		if (r != JSMN_ERROR_NOMEM)
			break;
		if (cap == max_tokens) {
			free(t);
			return over_limit(c, max_tokens);
		}
		cap = cap > max_tokens / 2 ? max_tokens : cap * 2;
	}
	if (r <= 0) {
		free(t);
		return r < 0 ? jsmn_fail(c, r, p.pos) : no_tokens(c, p.pos);
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
 * two tokens only whitespace may appear, then the closing brackets of the
 * containers that ended (jsmn has matched those), then exactly the
 * separator the grammar expects there (none, ',' or ':'). */
static int check_gap(struct ctx *c, int from, int to, char sep)
{
	bool seen = false;

	for (int i = from; i < to; i++) {
		char ch = c->js[i];

		if (is_space(ch))
			continue;
		if ((ch == '}' || ch == ']') && !seen)
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

/* Everything jsmn lets through that JSON does not allow. After this, every
 * object member is one string key with exactly one value. */
static int validate(struct ctx *c)
{
	const jsmntok_t *t = c->t;
	int pos, i;

	if (t[0].type != JSMN_OBJECT)
		return fail(c, -EINVAL, "expected a JSON object at the top level, got %s", kind(c, 0));
	pos = tok_after(&t[0]);
	for (i = 1; i < c->n; i++) {
		int p = t[i].parent;
		char sep;

		if (p < 0)
			return fail(c, -EINVAL, "unexpected data after the JSON object at byte %d",
				    tok_begin(&t[i]));
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
		if (check_gap(c, pos, tok_begin(&t[i]), sep))
			return -EINVAL;
		if (t[i].type == JSMN_PRIMITIVE &&
		    !is_literal(c->js + t[i].start, (size_t)(t[i].end - t[i].start)))
			return fail(c, -EINVAL, "invalid JSON near byte %d: not a number, true, false or null",
				    t[i].start);
		pos = tok_after(&t[i]);
	}
	if (check_gap(c, pos, t[0].end - 1, 0))
		return -EINVAL;
	for (i = t[0].end; (size_t)i < c->len; i++)
		if (!is_space(c->js[i]))
			return fail(c, -EINVAL, "unexpected data after the JSON object at byte %d", i);
	return 0;
}

/* The first token after token i and everything nested in it. Tokens are in
 * document order, so that is the first token starting at or past i's end:
 * a binary search, which keeps skipping large node objects cheap. */
static int skip(const struct ctx *c, int i)
{
	const jsmntok_t *t = c->t;
	int lo = i + 1, hi = c->n;

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
 * checked that it is complete; \uXXXX yields the UTF-16 unit, and a unit
 * >= 0x80 never equals the ASCII keys compared here. */
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
static bool key_equals(const struct ctx *c, int k, const char *key, bool fold)
{
	const char *s = c->js + c->t[k].start;
	size_t n = (size_t)(c->t[k].end - c->t[k].start), i = 0;

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

/* The value of the last member of object obj named key, or -1: Go keeps
 * the last of duplicate keys. */
static int member(const struct ctx *c, int obj, const char *key, bool fold)
{
	int found = -1, k = obj + 1;

	for (int m = 0; m < c->t[obj].size; m++) {
		if (key_equals(c, k, key, fold))
			found = k + 1;
		k = skip(c, k + 1);
	}
	return found;
}

/* path[idx]suffix names the token in messages, e.g. NodeNames[3]. */
static int take_name(struct ctx *c, int i, const char *path, int idx, const char *suffix,
		     struct extreq_node *out)
{
	const jsmntok_t *t = &c->t[i];
	const char *s = c->js + t->start;
	size_t len = (size_t)(t->end - t->start);

	if (t->type != JSMN_STRING)
		return fail(c, -EINVAL, "%s[%d]%s is %s, expected a string", path, idx, suffix, kind(c, i));
	if (len == 0)
		return fail(c, -EINVAL, "%s[%d]%s is empty", path, idx, suffix);
	if (len > EXTREQ_MAX_NAME_LEN)
		return fail(c, -E2BIG, "%s[%d]%s is %zu bytes long, limit %u", path, idx, suffix, len,
			    EXTREQ_MAX_NAME_LEN);
	for (size_t j = 0; j < len; j++)
		if (s[j] == '\\' || (unsigned char)s[j] < 0x20)
			return fail(c, -EINVAL, "%s[%d]%s has an escape or control character at byte %zu; "
				    "node names are DNS subdomains", path, idx, suffix,
				    (size_t)t->start + j);
	out->name = s;
	out->name_len = len;
	return 0;
}

static int alloc_nodes(struct ctx *c, int n, const struct extreq_limits *limits,
		       struct extreq_node **out)
{
	if ((size_t)n > limits->max_nodes)
		return fail(c, -E2BIG, "request has %d nodes, limit %zu", n, limits->max_nodes);
	*out = calloc(n ? (size_t)n : 1, sizeof(**out));
	if (!*out)
		return fail(c, -ENOMEM, "out of memory for %d nodes", n);
	return 0;
}

/* "NodeNames": ["a", "b"] */
static int read_names(struct ctx *c, int arr, const struct extreq_limits *limits, struct extreq *rq)
{
	struct extreq_node *nodes;
	int n, rc;

	if (c->t[arr].type != JSMN_ARRAY)
		return fail(c, -EINVAL, "NodeNames is %s, expected an array or null", kind(c, arr));
	n = c->t[arr].size;
	rc = alloc_nodes(c, n, limits, &nodes);
	if (rc)
		return rc;
	/* Every element must be a string, so element m is token arr + 1 + m
	 * up to the first one that is not. */
	for (int m = 0; m < n; m++) {
		rc = take_name(c, arr + 1 + m, "NodeNames", m, "", &nodes[m]);
		if (rc) {
			free(nodes);
			return rc;
		}
	}
	rq->mode = EXTREQ_NAMES;
	rq->n = (size_t)n;
	rq->nodes = nodes;
	return 0;
}

/* "Nodes": {"metadata": {}, "items": [{"metadata": {"name": "a", ...}, ...}]} */
static int read_items(struct ctx *c, int list, const struct extreq_limits *limits,
		      struct extreq *rq)
{
	const jsmntok_t *t = c->t;
	struct extreq_node *nodes;
	int items, n = 0, rc, k;

	if (t[list].type != JSMN_OBJECT)
		return fail(c, -EINVAL, "Nodes is %s, expected an object or null", kind(c, list));
	/* Go decodes a missing or null items as an empty list. */
	items = member(c, list, "items", true);
	if (items >= 0 && !is_null(c, items)) {
		if (t[items].type != JSMN_ARRAY)
			return fail(c, -EINVAL, "Nodes.items is %s, expected an array", kind(c, items));
		n = t[items].size;
	}
	rc = alloc_nodes(c, n, limits, &nodes);
	if (rc)
		return rc;
	k = items + 1;
	for (int m = 0; m < n; m++, k = skip(c, k)) {
		int md, name;

		rc = -EINVAL;
		if (t[k].type != JSMN_OBJECT) {
			fail(c, rc, "Nodes.items[%d] is %s, expected an object", m, kind(c, k));
			goto out_free_nodes;
		}
		md = member(c, k, "metadata", true);
		if (md < 0 || t[md].type != JSMN_OBJECT) {
			fail(c, rc, "Nodes.items[%d].metadata is %s, expected an object", m,
			     md < 0 ? "missing" : kind(c, md));
			goto out_free_nodes;
		}
		name = member(c, md, "name", true);
		if (name < 0) {
			fail(c, rc, "Nodes.items[%d].metadata.name is missing", m);
			goto out_free_nodes;
		}
		rc = take_name(c, name, "Nodes.items", m, ".metadata.name", &nodes[m]);
		if (rc)
			goto out_free_nodes;
		nodes[m].raw = c->js + t[k].start;
		nodes[m].raw_len = (size_t)(t[k].end - t[k].start);
	}
	rq->mode = EXTREQ_FULL;
	rq->n = (size_t)n;
	rq->nodes = nodes;
	return 0;

out_free_nodes:
	free(nodes);
	return rc;
}

/* A string member of obj, if present and not null; fold: match the key as
 * Go's decoder matches struct fields (case-insensitively), else exactly
 * (map keys such as annotations). */
static int read_string(struct ctx *c, int obj, const char *path, const char *key, bool fold,
		       struct extreq_str *out)
{
	int v = member(c, obj, key, fold);

	if (v < 0 || is_null(c, v))
		return 0;
	if (c->t[v].type != JSMN_STRING)
		return fail(c, -EINVAL, "%s[\"%s\"] is %s, expected a string", path, key,
			    kind(c, v));
	out->s = c->js + c->t[v].start;
	out->len = (size_t)(c->t[v].end - c->t[v].start);
	return 0;
}

/* Pod.metadata: the name and namespace (for logs) and, of the annotations,
 * only the bandwidth requests; any level may be missing or null. */
static int read_pod(struct ctx *c, int pod, struct extreq *rq)
{
	int md, ann;

	if (pod < 0 || is_null(c, pod))
		return 0;
	if (c->t[pod].type != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod is %s, expected an object or null", kind(c, pod));
	md = member(c, pod, "metadata", true);
	if (md < 0 || is_null(c, md))
		return 0;
	if (c->t[md].type != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod.metadata is %s, expected an object", kind(c, md));
	if (read_string(c, md, "Pod.metadata", "name", true, &rq->pod_name) ||
	    read_string(c, md, "Pod.metadata", "namespace", true, &rq->pod_namespace))
		return -EINVAL;
	ann = member(c, md, "annotations", true);
	if (ann < 0 || is_null(c, ann))
		return 0;
	if (c->t[ann].type != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod.metadata.annotations is %s, expected an object",
			    kind(c, ann));
	if (read_string(c, ann, "Pod.metadata.annotations", "kubernetes.io/ingress-bandwidth",
			false, &rq->ingress_bandwidth) ||
	    read_string(c, ann, "Pod.metadata.annotations", "kubernetes.io/egress-bandwidth",
			false, &rq->egress_bandwidth))
		return -EINVAL;
	return 0;
}

int extreq_parse(const char *body, size_t len, const struct extreq_limits *limits,
		 struct extreq *rq, char *err, size_t errlen)
{
	struct ctx c = { .js = body, .len = len, .err = err, .errlen = errlen };
	struct extreq r = { 0 };
	jsmntok_t *tokens = NULL;
	int rc, pod, nodes, names;
	bool has_nodes, has_names;

	rc = tokenize(&c, limits->max_json_tokens, &tokens);
	if (rc)
		return rc;
	rc = validate(&c);
	if (rc)
		goto out_free_tokens;

	pod = member(&c, 0, "Pod", true);
	nodes = member(&c, 0, "Nodes", true);
	names = member(&c, 0, "NodeNames", true);
	has_nodes = nodes >= 0 && !is_null(&c, nodes);
	has_names = names >= 0 && !is_null(&c, names);
	/* The scheduler sets exactly one; guessing which one it reads back
	 * could drop every node, so refuse instead. */
	if (has_nodes && has_names) {
		rc = fail(&c, -EINVAL, "both Nodes and NodeNames are set; expected one of them null");
		goto out_free_tokens;
	}
	if (!has_nodes && !has_names) {
		rc = fail(&c, -EINVAL, "neither Nodes nor NodeNames is set; expected an ExtenderArgs object");
		goto out_free_tokens;
	}
	rc = read_pod(&c, pod, &r);
	if (rc)
		goto out_free_tokens;
	rc = has_names ? read_names(&c, names, limits, &r) : read_items(&c, nodes, limits, &r);
	if (rc)
		goto out_free_tokens;
	*rq = r;

out_free_tokens:
	free(tokens);
	return rc;
}

void extreq_free(struct extreq *rq)
{
	free(rq->nodes);
	rq->nodes = NULL;
	rq->n = 0;
}
