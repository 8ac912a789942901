/* The scorer's HTTP server (scorer/serve/http.c) on 127.0.0.1 with a scorer on a
 * fake clock, asked over real sockets with libcurl: each route and method,
 * the answer every error gets ({"error"} with 404, 405 and its Allow
 * header, 413 by Content-Length and by a chunked body, 400), HEAD, the
 * extender port and the status port apart, and the start-up errors that
 * name the address. The real binary under hostile
 * clients is tests/integration/test_http.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "scorer/serve/http.h"
#include "scorer/scorer.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define MAX_BODY 256u

struct fixture {
	struct scorer *s;
	struct http_server *h;
	char base[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	*state = f;
	f->s = fake_scorer_new(16, START_NS, 6 * NS_PER_SEC);
	if (!f->s)
		return -1;
	f->s->limits.max_body_bytes = MAX_BODY;
	f->h = http_start(f->s, "127.0.0.1", 0, NULL, true, err, sizeof(err));
	if (!f->h) {
		fprintf(stderr, "http_start: %s\n", err);
		return -1;
	}
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%u", http_port(f->h));
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	http_stop(f->h);
	fake_scorer_free(f->s);
	free(f);
	return 0;
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	buf_append(arg, data, size * n);
	return size * n;
}

/* What the test sends with a chunked body: body in one chunk. */
struct upload {
	const char *data;
	size_t left;
};

static size_t send_chunk(char *out, size_t size, size_t n, void *arg)
{
	struct upload *u = arg;
	size_t k = u->left < size * n ? u->left : size * n;

	memcpy(out, u->data, k);
	u->data += k;
	u->left -= k;
	return k;
}

struct row {
	const char *name;
	const char *method;	/* GET, HEAD, POST, PUT */
	const char *path;
	const char *body;	/* NULL: none */
	bool chunked;
	long status;
	const char *in_body;	/* part of the reply body; "" for none */
	const char *header;	/* a reply header line that must be there, or NULL */
};

#define NAMES "{\"NodeNames\":[\"a\",\"b\"]}"

static const struct row rows[] = {
	{ "healthz", "GET", "/healthz", NULL, false, 200, "\"status\":\"ok\"",
	  "Content-Type: application/json" },
	{ "HEAD has no body", "HEAD", "/healthz", NULL, false, 200, "", NULL },
	{ "readyz during the warm-up", "GET", "/readyz", NULL, false, 503, "\"ready\":false", NULL },
	{ "v1/nodes", "GET", "/v1/nodes", NULL, false, 200, "{\"nodes\":[]}", NULL },
	{ "v1/workloads without a pod watch", "GET", "/v1/workloads", NULL, false, 200,
	  "{\"enabled\":false,\"workloads\":[]}", NULL },
	{ "metrics", "GET", "/metrics", NULL, false, 200, "netsched_scorer_uptime_seconds",
	  "Content-Type: text/plain; version=0.0.4" },
	{ "prioritize under a prefix", "POST", "/scheduler/prioritize", NAMES, false, 200,
	  "[{\"Host\":\"a\",\"Score\":5},{\"Host\":\"b\",\"Score\":5}]", NULL },
	{ "filter", "POST", "/filter", NAMES, false, 200, "\"NodeNames\":[\"a\",\"b\"]", NULL },
	{ "filter, chunked", "POST", "/filter", NAMES, true, 200, "\"NodeNames\":[\"a\",\"b\"]", NULL },
	{ "no such path", "GET", "/nope", NULL, false, 404, "{\"error\":\"no such path", NULL },
	{ "a verb with GET", "GET", "/filter", NULL, false, 405, "use POST", "Allow: POST" },
	{ "a status path with POST", "POST", "/healthz", "x", false, 405, "use GET",
	  "Allow: GET, HEAD" },
	{ "a status path with PUT", "PUT", "/metrics", NULL, false, 405, "use GET", NULL },
	{ "not JSON", "POST", "/prioritize", "<html>", false, 400, "invalid JSON", NULL },
	{ "over the body limit", "POST", "/filter",
	  "{\"NodeNames\":[\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\"]}",
	  false, 413, "over the limit of 256 bytes", NULL },
	{ "over the body limit, chunked", "POST", "/filter",
	  "{\"NodeNames\":[\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\","
	  "\"0123456789012345678901234567890123456789012345678901234567890123\"]}",
	  true, 413, "over the limit of 256 bytes", NULL },
};

/* Each row against the server at base. */
static void run_rows(const char *base, const struct row *table, size_t n)
{
	for (size_t r = 0; r < n; r++) {
		const struct row *row = &table[r];
		struct curl_slist *hdrs = NULL;
		struct buf body, head;
		struct upload up = { row->body, row->body ? strlen(row->body) : 0 };
		char url[128];
		long status = 0;
		CURLcode cc;
		CURL *c = curl_easy_init();

		assert_non_null(c);
		buf_init(&body, 1 << 20);
		buf_init(&head, 1 << 16);
		snprintf(url, sizeof(url), "%s%s", base, row->path);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
		if (!strcmp(row->method, "HEAD"))
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		else if (strcmp(row->method, "GET") && strcmp(row->method, "POST"))
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, row->method);
		if (row->body && row->chunked) {
			hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
			curl_easy_setopt(c, CURLOPT_POST, 1L);
			curl_easy_setopt(c, CURLOPT_READFUNCTION, send_chunk);
			curl_easy_setopt(c, CURLOPT_READDATA, &up);
		} else if (row->body) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, row->body);
		}
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
		cc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		buf_puts(&body, "");
		buf_puts(&head, "");
		if (cc != CURLE_OK || status != row->status ||
		    !strstr(body.data ? body.data : "", row->in_body) ||
		    (!row->in_body[0] && body.len) ||
		    (row->header && !strstr(head.data ? head.data : "", row->header)))
			fail_msg("%s: %s %s: %s, status %ld, want %ld with \"%s\"%s%s; got:\n%s%s",
				 row->name, row->method, row->path, curl_easy_strerror(cc), status,
				 row->status, row->in_body, row->header ? " and " : "",
				 row->header ? row->header : "", head.data ? head.data : "",
				 body.data ? body.data : "");
		curl_slist_free_all(hdrs);
		curl_easy_cleanup(c);
		buf_free(&body);
		buf_free(&head);
	}
}

static void test_http_routes(void **state)
{
	struct fixture *f = *state;

	run_rows(f->base, rows, sizeof(rows) / sizeof(rows[0]));
	/* Every 4xx counted: 404, three 405s, a 400 and two 413s. */
	assert_int_equal(atomic_load(&f->s->counters.requests_bad), 7);
}

#define PREEMPT "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":[{\"UID\":\"u\"}]}}}"

/* With a probe and status listener (--health-listen), the extender port
 * serves the verbs and the probes' paths, nothing else, and the other port
 * the probes' paths and status, read-only: whoever reaches it learns the
 * nodes' traffic but can change nothing. */
static const struct row verbs_rows[] = {
	{ "filter", "POST", "/filter", NAMES, false, 200, "\"NodeNames\":[\"a\",\"b\"]", NULL },
	{ "prioritize", "POST", "/prioritize", NAMES, false, 200, "{\"Host\":\"a\",\"Score\":5}", NULL },
	{ "preempt", "POST", "/scheduler/preempt", PREEMPT, false, 200,
	  "{\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":[{\"UID\":\"u\"}],\"NumPDBViolations\":0}}}", NULL },
	{ "healthz", "GET", "/healthz", NULL, false, 200, "\"status\":\"ok\"", NULL },
	{ "readyz", "GET", "/readyz", NULL, false, 503, "\"ready\":false", NULL },
	{ "no metrics here", "GET", "/metrics", NULL, false, 404,
	  "/metrics, /v1/nodes and /v1/workloads are on the --health-listen port", NULL },
	{ "no nodes here", "GET", "/v1/nodes", NULL, false, 404, "--health-listen", NULL },
	{ "no workloads here", "GET", "/v1/workloads", NULL, false, 404, "--health-listen", NULL },
};

static const struct row status_rows[] = {
	{ "healthz", "GET", "/healthz", NULL, false, 200, "\"status\":\"ok\"", NULL },
	{ "readyz", "GET", "/readyz", NULL, false, 503, "\"ready\":false", NULL },
	{ "metrics", "GET", "/metrics", NULL, false, 200, "netsched_scorer_uptime_seconds",
	  "Content-Type: text/plain; version=0.0.4" },
	{ "v1/nodes", "GET", "/v1/nodes", NULL, false, 200, "{\"nodes\":[]}", NULL },
	{ "v1/workloads", "GET", "/v1/workloads", NULL, false, 200, "\"workloads\":[]", NULL },
	{ "no filter here", "POST", "/filter", NAMES, false, 404,
	  "serves only GET /healthz, /readyz, /metrics, /v1/nodes and /v1/workloads", NULL },
	{ "no prioritize here", "POST", "/prioritize", NAMES, false, 404, "serves only GET", NULL },
	{ "no preempt here", "POST", "/preempt", PREEMPT, false, 404, "serves only GET", NULL },
	{ "read-only", "PUT", "/metrics", NULL, false, 405, "use GET", NULL },
};

static void test_http_status_apart(void **state)
{
	struct fixture *f = *state;
	struct http_server *verbs, *status;
	char err[256], base[64];

	verbs = http_start(f->s, "127.0.0.1", 0, NULL, false, err, sizeof(err));
	if (!verbs)
		fail_msg("http_start: %s", err);
	status = http_start_health(f->s, "127.0.0.1", 0, err, sizeof(err));
	if (!status)
		fail_msg("http_start_health: %s", err);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", http_port(verbs));
	run_rows(base, verbs_rows, sizeof(verbs_rows) / sizeof(verbs_rows[0]));
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", http_port(status));
	run_rows(base, status_rows, sizeof(status_rows) / sizeof(status_rows[0]));
	http_stop(status);
	http_stop(verbs);
}

struct start_row {
	const char *name;
	const char *addr;
	bool same_port;		/* the fixture's port, already taken */
	const char *error;
};

static const struct start_row start_rows[] = {
	{ "not an address", "localhost", false, "listen localhost:0: not an IPv4 or IPv6 address" },
	{ "port in use", "127.0.0.1", true, "bind 127.0.0.1:" },
};

static void test_http_start_errors(void **state)
{
	struct fixture *f = *state;

	for (size_t r = 0; r < sizeof(start_rows) / sizeof(start_rows[0]); r++) {
		const struct start_row *row = &start_rows[r];
		uint16_t port = row->same_port ? http_port(f->h) : 0;
		char err[256] = "";
		struct http_server *h = http_start(f->s, row->addr, port, NULL, true, err, sizeof(err));

		if (h || !strstr(err, row->error))
			fail_msg("%s: %s, \"%s\" does not say \"%s\"", row->name,
				 h ? "started" : "refused", err, row->error);
		http_stop(h);
	}
	http_stop(NULL);
}

/* IPv6 literals listen too, and say so in their port. */
static void test_http_ipv6(void **state)
{
	struct fixture *f = *state;
	char err[256];
	struct http_server *h = http_start(f->s, "::1", 0, NULL, true, err, sizeof(err));

	if (!h) {
		/* A host without IPv6 on loopback cannot run this part. */
		if (strstr(err, "Cannot assign requested address") ||
		    strstr(err, "Address family not supported"))
			skip();
		fail_msg("http_start ::1: %s", err);
	}
	assert_true(http_port(h) > 0);
	http_stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_routes),
		cmocka_unit_test(test_http_status_apart),
		cmocka_unit_test(test_http_start_errors),
		cmocka_unit_test(test_http_ipv6),
	};

	log_init("test_http");
	log_set_level(LOG_LVL_ERROR);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests_name("http", tests, setup, teardown);
}
