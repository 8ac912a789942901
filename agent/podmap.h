/* Which addresses are each pod interface's, from what the kernel says:
 *   routed CNIs (Calico, Cilium with per-endpoint routes, kindnet/ptp, the
 *     AWS VPC CNI): the /32 and /128 routes whose output interface it is,
 *     in any table (the main table's win over other tables');
 *   bridged CNIs (flannel, the bridge plugin): the bridge's neighbour
 *     entries (IP to MAC) and its forwarding database (MAC to port), where
 *     the port is the pod's interface. A route wins over a neighbour entry.
 * An address goes to one interface only, so a report never lists it twice.
 *
 * Built in one pass: podmap_begin() with the pod interfaces, podmap_add()
 * for each fact (nl_pod_facts() feeds them; facts about other interfaces
 * are dropped at once), podmap_end(). Between builds, podmap_notice() says
 * whether a route or neighbour notification changes anything, so the
 * neighbour table's state changes (REACHABLE to STALE and back, every few
 * seconds on a busy node) cost no rebuild. Every table is bounded; what
 * does not fit is counted in dropped. Pure: tested with recorded replies. */
#ifndef NETSCHED_PODMAP_H
#define NETSCHED_PODMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

/* Pod interfaces a node may have (the kubelet's default is 110 pods). */
#define PODMAP_MAX_IFACES 512u
/* Host routes and neighbour entries kept per build: four per pod. */
#define PODMAP_MAX_ADDRS (4u * PODMAP_MAX_IFACES)
#define PODMAP_MAX_FDB (2u * PODMAP_MAX_IFACES)

enum podmap_kind {
	PODMAP_ROUTE,	/* ip is reached through ifindex (a host route) */
	PODMAP_NEIGH,	/* ip has MAC mac on ifindex (a bridge) */
	PODMAP_FDB,	/* mac is behind port ifindex of bridge master */
};

/* One thing the kernel says (a dump entry or a notification). */
struct podmap_fact {
	enum podmap_kind kind;
	bool deleted;		/* a notification that it is gone (or failed) */
	struct report_ip ip;	/* ROUTE, NEIGH */
	uint8_t mac[6];		/* NEIGH, FDB */
	uint32_t ifindex;	/* ROUTE: its output interface; NEIGH: the device; FDB: the port */
	uint32_t master;	/* FDB: the bridge */
	uint32_t table;		/* ROUTE */
};

/* A pod interface, and the bridge it is a port of (0: none). */
struct podmap_iface {
	uint32_t ifindex;
	uint32_t master;
};

struct podmap_addr {
	struct report_ip ip;
	uint32_t ifindex;	/* the pod interface */
	uint8_t rank;		/* 0 main-table route, 1 other table, 2 neighbour */
	uint32_t order;		/* arrival, so equal ranks keep the first */
};

struct podmap_neigh {
	struct report_ip ip;
	uint32_t bridge;
	uint8_t mac[6];
};

struct podmap_fdb {
	uint8_t mac[6];
	uint32_t port;
};

struct podmap {
	size_t n_ifaces;
	struct podmap_iface ifaces[PODMAP_MAX_IFACES];	/* sorted by ifindex */
	size_t n_addrs;
	struct podmap_addr addrs[PODMAP_MAX_ADDRS];	/* the routes; then the result */
	size_t n_neigh;
	struct podmap_neigh neigh[PODMAP_MAX_ADDRS];
	size_t n_fdb;
	struct podmap_fdb fdb[PODMAP_MAX_FDB];
	uint64_t dropped;	/* facts over a bound, every build */
	uint64_t conflicts;	/* addresses claimed by two interfaces, every build */
};

/* Starts a build for the n pod interfaces (more than PODMAP_MAX_IFACES
 * are ignored); any order. */
void podmap_begin(struct podmap *m, const struct podmap_iface *ifaces, size_t n);
/* One fact of the dump (deleted ones are ignored). */
void podmap_add(struct podmap *m, const struct podmap_fact *f);
/* Ties the bridges' neighbours to ports and settles each address on one
 * interface. */
void podmap_end(struct podmap *m);

/* The addresses of pod interface ifindex, in address order, at most cap
 * into out; returns how many it has (more than cap: the rest left out). */
size_t podmap_lookup(const struct podmap *m, uint32_t ifindex, struct report_ip *out, size_t cap);

/* Whether a notification may change what the last build found. */
bool podmap_notice(const struct podmap *m, const struct podmap_fact *f);

#endif
