/* The pod index's records, shared by its two halves and no one else:
 * podindex.c keeps them (the watch's events, the nodes, the addresses),
 * podjoin.c joins the agents' reports onto them. Both run under the
 * index's one lock. */
#ifndef NETSCHED_PODINDEX_INT_H
#define NETSCHED_PODINDEX_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hash.h"
#include "log.h"
#include "pods/podindex.h"
#include "slotindex.h"

#define NONE (-1)
/* A pod's address in the global address table: slot * KUBEPOD_MAX_IPS + k. */
#define IPREF(slot, k) ((int32_t)((slot) * (int32_t)KUBEPOD_MAX_IPS + (int32_t)(k)))
#define IPREF_POD(r) ((r) / (int32_t)KUBEPOD_MAX_IPS)
#define IPREF_K(r) ((r) % (int32_t)KUBEPOD_MAX_IPS)

/* What the join needs of a pod, kept with its node's other pods in one
 * array: a report is joined without touching a pod record (550,000 of
 * them at 5,000 nodes are far out of cache; one node's pods are a few kB). */
struct member {
	int32_t pod;			/* its slot in pods[] */
	uint32_t gen;			/* the slot's generation: samples name the pod */
	int32_t workload;		/* NONE: none */
	uint32_t joined;		/* its node's stamp when a report last listed it */
	bool running;
	uint8_t n_ips;
	struct report_ip ips[KUBEPOD_MAX_IPS];
	uint64_t started_ns;		/* running since (monotonic); 0: not running */
	uint64_t rx, tx;		/* its latest window's rates */
	uint64_t reading;		/* the agent's reading last sampled (fingerprint); 0: none */
	uint64_t read_ns;		/* when it was first seen */
};

/* One address of a node's member, in the node's own open-addressed table:
 * ref = member * KUBEPOD_MAX_IPS + k, NONE empty. */
struct islot {
	uint32_t hash;
	int32_t ref;
};

struct xpod {
	int32_t ip_next[KUBEPOD_MAX_IPS];	/* global address chains (IPREF) */
	uint32_t gen;			/* bumped on reuse */
	uint32_t epoch;			/* the list that last named it */
	int32_t node;
	uint32_t member;		/* its index in its node's members */
	uint8_t uid_len;
	uint8_t n_ips;
	char uid[POD_UID_MAX];
	char label[PODINDEX_LABEL_MAX + 1];
	struct report_ip ips[KUBEPOD_MAX_IPS];
};

struct top {
	int32_t pod;
	uint32_t gen;
	uint64_t rx, tx;
};

struct xnode {
	uint32_t gen;			/* bumped on reuse: a workload sample's node (workload.h) */
	uint16_t len;
	char name[NODENAME_MAX_LEN + 1];
	struct member *m;		/* its pods; pods of them used */
	uint32_t pods;			/* 0: a free slot */
	uint32_t cap;
	uint32_t running;		/* ... that run */
	struct islot *tab;		/* its members' addresses; rebuilt when dirty */
	uint32_t tab_mask;
	bool dirty;
	uint32_t stamp;			/* reports joined */
	uint64_t reported_ns;		/* the latest join; 0: none */
	uint64_t pod_rx, pod_tx;	/* what its pods moved then, all together, as vouched */
	uint64_t link;			/* its link then (report_node_link()); 0: unknown */
	uint32_t pods_seen;		/* ... how many pod interfaces the agent measured */
	unsigned n_top;
	struct top top[PODINDEX_TOP];
};

struct podindex {
	pthread_mutex_t lock;
	struct podindex_config cfg;
	struct workload *wl;
	struct xpod *pods;
	struct slotindex pod_ix;	/* by uid */
	int32_t *ip_buckets;
	uint32_t ip_mask;
	struct xnode *nodes;
	struct slotindex node_ix;	/* by name; a slot's arrays stay when freed */
	uint32_t epoch;
	bool listing;
	uint64_t link_ceiling;		/* the cluster's fastest known link (set) */
	uint64_t *per_pod;		/* max_nodes x 2: the tick's per-node averages */
	struct podindex_stats st;
	struct log_limit log;
	struct log_limit nic_log;	/* pods' figures over their NIC's */
};

static inline uint32_t hash32(const void *p, size_t len)
{
	uint64_t h = hash_fnv1a(p, len);

	return (uint32_t)(h ^ (h >> 32));
}

static inline uint32_t ip_hash(const struct report_ip *ip)
{
	return hash32(ip->addr, ip->len <= sizeof(ip->addr) ? ip->len : sizeof(ip->addr));
}

/* The sample key of a pod: unique while the index lives. */
static inline uint64_t pod_key(const struct member *m)
{
	return ((uint64_t)m->gen << 32) | (uint64_t)(m->pod + 1);
}

/* Node name[0..len)'s slot (h: hash32() of it); NONE when not indexed. */
int32_t podindex_find_node(const struct podindex *x, const char *name, size_t len, uint32_t h);

/* Node n's address table from its members, when they changed: 0 or
 * -ENOMEM. */
int podindex_node_table(struct xnode *n);

#endif
