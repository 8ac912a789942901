/* The pod watch: what the apiserver says about bound pods, fed to the
 * in-flight table (inflight.h) so it confirms, moves or drops what
 * prioritize assumed, and counts pods that other schedulers placed.
 *
 * A thread (common/worker) that joins two parts: the informer, which
 * decides every request, applies what comes back and backs off
 * (podinformer.h: the protocol, with no I/O), and the apiserver client that
 * carries the requests (kubeclient.h: libcurl, TLS, the token).
 *
 * Nothing here is on the extender's path: requests touch only the in-flight
 * table, under its own lock, which this thread takes briefly per event. A
 * slow, failing or absent apiserver therefore never delays an answer. */
#ifndef NETSCHED_PODWATCH_H
#define NETSCHED_PODWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kubeaccess.h"
#include "kube/podinformer.h"

struct inflight;

struct podwatch_config {
	struct podinformer_config informer;
	uint64_t connect_timeout_ms;	/* (5000) */
	/* Where bound pods also go, and what in-flight pods weigh
	 * (podinformer_set_index()); NULL: declared bandwidth only. */
	struct podindex *index;
	const struct podweight *weights;
	struct moves *moves;		/* podinformer_set_moves(); NULL: none */
};

void podwatch_defaults(struct podwatch_config *cfg);

struct podwatch;

/* Starts the watch thread. access is taken over (its PEM buffers are ours:
 * *access is left empty); in and now_ns (a monotonic clock in ns) must
 * outlive the watch. NULL with err on failure. */
struct podwatch *podwatch_start(const struct podwatch_config *cfg, struct kubeaccess *access,
				struct inflight *in, uint64_t (*now_ns)(void), char *err,
				size_t errlen);

/* Stops the thread within about a second, even mid-request, and frees the
 * watch. Accepts NULL. */
void podwatch_stop(struct podwatch *w);

/* The informer's counters (podinformer.h). Accepts NULL (all zero). */
void podwatch_stats(struct podwatch *w, struct podinformer_stats *out);

#endif
