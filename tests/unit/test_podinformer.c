/* The pod watch's informer (scorer/kube/podinformer.c) on bytes alone, with a
 * clock moved by hand: list pages with continue tokens, an expired continue
 * token, pages over the bound, watch events of every type, a stream cut at
 * every byte, 410 Gone as a status and mid-stream, malformed and oversized
 * lines, a list that never ends, failures, and the backoff: repeated 410s,
 * errors and empty watches wait longer each time, only progress resets the
 * wait, and the log holds at most one line a second. Each row is the conversation with
 * an apiserver, request by request. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/podindex.h"
#include "scorer/kube/podinformer.h"
#include "scorer/pods/podweight.h"
#include "scorer/pods/workload.h"
#include "tests/unit/stderr_capture.h"

#define T0 (1000ULL * NS_PER_SEC)
#define UNIX_MS 1790000000000ULL	/* 2026-09-21T14:13:20Z, moved with the clock */
#define MIN_MS 500u
#define MAX_MS 30000u

static uint64_t now_ns = T0;
static uint64_t fake_mono(void) { return now_ns; }
static uint64_t fake_unix(void) { return UNIX_MS + (now_ns - T0) / NS_PER_MS; }

/* ------------------------------------------------------------ bodies */

#define POD_AT(uid, node, extra) \
	"{\"metadata\":{\"uid\":\"" uid "\",\"namespace\":\"ns\",\"name\":\"" uid "\"," \
	"\"resourceVersion\":\"7\"},\"spec\":{\"nodeName\":\"" node "\"}" extra "}"
#define POD(uid) POD_AT(uid, "n1", "")
#define PAGE(rv, cont, items) \
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv \
	"\",\"continue\":\"" cont "\"},\"items\":[" items "]}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define BOOKMARK(rv) EVENT("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"" rv "\"}}")
#define STATUS(code, reason, msg) \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" msg \
	"\",\"reason\":\"" reason "\",\"code\":" #code "}"
#define GONE EVENT("ERROR", STATUS(410, "Expired", "too old resource version: \\\"5\\\" (90)"))
#define DONE(phase) ",\"status\":{\"phase\":\"" phase "\"}"

/* A cluster of 60 pods of about 400 bytes each, served a page at a time
 * as the request's limit and continue token say (continue = offset). */
static char big_page[64 * 1024];
static const char *sixty_pods(const char *path)
{
	const char *l = strstr(path, "limit="), *c = strstr(path, "continue=");
	unsigned long limit = strtoul(l + 6, NULL, 10), from = c ? strtoul(c + 9, NULL, 10) : 0;
	char pad[320], next[24] = "";
	size_t n;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	if (from + limit < 60)
		snprintf(next, sizeof(next), "%lu", from + limit);
	n = (size_t)snprintf(big_page, sizeof(big_page), "{\"metadata\":{\"resourceVersion\":"
			     "\"60\",\"continue\":\"%s\"},\"items\":[", next);
	for (unsigned long i = from; i < from + limit && i < 60; i++)
		n += (size_t)snprintf(big_page + n, sizeof(big_page) - n,
				      "%s{\"metadata\":{\"uid\":\"u%lu\",\"annotations\":{\"pad\":\"%s\"}},"
				      "\"spec\":{\"nodeName\":\"n1\"}}", i > from ? "," : "", i, pad);
	snprintf(big_page + n, sizeof(big_page) - n, "]}");
	return big_page;
}

/* An error page over PODINFORMER_ERROR_BODY_MAX. */
static const char *huge_error(const char *path)
{
	static char page[PODINFORMER_ERROR_BODY_MAX + 4096];

	(void)path;
	memset(page, 'x', sizeof(page) - 1);
	return page;
}

/* ------------------------------------------------------------- rows */

#define LIST PODINFORMER_LIST
#define WATCH PODINFORMER_WATCH

struct step {
	enum podinformer_verb verb;
	const char *want;		/* part of the request's path, or NULL */
	const char *not;		/* not part of it, or NULL */
	long code;			/* 0: no answer at all (rc says why) */
	const char *body;
	const char *(*gen)(const char *path); /* the body from the request */
	int rc;				/* what the transport says at the end */
	bool stops;			/* podinformer_body ends the transfer */
	uint64_t lasts_ms;		/* the clock when the answer comes (logs: at most one a second) */
	uint64_t lo, hi;		/* the wait podinformer_end answers, in ms */
};

struct outcome {
	uint64_t lists, watches, events, expired, errors, skipped;
	bool synced;
	size_t pods;			/* tracked in flight */
	uint64_t observed, dropped;
};

struct row {
	const char *name;
	size_t max_page_bytes;		/* 0: 8 MiB */
	size_t max_event_bytes;		/* 0: 2 MiB */
	struct step steps[16];
	struct outcome want;
	const char *log[3];		/* parts of the log */
};

#define ANY 0, UINT64_MAX
#define NOW 0, 0
#define FIRST_WAIT MIN_MS / 2, MIN_MS
#define SECOND_WAIT MIN_MS, 2 * MIN_MS
#define THIRD_WAIT 2 * MIN_MS, 4 * MIN_MS
#define QUIET_WATCH(rv) { WATCH, "resourceVersion=" rv "&", NULL, 200, "", NULL, 0, false, 300000, NOW }

static const struct row rows[] = {
	{ "one page, then a quiet watch the server ends", 0, 0, {
		{ LIST, "/api/v1/pods?limit=500&fieldSelector=spec.nodeName%21%3D", "continue", 200,
		  PAGE("10", "", POD("a") "," POD_AT("b", "n2", "")), NULL, 0, false, 5, NOW },
		QUIET_WATCH("10"),
		{ WATCH, "watch=1&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=300",
		  NULL, 200, EVENT("ADDED", POD("c")), NULL, 0, false, 10, NOW },
	  }, { .lists = 1, .watches = 2, .events = 1, .synced = true, .pods = 3, .observed = 3 },
	  { "listed 2 bound pods in 1 page(s) from https://api.test:6443 at resourceVersion 10" } },
	{ "two pages", 0, 0, {
		{ LIST, "limit=500", "continue", 200, PAGE("10", "eyJ2IjoxfQ+/=", POD("a")), NULL, 0,
		  false, 5, NOW },
		{ LIST, "&continue=eyJ2IjoxfQ%2B%2F%3D", NULL, 200, PAGE("11", "", POD("b")), NULL, 0,
		  false, 5, NOW },
		QUIET_WATCH("11"),
	  }, { .lists = 1, .watches = 1, .synced = true, .pods = 2, .observed = 2 },
	  { "listed 2 bound pods in 2 page(s)" } },
	{ "an expired continue token starts the list over", 0, 0, {
		{ LIST, "limit=500", "continue", 200, PAGE("10", "c1", POD("a")), NULL, 0, false, 5,
		  NOW },
		{ LIST, "continue=c1", NULL, 410, STATUS(410, "Expired", "continue token too old"),
		  NULL, 0, false, 5, FIRST_WAIT },
		{ LIST, "limit=500", "continue", 200, PAGE("12", "", POD("a") "," POD("b")), NULL, 0,
		  false, 5, NOW },
		QUIET_WATCH("12"),
	  }, { .lists = 1, .watches = 1, .synced = true, .pods = 2, .observed = 2 },
	  { "listed 2 bound pods in 1 page(s)",
	    "(a continue token expired: the list started over)" } },
	{ "pages over the bound: an eighth of the pods a page", 16 * 1024, 0, {
		{ LIST, "limit=500", NULL, 200, NULL, sixty_pods, 0, true, 5, FIRST_WAIT },
		{ LIST, "limit=62", NULL, 200, NULL, sixty_pods, 0, true, 5, SECOND_WAIT },
		{ LIST, "limit=7&", "continue", 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "limit=7&", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=14", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=21", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=28", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=35", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=42", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=49", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		{ LIST, "continue=56", NULL, 200, NULL, sixty_pods, 0, false, 5, NOW },
		QUIET_WATCH("60"),
	  }, { .lists = 1, .watches = 1, .synced = true, .pods = 60, .observed = 60 },
	  { "listed 60 bound pods in 9 page(s)",
	    "(pages of 500, 62 pods were larger than 16384 bytes: asking for 7 a page)" } },
	{ "a page of one pod over the bound fails", 300, 0, {
		{ LIST, "limit=500", NULL, 200, NULL, sixty_pods, 0, true, 5, FIRST_WAIT },
		{ LIST, "limit=62", NULL, 200, NULL, sixty_pods, 0, true, 5, SECOND_WAIT },
		{ LIST, "limit=7&", NULL, 200, NULL, sixty_pods, 0, true, 5, THIRD_WAIT },
		{ LIST, "limit=1&", NULL, 200, NULL, sixty_pods, 0, true, 5, 2000, 4000 },
		{ LIST, "limit=1&", NULL, 200, NULL, sixty_pods, 0, true, 5, 4000, 8000 },
	  }, { .errors = 2 },
	  { "listing pods: a page of one pod is larger than 300 bytes (https://api.test:6443): "
	    "in-flight pods count where they were assumed until the watch is back" } },
	{ "BOOKMARK moves the version and counts as progress", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, BOOKMARK("20"), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=20&", NULL, 200, BOOKMARK("21") BOOKMARK("22"), NULL, 0,
		  false, 5, NOW },
		QUIET_WATCH("22"),
	  }, { .lists = 1, .watches = 3, .synced = true }, { NULL } },
	{ "ERROR 410 mid-stream: the rest is not applied, list again at once", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", POD("a")), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200,
		  EVENT("ADDED", POD("b")) GONE EVENT("ADDED", POD("never")), NULL, 0, true, 1000, NOW },
		{ LIST, "limit=500", "continue", 200, PAGE("30", "", POD("a") "," POD("b")), NULL, 0,
		  false, 5, NOW },
		QUIET_WATCH("30"),
	  }, { .lists = 2, .watches = 2, .events = 1, .expired = 1, .synced = true, .pods = 2,
	       .observed = 2 },
	  { "resourceVersion 7 expired (410 Gone): listing pods again" } },
	{ "410 as the watch's status: list again at once", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 410, STATUS(410, "Expired", "too old"), NULL, 0,
		  false, 5, NOW },
		{ LIST, "limit=500", NULL, 200, PAGE("11", "", ""), NULL, 0, false, 5, NOW },
		QUIET_WATCH("11"),
	  }, { .lists = 2, .watches = 2, .expired = 1, .synced = true }, { NULL } },
	{ "DELETED drops the pod", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", POD("a") "," POD("b")), NULL, 0, false,
		  5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, EVENT("DELETED", POD("a")), NULL, 0, false,
		  5, NOW },
	  }, { .lists = 1, .watches = 1, .events = 1, .synced = true, .pods = 1, .observed = 2,
	       .dropped = 1 }, { NULL } },
	{ "MODIFIED to Succeeded and to Failed drops the pods", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", POD("a") "," POD("b") "," POD("c")),
		  NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200,
		  EVENT("MODIFIED", POD_AT("a", "n1", DONE("Succeeded")))
		  EVENT("MODIFIED", POD_AT("b", "n1", DONE("Failed")))
		  EVENT("MODIFIED", POD_AT("c", "n1", DONE("Running"))), NULL, 0, false, 5, NOW },
	  }, { .lists = 1, .watches = 1, .events = 3, .synced = true, .pods = 1, .observed = 3,
	       .dropped = 2 }, { NULL } },
	{ "a malformed line is skipped and counted, the next applied", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200,
		  "{\"type\":\"ADDED\",\"object\":{\"metadata\":\n"
		  "{\"type\":\"RENAMED\",\"object\":{}}\n"
		  "\r\n"
		  EVENT("ADDED", POD("b")), NULL, 0, false, 1000, NOW },
	  }, { .lists = 1, .watches = 1, .events = 1, .errors = 2, .synced = true, .pods = 1,
	       .observed = 1 },
	  { "a watch event of 37 bytes is unreadable, skipped" } },
	{ "a line over the event bound is skipped whole", 0, 512, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200,
		  EVENT("ADDED", POD_AT("big", "n1", ",\"x\":\""
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789012345678901234567890123456789\""))
		  EVENT("ADDED", POD("small")), NULL, 0, false, 1000, NOW },
	  }, { .lists = 1, .watches = 1, .events = 1, .skipped = 1, .synced = true, .pods = 1,
	       .observed = 1 },
	  { "a watch event is larger than 512 bytes: skipped" } },
	{ "an ERROR event other than 410 is counted, the watch goes on", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200,
		  EVENT("ERROR", STATUS(500, "InternalError", "etcd hiccup")) EVENT("ADDED", POD("b")),
		  NULL, 0, false, 1000, NOW },
	  }, { .lists = 1, .watches = 1, .events = 1, .errors = 1, .synced = true, .pods = 1,
	       .observed = 1 },
	  { "the watch sent an error: 500 InternalError: etcd hiccup" } },
	{ "a refused token: errors back off, the answer resets nothing until progress", 0, 0, {
		{ LIST, "limit=500", NULL, 401, STATUS(401, "Unauthorized", "Unauthorized"), NULL, 0,
		  false, 5, FIRST_WAIT },
		{ LIST, "limit=500", NULL, 401, STATUS(401, "Unauthorized", "Unauthorized"), NULL, 0,
		  false, 5, SECOND_WAIT },
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, "", NULL, -EIO, false, 5, THIRD_WAIT },
		{ WATCH, "resourceVersion=10&", NULL, 200, EVENT("ADDED", POD("b")), NULL, -EIO, false,
		  5, FIRST_WAIT },
	  }, { .lists = 1, .watches = 2, .events = 1, .errors = 4, .pods = 1, .observed = 1 },
	  { "listing pods: HTTP 401: Unauthorized (https://api.test:6443): in-flight pods count "
	    "where they were assumed until the watch is back; retrying in" } },
	{ "no answer at all: the transport's words", 0, 0, {
		{ LIST, "limit=500", NULL, 0, NULL, NULL, -EIO, false, 5, FIRST_WAIT },
		{ LIST, "limit=500", NULL, 0, NULL, NULL, -ETIMEDOUT, false, 5000, SECOND_WAIT },
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 1000, NOW },
		QUIET_WATCH("10"),
	  }, { .lists = 1, .watches = 1, .errors = 2, .synced = true },
	  { "listing pods: the transport failed (https://api.test:6443)",
	    "the apiserver answers again: listing pods" } },
	{ "410 to every watch: a list and a watch per backoff, not at once", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, GONE, NULL, 0, true, 1000, NOW },
		{ LIST, "limit=500", NULL, 200, PAGE("11", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=11&", NULL, 410, STATUS(410, "Expired", "x"), NULL, 0, false,
		  1000, FIRST_WAIT },
		{ LIST, "limit=500", NULL, 200, PAGE("12", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=12&", NULL, 200, GONE, NULL, 0, true, 1000, SECOND_WAIT },
		{ LIST, "limit=500", NULL, 200, PAGE("13", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=13&", NULL, 200, GONE, NULL, 0, true, 1000, THIRD_WAIT },
		{ LIST, "limit=500", NULL, 200, PAGE("14", "", ""), NULL, 0, false, 5, NOW },
		/* Progress, then a 410: at once again, and the wait starts over. */
		{ WATCH, "resourceVersion=14&", NULL, 200, BOOKMARK("15") GONE, NULL, 0, true, 1000, NOW },
		{ LIST, "limit=500", NULL, 200, PAGE("16", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=16&", NULL, 200, GONE, NULL, 0, true, 1000, FIRST_WAIT },
	  }, { .lists = 6, .watches = 6, .expired = 6 },
	  { "resourceVersion 10 expired (410 Gone): listing pods again",
	    "resourceVersion 11 expired (410 Gone), 2 times without an event in between: listing "
	    "pods again in" } },
	{ "a watch that ends at once without an event waits", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, "", NULL, 0, false, 1000, FIRST_WAIT },
		{ WATCH, "resourceVersion=10&", NULL, 200, "", NULL, 0, false, 5, SECOND_WAIT },
		/* Open as long as the longest wait: progress enough. */
		{ WATCH, "resourceVersion=10&", NULL, 200, "", NULL, 0, false, MAX_MS, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 200, "", NULL, 0, false, 5, FIRST_WAIT },
	  }, { .lists = 1, .watches = 4 },
	  { "the watch ended after 1000 ms without an event: watching again in" } },
	{ "a watch refused with a Status", 0, 0, {
		{ LIST, "limit=500", NULL, 200, PAGE("10", "", ""), NULL, 0, false, 5, NOW },
		{ WATCH, "resourceVersion=10&", NULL, 403,
		  STATUS(403, "Forbidden", "pods is forbidden: User \\\"x\\\" cannot watch"), NULL, 0,
		  false, 1000, FIRST_WAIT },
		{ WATCH, "resourceVersion=10&", NULL, 500, "<html>oops</html>", NULL, 0, false, 5,
		  SECOND_WAIT },
	  }, { .lists = 1, .watches = 2, .errors = 2 },
	  /* As received: escapes are not decoded, and nothing can split the line. */
	  { "watching pods: HTTP 403: pods is forbidden: User \\\"x\\\" cannot watch" } },
	{ "a list reply that is not a pod list", 0, 0, {
		{ LIST, "limit=500", NULL, 200, "{\"items\":[]}", NULL, 0, false, 5, FIRST_WAIT },
		{ LIST, "limit=500", NULL, 200, "<html>", NULL, 0, false, 5, SECOND_WAIT },
		{ LIST, "limit=500", NULL, 200,
		  PAGE("10", "", POD("a") ",{\"metadata\":{\"uid\":7}}," POD_AT("c", "Bad_Node", "")),
		  NULL, 0, false, 5, NOW },
	  }, { .lists = 1, .errors = 4, .pods = 1, .observed = 1 },
	  { "listing pods: the reply is not a pod list" } },
	{ "an error body over its bound is cut, its status kept", 0, 0, {
		{ LIST, "limit=500", NULL, 503, NULL, huge_error, 0, false, 5, FIRST_WAIT },
	  }, { .errors = 1 },
	  { "listing pods: HTTP 503 (https://api.test:6443)" } },
};

/* ------------------------------------------------------------ driver */

static struct inflight *in;
static struct podinformer *pi;

static void start(size_t max_page, size_t max_event)
{
	struct inflight_config ic = { .max_pods = 1000, .max_nodes = 100,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC, .unstarted_ns = 25 * NS_PER_SEC };
	struct podinformer_config c;

	podinformer_defaults(&c);
	if (max_page)
		c.max_page_bytes = max_page;
	if (max_event)
		c.max_event_bytes = max_event;
	now_ns = T0;
	in = inflight_create(&ic);
	assert_non_null(in);
	pi = podinformer_create(&c, "https://api.test:6443", in, fake_mono, fake_unix, 1);
	assert_non_null(pi);
}

static void stop(void)
{
	podinformer_destroy(pi);
	inflight_destroy(in);
	pi = NULL;
	in = NULL;
}

static size_t lines(const char *text)
{
	size_t n = 0;

	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return n;
}

/* Feeds body in pieces of chunk bytes (0: whole); whether it was taken to
 * its end. */
static bool feed(const char *body, size_t len, size_t chunk)
{
	for (size_t at = 0; at < len;) {
		size_t n = chunk && chunk < len - at ? chunk : len - at;

		if (!podinformer_body(pi, body + at, n))
			return false;
		at += n;
	}
	return true;
}

/* One request of a row; the clock moves by the transfer and the wait. */
static void exchange(const char *row, size_t i, const struct step *s, size_t chunk)
{
	struct podinformer_request req;
	const char *body;
	uint64_t wait;
	bool whole;

	assert_int_equal(podinformer_next(pi, &req), 0);
	if (req.verb != s->verb)
		fail_msg("%s, step %zu: a %s, want a %s (%s)", row, i,
			 req.verb == LIST ? "list" : "watch", s->verb == LIST ? "list" : "watch",
			 req.path);
	if ((s->want && !strstr(req.path, s->want)) || (s->not && strstr(req.path, s->not)))
		fail_msg("%s, step %zu: path %s, want '%s' in it and not '%s'", row, i, req.path,
			 s->want ? s->want : "", s->not ? s->not : "");
	assert_true(req.timeout_ms >= 60000);
	now_ns += s->lasts_ms * NS_PER_MS; /* the answer comes at the end */
	if (s->code) {
		podinformer_status(pi, s->code);
		body = s->gen ? s->gen(req.path) : s->body;
		whole = feed(body, strlen(body), chunk);
		if (whole == s->stops)
			fail_msg("%s, step %zu: the body was %s, want it %s", row, i,
				 whole ? "taken whole" : "cut short", s->stops ? "cut short" : "whole");
	}
	wait = podinformer_end(pi, s->rc, s->rc ? "the transport failed" : NULL);
	if (wait < s->lo || wait > s->hi)
		fail_msg("%s, step %zu: waits %llu ms, want %llu to %llu", row, i,
			 (unsigned long long)wait, (unsigned long long)s->lo,
			 (unsigned long long)s->hi);
	now_ns += wait * NS_PER_MS;
}

static void check(const char *row, const struct outcome *w, const char *text,
		  const char *const *want_log)
{
	struct podinformer_stats st;
	struct inflight_stats is;

	podinformer_stats(pi, &st);
	inflight_stats(in, &is);
#define SAME(field, got, want) \
	if ((got) != (want)) \
		fail_msg("%s: %s %llu, want %llu\n%s", row, field, (unsigned long long)(got), \
			 (unsigned long long)(want), text)
	SAME("lists", st.lists, w->lists);
	SAME("watches", st.watches, w->watches);
	SAME("events", st.events, w->events);
	SAME("expired", st.expired, w->expired);
	SAME("errors", st.errors, w->errors);
	SAME("skipped", st.skipped, w->skipped);
	SAME("synced", st.synced, w->synced);
	SAME("confirming", is.confirming, w->synced);
	SAME("pods in flight", is.pods, w->pods);
	SAME("observed", is.observed, w->observed);
	SAME("dropped", is.dropped, w->dropped);
#undef SAME
	for (size_t k = 0; k < 3 && want_log[k]; k++)
		if (!strstr(text, want_log[k]))
			fail_msg("%s: the log lacks '%s':\n%s", row, want_log[k], text);
}

static void test_podinformer_rows(void **state)
{
	(void)state;
	log_set_level(LOG_LVL_INFO);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *row = &rows[r];
		uint64_t t_start;
		char *text;
		size_t i;

		start(row->max_page_bytes, row->max_event_bytes);
		stderr_captured();
		t_start = now_ns;
		for (i = 0; i < sizeof(row->steps) / sizeof(row->steps[0]) && row->steps[i].want; i++)
			exchange(row->name, i, &row->steps[i], 0);
		text = stderr_captured();
		check(row->name, &row->want, text, row->log);
		/* At most one line a second, and one to begin with. */
		if (lines(text) > 1 + (now_ns - t_start) / NS_PER_SEC)
			fail_msg("%s: %zu lines in %llu ms:\n%s", row->name, lines(text),
				 (unsigned long long)((now_ns - t_start) / NS_PER_MS), text);
		stop();
	}
}

/* ----------------------------------------------- a stream cut anywhere */

static const char stream[] =
	EVENT("ADDED", POD("a"))
	"{\"type\":\"MODIFIED\",\"object\":" POD_AT("a", "n2", "") "}\r\n"
	EVENT("ADDED", POD_AT("b", "n1", ",\"metadata2\":{\"x\":\"\\n\"}"))
	"\n"
	EVENT("DELETED", POD("b"))
	BOOKMARK("30");

/* After the stream: a on n2, b gone, resuming from the bookmark. */
static void check_stream(const char *how)
{
	struct podinformer_stats st;
	struct podinformer_request req;
	struct inflight_stats is;
	struct inflight_load load;

	podinformer_stats(pi, &st);
	if (st.events != 4 || st.errors != 0)
		fail_msg("%s: %llu events, %llu errors, want 4 and 0", how,
			 (unsigned long long)st.events, (unsigned long long)st.errors);
	/* One pod left, on n2; n1 (where a was, and b) holds none. */
	inflight_stats(in, &is);
	assert_int_equal(is.pods, 1);
	assert_true(inflight_get(in, "n2", 2, NULL, 0, &load));
	assert_false(inflight_get(in, "n1", 2, NULL, 0, &load));
	assert_int_equal(podinformer_end(pi, 0, NULL), 0);
	assert_int_equal(podinformer_next(pi, &req), 0);
	if (!strstr(req.path, "resourceVersion=30&"))
		fail_msg("%s: resumes with %s", how, req.path);
}

static void watch_from_10(void)
{
	static const char page[] = PAGE("10", "", "");
	struct podinformer_request req;

	assert_int_equal(podinformer_next(pi, &req), 0);
	podinformer_status(pi, 200);
	assert_true(podinformer_body(pi, page, strlen(page)));
	assert_int_equal(podinformer_end(pi, 0, NULL), 0);
	assert_int_equal(podinformer_next(pi, &req), 0);
	assert_int_equal(req.verb, WATCH);
	podinformer_status(pi, 200);
}

static void test_podinformer_split_reads(void **state)
{
	size_t len = strlen(stream);
	char how[64];

	(void)state;
	/* Two reads, cut at every byte. */
	for (size_t cut = 0; cut <= len; cut++) {
		start(0, 0);
		watch_from_10();
		assert_true(podinformer_body(pi, stream, cut));
		assert_true(podinformer_body(pi, stream + cut, len - cut));
		snprintf(how, sizeof(how), "cut at byte %zu", cut);
		check_stream(how);
		stop();
	}
	/* Every byte its own read, then reads of 2 to 7 bytes. */
	for (size_t chunk = 1; chunk <= 7; chunk++) {
		start(0, 0);
		watch_from_10();
		assert_true(feed(stream, len, chunk));
		snprintf(how, sizeof(how), "reads of %zu bytes", chunk);
		check_stream(how);
		stop();
	}
	stderr_captured();
}

/* ------------------------------------------------- a list that never ends */

static void test_podinformer_endless_list(void **state)
{
	static const char page[] = PAGE("10", "more", POD("a"));
	struct podinformer_config c;
	struct podinformer_request req;
	struct podinformer_stats st;
	uint64_t wait = 0;

	(void)state;
	podinformer_defaults(&c);
	c.page_pods = PODINFORMER_MAX_LIST_PODS / 2; /* two pages fill a cluster */
	in = inflight_create(&(struct inflight_config){ .max_pods = 10, .max_nodes = 10,
							.hold_ns = NS_PER_SEC, .fade_ns = NS_PER_SEC,
							.expire_ns = NS_PER_SEC });
	pi = podinformer_create(&c, "https://api.test:6443", in, fake_mono, fake_unix, 1);
	assert_non_null(pi);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(podinformer_next(pi, &req), 0);
		assert_int_equal(req.verb, LIST);
		assert_true(!strstr(req.path, "continue=") == (i == 0));
		podinformer_status(pi, 200);
		assert_true(podinformer_body(pi, page, strlen(page)));
		wait = podinformer_end(pi, 0, NULL);
		assert_true(i < 2 ? wait == 0 : wait >= MIN_MS / 2);
	}
	podinformer_stats(pi, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.lists, 0);
	assert_non_null(strstr(stderr_captured(), "listing pods: still a continue token after 3 "
					"pages of up to 150000 pods, more than a cluster holds (300000)"));
	/* It starts over, from the first page. */
	assert_int_equal(podinformer_next(pi, &req), 0);
	assert_null(strstr(req.path, "continue="));
	stop();
}

/* ------------------------------------------------ what a pod declares */

static void test_podinformer_pods(void **state)
{
	static const char page[] = PAGE("10", "", POD_AT("bw", "n1",
		",\"metadata2\":0") "," "{\"metadata\":{\"uid\":\"bw2\",\"annotations\":{"
		"\"kubernetes.io/ingress-bandwidth\":\"80M\",\"kubernetes.io/egress-bandwidth\":"
		"\"bogus\"}},\"spec\":{\"nodeName\":\"n3\"},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"uid\":\"old\","
		"\"creationTimestamp\":\"2026-09-21T00:00:00Z\"},\"spec\":{\"nodeName\":\"n4\"}},"
		"{\"metadata\":{\"uid\":\"unbound\"},\"spec\":{}}," "{\"metadata\":{\"uid\":\"\"},"
		"\"spec\":{\"nodeName\":\"n5\"}}," "{\"metadata\":{\"uid\":\"stuck\",\"annotations\":"
		"{\"kubernetes.io/ingress-bandwidth\":\"10G\"}},\"spec\":{\"nodeName\":\"n6\"},"
		"\"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"c\",\"started\":"
		"false,\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]}}");
	struct podinformer_request req;
	struct inflight_load load;
	struct inflight_stats is;

	(void)state;
	start(0, 0);
	assert_int_equal(podinformer_next(pi, &req), 0);
	podinformer_status(pi, 200);
	assert_true(podinformer_body(pi, page, strlen(page)));
	assert_int_equal(podinformer_end(pi, 0, NULL), 0);
	inflight_tick(in, now_ns, true);
	/* 80 Mb/s declared: reserved; a malformed annotation declares nothing. */
	assert_true(inflight_get(in, "n3", 2, NULL, 0, &load));
	assert_int_equal(load.reserved_rx_bytes_per_second, 10000000);
	assert_int_equal(load.reserved_tx_bytes_per_second, 0);
	/* Bound hours before now (the wall clock is 21 Sep 2026, 14:13): long faded. */
	assert_false(inflight_get(in, "n4", 2, NULL, 0, &load));
	/* Bound, never assumed, never started (its image will not pull):
	 * tracked, weighing what it declares while it may still start, and
	 * nothing once --inflight-unstarted passed since its binding. */
	assert_true(inflight_get(in, "n6", 2, NULL, 0, &load));
	assert_true(load.reserved_rx_bytes_per_second > 0);
	inflight_stats(in, &is);
	assert_int_equal(is.pods, 3); /* not the unbound one, nor the one without a UID */
	assert_int_equal(is.unstarted, 0);
	inflight_tick(in, now_ns + 26 * NS_PER_SEC, true);
	inflight_get(in, "n6", 2, NULL, 0, &load);
	assert_int_equal(load.reserved_rx_bytes_per_second, 0);
	assert_int_equal(load.rx_bytes_per_second, 0);
	inflight_stats(in, &is);
	assert_int_equal(is.unstarted, 2); /* bw (no status at all) too */
	stop();
	stderr_captured();
}

/* ------------------------------------------- the pod index and weights */

/* One request answered 200 with body; the wait podinformer_end says. */
static uint64_t answer(const char *body, enum podinformer_verb verb)
{
	struct podinformer_request req;

	assert_int_equal(podinformer_next(pi, &req), 0);
	assert_int_equal(req.verb, verb);
	podinformer_status(pi, 200);
	podinformer_body(pi, body, strlen(body));
	return podinformer_end(pi, 0, NULL);
}

#define WEB(uid, ip) \
	"{\"metadata\":{\"uid\":\"" uid "\",\"namespace\":\"shop\",\"name\":\"" uid "\"," \
	"\"resourceVersion\":\"7\",\"labels\":{\"pod-template-hash\":\"abc12\"}," \
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web-abc12\",\"uid\":\"rs\"," \
	"\"controller\":true}]},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":" \
	"\"Running\",\"podIP\":\"" ip "\"}}"
#define LONE "{\"metadata\":{\"uid\":\"lone\",\"namespace\":\"shop\",\"name\":\"lone\"}," \
	"\"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Running\",\"podIP\":" \
	"\"10.0.2.1\"}}"

/* Bound pods go to the index too, and weigh in flight what podweight.h
 * says: a replica of a learned Deployment its demand, a pod of no known
 * workload the fallback, in doubt. A deletion leaves the index; a relist
 * after a 410 sweeps the pods it no longer names. */
static void test_podinformer_index(void **state)
{
	struct workload_config wc = { .max_workloads = 8, .half_life_ns = 600 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = 16, .max_nodes = 8, .stale_ns = 6 * NS_PER_SEC };
	struct workload_key web = { "shop", "Deployment", "web" };
	struct podweight w = { .cfg = { .doubt_pct = 10 } };
	struct podindex_stats st;
	struct inflight_load load;
	int32_t id;

	(void)state;
	w.workloads = workload_create(&wc);
	assert_non_null(w.workloads);
	w.pods = podindex_create(&xc, w.workloads);
	assert_non_null(w.pods);
	/* "web" has learned 4000 B/s in from an earlier pod. */
	id = workload_ref(w.workloads, &web, T0);
	workload_sample(w.workloads, id, 99, 4000, 400, T0);
	workload_tick(w.workloads, T0);
	start(0, 0);
	podinformer_set_index(pi, w.pods, &w);
	workload_unref(w.workloads, id, T0);
	assert_int_equal(answer(PAGE("10", "", WEB("w1", "10.0.1.1") "," WEB("w2", "10.0.1.2") ","
				     LONE), LIST), 0);
	podindex_stats(w.pods, &st);
	assert_int_equal(st.pods, 3);
	assert_int_equal(st.running, 3);
	assert_true(inflight_get(in, "n1", 2, NULL, 0, &load));
	assert_int_equal(load.rx_bytes_per_second, 8000);
	assert_int_equal(load.tx_bytes_per_second, 800);
	assert_int_equal(load.unknown_rx_milli, 0);
	assert_true(inflight_get(in, "n2", 2, NULL, 0, &load));
	assert_int_equal(load.rx_bytes_per_second, 0);
	assert_int_equal(load.unknown_rx_milli, 1000);
	/* The watch: w2 deleted; then a 410, and the list names only lone. */
	answer(EVENT("DELETED", WEB("w2", "10.0.1.2")) GONE, WATCH);
	podindex_stats(w.pods, &st);
	assert_int_equal(st.pods, 2);
	assert_int_equal(answer(PAGE("20", "", LONE), LIST), 0);
	podindex_stats(w.pods, &st);
	assert_int_equal(st.pods, 1);
	assert_int_equal(st.nodes, 1);
	stop();
	podindex_destroy(w.pods);
	workload_destroy(w.workloads);
	stderr_captured();
}

static int setup(void **state)
{
	log_init("test");
	return stderr_capture_start(state);
}

/* After each test: what it left in the log (a failure's message too, since
 * cmocka writes those to stderr) goes to stdout, where it is seen. */
static int after(void **state)
{
	(void)state;
	fputs(stderr_captured(), stdout);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_podinformer_rows, after),
		cmocka_unit_test_teardown(test_podinformer_split_reads, after),
		cmocka_unit_test_teardown(test_podinformer_pods, after),
		cmocka_unit_test_teardown(test_podinformer_index, after),
		cmocka_unit_test_teardown(test_podinformer_endless_list, after),
	};

	return cmocka_run_group_tests(tests, setup, stderr_capture_stop);
}
