/* The nudge's requests (nudge.h says when): in a cycle where some node
 * gained room, one LIST of the pods not yet bound, read from the
 * apiserver's cache (resourceVersion=0: no etcd read), and a JSON merge
 * patch of NUDGE_LABEL on each node picked. Only the leader's cycle calls
 * it (loop.c). What it did is logged with the numbers, and counted.
 *
 * A nudge_run borrows the config, client and metrics (they must outlive
 * it) and owns its memory and buffers (nudge_run_free()). Not thread-safe. */
#ifndef NETSCHED_REBALANCER_NUDGERUN_H
#define NETSCHED_REBALANCER_NUDGERUN_H

#include "common/buf.h"
#include "common/kubeclient.h"
#include "decide.h"
#include "metrics.h"
#include "nudge.h"

struct nudge_run {
	const struct nudge_config *cfg;
	struct kubeclient *kc;
	struct rebal_metrics *metrics;
	uint64_t timeout_ms;
	struct nudge_memory mem;
	struct nudge_pod *pods;		/* NUDGE_PODS_MAX */
	struct buf body;
};

/* 0 or -ENOMEM. */
int nudge_run_init(struct nudge_run *nr, const struct nudge_config *cfg, struct kubeclient *kc,
		   struct rebal_metrics *m);
/* Accepts a zeroed or freed struct. */
void nudge_run_free(struct nudge_run *nr);

/* One cycle over the sorted snapshot s (read at s->now_s). */
void nudge_run_cycle(struct nudge_run *nr, const struct decide_snapshot *s);

#endif
