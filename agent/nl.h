/* The rtnetlink counter source (libmnl): RTM_GETLINK to find an interface by
 * name, RTM_GETSTATS with IFLA_STATS_LINK_64 to read the 64-bit counters of
 * every interface in one dump (5-12x cheaper than a GETLINK dump).
 *
 * A netlink socket belongs to the network namespace it was opened in, so
 * open it inside the namespace to be read (see netns.h); it keeps reading
 * that namespace after the caller has switched back. Reading link stats
 * needs no privilege. Every call is bounded by a receive timeout: a kernel
 * that never answers cannot hang the agent. Not thread-safe. */
#ifndef NETSCHED_NL_H
#define NETSCHED_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ifreading.h"
#include "ifselect.h"
#include "podmap.h"

struct nl;

/* NULL on failure with err naming the step and strerror. pods: also
 * subscribe to route and neighbour notifications (nl_pod_changes()), here,
 * in the namespace being read. */
struct nl *nl_open(bool pods, char *err, size_t errlen);
/* Accepts NULL. */
void nl_close(struct nl *nl);

/* The node named in log lines (borrowed; "?" until set). */
void nl_set_node(struct nl *nl, const char *node);

/* Keeping the request socket in step with the kernel.
 *
 * A dump's replies come over several datagrams, and the kernel refuses a
 * new dump on a socket (EBUSY) until the running one has been read to its
 * end. So a dump that ends early on our side (interrupted: links changed
 * under it and the kernel flagged NLM_F_DUMP_INTR; an error; a timeout)
 * is always read to its end or drained, replies to earlier requests
 * (stale: another sequence number) are skipped and counted, never taken
 * for this request's, and the request is retried: NL_TRIES in all. A
 * socket still out of step (no answer in time, replies lost to an
 * overrun, or stale replies after a drain) is closed and opened again in
 * the namespace it read. The request socket carries no subscriptions;
 * the notification sockets are separate, and an overrun on them already
 * means "look again": a full dump (nl_links_changed(), nl_pod_changes()). */
#define NL_TRIES 4
/* Datagrams read for one request at most, stale ones included: a dump of
 * SAMPLER_MAX_LINKS links is ~200 of them. */
#define NL_READ_MAX 4096

/* Counts since nl_open(), for /metrics (every one a uint64_t). */
struct nl_health {
	uint64_t requests;	/* dumps and batches of requests sent (not retries) */
	uint64_t interrupted;	/* dumps the kernel flagged NLM_F_DUMP_INTR */
	uint64_t retries;	/* requests sent again after a failed try */
	uint64_t stale;		/* replies to earlier requests, skipped */
	uint64_t failed;	/* requests that failed every try */
	uint64_t reopens;	/* times the socket was opened anew */
	uint64_t reopen_errors;	/* times that failed (the old one kept) */
};
void nl_health(const struct nl *nl, struct nl_health *out);

/* The socket seam, for tests: a fake kernel in place of the socket
 * (tests/unit/fake_netlink.h). send takes one buffer of requests (0 or
 * -errno); recv gives one datagram (its length or -errno; -EAGAIN when
 * nothing came: at once with wait false, else after the timeout); reopen
 * gives a fresh socket, its port id in *portid (0 or -errno). */
struct nl_io {
	int (*send)(void *ctx, const void *buf, size_t len);
	ssize_t (*recv)(void *ctx, void *buf, size_t cap, bool wait);
	int (*reopen)(void *ctx, uint32_t *portid);
	void *ctx;
};
/* An nl over io (borrowed), port id portid, without notification sockets:
 * nl_links_changed() and nl_pod_changes() say nothing changed. NULL when
 * out of memory. */
struct nl *nl_open_io(const struct nl_io *io, uint32_t portid);

/* Whether any link was added, removed or changed since the last call: a
 * second socket subscribed to RTMGRP_LINK, drained without blocking (one
 * recv when nothing happened). A lost notification (socket overrun) counts
 * as a change. */
bool nl_links_changed(struct nl *nl);

/* The ifindex of the interface called name: 0, -ENODEV, or -errno. */
int nl_ifindex(struct nl *nl, const char *name, uint32_t *ifindex);

/* Every link with its kind, bond membership and whether a default route
 * (main table, IPv4 or IPv6, including multipath next hops) leaves through
 * it. Fills up to cap entries and sets *n; -E2BIG when there were more
 * (the first cap are still filled), else 0 or -errno. */
int nl_links(struct nl *nl, struct ifselect_link *links, size_t cap, size_t *n);

/* Called once per interface in a stats dump. bits is 64, or 32 when the
 * kernel only has 32-bit counters for it (the caller handles the wrap). */
typedef void (*nl_stats_fn)(void *ctx, uint32_t ifindex, const struct ifreading *c,
			    unsigned bits);

/* Reads the counters of n interfaces with n RTM_GETSTATS requests in one
 * send, for when they are few among many links: a dump walks every link.
 * An interface that is gone is simply not reported. 0 or -errno. */
#define NL_MAX_BATCH 64
int nl_read_stats(struct nl *nl, const uint32_t *ifindexes, size_t n, nl_stats_fn fn, void *ctx);

/* Dumps the counters of every interface: RTM_GETSTATS, or where the kernel
 * lacks it (before 4.7) an RTM_GETLINK dump's IFLA_STATS64, else IFLA_STATS.
 * 0 or -errno; on error fn may have been called for some interfaces. */
int nl_dump_stats(struct nl *nl, nl_stats_fn fn, void *ctx);

/* What ties pods' interfaces to their addresses (podmap.h), each fact
 * once to fn: host routes (/32, /128, any table); with bridges, also the
 * IPv4 and IPv6 neighbour entries that name a MAC and the bridges' FDB
 * entries of learned or static addresses on a port. Readable unprivileged.
 * 0 or -errno. */
typedef void (*nl_fact_fn)(void *ctx, const struct podmap_fact *f);
int nl_pod_facts(struct nl *nl, bool bridges, nl_fact_fn fn, void *ctx);

/* Whether route and neighbour notifications come (nl_open() with pods,
 * and the subscription worked). */
bool nl_pod_watch(const struct nl *nl);
/* Drains them without blocking, fn once per fact (a removed route or
 * entry, or a neighbour that failed, comes deleted). true when some were
 * lost (socket overrun): everything may have changed. */
bool nl_pod_changes(struct nl *nl, nl_fact_fn fn, void *ctx);

/* The replies alone, as the calls above read them (tests feed recorded
 * ones: tests/fixtures/netlink/). buf holds netlink messages as the kernel
 * sent them, one or more datagrams back to back, 4-byte aligned; each
 * returns 0 at its end or at NLMSG_DONE, -errno at an error message or a
 * malformed one (what came before it is reported). Messages of other
 * types, attributes too short to trust and links without a name are
 * skipped, never guessed at. */

/* RTM_NEWSTATS (IFLA_STATS_LINK_64) or RTM_NEWLINK (IFLA_STATS64, else
 * IFLA_STATS: bits 32) messages: fn once per interface. */
int nl_parse_stats(const void *buf, size_t len, nl_stats_fn fn, void *ctx);

/* RTM_NEWLINK messages: up to cap links, *n of them; -E2BIG past cap. */
int nl_parse_links(const void *buf, size_t len, struct ifselect_link *links, size_t cap,
		   size_t *n);

/* RTM_NEWROUTE messages: marks the links[0..n) a main-table default route
 * (or one of its next hops) leaves through. */
int nl_parse_routes(const void *buf, size_t len, struct ifselect_link *links, size_t n);

/* RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWNEIGH and RTM_DELNEIGH messages (route
 * and neighbour dumps, the bridge FDB, notifications): fn once per fact,
 * as nl_pod_facts() and nl_pod_changes() give them. */
int nl_parse_facts(const void *buf, size_t len, nl_fact_fn fn, void *ctx);

#endif
