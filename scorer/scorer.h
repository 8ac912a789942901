/* The scorer's shared state: what every request handler and the ingest
 * thread see. Built once in main(), read-only afterwards except for the table
 * (locked inside) and the counters (atomic). */
#ifndef NETSCHED_SCORER_H
#define NETSCHED_SCORER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "keyfile.h"
#include "policy.h"
#include "table.h"

/* Bounds on what the scheduler may send. The defaults fit a 5,000-node
 * cluster in full-Node mode (~4 KB per node object, ~21 MB). */
struct scorer_limits {
	size_t max_body_bytes;		/* larger -> 413 */
	size_t max_nodes;		/* more nodes in one request -> 400 */
	size_t max_json_tokens;		/* more JSON tokens -> 400 */
};

#define SCORER_DEFAULT_MAX_BODY_BYTES (32u * 1024u * 1024u)
#define SCORER_DEFAULT_MAX_NODES 10000u
#define SCORER_DEFAULT_MAX_JSON_TOKENS (4u * 1024u * 1024u)
#define SCORER_DEFAULT_MAX_TRACKED_NODES 10000u

/* Latency histogram; see metrics.h. */
#define SCORER_LATENCY_BUCKETS 12
struct scorer_histogram {
	atomic_ulong buckets[SCORER_LATENCY_BUCKETS + 1];
	atomic_ulong sum_ns;
	atomic_ulong count;
};

struct scorer_counters {
	atomic_ulong reports_accepted;
	atomic_ulong reports_duplicate;
	atomic_ulong reports_malformed;	/* not a report, or over a size/count limit */
	atomic_ulong reports_version;	/* a wire version we do not speak */
	atomic_ulong reports_absurd;	/* values no NIC can produce */
	atomic_ulong reports_unsigned;	/* no signature while --key-file is set */
	atomic_ulong reports_forged;	/* unknown key or a signature that does not match */
	atomic_ulong reports_replayed;	/* signed, but an old sequence or outside the time window */
	atomic_ulong reports_table_full;
	atomic_ulong requests_filter;
	atomic_ulong requests_prioritize;
	atomic_ulong requests_bad;	/* 4xx answers */
	struct scorer_histogram latency_filter;
	struct scorer_histogram latency_prioritize;
	/* The Prometheus fallback (prom.h). */
	atomic_ulong prom_refreshes;
	atomic_ulong prom_failures;
	atomic_ulong prom_values_dropped;
	struct scorer_histogram latency_prometheus;
};

struct prom;

struct scorer {
	struct table *table;
	struct prom *prom;		/* the fallback, NULL when not configured */
	enum policy_kind policy;
	enum policy_direction direction;
	struct filter_config filter;
	/* --key-file: reports must be signed by one of these (keys.n == 0:
	 * unsigned reports are accepted). Read and reloaded by the ingest
	 * thread only. */
	const char *key_file;
	struct keyfile keys;
	uint64_t stale_after_ns;	/* a report older than this is ignored */
	uint64_t warmup_ns;		/* /readyz says ready after this even without data */
	struct scorer_limits limits;
	/* Monotonic clock in ns; tests replace it to move time. */
	uint64_t (*now_ns)(void);
	uint64_t started_mono_ns;
	struct scorer_counters counters;
};

#endif
