/* One cycle of the rebalancer, and one look at its Lease, over the clients
 * main.c made: read the scorers' /v1/pressure, count the reports each node
 * was over the threshold (decide.h), read the apiserver's facts about the
 * pods of the nodes hot long enough, plan, and act: log every outcome with
 * its numbers; for a move, POST /v1/moves to every scorer replica, then
 * evict; a PodDisruptionBudget's 429 (or any failed eviction) releases the
 * scorer's hold and backs the pod off, and the node's next pod is tried in
 * the same cycle; Events on the pod and the node say what was done, would
 * be, or why not (a refusal once per node while it stays the same, again
 * after 10 minutes).
 *
 * A rebal_loop borrows the options, the clients and the metrics (they must
 * outlive it) and owns its memory, tables and buffers (rebal_loop_free()).
 * Not thread-safe; the metrics are atomics, read by the HTTP thread. */
#ifndef NETSCHED_REBALANCER_LOOP_H
#define NETSCHED_REBALANCER_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/kubeclient.h"
#include "decide.h"
#include "kubeops.h"
#include "lease.h"
#include "metrics.h"
#include "nudgerun.h"
#include "options.h"
#include "scorerclient.h"

struct rebal_said;

struct rebal_loop {
	const struct rebal_options *o;
	struct kubeops ko;
	struct scorerclient *sc;
	struct rebal_metrics *metrics;
	struct decide_memory mem;
	struct lease_state lease;
	struct nudge_run nudge;		/* the label the scheduler reacts to */
	struct rebal_said *said;	/* the last Event said per node (by hash) */
	struct buf body;		/* replies, reused */
	/* Clocks: the real ones; tests set others. */
	uint64_t (*unix_ns)(void);
	uint64_t (*mono_ms)(void);
};

/* Asks the apiserver whether it serves policy/v1 (evictions fall back to
 * policy/v1beta1). 0, or -ENOMEM with err. */
int rebal_loop_init(struct rebal_loop *r, const struct rebal_options *o, struct kubeclient *kc,
		    struct scorerclient *sc, struct rebal_metrics *m, char *err, size_t errlen);
/* Accepts a zeroed or freed loop. */
void rebal_loop_free(struct rebal_loop *r);

/* One cycle, as the leader (or without leader election). */
void rebal_loop_cycle(struct rebal_loop *r);

/* One look at the Lease (--lease-name in --lease-namespace): creates,
 * renews or takes it over as lease.h judges. Whether this replica may act
 * now; always true with --leader-elect off. */
bool rebal_loop_lead(struct rebal_loop *r);

#endif
