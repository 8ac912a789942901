/* Workloads and what their pods move: the learned demand an in-flight pod
 * of a known workload weighs (podweight.h) before its own traffic shows.
 *
 * A pod's workload is its namespace plus its controller
 * (workload_key_of()): a ReplicaSet named <deployment>-<pod-template-hash>
 * counts as that Deployment, so a rollout keeps what was learned; a Job
 * named <name>-<8 or more digits> (what a CronJob names the Jobs it
 * starts: <cronjob>-<scheduled minute>) counts as the CronJob <name>, so
 * each run learns from the previous ones; a StatefulSet, DaemonSet, other
 * Job or any other controller is itself; a pod with no controller is its
 * own workload, by name.
 *
 * The learned demand, per direction: the weighted 90th percentile (nearest
 * rank) of the windowed rates of the workload's last WORKLOAD_SAMPLES
 * measured pods, one rate per pod (its latest), each weighing
 * 2^-(age / half_life) by the age of that measurement. So one outlier among
 * ten pods is left out; a pod measured again and again counts once; a pod
 * that left keeps counting with less and less weight against the pods
 * running now, and a workload whose pods all left keeps its demand (its
 * measurements age alike) until it is forgotten. Pods in their start-up are
 * never sampled (the pod index decides: podindex.h).
 *
 * One node moves a figure only so far (issue 39). Each sample names the
 * node whose agent measured it (workload_sample_from()). The samples of a
 * node holding less than half of a workload's sample weight are clipped,
 * before the percentile, into the range of what the OTHER nodes' pods
 * measured (the lowest to the highest of their samples). So a node lying
 * about its own pods (x50, x500, or 0) while holding under half of them
 * leaves the learned figure within the range the other nodes measured
 * (with two honest nodes or more: the honest range; x50 on 2 of 16 pods
 * moves it at most to the highest honest pod), and a genuinely hot
 * minority node's pods count as the hottest pod elsewhere. A node holding
 * half or more is the workload's majority and is not clipped: its word
 * stands, as does the word of the one node a figure rests on alone, held
 * to its NIC and its link (the join: podindex.h). And a node must keep vouching for its samples: one
 * that has sent no pod figures for silent_ns (--stale-after, 6 s) no
 * longer counts, at once rather than over half-lives, so a liar that goes
 * silent takes its lie with it (workload_vouch(), told by each join).
 * /v1/workloads lists the nodes a figure rests on (WORKLOAD_SOURCES, the
 * largest shares) with the age of each one's newest sample.
 *
 * Bounded: at most max_workloads. A workload is live while the pod index
 * holds a pod of it (workload_ref()), idle otherwise. A new workload with
 * the table full evicts the idle one seen least recently, or is refused
 * when every workload is live: a flood of one-pod workloads never pushes
 * out a live workload. An idle workload unseen for WORKLOAD_FORGET_HALF_LIVES
 * half-lives (its measurements then weigh under 1/64) is forgotten.
 *
 * Costs: a sample is a few compares under a mutex; the percentile is
 * computed by workload_tick() for the workloads sampled since (or whose
 * nodes may have gone silent), off every request; a lookup is one hash
 * probe. Memory: about 1.3 KB a workload and 16 bytes a node (max_nodes),
 * touched only when used.
 *
 * Thread-safe: one mutex. Time is passed in (monotonic ns). */
#ifndef NETSCHED_WORKLOAD_H
#define NETSCHED_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/kubepod.h"
#include "parse/workloadname.h"

#define WORKLOAD_SAMPLES 16u
#define WORKLOAD_PERCENTILE 90u
#define WORKLOAD_FORGET_HALF_LIVES 6u
/* Nodes a figure rests on, listed at most (the largest shares). */
#define WORKLOAD_SOURCES 8u

/* A workload's identity; NUL-terminated strings. */
struct workload_key {
	char ns[WORKLOAD_NS_MAX + 1];
	char kind[WORKLOAD_KIND_MAX + 1];
	char name[WORKLOAD_NAME_MAX + 1];
};

/* The workload of a pod in namespace ns named pod_name with controller
 * owner (kubepod_read_owner(); kind.s NULL: none), as received (escapes
 * not decoded: valid names have none). 0, or -EINVAL when the namespace or
 * the name is not one the apiserver would accept (the pod then has no
 * workload). */
int workload_key_of(const struct kubepod_str *ns, const struct kubepod_owner *owner,
		    const struct kubepod_str *pod_name, struct workload_key *out);

/* "namespace/Kind/name" into out (WORKLOAD_LABEL_MAX + 1 bytes). */
const char *workload_label(const struct workload_key *k, char *out, size_t cap);

struct workload_config {
	size_t max_workloads;	/* > 0 */
	uint64_t half_life_ns;	/* > 0 */
	/* Node ids below this (the pod index's: its max_nodes) are tracked
	 * for vouching; 0: none (every sample's node vouches for it). */
	size_t max_nodes;
	/* A node silent this long no longer vouches for its samples; 0:
	 * nodes never go silent. */
	uint64_t silent_ns;
};

/* Where a sample was measured: the pod index's node id and that slot's
 * generation (a slot reused by another node is another node); id < 0:
 * not said (such samples are one node together, which always vouches). */
struct workload_node {
	int32_t id;
	uint32_t gen;
};

#define WORKLOAD_NO_NODE ((struct workload_node){ -1, 0 })

/* One node a learned figure rests on, for /v1/workloads. */
struct workload_source {
	struct workload_node node;
	uint32_t pods;		/* its samples that count */
	uint32_t share_pct;	/* of the samples' weight */
	uint64_t age_ns;	/* since its newest sample */
};

/* What a workload has learned, per direction, bytes per second. */
struct workload_demand {
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
	uint32_t pods;		/* measured pods behind it (at most WORKLOAD_SAMPLES) */
};

struct workload_stats {
	size_t tracked;		/* workloads now */
	size_t live;		/* ... with a pod in the index */
	size_t learned;		/* ... with a learned demand */
	uint64_t evicted;	/* idle ones evicted for a new one (table full) */
	uint64_t refused;	/* new ones refused: the table full of live ones */
	uint64_t forgotten;	/* idle ones unseen too long */
	uint64_t samples;	/* pod measurements taken */
};

/* One workload, for /v1/workloads. */
struct workload_entry {
	struct workload_key key;
	uint32_t pods;			/* in the pod index now */
	bool learned;
	struct workload_demand demand;
	uint64_t age_ns;		/* since its newest measurement (learned only) */
	uint32_t n_sources;		/* the nodes it rests on, largest share first */
	struct workload_source sources[WORKLOAD_SOURCES];
};

struct workload;

/* NULL when the config is invalid or memory ran out. */
struct workload *workload_create(const struct workload_config *cfg);
/* Accepts NULL. */
void workload_destroy(struct workload *w);

/* A pod of workload k joined the pod index: its id (>= 0), or -ENOSPC
 * (full of live workloads: counted in refused). */
int32_t workload_ref(struct workload *w, const struct workload_key *k, uint64_t now_ns);

/* The pod of id left the pod index. */
void workload_unref(struct workload *w, int32_t id, uint64_t now_ns);

/* Pod pod (a key unique to the pod: podindex.h) of workload id moved rx
 * and tx bytes per second over its latest window, measured at now_ns. */
void workload_sample(struct workload *w, int32_t id, uint64_t pod, uint64_t rx, uint64_t tx,
		     uint64_t now_ns);

/* workload_sample(), measured by node's agent. */
void workload_sample_from(struct workload *w, int32_t id, uint64_t pod, struct workload_node node,
			  uint64_t rx, uint64_t tx, uint64_t now_ns);

/* Node's agent sent pod figures at now_ns: it still vouches for the
 * samples it measured. Ids at or over max_nodes are ignored. */
void workload_vouch(struct workload *w, struct workload_node node, uint64_t now_ns);

/* Recomputes the demand of the workloads sampled since the last call, or
 * one of whose nodes may have gone silent since, and forgets idle ones
 * unseen too long. Off the request path. */
void workload_tick(struct workload *w, uint64_t now_ns);

/* The learned demand of workload k as of the last tick: false (and *out
 * zeroed) when it has none. w may be NULL. */
bool workload_demand_of(struct workload *w, const struct workload_key *k,
			struct workload_demand *out);

/* The label of workload id into out; "" when id is not a workload. */
const char *workload_label_of(struct workload *w, int32_t id, char *out, size_t cap);

void workload_stats(struct workload *w, struct workload_stats *out);

/* Every workload, sorted by label: how many, and a malloc'd array in *out
 * the caller frees; -ENOMEM (*out untouched). */
long workload_list(struct workload *w, uint64_t now_ns, struct workload_entry **out);

#endif
