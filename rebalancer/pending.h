/* The pods netsched's filter refused, read from the PodList of the pods not
 * yet bound (GET /api/v1/pods?fieldSelector=spec.nodeName=,status.phase=
 * Pending), for the nudge (nudge.h).
 *
 * A pod is kept when its PodScheduled condition is False for the reason
 * Unschedulable with a message naming netsched (the scheduler writes the
 * extender's reasons there: "0/3 nodes are available: 3 netsched: free rx
 * below the 40 Mb/s the pod asks.") and it declares a bandwidth in
 * kubernetes.io/ingress-bandwidth or egress-bandwidth (a Kubernetes
 * quantity in bits per second). A pod refused for its workload's learned
 * demand, or for a node's utilization alone, declares nothing: it is left
 * to the scheduler's own timer. A pod whose annotation is not a quantity is
 * skipped and counted (the scorer reads none from it either). At most
 * NUDGE_PODS_MAX pods are kept; the rest are counted.
 *
 * A list that is not a PodList, or an item whose metadata is not what
 * Kubernetes writes, is an error naming it, and nothing is kept. */
#ifndef NETSCHED_REBALANCER_PENDING_H
#define NETSCHED_REBALANCER_PENDING_H

#include <stddef.h>

#include "nudge.h"

/* The largest list read: thousands of pending pods of a few KiB. */
#define PENDING_BODY_MAX (32u * 1024u * 1024u)

struct pending_counts {
	size_t kept;		/* pods written to out */
	size_t skipped;		/* netsched refused them, but an annotation is not a quantity */
	size_t over;		/* more than cap */
};

/* Reads len bytes of js into out (at most cap pods). 0 with *c filled, or
 * -EINVAL / -E2BIG / -ENOMEM with err saying what and where. */
int pending_parse(const char *js, size_t len, struct nudge_pod *out, size_t cap,
		  struct pending_counts *c, char *err, size_t errlen);

#endif
