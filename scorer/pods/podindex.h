/* The pods the apiserver says are bound, indexed by IP address, and the
 * join of the agents' per-pod traffic (proto/report.h) onto them.
 *
 * The pod watch (podinformer.h) tells every change of a bound pod
 * (podindex_update(), podindex_remove(), and a relist's sweep:
 * podindex_list_begin()/end()); each pod carries its node, whether it
 * runs and since when, its addresses and its workload (workload.h).
 *
 * The join (podindex_join(), by ingest, off every request; podjoin.c): an
 * agent's report lists its busiest pod interfaces (proto/report.h: their
 * addresses, the bytes the pod received and sent over the window), sums
 * the rest and says how many it measured. An entry matches the pod that
 * owns one of its addresses: a pod that runs, is bound to the reporting
 * node and is not on the host's network. Addresses are reused (a pod that
 * ended leaves its address to the next), so a pod that does not run, or
 * runs elsewhere, never owns one; entries that match nothing are counted
 * by why: an address no indexed pod has, one whose pods are all on other
 * nodes, one whose pods here do not run. A matched pod's rate is kept (for
 * /v1/nodes' top pods) and, once its window is whole (as long as the
 * node's: a young interface's window starts with its pod) and the pod had
 * run for its start-up (PODINDEX_STARTUP_NS) before that window began
 * (the agent's reading may be half a window old), sampled into its
 * workload, once per reading: the agent copies a reading into each report
 * until its next (every --pod-interval, at most half a window), so the
 * same figures within half a window of their first sighting are the same
 * reading, not sampled again (its age runs from that sighting). When every entry matched and the running pods the list left
 * out are exactly the rest the agent counted, each of them is sampled at
 * the rest's average: the agent lists the busiest, these are lighter.
 * (report_decode() already dropped and counted reports whose pod list is
 * oversized, repeats an address or claims over twice the link.)
 *
 * The listed pods that matched and may still be in flight (running for
 * less than the in-flight hold and fade: inflight_horizon_ns()) are then
 * told to the in-flight pods with how long the agent measured them (their
 * covered_ms; within a sample of the node's window: all of it, as whole
 * windows are for learning) and the node's window, after the index's lock
 * is let go:
 * the two locks are never held together. Pods in the rest are not: the
 * rest's covered_ms is its longest, not theirs.
 *
 * What a node's agent says of its own pods is held to what the node can
 * vouch for (issue 39: one node lying about its pods must not poison the
 * cluster's figures). Per direction, its pods (listed and rest) cannot add
 * up to more than crossed its NIC: when they do, every pod's figure used
 * for learning and for the average is scaled by NIC / sum (logged a line
 * a second, counted in nic_scaled). This also takes out traffic between
 * pods of the same node, which both pods' counters show and the NIC never
 * sees: two chatty pods do not make their workload look heavy. And no
 * pod's figure is over its node's link, or, when that is unknown, over
 * the cluster's fastest known link (podindex_set_link_ceiling()): an
 * unknown link is unknown, not infinite. The samples name their node
 * (workload.h), which vouches for them by each join.
 *
 * The cluster's average traffic per running pod (the fallback weight of a
 * pod nothing is known of: podweight.h) is the median, over the nodes
 * heard from within stale_ns whose agents report pods, of each node's
 * average per pod (its pods' figures as vouched for, listed and rest,
 * over the pod interfaces it measured): a node claiming thousands of idle
 * pods, or pods moving more than any link, is one value among the
 * others'. With three nodes or more one node keeps it within the range of
 * the others' averages; with two, it moves it by at most half its own
 * (itself held to its NIC).
 *
 * Bounded: at most max_pods pods (beyond: not indexed, counted) and
 * max_nodes nodes with pods; per node the PODINDEX_TOP pods that moved the
 * most. A pod whose addresses or owner references are absurd (kubepod.h)
 * is not indexed: counted, and logged at most once a second. Memory: about
 * 270 bytes a pod and 450 a node, touched only when used.
 *
 * Thread-safe: one mutex, held per event and per report. Time is passed in
 * (monotonic ns; the pod's start, a wall time, is converted on update). */
#ifndef NETSCHED_PODINDEX_H
#define NETSCHED_PODINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/kubepod.h"
#include "nodename.h"
#include "report.h"
#include "pods/workload.h"

#define PODINDEX_TOP 5u
#define PODINDEX_LABEL_MAX 95u		/* "namespace/name", truncated */
/* After its start, a pod's traffic is not yet what it moves. */
#define PODINDEX_STARTUP_NS (10ULL * 1000 * 1000 * 1000)

struct inflight;

struct podindex_config {
	size_t max_pods;	/* > 0 */
	size_t max_nodes;	/* > 0 */
	uint64_t stale_ns;	/* a node's pod traffic counts this long */
	/* Told which of its pods each report measured, and for how long, so
	 * their in-flight weight gives way (inflight_measured()); NULL: none.
	 * Must outlive the index. */
	struct inflight *inflight;
};

struct podindex_stats {
	size_t pods;			/* indexed now */
	size_t running;			/* ... that run, not on the host's network */
	size_t nodes;			/* with indexed pods */
	uint64_t matched;		/* report entries joined to a pod */
	uint64_t unknown_ip;		/* ... whose address no indexed pod has */
	uint64_t wrong_node;		/* ... whose pods are on other nodes */
	uint64_t not_running;		/* ... whose pods here do not run */
	uint64_t ignored;		/* pods not indexed: absurd addresses or owners */
	uint64_t full;			/* pods not indexed: max_pods or max_nodes */
	/* The cluster's average per pod, bytes per second, as of the last
	 * tick: what fresh nodes' pods moved over the pod interfaces they
	 * measured (avg_pods); avg_pods 0: nothing measured. */
	uint64_t avg_rx_bytes_per_second;
	uint64_t avg_tx_bytes_per_second;
	size_t avg_pods;
	size_t avg_nodes;		/* the nodes the median is over */
	uint64_t nic_scaled;		/* reports whose pods claimed more than their NIC */
	uint64_t link_ceiling_bytes_per_second;	/* as set; 0: none */
};

/* One of a node's top pods, for /v1/nodes. */
struct podindex_top {
	char pod[PODINDEX_LABEL_MAX + 1];
	char workload[WORKLOAD_LABEL_MAX + 1];	/* "" when none */
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
};

struct podindex;

/* wl (the workload model, shared with prioritize) must outlive the index.
 * NULL when the config is invalid or memory ran out. */
struct podindex *podindex_create(const struct podindex_config *cfg, struct workload *wl);
/* Accepts NULL. */
void podindex_destroy(struct podindex *x);

/* The watch: pod p is bound (p->node set) and not finished, as of
 * now_ns; unix_ms is the wall clock for its start time. */
void podindex_update(struct podindex *x, const struct kubepod *p, uint64_t now_ns,
		     uint64_t unix_ms);

/* podindex_update() with p's workload key already worked out (NULL: it
 * has none, workload_key_of() refused it): the watch works it out once per
 * event, for the index and for the pod's weight (podweight.h). */
void podindex_update_keyed(struct podindex *x, const struct kubepod *p,
			   const struct workload_key *key, uint64_t now_ns, uint64_t unix_ms);

/* The watch: pod uid was deleted or finished. Unknown uids are ignored. */
void podindex_remove(struct podindex *x, const char *uid, size_t uid_len, uint64_t now_ns);

/* A list starts (begin) and is complete (end): pods it did not name were
 * deleted while the watch was away, and go. */
void podindex_list_begin(struct podindex *x);
void podindex_list_end(struct podindex *x, uint64_t now_ns);

/* Joins report r's pod figures (above; nothing when it has none), as
 * report_decode() validated them. */
void podindex_join(struct podindex *x, const struct report *r, uint64_t now_ns);

/* Recomputes the cluster's average per running pod. Off the request path. */
void podindex_tick(struct podindex *x, uint64_t now_ns);

/* The cluster's fastest known link among fresh nodes, bytes per second
 * (0: none known): what a pod on a node of unknown link counts at most.
 * Set off the request path (main.c's learning round). x may be NULL. */
void podindex_set_link_ceiling(struct podindex *x, uint64_t bytes_per_second);

/* Node name[0..len)'s link in its latest joined report, bytes per second;
 * 0: unknown, or no such node in the index. x may be NULL. */
uint64_t podindex_node_link(struct podindex *x, const char *name, size_t len);

/* The name of the node a workload sample names (workload.h) into out;
 * false ("") when that node has left the index since. */
bool podindex_node_name(struct podindex *x, struct workload_node node, char *out, size_t cap);

/* Up to PODINDEX_TOP pods of node name[0..len) that moved the most in its
 * latest joined report, most first: how many. */
size_t podindex_node_top(struct podindex *x, const char *name, size_t len,
			 struct podindex_top out[PODINDEX_TOP]);

/* One pod of a node as its latest joined report measured it, for
 * /v1/pressure (podindex_node_pods()). */
struct podindex_pod {
	char label[PODINDEX_LABEL_MAX + 1];	/* "namespace/name", maybe truncated */
	char uid[POD_UID_MAX + 1];
	char workload[WORKLOAD_LABEL_MAX + 1];	/* "" when none */
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
};

/* The running pods of node name[0..len) its latest joined report listed
 * (their own figures, not the rest's), up to cap of them in any order:
 * how many. Under the index's lock, one pass over the node's pods. */
size_t podindex_node_pods(struct podindex *x, const char *name, size_t len,
			  struct podindex_pod *out, size_t cap);

/* Counters and sizes; x may be NULL (all zero). */
void podindex_stats(struct podindex *x, struct podindex_stats *out);

#endif
