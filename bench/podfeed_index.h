/* bench/podfeed.h's pods as the pod watch hands them to the scorer's pod
 * index: what the benches that join reports to pods (podjoin_cost,
 * pressure_cost) fill it with. */
#ifndef NETSCHED_BENCH_PODFEED_INDEX_H
#define NETSCHED_BENCH_PODFEED_INDEX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/podfeed.h"
#include "scorer/parse/kubepod.h"
#include "scorer/pods/podindex.h"

/* Node n's first pods pods, at now_ns (the index's clock) and unix_ms:
 * running for age_s seconds, or not running when age_s < 0. */
static inline void podfeed_index_node(struct podindex *x, uint64_t n, uint64_t pods,
				      uint64_t now_ns, uint64_t unix_ms, int64_t age_s)
{
	char uid[32], name[32], rs[16], node[32];

	snprintf(node, sizeof(node), "node-%llu", (unsigned long long)n);
	for (uint64_t j = 0; j < pods && j < PODFEED_MAX_PODS; j++) {
		struct kubepod p = { .ns = { "feed", 4 }, .running = age_s >= 0, .n_ips = 1 };

		snprintf(uid, sizeof(uid), "feed-%llu-%llu", (unsigned long long)n,
			 (unsigned long long)j);
		snprintf(name, sizeof(name), "p-%llu-%llu", (unsigned long long)n,
			 (unsigned long long)j);
		snprintf(rs, sizeof(rs), "d%llu-abc12", (unsigned long long)(j % 8));
		p.uid.len = strlen(uid);
		memcpy(p.uid.s, uid, p.uid.len);
		p.name = (struct kubepod_str){ name, strlen(name) };
		p.node = (struct kubepod_str){ node, strlen(node) };
		p.ips[0] = podfeed_ip(n, j);
		p.started_unix_s = (int64_t)(unix_ms / 1000) - age_s;
		p.owner.kind = (struct kubepod_str){ "ReplicaSet", 10 };
		p.owner.name = (struct kubepod_str){ rs, strlen(rs) };
		p.owner.template_hash = (struct kubepod_str){ "abc12", 5 };
		podindex_update(x, &p, now_ns, unix_ms);
	}
}

#endif
