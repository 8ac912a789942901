/* The node table: the latest report of every node, in memory.
 *
 * One writer (ingest) and many readers (HTTP threads) share it under a
 * read-write lock; lookups copy a node out so no pointer into the table ever
 * escapes the lock. The number of nodes is fixed at creation and memory
 * never grows: a report for a new node when the table is full evicts the
 * stalest node if one is stale (table_evict_after), else it is refused. */
#ifndef NETSCHED_TABLE_H
#define NETSCHED_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/filter.h"
#include "namekey.h"
#include "nodename.h"
#include "rules/policy.h"
#include "report.h"

struct table_node {
	uint64_t instance_id;
	uint64_t seq;
	/* The latest report's window end (agent's clock, capped by ingest at
	 * ours): what orders a node's reports, whichever instance sent them. */
	uint64_t window_end_unix_ms;
	uint64_t arrival_mono_ns;	/* when the latest report arrived */
	/* How long before it arrived its newest figures were read: an
	 * interface whose newest samples the agent could not read
	 * (failed_samples) is that many samples behind; UINT64_MAX when one
	 * has nothing read in its window. 0 for a healthy agent. */
	uint64_t unread_ns;
	/* Our wall clock when it arrived minus its window's end, as the
	 * agent's clock reads it (before any cap): positive, the agent is
	 * behind (ingest.h bounds it; /metrics shows it). */
	int64_t clock_skew_ms;
	/* Its interfaces' figures added up (traffic_add()). */
	struct traffic traffic;
	uint32_t n_ifaces;
	/* Reports accepted from it since the scorer started (or since it took
	 * this slot): one more per report applied, so a reader polling
	 * /v1/pressure tells distinct reports from its own polls. */
	uint64_t reports;
	/* The maxUtilization rule, judged on every report (table_filter()). */
	struct filter_held held;
	/* For reasons and logs: the interface's name, or "eth0+2" for three. */
	char ifaces_label[REPORT_MAX_IFNAME_LEN + 12];
	/* Last: a name takes ~10-60 of these 254 bytes, and a lookup touches
	 * only the cache lines before it and the name's first (table_get()). */
	char name[NODENAME_MAX_LEN + 1];
};

/* A known node's report is newer when its window ends later than the
 * latest one's, whatever its instance id or sequence number: an earlier
 * agent instance's report, replayed after that agent restarted, is older
 * than what the new instance sent; and a forged sequence number (2^64 - 1
 * under the victim's instance id) cannot hold the node, since the real
 * agent's next window ends later. The sequence number only tells a
 * retransmission (a duplicate) from an outdated report. */
enum table_result {
	TABLE_APPLIED,		/* new node, or newer report of a known one */
	TABLE_DUPLICATE,	/* same agent instance, sequence and window not newer: ignored */
	TABLE_OUTDATED,		/* window ends no later than the node's latest: ignored */
	TABLE_EVICTED,		/* new node, applied in place of the stalest one */
	TABLE_FULL,		/* unknown node, no room and nothing stale: ignored */
};

struct table;

/* NULL on allocation failure. max_nodes > 0. */
struct table *table_create(size_t max_nodes);
/* Accepts NULL. */
void table_destroy(struct table *t);

/* A full table makes room for a new node by evicting the node whose latest
 * report is oldest, once that report is older than age_ns (0, the default:
 * never; a full table then refuses new nodes). Fresh nodes are never
 * evicted, so no flood of new names can push real nodes out. */
void table_evict_after(struct table *t, uint64_t age_ns);
uint64_t table_evictions(struct table *t);

/* The maxUtilization rule and direction every report is judged by
 * (filter_step()); until called, the rule is off and no node is held.
 * Transitions are logged with the node, its rate and the limit. */
void table_filter(struct table *t, const struct filter_config *cfg, enum policy_direction dir);

/* An agent whose clock steps back (NTP, a resumed VM) sends windows that
 * end before its latest one. Once the node's latest report is older than
 * age_ns (the scorer's staleness bound: the node counts as without data
 * anyway), the same instance's next sequence number is taken again
 * whatever its window. A captured report cannot use this: its sequence
 * number is not newer than the latest. 0, the default: never. */
void table_resync_after(struct table *t, uint64_t age_ns);

/* Applies a validated report that arrived at now_mono_ns. */
enum table_result table_apply(struct table *t, const struct report *r, uint64_t now_mono_ns);
/* The same, recording how far the agent's clock was from ours (table_node). */
enum table_result table_apply_skewed(struct table *t, const struct report *r,
				     uint64_t now_mono_ns, int64_t clock_skew_ms);

/* Copies the node named by name[0..len) into *out. false if unknown. */
bool table_get(struct table *t, const char *name, size_t len, struct table_node *out);

/* For each of keys[0..n) the table knows, in order: fn(i, its node, ctx),
 * all under one read lock, so fn must be quick and must not call back into
 * the table, and n must stay small (a request's lookups take it in chunks,
 * view.h says how big). A name of length 0 or above NODENAME_MAX_LEN is
 * never known. Returns how many were. While it looks up keys[i] it
 * fetches keys[i + TABLE_PREFETCH_AHEAD]'s node (table_prefetch()); a
 * caller with other work to do first announces the first ones itself. */
size_t table_get_each(struct table *t, const struct namekey *keys, size_t n,
		      void (*fn)(size_t i, const struct table_node *node, void *ctx), void *ctx);

/* Copies up to cap nodes into out (any order); returns how many. */
size_t table_snapshot(struct table *t, struct table_node *out, size_t cap);
/* Calls fn for every node (any order) under the read lock, so fn must be
 * quick and must not call back into the table: a once-a-second summary
 * without copying the table (a 5,000-node snapshot was a fresh 3.7 MB
 * mapping and ~2 ms of CPU each second, which a concurrent request's
 * latency felt on 2 cores). */
void table_each(struct table *t, void (*fn)(const struct table_node *n, void *ctx), void *ctx);
size_t table_count(struct table *t);
/* How long before now_ns n's latest report arrived; 0 when it arrived after
 * now_ns was read (a reader racing ingest): as fresh as it gets,
 * never a wrapped-around age. */
uint64_t table_node_age_ns(const struct table_node *n, uint64_t now_ns);
/* How old the node's figures are: its latest report's age plus its
 * unread_ns (saturating). What freshness is judged on: a report whose NIC
 * could not be read is no fresh data, however new, and a node whose
 * agent's samples keep failing goes stale (neutral), never idle. */
uint64_t table_node_data_age_ns(const struct table_node *n, uint64_t now_ns);
/* Nodes whose figures are at most max_age_ns old at now_ns (data age). */
size_t table_count_fresh(struct table *t, uint64_t now_ns, uint64_t max_age_ns);
size_t table_capacity(const struct table *t);

/* A lookup takes ~50 ns, a node fetched from memory ~100. */
#define TABLE_PREFETCH_AHEAD 8u

/* Says a table_get() of key is coming: its node is fetched into the cache
 * while the lookups before it run. A prioritize looks up thousands of
 * names in random order, each node a cache miss; fetched 8 lookups ahead,
 * a 5,000-name prioritize took 10% less CPU. Takes no lock. */
void table_prefetch(const struct table *t, const struct namekey *key);

#endif
