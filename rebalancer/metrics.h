/* The rebalancer's counters and their Prometheus text. The control loop
 * counts with atomics; the HTTP thread renders at any time. */
#ifndef NETSCHED_REBALANCER_METRICS_H
#define NETSCHED_REBALANCER_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "decide.h"

struct rebal_metrics {
	atomic_ulong cycles;			/* cycles this replica ran as leader */
	atomic_ulong scorer_errors;		/* no scorer answered, or a bad reply */
	atomic_ulong apiserver_errors;		/* a pod list, eviction or Event failed */
	atomic_ulong evictions;			/* pods evicted (moves made) */
	atomic_ulong outcomes[DECIDE_REASON_COUNT];	/* by reason; [DECIDE_MOVE] = planned */
	atomic_ulong pdb_refusals;		/* 429s from the Eviction API */
	atomic_ulong nudges;			/* node labels written (nudge.h) */
	atomic_ulong hot_nodes;			/* gauge: nodes over hot, last cycle */
	atomic_bool leader;
	atomic_bool dry_run;
	atomic_ulong last_cycle_unix;
};

/* Prometheus text exposition of m into b. */
void rebal_metrics_render(struct rebal_metrics *m, struct buf *b);

#endif
