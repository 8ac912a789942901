/* The scorer's shared state: what every request handler sees. Built once
 * in main(), read-only afterwards except for the table (locked inside; the
 * ingest writes it, ingest.h) and the counters (atomic). */
#ifndef NETSCHED_SCORER_H
#define NETSCHED_SCORER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/extreq.h"
#include "rules/filter.h"
#include "membudget.h"
#include "pods/podweight.h"
#include "rules/policy.h"
#include "counters/registry.h"
#include "nodes/view.h"

/* Bounds on what the scheduler may send. The defaults fit a 5,000-node
 * cluster in full-Node mode (~4 KB per node object, ~21 MB). */
struct scorer_limits {
	size_t max_body_bytes;		/* larger -> 413 */
	struct extreq_limits request;	/* nodes and JSON tokens -> 400 */
	unsigned connections_per_client; /* per client address; 0: the fallback below */
};

/* What http.c allows a scorer built without options (0 above);
 * --connections-per-client's default (options.c) is the same number, as
 * test_scorer_options checks. */
#define SCORER_DEFAULT_CONNECTIONS_PER_CLIENT 32u

struct podwatch;

struct scorer {
	/* The node table, the pods in flight, the fallback, what a pod weighs
	 * and the settings that judge them: what every answer reads, through
	 * the view (view.h). */
	struct view_sources view;
	struct podwatch *podwatch;	/* confirms them (podwatch.h); NULL: no apiserver access */
	/* --prioritize-reply compact: each score less the request's lowest,
	 * and hosts left at 0 not listed. The scheduler counts a requested
	 * host it is not told about as 0 and adds the extender's scores to
	 * every node alike, so it chooses as from the full list, with less
	 * JSON to decode: none at all when every node scores the same. */
	bool compact_scores;
	struct filter_config filter;
	/* --fit-filter: nodes a pod of known demand would overflow are left
	 * out while another fits it (extender.c, fit.h). */
	bool fit_filter;
	struct scorer_limits limits;
	/* Request bodies and their JSON tokens, all requests together, and
	 * the Prometheus fallback's reply (membudget.h);
	 * http_request_budget() sizes it and points limits.request.budget at
	 * it. */
	struct membudget request_memory;
	/* Monotonic clock in ns; tests replace it to move time. */
	uint64_t (*now_ns)(void);
	struct registry counters;	/* what /metrics reports (registry.h) */
};

#endif
