/* Judging a pod by fit: the pod against each node's room, in each direction
 * the pod moves (--direction fit, the default). Pure functions, no I/O.
 *
 * A node's rx and tx are two links: a pod that receives shares the node's
 * receive side and barely touches its send side. So a node busy sending
 * is a good home for a receiver and a poor one for a sender, and the other
 * way round; the Go plugin's single direction (rx, tx, both or max) gets
 * one of the two wrong. Here each direction d of node i costs
 *
 *     cost_d = (level_d + demand_d) / link        (after the pod lands)
 *
 * weighed by how much of the pod's traffic goes that way,
 *
 *     w_d = demand_d / max(demand_rx, demand_tx),
 *
 * and the node costs the largest weighed direction: max_d(w_d x cost_d).
 * A pod that only receives (w_tx = 0) is judged by rx alone; one that moves
 * both ways alike by its busier side, as "max" judges every pod; a pod of
 * no known demand at all (both 0) by the busier side too. level_d is what
 * the policy judges (pressure: max(average, recent) and half the way up to
 * p95; else the average), with the pods in flight to the node counted.
 *
 * Scores keep their order past saturation. With every node's cost at most
 * 1 (the pod fits everywhere) the score is the utilization formula on the
 * cost, round(10 x (1 - cost)). When some node is over its link, the scale
 * stretches down to the worst one (no further than 2x the link), so a node
 * over by 5% still beats one over by 60%. When no node fits at all, the
 * nodes are ranked among themselves: the least over scores 10, one a whole
 * link further over 0, so a reply never ties every node at 0 while the
 * nodes differ, and the pod goes where it hurts least.
 *
 * Links of unknown speed are judged against the widest known link among
 * the nodes asked about (a VM that does not tell its speed is rarely the
 * only fast one); with none known, against the busiest node (the relative
 * formula's reference), as the relative policy does throughout. */
#ifndef NETSCHED_FIT_H
#define NETSCHED_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/policy.h"

/* What the pod to place moves, bytes per second per direction: declared,
 * learned or the fallback's (podweight.h). */
struct fit_demand {
	uint64_t rx;
	uint64_t tx;
};

/* The costs are in thousandths of a link; a cost is capped here. */
#define FIT_COST_CAP 100000u
/* How far below 0 the score's scale stretches: -1000 is a node at twice
 * its link (after the pod). */
#define FIT_FLOOR_MILLI (-1000)

/* A direction's level, as kind judges it, from policy_node's rx or tx. */
uint64_t fit_level(enum policy_kind kind, const struct policy_rates *r);

/* Scores nodes[0..n) for pod by the rule above; reads has_data, rx, tx,
 * link_bytes_per_second and dropping (pressure: 0, as policy.h); writes
 * cost_milli, rate (the level of the direction that cost the most, for
 * logs), pressure (the same) and score. Never overflows, never divides by
 * zero, scores in [0, POLICY_MAX_SCORE]. */
void fit_score(enum policy_kind kind, const struct fit_demand *pod, struct policy_node *nodes,
	       size_t n);

/* Scores as the scorer is configured: fit_score() under POLICY_DIR_FIT
 * (pod NULL: a pod that moves nothing known, as /v1/nodes scores), else
 * policy_score() on the directed rates. */
void fit_score_by(enum policy_kind kind, enum policy_direction dir, const struct fit_demand *pod,
		  struct policy_node *nodes, size_t n);

/* Whether the pod's known demand (rx and/or tx: those flagged) fits a
 * node whose level in each direction (measured plus in flight) is used_rx
 * and used_tx, on a link of link bytes per second. An unknown link (0)
 * always fits: nothing to judge by. *which gets "rx" or "tx" of the
 * direction that did not fit (may be NULL). */
bool fit_fits(const struct fit_demand *pod, bool rx_known, bool tx_known, uint64_t used_rx,
	      uint64_t used_tx, uint64_t link, const char **which);

#endif
