/* The pod watch's decisions, with no I/O: the Kubernetes informer protocol
 * over bytes, so that every turn of it is unit-tested and fuzzed the way
 * promquery.c is beside prom.c. scorer/kube/podwatch.c runs it on a thread with
 * an HTTP client (common/kubeclient.h).
 *
 * It says which request comes next and takes what the server answers:
 *  1. list the pods bound to a node and not finished, a page at a time
 *     (limit + continue); each pod goes to the in-flight table (inflight.h);
 *  2. watch from the list's resourceVersion, with bookmarks so the version
 *     stays current on a quiet cluster; the stream's bytes arrive in any
 *     pieces and are cut into events at newlines; ADDED and MODIFIED pods
 *     are bound (or dropped once finished), DELETED ones dropped;
 *  3. the server ends each watch after watch_timeout_s and the next resumes
 *     where it stopped;
 *  4. a 410 Gone (the version fell out of the apiserver's window, as a
 *     status or as an ERROR event mid-stream) means events were missed:
 *     list again; a continue token that expired restarts the list; a page
 *     over max_page_bytes is asked for again with an eighth of the pods.
 *
 * Backoff: a round that makes no progress (an error, a 410 or a restarted
 * list, a watch that ends without an event) waits before the next request,
 * from backoff_min_ms doubling to backoff_max_ms, with jitter (half to all
 * of it) so scorer replicas do not hit a recovering apiserver in lockstep.
 * Only a watch that makes progress (an event or a bookmark, or open at
 * least backoff_max_ms) resets the wait. One 410 after progress lists
 * again at once, as every informer does; a second in a row waits: an
 * apiserver answering every watch with 410 costs a list and a watch per
 * backoff, not ten a second. While it waits the watch is out of sync.
 *
 * Logs: at most one line a second for the whole watch (common/log.h's
 * log_limited: the next line says how many were held back); what happened
 * in between is in the counters (podinformer_stats()).
 *
 * Assumptions may expire only while the watch is in sync; the informer
 * tells the in-flight table (inflight_set_confirming()): from the first
 * successful watch response until a failure or a backoff.
 *
 * Bounded: one list page is at most max_page_bytes, one list at most
 * PODINFORMER_MAX_LIST_PODS / page_pods + 1 pages, one watch event at most
 * max_event_bytes (a larger one is skipped and counted), an error body at
 * most PODINFORMER_ERROR_BODY_MAX, and every field read is bounded by
 * kubepod.h. Single-threaded but for podinformer_stats(), which any thread
 * may call. */
#ifndef NETSCHED_PODINFORMER_H
#define NETSCHED_PODINFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/kubepod.h"

#define PODINFORMER_ERROR_BODY_MAX (64u * 1024u)
/* Twice the most pods Kubernetes supports in one cluster (150,000): a
 * list that goes on for more pages than this many pods fill is an
 * apiserver (or a proxy) sending continue tokens forever; it fails. */
#define PODINFORMER_MAX_LIST_PODS 300000u
/* A path: the fixed query, a continue token escaped 3x, a resourceVersion. */
#define PODINFORMER_PATH_MAX (KUBEPOD_CONTINUE_MAX * 3u + 512u)
#define PODINFORMER_SERVER_MAX 512u

struct podinformer_config {
	uint32_t page_pods;		/* pods per list page (500) */
	size_t max_page_bytes;		/* (8 MiB) */
	size_t max_event_bytes;		/* (2 MiB) */
	uint32_t watch_timeout_s;	/* server-side end of one watch (300) */
	uint64_t backoff_min_ms;	/* (500) */
	uint64_t backoff_max_ms;	/* (30000) */
};

void podinformer_defaults(struct podinformer_config *cfg);

struct podinformer_stats {
	bool synced;		/* listed, and the watch is connected */
	uint64_t lists;		/* complete lists */
	uint64_t watches;	/* watch requests made */
	uint64_t events;	/* events applied */
	uint64_t expired;	/* 410 Gone: listed again */
	uint64_t errors;	/* failed requests and unreadable events */
	uint64_t skipped;	/* events over max_event_bytes */
};

enum podinformer_verb {
	PODINFORMER_LIST,
	PODINFORMER_WATCH,
};

/* The next request: GET path on the apiserver, done within timeout_ms. */
struct podinformer_request {
	enum podinformer_verb verb;
	char path[PODINFORMER_PATH_MAX];	/* "/api/v1/pods?...", escaped */
	uint64_t timeout_ms;
};

struct inflight;
struct podindex;
struct podweight;
struct podinformer;

/* server names the apiserver in log lines (copied). in, now_ns (monotonic)
 * and unix_ms (wall clock: pods' binding times are wall times) must
 * outlive it; seed drives the jitter. The in-flight table is told that
 * nothing confirms until the first list is in. NULL when out of memory. */
struct podinformer *podinformer_create(const struct podinformer_config *cfg, const char *server,
				       struct inflight *in, uint64_t (*now_ns)(void),
				       uint64_t (*unix_ms)(void), unsigned int seed);
/* Bound pods also go to index (podindex.h), and what they weigh in flight
 * is what weights says (podweight.h); both must outlive the informer.
 * Without (NULL): only declared bandwidth weighs. A pod is read from the
 * index on a list that misses it (deleted while the watch was away). */
void podinformer_set_index(struct podinformer *pi, struct podindex *index,
			   const struct podweight *weights);

/* Bound pods also end the rebalancer's reservations they land on
 * (moves_bound(), moves.h); NULL: none. Must outlive the informer. */
struct moves;
void podinformer_set_moves(struct podinformer *pi, struct moves *moves);

/* Accepts NULL. */
void podinformer_destroy(struct podinformer *pi);

/* The request to make now. Call once per request, then podinformer_status
 * (when the server answers), podinformer_body (for every piece of the
 * body), and podinformer_end. 0, or -ENOMEM. */
int podinformer_next(struct podinformer *pi, struct podinformer_request *req);

/* The response's HTTP status, once its headers are in. */
void podinformer_status(struct podinformer *pi, long code);

/* Bytes of the body as they arrive, split anywhere. false: end the
 * transfer now (a body over its bound; a 410 in the watch stream). */
bool podinformer_body(struct podinformer *pi, const char *p, size_t n);

/* The transfer is over: rc 0 when the body was read to its end or
 * podinformer_body() ended it, else -errno with why saying what the
 * transport hit (a timeout, a refused connection, TLS). Returns the
 * milliseconds to wait before the next podinformer_next(). */
uint64_t podinformer_end(struct podinformer *pi, int rc, const char *why);

/* A copy of the counters. Accepts NULL (all zero). Thread-safe. */
void podinformer_stats(struct podinformer *pi, struct podinformer_stats *out);

#endif
