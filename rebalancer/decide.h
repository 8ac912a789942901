/* The rebalancer's decision: which pod, if any, moves off which hot node,
 * and to where, as a function of what was read this cycle (a snapshot of
 * the scorer's /v1/pressure joined with the apiserver's facts about each
 * candidate pod) and of what the rebalancer remembers (debounce counts per
 * node and direction, the moves it made for cool-downs and limits).
 *
 * Nothing here does I/O or reads a clock: the caller passes now_s, so every
 * rule is a row in tests/unit/test_decide.c.
 *
 * The rules, in the order they are applied to a node:
 *  - a node's pressure in a direction is its measured rate over its link;
 *    over cfg.hot (0.90) it is "over"; a node is hot in that direction once
 *    it was over in cfg.debounce (3) consecutive distinct reports (the
 *    scorer's reports counter moved between two observations), with fresh
 *    figures; one report under, or stale figures, start the count again, so
 *    one spike never moves anything;
 *  - at most one move per source node per cycle, in its hotter direction;
 *  - the pod: among its pods, the smallest whose rate in that direction
 *    brings the node under cfg.hot, else the largest; walked in that order,
 *    the first that passes every check below is moved, and when none does
 *    the refusal names the reason of the first (the pod the rebalancer
 *    wanted): unknown to the apiserver, protected (bare, DaemonSet, mirror
 *    or static, another controller kind, priority >= cfg.protect_priority,
 *    being deleted, local storage unless allowed), namespace excluded, too
 *    young, a PodDisruptionBudget refused it recently, its workload or the
 *    node in cool-down, a limit reached, no destination;
 *  - a destination: another fresh node with a known link where, counting
 *    what is in flight to it and what this cycle already planned for it,
 *    the pod keeps both directions at or under (cfg.hot - cfg.margin) of the
 *    link; the one left with the most room in the hot direction.
 *
 * Ownership: a decide_snapshot owns its nodes and their pods
 * (decide_snapshot_free()); a decide_memory owns its tables
 * (decide_memory_free()). Outcomes hold indexes into the snapshot they were
 * made from. Not thread-safe. */
#ifndef NETSCHED_REBALANCER_DECIDE_H
#define NETSCHED_REBALANCER_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECIDE_NODE_MAX 254u		/* a node name (253) + NUL */
#define DECIDE_NS_MAX 64u		/* a namespace (63) + NUL */
#define DECIDE_POD_MAX 254u
#define DECIDE_UID_MAX 64u
#define DECIDE_WORKLOAD_MAX 384u
#define DECIDE_SENTENCE_MAX 640u
#define DECIDE_NODES_MAX 16384u		/* nodes in a snapshot and in memory */
#define DECIDE_PODS_PER_NODE 32u	/* what /v1/pressure sends at most */
#define DECIDE_MOVES_KEPT 4096u		/* moves remembered (the last hour's) */
#define DECIDE_BACKOFF_KEPT 1024u	/* pods a PDB refused, remembered */
#define DECIDE_NAMESPACES_MAX 32u	/* in an include or exclude list */
#define DECIDE_LIMIT_WINDOW_S 3600u	/* the per-hour limits' window */

enum decide_dir { DECIDE_RX, DECIDE_TX };

/* Who owns a pod, as its controller ownerReference says. */
enum decide_owner {
	DECIDE_OWNER_NONE,	/* a bare pod: nothing would recreate it */
	DECIDE_OWNER_REPLICASET,
	DECIDE_OWNER_STATEFULSET,
	DECIDE_OWNER_JOB,
	DECIDE_OWNER_DAEMONSET,
	DECIDE_OWNER_OTHER,	/* a controller kind we do not know to recreate it elsewhere */
};

struct decide_pod {
	/* From the scorer. workload may be "" (the caller may fill it from
	 * the owner instead: it keys the cool-down and the limit). */
	char namespace[DECIDE_NS_MAX];
	char name[DECIDE_POD_MAX];
	char uid[DECIDE_UID_MAX];
	char workload[DECIDE_WORKLOAD_MAX];
	uint64_t rx, tx;		/* bytes per second */
	/* From the apiserver; known false: the pod was not found there. */
	bool known;
	enum decide_owner owner;
	bool mirror;			/* a static pod's mirror (kubernetes.io/config.mirror) */
	int64_t priority;
	bool deleting;			/* deletionTimestamp set */
	bool local_storage;		/* an emptyDir or hostPath volume */
	uint64_t created_s;		/* creationTimestamp, Unix seconds */
};

struct decide_node {
	char name[DECIDE_NODE_MAX];
	bool fresh;
	uint64_t reports;		/* reports the scorer accepted from it */
	uint64_t link;			/* bytes per second; 0: unknown */
	uint64_t rate[2];		/* [DECIDE_RX], [DECIDE_TX] */
	uint64_t inflight[2];
	struct decide_pod *pods;	/* owned; largest first or any order */
	size_t n_pods;
};

struct decide_snapshot {
	struct decide_node *nodes;	/* owned, sorted by name (decide_snapshot_sort()) */
	size_t n_nodes;
	uint64_t now_s;			/* Unix seconds when it was read */
};

struct decide_config {
	double hot;			/* 0.90: a direction's pressure that is "over" */
	double margin;			/* 0.10: a destination stays at or under hot - margin */
	unsigned debounce;		/* 3 consecutive distinct reports over */
	bool dry_run;			/* plans are DECIDE_DRY_RUN, not DECIDE_MOVE */
	uint64_t min_age_s;		/* 300: younger pods stay */
	bool allow_local_storage;	/* false: emptyDir/hostPath pods stay */
	int64_t protect_priority;	/* 2000000000 (system-cluster-critical) and above stay */
	uint64_t cooldown_s;		/* 600: a workload moved is not moved again before */
	uint64_t node_cooldown_s;	/* 120: a relieved node is not a source again before */
	uint64_t pdb_backoff_s;		/* 300: a pod a PDB refused is not tried again before */
	unsigned max_per_cycle;		/* 3 moves per cycle, all nodes */
	unsigned max_per_hour;		/* 30 moves per hour, all nodes (the global rate) */
	unsigned max_per_node;		/* 4 moves off a node per hour */
	unsigned max_per_namespace;	/* 10 moves in a namespace per hour */
	unsigned max_per_workload;	/* 2 moves of a workload's pods per hour */
	/* Empty include: every namespace; exclude wins over include. */
	char include[DECIDE_NAMESPACES_MAX][DECIDE_NS_MAX];
	size_t n_include;
	char exclude[DECIDE_NAMESPACES_MAX][DECIDE_NS_MAX];
	size_t n_exclude;
};

/* The defaults above (exclude: kube-system). */
void decide_config_defaults(struct decide_config *cfg);
/* 0, or -EINVAL with err saying which field is out of range. */
int decide_config_check(const struct decide_config *cfg, char *err, size_t errlen);

enum decide_reason {
	DECIDE_MOVE,		/* act: post the move, evict */
	DECIDE_DRY_RUN,		/* would act; dry run */
	DECIDE_NOT_DEBOUNCED,	/* over, not yet for enough reports */
	DECIDE_STALE,		/* over, but its figures are stale */
	DECIDE_NO_PODS,		/* hot, but no pod on it is known to the scorer */
	DECIDE_UNKNOWN_POD,	/* the pod wanted is not in the apiserver's list */
	DECIDE_PROTECTED,	/* the pod wanted may never be evicted */
	DECIDE_EXCLUDED,	/* its namespace is excluded */
	DECIDE_TOO_YOUNG,
	DECIDE_PDB,		/* its PodDisruptionBudget refused it recently */
	DECIDE_COOLDOWN,	/* its workload or the node moved recently */
	DECIDE_LIMITS,		/* a per-node, namespace, workload, cycle or hourly limit */
	DECIDE_NO_DESTINATION,
	DECIDE_REASON_COUNT
};

/* "move", "dry_run", "not_debounced", ... (metric labels). */
const char *decide_reason_name(enum decide_reason r);

/* One node over the threshold this cycle: a move planned, or why not. */
struct decide_outcome {
	enum decide_reason reason;
	size_t node;			/* index in the snapshot */
	enum decide_dir dir;
	unsigned reports_over;		/* consecutive reports over, so far */
	size_t pod;			/* index in the node's pods, or SIZE_MAX */
	size_t dest;			/* index in the snapshot, or SIZE_MAX */
	/* "node-3: tx 118 MB/s is 94% of 125 MB/s for 3 reports; evict ..." */
	char sentence[DECIDE_SENTENCE_MAX];
};

/* What the rebalancer remembers between cycles. */
struct decide_node_memory {
	char name[DECIDE_NODE_MAX];
	uint64_t reports;		/* counter at the last observation */
	unsigned over[2];		/* consecutive distinct reports over, per direction */
};

struct decide_move_record {
	uint64_t at_s;
	char namespace[DECIDE_NS_MAX];
	char workload[DECIDE_WORKLOAD_MAX];
	char from[DECIDE_NODE_MAX];
};

struct decide_backoff {
	uint64_t at_s;
	char uid[DECIDE_UID_MAX];
};

struct decide_memory {
	struct decide_node_memory *nodes;	/* owned, sorted by name */
	size_t n_nodes;
	struct decide_move_record *moves;	/* owned ring of DECIDE_MOVES_KEPT */
	size_t moves_next, moves_len;
	struct decide_backoff *backoff;		/* owned ring of DECIDE_BACKOFF_KEPT */
	size_t backoff_next, backoff_len;
};

/* 0 or -ENOMEM. */
int decide_memory_init(struct decide_memory *m);
/* Accepts a zeroed or already freed struct. */
void decide_memory_free(struct decide_memory *m);

/* Sorts the nodes by name (what bsearch and the debounce need); -EINVAL
 * when two nodes share a name or there are more than DECIDE_NODES_MAX. */
int decide_snapshot_sort(struct decide_snapshot *s);
/* Accepts a zeroed or already freed struct. */
void decide_snapshot_free(struct decide_snapshot *s);

/* Counts, for every node of a sorted snapshot, the consecutive distinct
 * reports it was over cfg->hot in each direction. A node whose counter has
 * not moved keeps its counts; stale figures, a link of 0 or a counter that
 * went backwards (the scorer restarted) start them again. Nodes gone from
 * the snapshot are forgotten. 0, -EINVAL (not sorted, or a name twice) or
 * -ENOMEM; memory is unchanged on error. */
int decide_observe(struct decide_memory *m, const struct decide_config *cfg,
		   const struct decide_snapshot *s);

/* Whether node n (of the snapshot last observed) is fresh and hot, over
 * cfg->hot for cfg->debounce reports in a direction: the nodes whose pods'
 * Kubernetes facts the plan needs (the others' are never read). */
bool decide_wants_facts(const struct decide_config *cfg, const struct decide_memory *m,
			const struct decide_node *n);

/* The plan for this cycle: one outcome per node over cfg->hot in some
 * direction, in snapshot order, at most cap (out may be NULL with cap 0 to
 * count). Changes nothing. Returns how many outcomes there are. */
size_t decide_plan(const struct decide_config *cfg, const struct decide_memory *m,
		   const struct decide_snapshot *s, struct decide_outcome *out, size_t cap);

/* After the move in o was made (or, in dry run, planned): cool-downs and
 * limits count it from now_s. */
void decide_record_move(struct decide_memory *m, const struct decide_snapshot *s,
			const struct decide_outcome *o, uint64_t now_s);
/* After the Eviction API answered 429 for uid: not tried again for
 * cfg->pdb_backoff_s. */
void decide_record_pdb_refusal(struct decide_memory *m, const char *uid, uint64_t now_s);

#endif
