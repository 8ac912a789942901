/* Which nodes a pod may not go to, and why. Pure functions, no I/O.
 *
 * Two rules. Each failing node gets two texts:
 *  - a reason, sent to the scheduler, which shows it in the pod's event
 *    ("0/3 nodes are available: 3 <reason>"). It is short, never holds a
 *    '%' (the scheduler passes the message to a printf-style call) and
 *    never a per-node number: every node failing the same rule gets the same
 *    text, so the scheduler groups them ("37 netsched: rx above 80 percent
 *    of link") and the event stays under the apiserver's 1,024 characters
 *    at any cluster size;
 *  - a detail with the node's own numbers, for the debug log (the same
 *    numbers are in /v1/nodes).
 * The rules:
 *  - maxUtilization (off unless configured): a node whose busier direction
 *    (or the configured one) is above that share of its link fails. Each
 *    direction is judged by the larger of its window average and its
 *    recent rate (the agent's rate since its previous report), so a step
 *    up fails the node at the next report, not a window later. A node
 *    that failed stays failed until it is clearly below again: a margin
 *    and a hold time, so a node hovering around the limit does not flip
 *    between schedulable and not on every report. The rule is judged once
 *    per report, as the node table takes it (filter_step(), its state kept
 *    in the node); a request only reads that state;
 *  - bandwidth (on by default): a pod that declares the standard
 *    kubernetes.io/ingress-bandwidth or egress-bandwidth annotation is asking
 *    for that much; a node whose free rx (ingress) or tx (egress) bandwidth
 *    is below it fails. Free is the link minus what the counters show minus
 *    what pods just placed there have declared and the counters do not show
 *    yet (inflight.h), so ten pods asking 30M do not all pass a node with
 *    50M free. With --learned-filter a pod that declares nothing is held
 *    to its workload's learned demand the same way, with its own reason
 *    ("netsched: free rx below the 400 Mb/s its workload moves").
 * A node without fresh data, or whose link speed is unknown, always passes:
 * there is nothing to judge it by, and we never fail a pod on a guess. */
#ifndef NETSCHED_FILTER_H
#define NETSCHED_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/policy.h"
#include "traffic.h"

struct filter_config {
	unsigned max_utilization_pct;	/* 1..100; 0 = rule off */
	bool bandwidth;			/* honour the pod's bandwidth annotations */
	unsigned margin_pct;		/* released at or below limit - margin ... */
	uint64_t hold_ms;		/* ... once filtered for at least this long */
};

/* What the pod asks for, bits per second; 0 = nothing. learned: the
 * figure is its workload's learned demand (podweight.h, --learned-filter),
 * not its annotation, and its reason says so. */
struct filter_pod {
	uint64_t ingress_bps;
	uint64_t egress_bps;
	bool learned_ingress;
	bool learned_egress;
};

/* The maxUtilization rule's state of one node, stepped on every report.
 * A node goes over at a report above the limit; it is released at a report
 * at or below (limit - margin) percent of its link once it has been over
 * for the hold time. A margin as large as the limit means it must go idle. */
struct filter_held {
	bool over;		/* failing the rule: above the limit, or held since */
	bool above;		/* the latest report itself is above the limit */
	uint64_t since_ns;	/* when it went over (monotonic) */
};

enum filter_event {
	FILTER_SAME,		/* state unchanged */
	FILTER_CROSSED,		/* went over the limit */
	FILTER_RELEASED,	/* clearly below again, after the hold */
};

/* One report: rate is what the rule judges (filter_rate()), link the node's
 * link speed, both bytes per second. The rule off or an unknown link clears
 * the state (nothing to judge, so never held). */
enum filter_event filter_step(const struct filter_config *cfg, struct filter_held *st,
			      uint64_t rate, uint64_t link, uint64_t now_ns);

/* The percentage at or below which a node that is over is released. */
unsigned filter_release_pct(const struct filter_config *cfg);

/* What the maxUtilization rule judges: per direction the larger of the
 * average and the recent rate, then the configured direction or the busier
 * one ("both" and "max": each direction has the whole link). *which gets
 * "rx" or "tx". */
uint64_t filter_rate(enum policy_direction dir, const struct traffic *t, const char **which);

/* What a request knows of a node. */
struct filter_node {
	const struct traffic *traffic;	/* NULL: no fresh data */
	const char *label;		/* interface name(s) for the reason */
	/* Declared by pods just placed there, not yet in the counters. */
	uint64_t reserved_rx_bytes_per_second;
	uint64_t reserved_tx_bytes_per_second;
	/* Preemption: what the victims evicted from it declared, taken as
	 * freed (0 for a plain filter). */
	uint64_t freed_rx_bytes_per_second;
	uint64_t freed_tx_bytes_per_second;
	/* The maxUtilization rule's state at the node's latest report, and
	 * how long it has been over. */
	struct filter_held held;
	uint64_t over_for_ns;
};

#define FILTER_REASON_MAX 80
#define FILTER_DETAIL_MAX 192
struct filter_why {
	char reason[FILTER_REASON_MAX];	/* shared by every node failing the rule */
	char detail[FILTER_DETAIL_MAX];	/* this node's numbers, for the log */
	/* No eviction of pods can make the node pass: maxUtilization (the
	 * node's measured traffic, held), or a pod asking more than the whole
	 * link. The scheduler's preemption then leaves the node alone
	 * (FailedAndUnresolvableNodes, 1.21+). */
	bool unresolvable;
};

/* True when the node passes (both texts empty); otherwise false with both
 * texts filled in. */
bool filter_check(const struct filter_config *cfg, enum policy_direction dir,
		  const struct filter_pod *pod, const struct filter_node *node,
		  struct filter_why *why);

/* Whether this malformed value is new (true once per distinct value among
 * the last FILTER_WARN_SLOTS), so a pod retried every second is logged
 * once, not once per attempt. Thread-safe. */
#define FILTER_WARN_SLOTS 64
bool filter_warn_once(const char *s, size_t len);

#endif
