/* The pods a synthetic node runs, the same in every tool that fakes them:
 * bench/feed.c (--pods: reports that list them), bench/ingest_join.c (the
 * pod index that knows them) and tests/tools/apiserver_stub.py (mode pods:
 * an apiserver that lists them). Node n's pod j (j < 254) is
 * feed/p-<n>-<j>, a replica of Deployment feed/d<j % 8> (ReplicaSet
 * d<j % 8>-abc12), at 10.<n / 256 % 256>.<n % 256>.<j + 1>, moving
 * (pods - j) kB/s in and a tenth of that out: the busiest first. */
#ifndef NETSCHED_BENCH_PODFEED_H
#define NETSCHED_BENCH_PODFEED_H

#include <stdint.h>
#include <string.h>

#include "proto/report.h"

#define PODFEED_MAX_PODS 254u

static inline struct report_ip podfeed_ip(uint64_t node, uint64_t pod)
{
	struct report_ip ip = { .len = 4 };

	ip.addr[0] = 10;
	ip.addr[1] = (uint8_t)(node >> 8);
	ip.addr[2] = (uint8_t)node;
	ip.addr[3] = (uint8_t)(pod + 1);
	return ip;
}

/* Adds node's pods pods to r over its window (r->ifaces[0]'s covered
 * time): the busiest REPORT_MAX_PODS listed, the rest summed; and their
 * traffic to r->ifaces[0], as a real node's NIC carries its pods' (the
 * scorer holds a node's pods to what its NIC counted). */
static inline void podfeed_fill(struct report *r, uint64_t node, uint64_t pods)
{
	uint64_t ms = r->ifaces[0].traffic.covered_ms, rest_rx = 0, rest_tx = 0;
	uint64_t all_rx = 0, all_tx = 0;

	r->has_pods = true;
	r->pods_seen = (uint32_t)pods;
	r->n_pods = 0;
	for (uint64_t j = 0; j < pods && j < PODFEED_MAX_PODS; j++) {
		uint64_t rx = (pods - j) * 1000 * ms / 1000, tx = rx / 10;

		all_rx += rx;
		all_tx += tx;

		if (j < REPORT_MAX_PODS) {
			struct report_pod *p = &r->pods[r->n_pods++];

			memset(p, 0, sizeof(*p));
			p->n_ips = 1;
			p->ips[0] = podfeed_ip(node, j);
			report_pod_count(p, rx, tx, ms);
		} else {
			rest_rx += rx;
			rest_tx += tx;
		}
	}
	memset(&r->pods_rest, 0, sizeof(r->pods_rest));
	report_pod_count(&r->pods_rest, rest_rx, rest_tx, ms);
	report_iface_count(&r->ifaces[0], r->ifaces[0].rx_bytes + all_rx,
			   r->ifaces[0].tx_bytes + all_tx, ms);
}

#endif
