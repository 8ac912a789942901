/* The extender protocol: every captured and synthetic scheduler request
 * through both verbs with the reply shapes docs/extender-protocol.md requires, scoring from
 * the node table (busy, idle, unknown, stale), and bad requests that must get
 * 400 with a reason. Run from the repository root (fixtures are read from
 * tests/fixtures/extender). Replies are checked with a walk of their own over
 * the JSON layer (tests/unit/test_json.c tests that), independent of
 * extreq.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/log.h"
#include "scorer/serve/extender.h"
#include "common/json.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "tests/unit/fake_scorer.h"

#define FIXTURES "tests/fixtures/extender"
#define STALE_NS (6ULL * 1000000000ULL)
#define MAXN 8

static int setup(void **state)
{
	*state = fake_scorer_new(64, 1000000000000ULL, STALE_NS);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	fake_scorer_free(*state);
	return 0;
}

/* A report saying node receives rx_per_s bytes per second, arriving at
 * fake_now - age_ns. */
static void feed(struct scorer *s, const char *node, uint64_t rx_per_s, uint64_t age_ns)
{
	assert_int_equal(fake_feed(s, node, rx_per_s, fake_now - age_ns), TABLE_APPLIED);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *d = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		d = malloc((size_t)n + 1);
		if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
			free(d);
			d = NULL;
		} else if (d) {
			d[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return d;
}

/* ---- replies are read with the scorer's JSON layer (common/json.h) ---- */

struct span {
	const char *p;
	size_t len;
};

/* Parses into j, first freeing what j held: the walkers keep their
 * documents in statics, so what is left at exit is still reachable. */
static int walk(struct json *j, const char *js, size_t len)
{
	char err[128];

	json_free(j);
	return json_parse(j, js, len, 1u << 20, err, sizeof(err));
}

static struct span span_of(const struct json *j, int i)
{
	struct span s = { NULL, 0 };

	s.p = json_text(j, i, &s.len);
	return s;
}

static bool span_eq(struct span a, struct span b)
{
	return a.p && b.p && a.len == b.len && !memcmp(a.p, b.p, a.len);
}

/* The nodes a request asks about, as the scheduler means them: names, and
 * in full mode the raw node objects. Returns the count, -1 on no list. */
static int request_nodes(const struct json *rq, struct span *names, struct span *items, bool *full)
{
	int nn = json_member(rq, 0, "NodeNames", false), nodes = json_member(rq, 0, "Nodes", false), count = 0;

	if (json_type(rq, nn) == JSMN_ARRAY) {
		*full = false;
		for (int m = 0; m < rq->t[nn].size && count < MAXN; m++)
			names[count++] = span_of(rq, json_element(rq, nn, m));
		return count;
	}
	nodes = json_member(rq, nodes, "items", false);
	if (json_type(rq, nodes) != JSMN_ARRAY)
		return -1;
	*full = true;
	for (int m = 0, k = nodes + 1; m < rq->t[nodes].size && count < MAXN; m++, k = json_skip(rq, k)) {
		items[count] = span_of(rq, k);
		names[count++] = span_of(rq, json_member(rq, json_member(rq, k, "metadata", false), "name", false));
	}
	return count;
}

static char why[512];

#define CHECK(cond, ...) \
	do { if (!(cond)) { snprintf(why, sizeof(why), __VA_ARGS__); return why; } } while (0)

/* NULL when reply is the HostPriorityList docs/extender-protocol.md asks for: a bare
 * array, every requested host once in request order, integer scores 0..10.
 * scores (may be NULL) receives them. */
static const char *check_prioritize(const struct json *rq, const char *body, size_t len, int *scores)
{
	static struct json j;
	struct span names[MAXN], items[MAXN];
	bool full;
	int n = request_nodes(rq, names, items, &full), k = 1;

	CHECK(n >= 0, "request has no node list");
	CHECK(!walk(&j, body, len), "reply is not JSON: %.*s", (int)len, body);
	CHECK(json_type(&j, 0) == JSMN_ARRAY, "reply is not a bare array: %.80s", body);
	CHECK(j.t[0].size == n, "reply has %d hosts, request %d", j.t[0].size, n);
	for (int i = 0; i < n; i++, k = json_skip(&j, k)) {
		int host = json_member(&j, k, "Host", false), score = json_member(&j, k, "Score", false);
		struct span sc;

		CHECK(json_type(&j, k) == JSMN_OBJECT && j.t[k].size == 2, "element %d is not {Host,Score}", i);
		CHECK(json_type(&j, host) == JSMN_STRING && span_eq(span_of(&j, host), names[i]),
		      "element %d: Host is not %.*s", i, (int)names[i].len, names[i].p);
		CHECK(json_type(&j, score) == JSMN_PRIMITIVE, "element %d: no integer Score", i);
		sc = span_of(&j, score);
		CHECK((sc.len == 1 && sc.p[0] >= '0' && sc.p[0] <= '9') ||
		      (sc.len == 2 && !memcmp(sc.p, "10", 2)),
		      "element %d: Score %.*s is not an integer 0..10", i, (int)sc.len, sc.p);
		if (scores)
			scores[i] = atoi(sc.p);
	}
	return NULL;
}

/* NULL when reply is an ExtenderFilterResult that keeps every node: names
 * mode gives the request's NodeNames and Nodes null; full mode gives each
 * node object byte for byte and NodeNames null. */
static const char *check_filter(const struct json *rq, const char *body, size_t len)
{
	static struct json j;
	struct span names[MAXN], items[MAXN];
	bool full;
	int n = request_nodes(rq, names, items, &full);
	int nodes, nn, list;

	CHECK(n >= 0, "request has no node list");
	CHECK(!walk(&j, body, len), "reply is not JSON: %.*s", (int)len, body);
	CHECK(json_type(&j, 0) == JSMN_OBJECT, "reply is not an object");
	nodes = json_member(&j, 0, "Nodes", false);
	nn = json_member(&j, 0, "NodeNames", false);
	CHECK(json_text_is(&j, json_member(&j, 0, "Error", false), ""), "Error is not empty");
	CHECK(json_text_is(&j, json_member(&j, 0, "FailedNodes", false), "{}"), "FailedNodes is not {}");
	CHECK(json_text_is(&j, json_member(&j, 0, "FailedAndUnresolvableNodes", false), "{}"),
	      "FailedAndUnresolvableNodes is not {}");
	if (full) {
		CHECK(json_text_is(&j, nn, "null"), "full mode: NodeNames is not null");
		list = json_member(&j, nodes, "items", false);
		CHECK(list >= 0 && json_type(&j, list) == JSMN_ARRAY && j.t[list].size == n,
		      "full mode: Nodes.items does not hold %d nodes", n);
		for (int i = 0, k = list + 1; i < n; i++, k = json_skip(&j, k))
			CHECK(span_eq(span_of(&j, k), items[i]), "full mode: item %d differs from the request", i);
	} else {
		CHECK(json_text_is(&j, nodes, "null"), "names mode: Nodes is not null");
		CHECK(nn >= 0 && json_type(&j, nn) == JSMN_ARRAY && j.t[nn].size == n,
		      "names mode: NodeNames does not hold %d names", n);
		for (int i = 0; i < n; i++)
			CHECK(span_eq(span_of(&j, json_element(&j, nn, i)), names[i]), "names mode: name %d differs", i);
	}
	return NULL;
}

/* The error body every non-200 carries. */
static const char *check_error(const struct reply *r, const char *want)
{
	static struct json j;
	int e;

	CHECK(r->body, "no body");
	CHECK(!walk(&j, r->body, r->len) && json_type(&j, 0) == JSMN_OBJECT, "error body not an object");
	e = json_member(&j, 0, "error", false);
	CHECK(e >= 0 && json_type(&j, e) == JSMN_STRING && j.t[e].end > j.t[e].start, "no error message");
	CHECK(!want || strstr(r->body, want), "error %.*s does not mention \"%s\"",
	      (int)(j.t[e].end - j.t[e].start), r->body + j.t[e].start, want);
	return NULL;
}

/* ---- every fixture, both verbs ---- */

struct fixture_row {
	const char *path;
	unsigned status;	/* for both verbs */
	const char *error;	/* part of the 400 message */
};

static const struct fixture_row fixtures[] = {
	{ "captured-k8s-1.20/filter-request.nodeCacheCapable-false.json", 200, NULL },
	{ "captured-k8s-1.20/filter-request.nodeCacheCapable-true.json", 200, NULL },
	{ "captured-k8s-1.20/prioritize-request.nodeCacheCapable-false.json", 200, NULL },
	{ "captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json", 200, NULL },
	{ "synthetic/filter_request_nodeCacheCapable_false.json", 200, NULL },
	{ "synthetic/filter_request_nodeCacheCapable_true.json", 200, NULL },
	/* Not ExtenderArgs: a bind request, the headers file, the reply examples. */
	{ "captured-k8s-1.20/bind-request.json", 400, "neither Nodes nor NodeNames" },
	{ "captured-k8s-1.20/filter-request.headers.txt", 400, "invalid JSON" },
	{ "synthetic/responses.json", 400, "neither Nodes nor NodeNames" },
};

static void test_extender_fixtures(void **state)
{
	struct scorer *s = *state;

	for (size_t r = 0; r < sizeof(fixtures) / sizeof(fixtures[0]); r++) {
		const struct fixture_row *row = &fixtures[r];
		static struct json rq;
		struct reply f, p;
		const char *bad;
		char path[256];
		size_t len = 0;
		char *body;

		snprintf(path, sizeof(path), FIXTURES "/%s", row->path);
		body = read_file(path, &len);
		if (!body)
			fail_msg("%s: cannot read (run from the repository root)", path);
		ext_filter(s, body, len, &f);
		ext_prioritize(s, body, len, &p);
		if (f.status != row->status || p.status != row->status)
			fail_msg("%s: filter %u, prioritize %u, want %u: %.200s", row->path, f.status,
				 p.status, row->status, p.body ? p.body : "");
		if (row->status == 200) {
			assert_int_equal(walk(&rq, body, len), 0);
			if ((bad = check_filter(&rq, f.body, f.len)))
				fail_msg("%s: filter: %s", row->path, bad);
			if ((bad = check_prioritize(&rq, p.body, p.len, NULL)))
				fail_msg("%s: prioritize: %s", row->path, bad);
		} else if ((bad = check_error(&f, row->error)) || (bad = check_error(&p, row->error))) {
			fail_msg("%s: %s", row->path, bad);
		}
		free(f.body);
		free(p.body);
		free(body);
	}
}

/* The full-mode filter reply, exactly: the request's node objects inside a
 * fixed frame. */
static void test_extender_filter_full_exact(void **state)
{
	const char *req = "{\"Pod\":null,\"Nodes\":{\"metadata\":{},\"items\":["
			  "{\"metadata\":{\"name\":\"a\"},\"x\":[1, 2.5e3 ,{}]} ,\n"
			  "{ \"metadata\" : { \"name\" : \"b\" } }]},\"NodeNames\":null}";
	const char *want = "{\"Nodes\":{\"metadata\":{},\"items\":["
			   "{\"metadata\":{\"name\":\"a\"},\"x\":[1, 2.5e3 ,{}]},"
			   "{ \"metadata\" : { \"name\" : \"b\" } }]},\"NodeNames\":null,"
			   "\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}";
	struct reply r;

	ext_filter(*state, req, strlen(req), &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, want);
	assert_int_equal(r.len, strlen(want));
	free(r.body);
}

/* ---- scores from the table ---- */

struct score_row {
	const char *name;
	enum policy_kind policy;
	const char *nodes[MAXN];	/* requested, in order */
	uint64_t rx[MAXN];		/* fed to the table; NOFEED = never reported */
	uint64_t age_s[MAXN];		/* how old the report is */
	int want[MAXN];
};

#define NOFEED UINT64_MAX

static const struct score_row score_rows[] = {
	{ "busy node scores lower than an idle one", POLICY_RELATIVE,
	  { "busy", "idle" }, { 1000000, 0 }, { 1, 1 }, { 0, 10 } },
	{ "scores in between are linear", POLICY_RELATIVE,
	  { "n1", "n2", "n3" }, { 1000, 500, 0 }, { 0, 0, 0 }, { 0, 5, 10 } },
	{ "node without data is neutral", POLICY_RELATIVE,
	  { "busy", "ghost" }, { 1000, NOFEED }, { 0, 0 }, { 0, POLICY_NEUTRAL_SCORE } },
	{ "stale data counts as no data", POLICY_RELATIVE,
	  { "old", "new" }, { 5000, 1000 }, { 7, 0 }, { POLICY_NEUTRAL_SCORE, 0 } },
	{ "data exactly stale_after old is still fresh", POLICY_RELATIVE,
	  { "edge", "idle" }, { 1000, 0 }, { 6, 0 }, { 0, 10 } },
	{ "all idle: every node the maximum", POLICY_RELATIVE,
	  { "a", "b" }, { 0, 0 }, { 0, 0 }, { 10, 10 } },
	{ "utilization without link speeds falls back to relative", POLICY_UTILIZATION,
	  { "busy", "idle" }, { 1000, 0 }, { 0, 0 }, { 0, 10 } },
};

/* A fresh scorer in *state (rows must not see each other's nodes) with
 * row's policy and nodes fed, and into body the names-mode prioritize
 * request for them; returns its length, the row's node count in *n. */
static int row_request(void **state, const struct score_row *row, char *body, size_t cap, int *n)
{
	struct scorer *s;
	int len;

	teardown(state);
	assert_int_equal(setup(state), 0);
	s = *state;
	s->view.policy = row->policy;
	len = snprintf(body, cap, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[");
	for (*n = 0; *n < MAXN && row->nodes[*n]; (*n)++) {
		if (row->rx[*n] != NOFEED)
			feed(s, row->nodes[*n], row->rx[*n], row->age_s[*n] * 1000000000ULL);
		len += snprintf(body + len, cap - (size_t)len, "%s\"%s\"", *n ? "," : "",
				row->nodes[*n]);
	}
	len += snprintf(body + len, cap - (size_t)len, "]}");
	assert_true((size_t)len < cap);
	return len;
}

static void test_extender_scores(void **state)
{
	for (size_t r = 0; r < sizeof(score_rows) / sizeof(score_rows[0]); r++) {
		const struct score_row *row = &score_rows[r];
		static struct json rq;
		char body[1024];
		int n, len = row_request(state, row, body, sizeof(body), &n), scores[MAXN];
		struct reply rep;
		const char *bad;

		ext_prioritize(*state, body, (size_t)len, &rep);
		if (rep.status != 200)
			fail_msg("%s: status %u: %s", row->name, rep.status, rep.body);
		assert_int_equal(walk(&rq, body, (size_t)len), 0);
		if ((bad = check_prioritize(&rq, rep.body, rep.len, scores)))
			fail_msg("%s: %s", row->name, bad);
		for (int i = 0; i < n; i++)
			if (scores[i] != row->want[i])
				fail_msg("%s: %s scored %d, want %d (%s)", row->name, row->nodes[i],
					 scores[i], row->want[i], rep.body);
		free(rep.body);
	}
}

/* NULL when compact is full's compact form: the hosts above full's lowest
 * score, in request order, each at its score less that lowest. */
static const char *check_compact(const struct json *rq, const int *full, int n, const char *body,
				 size_t len)
{
	static struct json j;
	struct span names[MAXN], items[MAXN];
	bool is_full;
	int least = 10, listed = 0, k = 1;

	CHECK(request_nodes(rq, names, items, &is_full) == n, "request has not %d nodes", n);
	CHECK(!walk(&j, body, len) && json_type(&j, 0) == JSMN_ARRAY, "reply is not an array: %.80s", body);
	for (int i = 0; i < n; i++)
		least = full[i] < least ? full[i] : least;
	for (int i = 0; i < n; i++) {
		struct span sc;

		if (full[i] == least)
			continue;
		CHECK(listed < j.t[0].size, "%.*s (%d, lowest %d) left out", (int)names[i].len, names[i].p,
		      full[i], least);
		CHECK(span_eq(span_of(&j, json_member(&j, k, "Host", false)), names[i]),
		      "element %d is not %.*s", listed, (int)names[i].len, names[i].p);
		sc = span_of(&j, json_member(&j, k, "Score", false));
		CHECK(sc.p && atoi(sc.p) == full[i] - least, "%.*s: %.*s, want %d - %d", (int)names[i].len,
		      names[i].p, (int)sc.len, sc.p, full[i], least);
		listed++;
		k = json_skip(&j, k);
	}
	CHECK(listed == j.t[0].size, "%d hosts listed, %d above the lowest score", j.t[0].size, listed);
	return NULL;
}

/* --prioritize-reply compact: every score row again, and nodes that all
 * score alike (here: none has data) make an empty list. */
static void test_extender_compact(void **state)
{
	static const char same[] = "{\"Pod\":{},\"NodeNames\":[\"quiet-a\",\"quiet-b\"]}";
	struct reply rep;

	for (size_t r = 0; r < sizeof(score_rows) / sizeof(score_rows[0]); r++) {
		const struct score_row *row = &score_rows[r];
		struct scorer *s;
		static struct json rq;
		char body[1024];
		int n, len = row_request(state, row, body, sizeof(body), &n), scores[MAXN];
		const char *bad;

		s = *state;
		assert_int_equal(walk(&rq, body, (size_t)len), 0);
		ext_prioritize(s, body, (size_t)len, &rep);
		if ((bad = check_prioritize(&rq, rep.body, rep.len, scores)))
			fail_msg("%s: full: %s", row->name, bad);
		free(rep.body);
		s->compact_scores = true;
		ext_prioritize(s, body, (size_t)len, &rep);
		assert_int_equal(rep.status, 200);
		if ((bad = check_compact(&rq, scores, n, rep.body, rep.len)))
			fail_msg("%s: compact: %s (%s)", row->name, bad, rep.body);
		free(rep.body);
	}
	(*(struct scorer **)state)->compact_scores = true;
	ext_prioritize(*state, same, sizeof(same) - 1, &rep);
	assert_int_equal(rep.status, 200);
	assert_string_equal(rep.body, "[]");
	free(rep.body);
}

/* The same table data scores the same through full Node objects. */
static void test_extender_full_mode_scores(void **state)
{
	struct scorer *s = *state;
	const char *req = "{\"Pod\":{},\"Nodes\":{\"metadata\":{},\"items\":["
			  "{\"metadata\":{\"name\":\"idle\"}},{\"metadata\":{\"name\":\"busy\"}}]},"
			  "\"NodeNames\":null}";
	struct reply r;

	feed(s, "busy", 100, 0);
	feed(s, "idle", 0, 0);
	ext_prioritize(s, req, strlen(req), &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "[{\"Host\":\"idle\",\"Score\":10},{\"Host\":\"busy\",\"Score\":0}]");
	free(r.body);
}

/* ---- requests that must be answered 400, and odd ones that are fine ---- */

struct request_row {
	const char *name;
	const char *body;
	size_t len;		/* 0: strlen(body) */
	unsigned status;
	const char *error;	/* part of the error message, or for 200 the exact prioritize reply */
};

static const struct request_row request_rows[] = {
	{ "not JSON", "not json", 0, 400, "invalid JSON" },
	{ "empty body", "", 0, 400, "empty body" },
	{ "only whitespace", " \r\n\t ", 0, 400, "empty body" },
	{ "truncated", "{\"Pod\":{},\"NodeNames\":[\"a\",", 0, 400, "ends early" },
	{ "truncated inside a string", "{\"NodeNames\":[\"a", 0, 400, "ends early" },
	{ "top-level array", "[1,2,3]", 0, 400, "got an array" },
	{ "top-level string", "\"x\" ", 0, 400, "got a string" },
	{ "trailing garbage", "{\"NodeNames\":[\"a\"]} x", 0, 400, "invalid JSON" },
	{ "a second JSON value", "{\"NodeNames\":[\"a\"]}{}", 0, 400, "after the JSON object" },
	{ "a NUL byte after the object", "{\"NodeNames\":[\"a\"]}\0", 20, 400, "after the JSON object" },
	{ "a NUL byte first", "\0{}", 3, 400, "NUL" },
	{ "NodeNames not an array", "{\"Nodes\":null,\"NodeNames\":\"a\"}", 0, 400,
	  "NodeNames is a string, expected an array" },
	{ "a name that is a number", "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"a\",1]}", 0, 400,
	  "NodeNames[1] is a number, expected a string" },
	{ "a name that is null", "{\"NodeNames\":[null]}", 0, 400, "NodeNames[0] is null" },
	{ "an empty name", "{\"NodeNames\":[\"\"]}", 0, 400, "NodeNames[0] is empty" },
	{ "a name with an escape", "{\"NodeNames\":[\"a\\u003cb\"]}", 0, 400,
	  "NodeNames[0] is not a DNS subdomain: byte 1 is" },
	{ "a name with capitals", "{\"NodeNames\":[\"Node-a\"]}", 0, 400,
	  "NodeNames[0] is not a DNS subdomain: byte 0 is 'N'" },
	{ "a name with a space", "{\"NodeNames\":[\"a b\"]}", 0, 400, "byte 1 is 0x20" },
	{ "a name with a slash", "{\"NodeNames\":[\"a/b\"]}", 0, 400, "byte 1 is '/'" },
	{ "a name with DEL", "{\"NodeNames\":[\"a\x7f\"]}", 0, 400, "byte 1 is 0x7f" },
	/* Invalid UTF-8 is named by its value, never echoed: the reply stays
	 * JSON text. Any string of the body, not only the names. */
	{ "a name with invalid UTF-8", "{\"NodeNames\":[\"a\xff\xfe\"]}", 0, 400,
	  "near byte 16: invalid UTF-8 in a string (byte 0xff)" },
	{ "invalid UTF-8 in a pod's label",
	  "{\"Pod\":{\"metadata\":{\"labels\":{\"app\":\"w\xc3\x28\"}}},\"NodeNames\":[\"a\"]}", 0,
	  400, "near byte 38: invalid UTF-8 in a string (byte 0xc3)" },
	{ "invalid UTF-8 in a pod's key", "{\"Pod\":{\"sp\x80" "ec\":{}},\"NodeNames\":[\"a\"]}", 0, 400,
	  "near byte 11: invalid UTF-8 in a string (byte 0x80)" },
	{ "an overlong '/' in the pod", "{\"Pod\":{\"x\":\"\xc0\xaf\"},\"NodeNames\":[\"a\"]}", 0, 400,
	  "invalid UTF-8 in a string (byte 0xc0)" },
	{ "a surrogate as UTF-8 in the pod", "{\"Pod\":{\"x\":\"\xed\xa0\x80\"},\"NodeNames\":[\"a\"]}", 0,
	  400, "invalid UTF-8 in a string (byte 0xed)" },
	{ "a raw tab in the pod", "{\"Pod\":{\"x\":\"a\tb\"},\"NodeNames\":[\"a\"]}", 0, 400,
	  "near byte 14: control byte 0x09 inside a string" },
	{ "a 65-digit number in the pod",
	  "{\"Pod\":{\"x\":12345678901234567890123456789012345678901234567890123456789012345},"
	  "\"NodeNames\":[\"a\"]}", 0, 400, "near byte 12: a number of 65 characters, limit 64" },
	{ "a name longer than 253 bytes",
	  "{\"NodeNames\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}",
	  0, 400, "bytes long, limit 253" },
	{ "neither node list", "{\"Pod\":{}}", 0, 400, "neither Nodes nor NodeNames" },
	{ "both node lists null", "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":null}", 0, 400,
	  "neither Nodes nor NodeNames" },
	{ "both node lists set", "{\"Nodes\":{\"items\":[]},\"NodeNames\":[]}", 0, 400,
	  "both Nodes and NodeNames" },
	{ "Nodes not an object", "{\"Nodes\":[],\"NodeNames\":null}", 0, 400, "Nodes is an array" },
	{ "items not an array", "{\"Nodes\":{\"items\":{}}}", 0, 400, "Nodes.items is an object" },
	{ "an item that is not an object", "{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"}},7]}}", 0,
	  400, "Nodes.items[1] is a number" },
	{ "an item without metadata", "{\"Nodes\":{\"items\":[{\"spec\":{}}]}}", 0, 400,
	  "Nodes.items[0].metadata is missing" },
	{ "an item without a name", "{\"Nodes\":{\"items\":[{\"metadata\":{\"uid\":\"x\"}}]}}", 0, 400,
	  "Nodes.items[0].metadata.name is missing" },
	{ "an item whose name is an object", "{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":{}}}]}}", 0,
	  400, "Nodes.items[0].metadata.name is an object" },
	{ "Pod not an object", "{\"Pod\":[],\"NodeNames\":[\"a\"]}", 0, 400, "Pod is an array" },
	{ "a bandwidth annotation that is a number",
	  "{\"Pod\":{\"metadata\":{\"annotations\":{\"kubernetes.io/egress-bandwidth\":10}}},"
	  "\"NodeNames\":[\"a\"]}", 0, 400, "egress-bandwidth\\\"] is a number" },
	/* Grammar jsmn alone would let through. */
	{ "missing comma in an array", "{\"NodeNames\":[\"a\" \"b\"]}", 0, 400, "expected ','" },
	{ "missing comma between members", "{\"Pod\":{} \"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "double comma", "{\"NodeNames\":[\"a\",,\"b\"]}", 0, 400, "unexpected ','" },
	{ "trailing comma in an array", "{\"NodeNames\":[\"a\",]}", 0, 400, "unexpected ','" },
	{ "trailing comma in an object", "{\"NodeNames\":[\"a\"],}", 0, 400, "unexpected ','" },
	{ "leading comma", "{,\"NodeNames\":[\"a\"]}", 0, 400, "unexpected ','" },
	{ "key without a value", "{\"Pod\",\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "key with an empty value", "{\"Pod\":,\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "two colons", "{\"Pod\":\"x\":\"y\",\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "colon in an array", "{\"NodeNames\":[\"a\":\"b\"]}", 0, 400, "invalid JSON" },
	{ "colon after a number", "{\"Pod\":{\"x\":[1:2]},\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "unquoted key", "{NodeNames:[\"a\"]}", 0, 400, "invalid JSON" },
	{ "number as key", "{1:2,\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "misspelt literal", "{\"Pod\":nul,\"NodeNames\":[\"a\"]}", 0, 400, "not a number, true, false or null" },
	{ "leading zero", "{\"Pod\":{\"x\":01},\"NodeNames\":[\"a\"]}", 0, 400, "not a number" },
	{ "bare minus", "{\"Pod\":{\"x\":-},\"NodeNames\":[\"a\"]}", 0, 400, "not a number" },
	{ "bad escape", "{\"Pod\":{\"x\":\"\\q\"},\"NodeNames\":[\"a\"]}", 0, 400, "invalid JSON" },
	{ "mismatched brackets", "{\"NodeNames\":[\"a\"}}", 0, 400, "invalid JSON" },
	{ "extra closing bracket", "{\"NodeNames\":[\"a\"]}}", 0, 400, "invalid JSON" },
	/* Valid requests in unusual clothes. */
	{ "lower-case keys", "{\"pod\":null,\"nodes\":null,\"nodenames\":[\"a\"]}", 0, 200,
	  "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "mixed-case keys", "{\"POD\":{},\"NODENAMES\":[\"a\"]}", 0, 200, "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "escaped key", "{\"Node\\u004eames\":[\"a\"],\"Nodes\":null}", 0, 200,
	  "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "last duplicate key wins", "{\"NodeNames\":[\"x\"],\"NodeNames\":[\"a\",\"b\"]}", 0, 200,
	  "[{\"Host\":\"a\",\"Score\":5},{\"Host\":\"b\",\"Score\":5}]" },
	{ "last duplicate key wins even when null", "{\"NodeNames\":[\"x\"],\"nodenames\":null}", 0, 400,
	  "neither" },
	{ "empty name list", "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[]}", 0, 200, "[]" },
	{ "empty items", "{\"Nodes\":{\"metadata\":{},\"items\":[]},\"NodeNames\":null}", 0, 200, "[]" },
	{ "null items", "{\"Nodes\":{\"metadata\":{},\"items\":null}}", 0, 200, "[]" },
	{ "whitespace everywhere", " \n{ \"NodeNames\" :\t[ \"a\" , \"b\" ] } \r\n", 0, 200,
	  "[{\"Host\":\"a\",\"Score\":5},{\"Host\":\"b\",\"Score\":5}]" },
	{ "every kind of JSON value in the pod",
	  "{\"Pod\":{\"a\":[true,false,null,-0.5e+3,0,1E9,\"\\u00e9\\n\\\"\",{},[[]]],\"b\":{\"c\":{}}},"
	  "\"NodeNames\":[\"a\"]}", 0, 200, "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "UTF-8 of every length in the pod",
	  "{\"Pod\":{\"x\":\"\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"},"
	  "\"NodeNames\":[\"a\"]}", 0, 200, "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "a 64-character number in the pod",
	  "{\"Pod\":{\"x\":-1.234567890123456789012345678901234567890123456789012345678e+10},"
	  "\"NodeNames\":[\"a\"]}", 0, 200, "[{\"Host\":\"a\",\"Score\":5}]" },
	{ "a name with a dot and digits", "{\"NodeNames\":[\"ip-10-0-1-23.ec2.internal\"]}", 0, 200,
	  "[{\"Host\":\"ip-10-0-1-23.ec2.internal\",\"Score\":5}]" },
};

static void test_extender_requests(void **state)
{
	struct scorer *s = *state;

	for (size_t r = 0; r < sizeof(request_rows) / sizeof(request_rows[0]); r++) {
		const struct request_row *row = &request_rows[r];
		size_t len = row->len ? row->len : strlen(row->body);
		unsigned long bad_before = atomic_load(&s->counters.requests_bad);
		struct reply f, p;
		const char *bad;

		ext_filter(s, row->body, len, &f);
		ext_prioritize(s, row->body, len, &p);
		if (f.status != row->status || p.status != row->status)
			fail_msg("%s: filter %u, prioritize %u, want %u: %s", row->name, f.status, p.status,
				 row->status, p.body ? p.body : "(no body)");
		if (row->status == 200) {
			if (strcmp(p.body, row->error))
				fail_msg("%s: prioritize replied %s, want %s", row->name, p.body, row->error);
			assert_int_equal(atomic_load(&s->counters.requests_bad), bad_before);
		} else {
			if ((bad = check_error(&f, row->error)) || (bad = check_error(&p, row->error)))
				fail_msg("%s: %s", row->name, bad);
			for (const char *c = p.body; c && *c; c++)
				if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
					fail_msg("%s: the error echoes byte 0x%02x", row->name,
						 (unsigned char)*c);
			assert_int_equal(atomic_load(&s->counters.requests_bad), bad_before + 2);
		}
		free(f.body);
		free(p.body);
	}
}

/* A 5,000-digit number inside the pod: 400 on both verbs, naming its
 * length and where it starts; found in one pass however long it is. */
static void test_extender_long_number(void **state)
{
	static const char head[] = "{\"Pod\":{\"metadata\":{\"generation\":";
	static const char tail[] = "}},\"NodeNames\":[\"a\"]}";
	size_t digits = 5000, len = strlen(head) + digits + strlen(tail);
	char *body = malloc(len + 1), want[64];
	struct reply f, p;
	const char *bad;

	assert_non_null(body);
	memcpy(body, head, strlen(head));
	memset(body + strlen(head), '7', digits);
	memcpy(body + strlen(head) + digits, tail, strlen(tail) + 1);
	snprintf(want, sizeof(want), "near byte %zu: a number of 5000 characters", strlen(head));
	ext_filter(*state, body, len, &f);
	ext_prioritize(*state, body, len, &p);
	assert_int_equal(f.status, 400);
	assert_int_equal(p.status, 400);
	if ((bad = check_error(&f, want)) || (bad = check_error(&p, want)))
		fail_msg("%s", bad);
	free(f.body);
	free(p.body);
	free(body);
}

/* Names-mode filter with no nodes still answers with a list, never null. */
static void test_extender_filter_empty(void **state)
{
	const char *req = "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[]}";
	struct reply r;

	ext_filter(*state, req, strlen(req), &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{},"
				    "\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	free(r.body);
}

/* ---- limits ---- */

static char *names_request(size_t n, size_t *len)
{
	size_t cap = 64 + n * 16, off;
	char *b = malloc(cap);

	assert_non_null(b);
	off = (size_t)snprintf(b, cap, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(b + off, cap - off, "%s\"node-%05zu\"", i ? "," : "", i);
	off += (size_t)snprintf(b + off, cap - off, "]}");
	*len = off;
	return b;
}

static void test_extender_limits(void **state)
{
	struct scorer *s = *state;
	struct reply r;
	size_t len;
	char *body = names_request(11, &len);

	s->limits.request.max_nodes = 10;
	ext_prioritize(s, body, len, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "request has 11 nodes, limit 10"));
	free(r.body);

	s->limits.request.max_nodes = 11;
	s->limits.request.max_json_tokens = 14; /* top object, 3 keys, 2 values, the array, 11 names = 18 */
	ext_filter(s, body, len, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "request has 18 JSON tokens, limit 14"));
	free(r.body);

	s->limits.request.max_json_tokens = 18;
	ext_filter(s, body, len, &r);
	assert_int_equal(r.status, 200);
	free(r.body);
	free(body);

	/* Node names: 253 bytes is the longest DNS subdomain. */
	for (size_t n = 252; n <= 254; n++) {
		char req[512];
		int l = snprintf(req, sizeof(req), "{\"NodeNames\":[\"%0*d\"]}", (int)n, 7);

		ext_prioritize(s, req, (size_t)l, &r);
		if (r.status != (n <= NODENAME_MAX_LEN ? 200u : 400u))
			fail_msg("a name of %zu bytes: status %u: %s", n, r.status, r.body);
		free(r.body);
	}
}

/* 5,000 names, the largest names-mode request a big cluster sends. */
static void test_extender_many_names(void **state)
{
	struct scorer *s = *state;
	const char *head = "[{\"Host\":\"node-00000\",\"Score\":10},{\"Host\":\"node-00001\",\"Score\":5},";
	struct reply r;
	size_t len;
	char *body = names_request(5000, &len);

	feed(s, "node-04999", 1000, 0);
	feed(s, "node-00000", 0, 0);
	ext_prioritize(s, body, len, &r);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body, head, strlen(head));
	assert_non_null(strstr(r.body, ",{\"Host\":\"node-04999\",\"Score\":0}]"));
	free(r.body);
	free(body);
}



static void test_extender_counters(void **state)
{
	struct scorer *s = *state;
	const char *ok = "{\"NodeNames\":[\"a\"]}";
	struct reply r;

	ext_filter(s, ok, strlen(ok), &r);
	free(r.body);
	ext_prioritize(s, ok, strlen(ok), &r);
	free(r.body);
	ext_prioritize(s, "x", 1, &r);
	free(r.body);
	assert_int_equal(atomic_load(&s->counters.requests_filter), 1);
	assert_int_equal(atomic_load(&s->counters.requests_prioritize), 2);
	assert_int_equal(atomic_load(&s->counters.requests_bad), 1);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_extender_fixtures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_filter_full_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_scores, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_full_mode_scores, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_compact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_long_number, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_filter_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_many_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extender_counters, setup, teardown),
	};

	log_init("test_extender");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("extender", tests, NULL, NULL);
}
