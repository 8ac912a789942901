/* The body of POST /v1/moves (pods/moves.h): one move the rebalancer
 * announces before it evicts a pod, read strictly with the scorer's JSON
 * reader (json.h): every field required, each once, none other, each of its
 * kind and within its bounds, so a body the scorer takes is exactly one
 * move it can act on, and any other gets a message naming the field, the
 * value's problem and the limit. */
#ifndef NETSCHED_MOVEREQ_H
#define NETSCHED_MOVEREQ_H

#include <stddef.h>
#include <stdint.h>

#include "nodename.h"
#include "parse/poduid.h"
#include "parse/workloadname.h"

/* A move's body: one short object. */
#define MOVEREQ_BODY_MAX 4096u
#define MOVEREQ_HOLD_MIN_S 1u
#define MOVEREQ_HOLD_MAX_S 3600u
#define MOVEREQ_NS_MAX 63u		/* a namespace is a DNS label */
#define MOVEREQ_POD_MAX 253u		/* a pod's name a DNS subdomain */

/* One move, as posted (movereq_parse()). NUL-terminated strings. */
struct movereq {
	char ns[MOVEREQ_NS_MAX + 1];
	char pod[MOVEREQ_POD_MAX + 1];
	char uid[POD_UID_MAX + 1];
	char workload[WORKLOAD_LABEL_MAX + 1];
	char from[NODENAME_MAX_LEN + 1];
	char to[NODENAME_MAX_LEN + 1];
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
	uint32_t hold_s;
};

/* Parses a POST /v1/moves body: one JSON object with exactly the fields
 * above (namespace, pod, uid, workload, from, to, rxBytesPerSecond,
 * txBytesPerSecond, holdSeconds), each once, of the right kind and within
 * its bounds: names as the apiserver accepts them, rates whole numbers of
 * bytes per second up to TRAFFIC_MAX_BYTES_PER_SECOND, holdSeconds in
 * [MOVEREQ_HOLD_MIN_S, MOVEREQ_HOLD_MAX_S]. 0; or -EINVAL (-E2BIG for a body
 * over MOVEREQ_BODY_MAX, -ERANGE for a whole number out of its range:
 * holdSeconds, or a rate over TRAFFIC_MAX_BYTES_PER_SECOND) with
 * err naming the field, the value's problem and
 * the limit; *out is then unspecified. Whether the nodes exist, differ and
 * what their links allow is the caller's to judge (it knows the nodes). */
int movereq_parse(const char *body, size_t len, struct movereq *out, char *err, size_t errlen);

#endif
