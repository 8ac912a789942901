/* When the rebalancer nudges the scheduler: a pod netsched's filter refused
 * for its declared bandwidth waits in the scheduler's unschedulable queue
 * until something the scheduler watches changes (kube-scheduler 1.20: a
 * Node's labels, allocatable, taints, conditions or unschedulable flag;
 * otherwise its 60 s flush). Free room appearing in a scorer's figures is
 * not such a change, so the rebalancer makes one: it writes the label
 * NUDGE_LABEL (a Unix time, selected by nothing) on a node that now has the
 * room, and the scheduler retries its unschedulable pods at once
 * (docs/operating.md says what each scheduler version does with it).
 *
 * The rules, so the nudge stays cheap at 5,000 nodes (no request at all in
 * a cycle where no node gained room) and never fires on noise:
 *  - a node's free room in a direction is its link less its rate and what
 *    is in flight to it (/v1/pressure); 0 when its figures are stale or its
 *    link unknown;
 *  - each node remembers its base: the least free room seen in each
 *    direction since the rebalancer last looked at the pending pods;
 *  - the pending pods are looked at (one LIST) only in a cycle where some
 *    node's free room in a direction is cfg.step x its link or more above
 *    its base, and at least cfg.min_interval_s after the last nudge;
 *  - a pod is worth a nudge when netsched refused it (its PodScheduled
 *    condition) and a node's free room now covers what it declares in both
 *    directions while that node's base did not: the room grew past what
 *    the pod asked. That node, the one with the most room in the pod's
 *    larger direction, is labelled; at most cfg.max_nodes distinct nodes
 *    per nudge;
 *  - once looked at, every base is the node's free room now.
 *
 * Nothing here does I/O or reads a clock: every rule is a row in
 * tests/unit/test_nudge.c. Ownership: a nudge_memory owns its table
 * (nudge_memory_free()). Not thread-safe. */
#ifndef NETSCHED_REBALANCER_NUDGE_H
#define NETSCHED_REBALANCER_NUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decide.h"

/* The label written on a node; its value is the Unix time of the nudge. */
#define NUDGE_LABEL "netsched.io/room-nudge"
#define NUDGE_PODS_MAX 256u		/* pending pods considered per look */
#define NUDGE_NODES_MAX 16u		/* nodes labelled per nudge, at most */

struct nudge_config {
	bool on;
	double step;			/* 0.05 of the link: growth that makes a look */
	uint64_t min_interval_s;	/* 10: between two nudges */
	unsigned max_nodes;		/* 3: nodes labelled per nudge */
};

/* A pod waiting to be placed, as the apiserver says (pending.h). */
struct nudge_pod {
	char namespace[DECIDE_NS_MAX];
	char name[DECIDE_POD_MAX];
	uint64_t ask[2];		/* bytes per second: [DECIDE_RX] ingress, [DECIDE_TX] egress */
};

struct nudge_base {
	uint64_t key;			/* hash of the node's name */
	uint64_t free[2];
};

struct nudge_memory {
	struct nudge_base *nodes;	/* owned, sorted by key */
	size_t n_nodes;
	uint64_t last_nudge_s;		/* 0: never */
};

/* One node to label, and the pod that made it worth it. */
struct nudge_pick {
	size_t node;			/* index in the snapshot */
	size_t pod;			/* index in the pods given */
	enum decide_dir dir;		/* the pod's larger direction */
	uint64_t free, base;		/* that direction's room now and at the base */
};

void nudge_config_defaults(struct nudge_config *cfg);
/* 0, or -EINVAL with err naming the field out of range. */
int nudge_config_check(const struct nudge_config *cfg, char *err, size_t errlen);

/* Node n's free room in direction d, bytes per second. */
uint64_t nudge_free(const struct decide_node *n, enum decide_dir d);

/* Accepts a zeroed or already freed struct. */
void nudge_memory_free(struct nudge_memory *m);

/* Lowers every node's base to its free room now (a node first seen starts
 * at it; nodes gone from s are forgotten). Sets *look when cfg is on, some
 * node's room is cfg->step of its link above its base, and cfg->min_interval_s
 * has passed since the last nudge. 0 or -ENOMEM (memory unchanged). */
int nudge_observe(struct nudge_memory *m, const struct nudge_config *cfg,
		  const struct decide_snapshot *s, bool *look);

/* The nodes to label for these pending pods (those netsched refused), at
 * most min(cap, cfg->max_nodes), distinct, in the pods' order. Changes
 * nothing. Returns how many. */
size_t nudge_plan(const struct nudge_config *cfg, const struct nudge_memory *m,
		  const struct decide_snapshot *s, const struct nudge_pod *pods, size_t n_pods,
		  struct nudge_pick *out, size_t cap);

/* After the pending pods were looked at: every base is the room now. */
void nudge_looked(struct nudge_memory *m, const struct decide_snapshot *s);
/* After a label was written at now_s. */
void nudge_done(struct nudge_memory *m, uint64_t now_s);

#endif
