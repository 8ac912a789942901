/* What the scorer knows of one node right now, and from where: the agent's
 * latest report while it is fresh; else the Prometheus fallback's value
 * while that is fresh; else nothing (a neutral score, never filtered).
 * Agent data always wins: it is seconds old, the fallback's is not.
 * Which nodes exist is decided here too: every node the table tracks and
 * every node only a fresh fallback snapshot knows. Pods just placed on a
 * node (inflight.h) are part of its view: what they will add is counted
 * before the counters show it. /filter, /prioritize,
 * /v1/nodes and /metrics all ask here, so they never disagree. */
#ifndef NETSCHED_VIEW_H
#define NETSCHED_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/filter.h"
#include "pods/inflight.h"
#include "pods/podweight.h"
#include "namekey.h"
#include "nodename.h"
#include "rules/policy.h"
#include "report.h"
#include "traffic.h"

struct table;
struct prom;
struct moves;

/* What the view reads: the scorer's sources and the settings that judge
 * them. Built once in main() as part of the scorer (scorer.h); the view
 * only reads them, but for weights.reference_link
 * (view_reference_refresh()). */
struct view_sources {
	struct table *table;
	struct prom *prom;		/* the fallback, NULL when not configured */
	struct inflight *inflight;	/* pods just placed (inflight.h); NULL: none counted */
	/* The rebalancer's moves (moves.h): their reservations count as in
	 * flight on their destination; NULL: none. */
	struct moves *moves;
	/* What a pod in flight weighs (podweight.h), from the workload model
	 * (workload.h) and the pod index (podindex.h) the watch and the
	 * ingest keep; both NULL without a pod watch. */
	struct podweight weights;
	enum policy_kind policy;
	enum policy_direction direction;
	/* --drop-threshold: packets a second a node may drop and still be
	 * scored by its rates (POLICY_DROPS_IGNORED: drops never count). */
	uint64_t max_drops_per_second;
	uint64_t stale_after_ns;	/* a report older than this is ignored */
	uint64_t warmup_ns;		/* /readyz says ready after this even without data */
	uint64_t started_mono_ns;
};

enum view_source {
	VIEW_NONE,
	VIEW_AGENT,
	VIEW_PROMETHEUS,
};

struct view_node {
	enum view_source source;
	/* The agent's figures (table.h); from Prometheus only the averages
	 * (the link is unknown); all 0 without a fresh source. */
	struct traffic traffic;
	/* The maxUtilization rule at the latest report (agent data only),
	 * and how long the node has been over. */
	struct filter_held held;
	uint64_t over_for_ns;
	uint64_t age_ns;		/* since the report or the fallback refresh;
					   since the last report when none is fresh;
					   an agent's: its figures' age, the report's
					   plus its failed samples (table.h) */
	bool known;			/* the table has ever heard of it */
	int64_t clock_skew_ms;		/* its agent's clock behind ours (table.h); known only */
	uint64_t reports;		/* accepted from it (table.h); known only */
	/* Pods just placed there, not yet measured: their weights and, from
	 * agent data, the doubt of those whose demand is a guess
	 * (podweight.h), which doubt_rx/tx say apart. The rebalancer's
	 * reservations on it (moves.h) are in the weights and the reserved
	 * figures, and reserved_rx/tx say how much. */
	struct inflight_load inflight;
	uint64_t reserved_rx, reserved_tx;
	uint64_t doubt_rx, doubt_tx;
	char label[REPORT_MAX_IFNAME_LEN + 12]; /* interface(s), for reasons */
};

/* The view of node name[0..len) at now_ns, for the pod whose UID is
 * uid[0..uid_len) (NULL: for nobody): a pod the scheduler retries is never
 * judged against its own earlier in-flight share. */
void view_get(struct view_sources *s, const char *name, size_t len, const char *uid, size_t uid_len,
	      uint64_t now_ns, struct view_node *out);

/* A request's nodes are looked up VIEW_BATCH at a time: each lock once
 * per chunk rather than per name (a 5,000-name prioritize took and dropped
 * two read locks 5,000 times: 7% of its CPU, perf). Bounded, because the
 * table's read lock is held for the whole chunk and ingest's writer waits
 * meanwhile: 64 lookups hold it about a microsecond (~15 ns a name, perf),
 * a whole 5,000-name request would hold it ~80 us, for every request. 16,
 * 64 and 256 cost the same CPU within the benchmark's noise. */
#define VIEW_BATCH 64u

/* view_get() of keys[0..n) (n <= VIEW_BATCH) into out[0..n), for names a
 * request checked (nodename_check(), extreq.c): each lock taken once,
 * each name hashed once (namekey_of()). */
void view_get_many(struct view_sources *s, const struct namekey *keys, size_t n, const char *uid,
		   size_t uid_len, uint64_t now_ns, struct view_node *out);

/* The policy's input for a view: no data unless some source is fresh; the
 * rates (average, recent, p95) include the in-flight pods' weight; drops
 * count every kind in both directions (either hurts a new pod) and make the
 * node dropping above the scorer's --drop-threshold. */
void view_policy_input(const struct view_sources *s, const struct view_node *v, struct policy_node *out);

/* One node of view_list(). */
struct view_entry {
	char name[NODENAME_MAX_LEN + 1];
	struct view_node v;
};

/* Every node the table tracks, plus those only a fresh fallback snapshot
 * knows, once each, sorted by name, each with its view at now_ns. Returns
 * how many and a malloc'd array in *out that the caller frees, or -ENOMEM
 * (*out untouched). */
long view_list(struct view_sources *s, uint64_t now_ns, struct view_entry **out);

/* view_list() with every node scored by the configured policy, as if the
 * scheduler had asked about all of them (what /v1/nodes and /metrics
 * show): *scores gets the same count of entries, malloc'd, in the same
 * order. -ENOMEM with both outputs untouched. */
long view_list_scored(struct view_sources *s, uint64_t now_ns, struct view_entry **out,
		      struct policy_node **scores);

/* How many nodes of view_list() each source serves. */
struct view_counts {
	size_t agent;		/* fresh agent data */
	size_t prometheus;	/* served by the fallback */
	size_t none;		/* tracked, but no source is fresh */
	size_t stale;		/* tracked, latest report older than stale_after */
};

/* 0, or -ENOMEM with *out zeroed. */
int view_count(struct view_sources *s, uint64_t now_ns, struct view_counts *out);

/* view_counts.agent alone, without listing: what /readyz waits for. */
size_t view_count_agents(struct view_sources *s, uint64_t now_ns);

/* Whether the scorer is ready to be asked (/readyz, /metrics): some node
 * has fresh agent data, or the warm-up has passed. *fresh gets
 * view_count_agents(). */
bool view_ready(struct view_sources *s, uint64_t now_ns, size_t *fresh);

/* What the doubt of in-flight pods on nodes of unknown link speed takes
 * its share of (podweight.h): the fastest known link among nodes with
 * fresh agent data, else the busiest one's rate. Once a second, off the
 * request path (it walks the table). */
void view_reference_refresh(struct view_sources *s, uint64_t now_ns);

/* "agent" | "prometheus" | "none" */
const char *view_source_name(enum view_source src);

#endif
