/* The pods of a node, measured where their traffic crosses the host: the
 * host side of each pod's interface (podselect.h), with a window like a
 * NIC's (window.h) and the addresses it serves (podmap.h).
 *
 * Point of view: the report carries what the POD received and sent. The
 * host side of a pod's veth transmits what the pod receives, so a pod's rx
 * is its interface's tx counter and its tx the interface's rx counter;
 * the swap happens here, once, when the figures are made.
 *
 * Cost: pods are read every cfg.interval_ns (--pod-interval), not every
 * sample: the sampler then reads every link's counters in the one
 * RTM_GETSTATS dump it makes for the uplinks (sampler.h), and the figures a
 * report carries are made once per reading and copied into each report
 * until the next. That dump walks every link, cold: on a 2-core VM with 110
 * pods about 155 us, against 28 us for the uplink's own request (38 us and
 * 3 us hot), hence readings every 30 s by default. The address map is rebuilt only when a link, host route,
 * neighbour or FDB entry of a pod changes (netlink notifications, filtered
 * by podmap_notice()), and every PODS_MAP_REFRESH_NS in case one was lost
 * (PODS_MAP_POLL_NS without notifications).
 *
 * Windows: one per interface, by ifindex. A new interface (a re-created
 * one has a new ifindex) starts empty, so a re-created pod never shows a
 * spike; a counter that goes backwards re-primes; a missed reading is a
 * gap. When an interface's addresses change to ones that share none with
 * the last it had (even after a while with none), its window starts over:
 * they belong to another pod now. An address
 * that moves to another interface takes none of the old one's traffic.
 *
 * Bounded: PODS_MAX interfaces (more are counted and not measured), at
 * most REPORT_MAX_POD_IPS addresses each (more are counted and left out).
 * The struct owns its tables (pods_free()); it borrows nl. Not thread-safe. */
#ifndef NETSCHED_PODS_H
#define NETSCHED_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ifreading.h"
#include "ifselect.h"
#include "log.h"
#include "nl.h"
#include "podmap.h"
#include "podselect.h"
#include "report.h"
#include "window.h"

#define PODS_MAX PODMAP_MAX_IFACES
/* The address map is rebuilt at least this often in case a notification
 * was lost, and this often when none come (nl_pod_watch()). */
#define PODS_MAP_REFRESH_NS (300ULL * 1000000000ULL)
#define PODS_MAP_POLL_NS (30ULL * 1000000000ULL)

struct pods_config {
	const char *node;		/* for log lines */
	struct podselect_spec spec;
	struct ifselect_spec exclude;	/* --exclude-interfaces (its exclude list) */
	uint64_t interval_ns;		/* between readings (--pod-interval) */
	uint64_t slack_ns;		/* a reading this early is on time (half a sample) */
	uint64_t window_ns;
	uint32_t reported;		/* --pods-reported: pods listed by name */
};

struct pod_iface {
	uint32_t ifindex;
	char name[IFSELECT_NAME_MAX];
	uint32_t master;		/* its bridge, 0: routed */
	uint32_t n_ips;
	struct report_ip ips[REPORT_MAX_POD_IPS];
	/* The last addresses it had, kept while it has none (a bridged pod's
	 * neighbour entry expires while it idles): the pod they belong to. */
	uint32_t n_last;
	struct report_ip last[REPORT_MAX_POD_IPS];
	struct ifreading raw;		/* this reading, as the kernel counts: host side */
	bool seen;			/* whether this reading had it */
	struct window win;
};

/* What one pod's window holds, from the pod's point of view: the input of
 * pods_select(). */
struct pods_totals {
	uint32_t ifindex;
	uint32_t n_ips;
	const struct report_ip *ips;
	uint64_t rx_bytes, tx_bytes, covered_ms;
	uint64_t rx_recent, tx_recent;
};

/* Counts for /metrics (every one a uint64_t: its rows walk them). */
struct pods_health {
	uint64_t measured;		/* pod interfaces measured now */
	uint64_t with_ips;		/* of them, with an address known */
	uint64_t listed;		/* in the last reading's figures */
	uint64_t rx_bytes_per_second;	/* every pod's average added up, pod's view */
	uint64_t tx_bytes_per_second;
	uint64_t unmeasured;		/* times an interface was left out: over PODS_MAX */
	uint64_t addrs_dropped;		/* addresses over REPORT_MAX_POD_IPS on one interface */
	uint64_t resets, gaps, absurd;	/* every pod window's, ever */
	uint64_t restarts;		/* windows started over: addresses of another pod */
	uint64_t map_builds, map_errors;
	uint64_t withheld;		/* reports sent without pods (over the link) */
};

struct pods {
	struct pods_config cfg;
	struct nl *nl;
	size_t n;
	struct pod_iface *ifs;		/* PODS_MAX, sorted by ifindex */
	struct podmap *map;
	bool map_dirty;
	uint64_t map_every_ns;		/* PODS_MAP_REFRESH_NS, or _POLL_NS */
	uint64_t next_map_ns;
	uint64_t next_read_ns;
	bool reading;			/* between pods_begin_read() and pods_sample() */
	/* The figures of the last reading (gen counts them), copied into
	 * every report; whether they fit the node's link, judged once per
	 * figures and link. */
	bool have_figures;
	uint64_t gen, judged_gen, judged_link;
	bool fit;
	/* Interfaces measured at that reading: pods_sync() may forget some
	 * before the next one, and a report saying fewer seen than listed is
	 * refused whole, uplinks and all. */
	uint32_t n_seen;
	uint32_t n_listed;
	struct report_pod listed[REPORT_MAX_PODS];
	struct report_pod rest;
	struct pods_totals *scratch;	/* PODS_MAX, for pods_select() */
	struct pods_health health;
	uint64_t gone_resets, gone_gaps, gone_absurd; /* of windows since freed */
	bool warned_full;
	struct log_limit map_log, withheld_log, events_log;
};

/* 0, -EINVAL (no pods to measure by cfg) or -ENOMEM. nl NULL: no address
 * lookups (tests build p->map themselves and call pods_apply_map()). */
int pods_init(struct pods *p, struct nl *nl, const struct pods_config *cfg);
/* Accepts a zeroed or half-built struct. */
void pods_free(struct pods *p);

/* Which of the n links (a rescan) are pods' now: new ones are measured from
 * the next reading, gone ones forgotten. uplinks: the n_up ifindexes the
 * sampler measures, never pods'. */
void pods_sync(struct pods *p, const struct ifselect_link *links, size_t n,
	       const uint32_t *uplinks, size_t n_up);

/* Whether a reading is due at now_ns. */
bool pods_due(const struct pods *p, uint64_t now_ns);

/* Starts a reading at now_ns: rebuilds the address map if it may have
 * changed. Then the sampler feeds every link's counters to pods_on_stats()
 * and ends with pods_sample(). */
void pods_begin_read(struct pods *p, uint64_t now_ns);
void pods_on_stats(struct pods *p, uint32_t ifindex, const struct ifreading *c);
/* Gives each interface its addresses from p->map, just built: an
 * interface whose addresses share none with its last ones starts over. */
void pods_apply_map(struct pods *p);
/* Ends the reading: feeds the windows (read_ok false: a gap for every
 * pod) and makes the figures. link_bytes_per_second: the node's link (0:
 * unknown); a pod sample over twice it is dropped, as a NIC's is. */
void pods_sample(struct pods *p, uint64_t now_ns, uint64_t link_bytes_per_second, bool read_ok);

/* Puts the last reading's figures into r (has_pods, pods_seen, the pods
 * and the rest), after r's interfaces: when they add up to more than the
 * node's link allows (report.h), r goes without them, counted and logged. */
void pods_fill(struct pods *p, struct report *r, uint64_t now_ns);

void pods_health(const struct pods *p, struct pods_health *h);

/* The busiest pods with an address and a covered time, by rx + tx bytes
 * (ties: lower ifindex first), at most cap into listed; every other pod
 * summed into rest (no addresses; covered time the longest). Reorders in.
 * Returns how many were listed. */
uint32_t pods_select(struct pods_totals *in, size_t n, uint32_t cap, struct report_pod *listed,
		     struct report_pod *rest);

#endif
