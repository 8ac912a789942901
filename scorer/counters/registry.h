/* The scorer's metric registry: its counters and latency histograms, the
 * bottom layer, written lock-free by every thread (HTTP workers, ingest,
 * the Prometheus refresh) and read by GET /metrics (metrics.h), which only
 * formats them. (The agent's interface counters are agent/ifreading.h.) */
#ifndef NETSCHED_REGISTRY_H
#define NETSCHED_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds of the latency buckets, 50 us to 1 s; one more bucket
 * (+Inf) holds the rest. */
#define REGISTRY_LATENCY_BUCKETS 12

struct registry_histogram {
	atomic_ulong buckets[REGISTRY_LATENCY_BUCKETS + 1];
	atomic_ulong sum_ns;
	atomic_ulong count;
};

enum { REGISTRY_STATUS_NODES, REGISTRY_STATUS_METRICS, REGISTRY_STATUS_WORKLOADS };

/* Why POST /v1/moves refused a move (movesroute.h). */
enum registry_move_refusal {
	REGISTRY_MOVE_MALFORMED,	/* not a move: syntax, a field missing or wrong */
	REGISTRY_MOVE_TOO_LARGE,	/* body over MOVEREQ_BODY_MAX */
	REGISTRY_MOVE_HOLD,		/* holdSeconds out of range */
	REGISTRY_MOVE_UNKNOWN_NODE,	/* from or to not a node the scorer tracks */
	REGISTRY_MOVE_SAME_NODE,	/* from == to */
	REGISTRY_MOVE_ABSURD_RATE,	/* over MOVES_RATE_LINKS links */
	REGISTRY_MOVE_FULL,		/* the move table is full (503) */
	REGISTRY_MOVE_REFUSALS,
};

struct registry {
	atomic_ulong reports_accepted;
	atomic_ulong reports_duplicate;
	atomic_ulong reports_malformed;	/* not a report, or over a size/count limit */
	atomic_ulong reports_version;	/* a wire version we do not speak */
	atomic_ulong reports_absurd;	/* values no NIC can produce */
	atomic_ulong reports_unsigned;	/* no signature while --key-file is set */
	atomic_ulong reports_forged;	/* unknown key or a signature that does not match */
	atomic_ulong reports_impersonated; /* a node's own key, signing for another node */
	atomic_ulong reports_shared_key; /* accepted, signed with a shared key (weaker) */
	atomic_ulong reports_replayed;	/* signed, but an old sequence or outside the time window */
	atomic_ulong reports_unconfirmed; /* signed, ending before our start: held (anchor.h) */
	atomic_ulong reports_outdated;	/* a window ending before the node's latest */
	atomic_ulong reports_oversize;	/* over REPORT_MAX_BYTES (ingest.h) */
	atomic_ulong reports_table_full;
	/* The report port's connections (reportconns.h). */
	atomic_ulong report_conns;		/* open now */
	atomic_ulong report_conns_max;		/* the budget */
	atomic_ulong report_conns_closed_silent;	/* no report in time */
	atomic_ulong report_conns_closed_busiest;	/* full: made room for a new one */
	atomic_ulong report_accept_pauses;	/* descriptors ran short */
	/* Dropped whole for their pod list (proto/report.h's REPORT_EPODS_*):
	 * oversized, an address twice, over twice the link. */
	atomic_ulong reports_pods_oversize;
	atomic_ulong reports_pods_duplicate;
	atomic_ulong reports_pods_over_link;
	atomic_ulong requests_filter;
	atomic_ulong requests_prioritize;
	atomic_ulong requests_preempt;
	atomic_ulong requests_bad;	/* 4xx answers */
	atomic_ulong http_busy;		/* 503s: the request memory budget was full */
	atomic_ulong http_deadline_closes; /* a request not complete in time, or idle (httpguard.h) */
	atomic_ulong http_reclaimed_idle;	/* full: an idle connection closed to make room */
	atomic_ulong http_reclaimed_busiest;	/* full: one of the address holding the most closed */
	atomic_ulong http_replies_busy;	/* status replies answered 503: no room for them (http.c) */
	/* Renders of /v1/nodes, /metrics, /v1/workloads (REGISTRY_STATUS_*),
	 * and those that failed (statusreply.h). */
	atomic_ulong status_renders[3], status_render_failures[3];
	/* POST /v1/moves: accepted, and refused by why. */
	atomic_ulong moves_accepted;
	atomic_ulong moves_refused[REGISTRY_MOVE_REFUSALS];
	/* GET /v1/pressure answered, and refused (a bad hot). */
	atomic_ulong pressure_replies;
	struct registry_histogram latency_filter;
	struct registry_histogram latency_prioritize;
	struct registry_histogram latency_preempt;
	/* The Prometheus fallback (prom.h). */
	atomic_ulong prom_refreshes;
	atomic_ulong prom_failures;
	atomic_ulong prom_values_dropped;
	struct registry_histogram latency_prometheus;
};

/* Records one latency; lock-free, safe from any thread. */
void registry_observe(struct registry_histogram *h, uint64_t ns);

/* Bucket i's upper bound in seconds, i < REGISTRY_LATENCY_BUCKETS. */
double registry_bucket_seconds(size_t i);

#endif
