/* In-flight pods: the pods the scheduler has just placed, counted against
 * their node before their traffic reaches the agent's window.
 *
 * The scheduler places a pod every few milliseconds; a node's counters show
 * a new pod's traffic seconds to a minute later. Without this, every pod of
 * a burst sees the same quietest node and all of them land there.
 *
 * Life of a pod (by UID):
 *  - assume: prioritize ranked the nodes; the pod is recorded against the
 *    best one at once, so the next pod of the burst already sees it. When
 *    several nodes share the best score, the scheduler picks among them by
 *    its own plugins' scores and then at random, so we cannot know which:
 *    the pod's weight is split evenly among the tied nodes (up to
 *    INFLIGHT_TIE_MAX, the first in the scheduler's order), its expected
 *    share on each. Counting it whole on each tied node (as netsched once
 *    did) made k ties add k pods' weight: by the fifth pod of a burst of
 *    learned 20% pods every node read 110% of its link, every node scored
 *    0 alike and the scheduler's spreading alone chose, onto the busy
 *    nodes. Scores that rarely tie (fit.h) and the watch, which says
 *    within tens of milliseconds where the pod went, keep the split's
 *    error short. What a pod declares is held whole on each tied node, so
 *    two pods asking 30M never both pass a node with 50M free; and so is
 *    the doubt a pod of guessed demand brings (podweight.h): it is no
 *    figure to split but a share of each node's free link, which never
 *    fills a link however many pods it counts, so a tied group drops as
 *    fast as a lone quietest node would and a burst of unknown pods
 *    spreads.
 *  - bound (from the apiserver watch): the pod is on one node. On the
 *    assumed node (or one of the tied ones): confirmed; elsewhere: moved;
 *    not assumed at all (another scheduler, another scorer replica, or a
 *    restart of ours): tracked from its binding time if that is recent.
 *  - never starts: the watch also says whether a container of a bound
 *    pod has started (kubepod.h). One that has not (a bad image, a crash
 *    loop, a missing Secret) weighs nothing once unstarted_ns
 *    (--inflight-unstarted, 25 s) passed since its binding, which covers
 *    the image pull of a burst. The same holds for a pod we never assumed
 *    (placed through the other scorer replica, which the scheduler's calls
 *    alternate with; or made with spec.nodeName): until it starts it counts
 *    from its binding as an assumption of ours would, so two replicas see
 *    each other's burst. It stays tracked and weighs again (within its hold
 *    and fade) once one starts. So a tenant who may create pods that never
 *    run, with any declaration, weighs on a node for at most unstarted_ns
 *    per pod, and never more than the node's link.
 *  - drop: the pod was deleted.
 *  - expire: while the watch is in sync, an assumption the apiserver has
 *    not confirmed after expire_ns was never bound (another filter failed
 *    it, or it is Pending) and is dropped. Without a watch nothing can
 *    confirm: an assumption is then treated as bound where assumed.
 *  - fade: a bound pod (or an assumption without a watch) weighs its full
 *    weight for hold_ns after binding (start-up plus one agent window, so
 *    the window has measured it), then fades linearly to zero over fade_ns
 *    and is forgotten: its traffic is never counted twice for long.
 *  - measured (inflight_measured(), from the join of the agents' per-pod
 *    traffic, podindex.h): once the agent of the one node a pod is counted
 *    on has measured the pod's own traffic for measured_ms of its window_ms
 *    window, that much of the pod is in the node's measured rates, so its
 *    weight gives way: it weighs weight x max(0, 1 - measured_ms /
 *    window_ms), never more than the hold and fade leave, and never comes
 *    back (a reading that covers less is an older one, or a re-created
 *    interface whose earlier traffic is still in the node's window). A pod
 *    measured whole weighs nothing but stays until its fade ends, so a
 *    later watch event finds it rather than observing it anew. A pod tied
 *    on several nodes, or one the agents do not measure (no per-pod
 *    counters), keeps the hold and fade alone.
 *
 * What a pod weighs, per direction, is decided by podweight.h (its
 * declared bandwidth, else its workload's learned demand, else a fallback)
 * and given here; a pod whose demand is a guess is also counted as such on
 * its nodes (unknown_*_milli), where the view adds the doubt it brings,
 * relative to each node's link (podweight_doubt()).
 *
 * Bounded: at most max_pods pods and max_nodes nodes. When either is full,
 * the oldest unconfirmed assumption gives way to the new pod (displaced):
 * a flood of made-up pods from one requester replaces itself and never
 * keeps real ones out, and a pod the watch saw bound is never dropped for
 * one it did not. Only when every slot holds a bound pod is a new one not
 * tracked, and counted (cap_hits). A declared rate counts at most the
 * widest link of the nodes it is assumed on, the link of the node the
 * watch says it is bound to, and on every path the cluster's fastest
 * known link (inflight_set_link_ceiling(): a node of unknown link is not
 * a node of infinite link). Per-node sums are kept up to date, so
 * the request path's lookup is one hash probe; fades and expiries are
 * applied by inflight_tick(), which a background thread calls every
 * INFLIGHT_TICK_NS: the pass over every tracked pod (about a millisecond
 * at 10,000) runs there under the write lock: a request may wait for it,
 * but none runs it.
 *
 * Thread-safe: extender threads, the watch thread and status readers share
 * one inflight under its lock. Time is always passed in (monotonic ns), so
 * tests move it by hand. */
#ifndef NETSCHED_INFLIGHT_H
#define NETSCHED_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "namekey.h"
#include "nodename.h"
#include "parse/poduid.h"

#define INFLIGHT_LABEL_MAX 127u		/* "namespace/name", truncated */
#define INFLIGHT_TIE_MAX 8u
#define INFLIGHT_TICK_NS (100ULL * 1000 * 1000)

struct inflight_config {
	size_t max_pods;			/* > 0 */
	size_t max_nodes;			/* > 0 */
	uint64_t hold_ns;			/* full weight after binding */
	uint64_t fade_ns;			/* then down to zero over this */
	uint64_t expire_ns;			/* unconfirmed, watch in sync: dropped */
	/* Bound, assumed, and not started this long after binding: weighs
	 * nothing until it starts; 0: no such limit. */
	uint64_t unstarted_ns;
};

/* What a pod's weight rests on, for /v1/nodes: guessed when a direction
 * is (podweight.h's fallback), else learned when one is, else declared. */
enum inflight_basis {
	INFLIGHT_GUESSED,
	INFLIGHT_LEARNED,
	INFLIGHT_DECLARED,
};

/* What a pod weighs, per direction, bytes per second (podweight.h), and a
 * label for /v1/nodes and logs (copied, truncated; may be NULL). */
struct inflight_pod {
	uint64_t rx_bytes_per_second;		/* declared, learned or the fallback's average */
	uint64_t tx_bytes_per_second;
	uint64_t reserve_rx_bytes_per_second;	/* held from the bandwidth filter */
	uint64_t reserve_tx_bytes_per_second;
	bool unknown_rx;			/* its demand is a guess: it counts in the doubt */
	bool unknown_tx;
	const char *label;
	enum inflight_basis basis;
};

/* A node name as it arrives in a request: not NUL-terminated; and its
 * link, bytes per second (0: unknown), which caps what a pod declares. */
struct inflight_name {
	const char *s;
	size_t len;
	uint64_t link_bytes_per_second;
};

/* What in-flight pods add to one node now. */
struct inflight_load {
	uint64_t rx_bytes_per_second;		/* weights (the view adds the doubt) */
	uint64_t tx_bytes_per_second;
	uint64_t reserved_rx_bytes_per_second;	/* for the bandwidth filter */
	uint64_t reserved_tx_bytes_per_second;
	uint32_t milli_pods;			/* pods counted, in thousandths (ties, fades) */
	uint32_t unknown_rx_milli;		/* ... whose demand is a guess, per direction */
	uint32_t unknown_tx_milli;
};

struct inflight_stats {
	uint64_t assumed;	/* assumptions made by prioritize */
	uint64_t confirmed;	/* the watch saw the pod bound where assumed */
	uint64_t moved;		/* ... bound elsewhere */
	uint64_t observed;	/* bound without our assumption, tracked */
	uint64_t dropped;	/* deleted */
	uint64_t expired;	/* never bound within expire_ns */
	uint64_t displaced;	/* unconfirmed, the oldest, gave way to a newer pod: slots full */
	uint64_t faded;		/* measured by now: forgotten */
	uint64_t measured;	/* the agents' window covered it whole: weighs nothing */
	uint64_t unstarted;	/* bound and not started: weighs nothing until it starts */
	uint64_t cap_hits;	/* not tracked: max_pods or max_nodes reached */
	size_t pods;		/* tracked now */
	size_t nodes;		/* with at least one in-flight pod now */
	bool confirming;	/* the watch is in sync */
};

/* One pod on one node, for /v1/nodes (inflight_list()). */
struct inflight_entry {
	char node[NODENAME_MAX_LEN + 1];
	char label[INFLIGHT_LABEL_MAX + 1];
	bool bound;			/* the watch says it is here */
	enum inflight_basis basis;
	struct inflight_load load;	/* what it adds to this node now */
	uint32_t measured_ms;		/* of window_ms, by the agents (0: not measured) */
	uint32_t window_ms;
};

/* One pod's traffic as its node's agent measured it (inflight_measured()). */
struct inflight_measure {
	const char *uid;
	size_t uid_len;
	uint64_t measured_ms;		/* how long the agent has measured it */
};

/* "guessed" | "learned" | "declared" */
const char *inflight_basis_name(enum inflight_basis b);

struct inflight;

/* NULL when the config is invalid (a zero bound) or memory ran out. */
struct inflight *inflight_create(const struct inflight_config *cfg);
/* Accepts NULL. */
void inflight_destroy(struct inflight *in);

/* Prioritize's prediction: the pod uid goes to one of nodes[0..n) (n >= 1;
 * more than one: tied best scores, the scheduler's order; only the first
 * INFLIGHT_TIE_MAX are used). A pod assumed again (the scheduler retries
 * it) moves to the new prediction; a pod the watch already saw bound is
 * left alone. 0; -EALREADY (already bound); -EINVAL (empty or oversized uid
 * or node name, n == 0); -ENOSPC (max_pods or max_nodes reached: counted
 * in cap_hits, after the oldest unconfirmed assumptions gave way). A
 * declared rate counts at most the widest known link among nodes[]. */
int inflight_assume(struct inflight *in, const char *uid, size_t uid_len,
		    const struct inflight_pod *pod, const struct inflight_name *nodes, size_t n,
		    uint64_t now_ns);

/* The watch: pod uid is bound to node since bound_ns (monotonic; may be in
 * the past, when the binding happened before we heard of it). Confirms or
 * moves an assumption, or tracks a pod we did not assume if it is recent
 * enough to still weigh something. 0, -EINVAL or -ENOSPC as above. Taken
 * as started, on a node of unknown link: inflight_bound_run() says more. */
int inflight_bound(struct inflight *in, const char *uid, size_t uid_len, const char *node,
		   size_t node_len, const struct inflight_pod *pod, uint64_t bound_ns,
		   uint64_t now_ns);

/* What the watch says of a bound pod (inflight_bound_run()). */
struct inflight_binding {
	const char *uid;
	size_t uid_len;
	/* Its node, and that node's link (0: unknown), which caps what the
	 * pod declares. */
	struct inflight_name node;
	uint64_t bound_ns;		/* as inflight_bound()'s */
	bool started;			/* a container of it has started (kubepod.h) */
	const char *waiting;		/* why not, for logs (NUL-terminated; NULL: not said) */
};

/* inflight_bound() with what the watch says of the pod's containers and
 * its node's link (above: "never starts"). A repeated event that says the
 * pod started (or stopped) now updates it. Same returns. */
int inflight_bound_run(struct inflight *in, const struct inflight_binding *b,
		       const struct inflight_pod *pod, uint64_t now_ns);

/* The cluster's fastest known link, bytes per second (0: none known): no
 * pod counts more on any node. Set off the request path. */
void inflight_set_link_ceiling(struct inflight *in, uint64_t bytes_per_second);

/* The watch: pod uid was deleted. Unknown uids are ignored. */
void inflight_drop(struct inflight *in, const char *uid, size_t uid_len);

/* Whether a watch is in sync, so unconfirmed assumptions may expire. */
void inflight_set_confirming(struct inflight *in, bool on);

/* Applies fades and expiries if INFLIGHT_TICK_NS passed since the last
 * time (force: now). Cheap when not due: one atomic read. in may be NULL
 * here and in inflight_get(). */
void inflight_tick(struct inflight *in, uint64_t now_ns, bool force);

/* What in-flight pods add to the node now (as of the last tick), except
 * pod except_uid's own share where it is counted on that node (NULL: no
 * exception): a pod the scheduler retries is never judged against its own
 * earlier assumption. false and *out zeroed when nothing: the common case
 * costs one atomic read. */
bool inflight_get(struct inflight *in, const char *node, size_t len, const char *except_uid,
		  size_t except_len, struct inflight_load *out);

/* inflight_get() of keys[0..n) under one read lock: fn(i, what is in
 * flight there, ctx) for each that has pods, in order; how many had. fn
 * must be quick and must not call back in; keep n small (view.h). The
 * names are not checked again: they come from a request that did
 * (nodename_check(), extreq.c). */
size_t inflight_get_each(struct inflight *in, const struct namekey *keys, size_t n,
			 const char *except_uid, size_t except_len,
			 void (*fn)(size_t i, const struct inflight_load *load, void *ctx), void *ctx);

/* The join: node's agent, whose window is window_ms long, has measured
 * each pod m[k] for m[k].measured_ms of it. A pod counted on that node
 * alone gives way (above: "measured"); unknown uids, pods counted
 * elsewhere or on several tied nodes, and a measured_ms of 0 change
 * nothing. How many pods gave way further. Takes the write lock only when
 * pods are tracked at all. */
size_t inflight_measured(struct inflight *in, const char *node, size_t node_len,
			 uint64_t window_ms, const struct inflight_measure *m, size_t n,
			 uint64_t now_ns);

/* hold_ns + fade_ns (0 when in is NULL): a pod bound longer ago than this
 * is never in flight, so the join need not ask about it. */
uint64_t inflight_horizon_ns(const struct inflight *in);

/* Counters and sizes. */
void inflight_stats(struct inflight *in, struct inflight_stats *out);

/* Every (pod, node) pair now, sorted by node then label: how many, and a
 * malloc'd array in *out the caller frees; -ENOMEM (*out untouched). */
long inflight_list(struct inflight *in, struct inflight_entry **out);

#endif
