/* The pod watch: what the apiserver says about bound pods, fed to the
 * in-flight table (inflight.h) so it confirms, moves or drops what
 * prioritize assumed, and counts pods that other schedulers placed.
 *
 * The usual Kubernetes informer protocol, on its own thread (common/worker):
 *  1. list the pods bound to a node and not finished, a page at a time;
 *  2. watch from the list's resourceVersion (with bookmarks, so the
 *     version stays current on a quiet cluster); the server ends each
 *     watch after watch_timeout_s and the next resumes where it stopped;
 *  3. a 410 (the version fell out of the apiserver's window) means events
 *     were missed: list again;
 *  4. a failed request is retried after a backoff that doubles from
 *     backoff_min_ms to backoff_max_ms, with jitter, so scorer replicas
 *     do not hit a recovering apiserver in lockstep.
 * Assumptions may expire only while the watch is in sync; during an outage
 * they count where assumed until they fade (inflight_set_confirming()).
 *
 * Nothing here is on the extender's path: requests touch only the in-flight
 * table, under its own lock, which this thread takes briefly per event. A
 * slow, failing or absent apiserver therefore never delays an answer.
 *
 * Bounded: one list page is at most max_page_bytes (a page over it is asked
 * for again with fewer pods), one watch event at most max_event_bytes (a
 * larger one is skipped and counted), and every field read is bounded by
 * kubepod.h. */
#ifndef NETSCHED_PODWATCH_H
#define NETSCHED_PODWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kubeaccess.h"

struct inflight;

struct podwatch_config {
	uint32_t page_pods;		/* pods per list page (500) */
	size_t max_page_bytes;		/* (8 MiB) */
	size_t max_event_bytes;		/* (2 MiB) */
	uint32_t watch_timeout_s;	/* server-side end of one watch (300) */
	uint64_t backoff_min_ms;	/* (500) */
	uint64_t backoff_max_ms;	/* (30000) */
	uint64_t connect_timeout_ms;	/* (5000) */
};

void podwatch_defaults(struct podwatch_config *cfg);

struct podwatch_stats {
	bool synced;		/* listed, and the watch is connected */
	uint64_t lists;		/* complete lists */
	uint64_t watches;	/* watch connections opened */
	uint64_t events;	/* events applied */
	uint64_t expired;	/* 410 Gone: listed again */
	uint64_t errors;	/* failed requests and unreadable events */
	uint64_t skipped;	/* events over max_event_bytes */
};

struct podwatch;

/* Starts the watch thread. access is copied (and its PEM buffers taken
 * over: *access is left empty); in and now_ns (a monotonic clock in ns)
 * must outlive the watch. NULL with err on failure. */
struct podwatch *podwatch_start(const struct podwatch_config *cfg, struct kubeaccess *access,
				struct inflight *in, uint64_t (*now_ns)(void), char *err,
				size_t errlen);

/* Stops the thread within about a second, even mid-request, and frees the
 * watch. Accepts NULL. */
void podwatch_stop(struct podwatch *w);

/* Accepts NULL (all zero). */
void podwatch_stats(struct podwatch *w, struct podwatch_stats *out);

#endif
