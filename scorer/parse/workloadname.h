/* The bounds of a workload's name, "namespace/Kind/name" (workload.h): the
 * pod reader's owner kinds (kubepod.h) and the body of a move (movereq.h)
 * are held to them too, so a label the rebalancer posts fits wherever the
 * scorer prints one. */
#ifndef NETSCHED_WORKLOADNAME_H
#define NETSCHED_WORKLOADNAME_H

#include "parse/kubepod.h"

#define WORKLOAD_NS_MAX 63u		/* a namespace is a DNS label */
#define WORKLOAD_KIND_MAX KUBEPOD_KIND_MAX
#define WORKLOAD_NAME_MAX 253u
/* "namespace/Kind/name": for /v1/workloads, /v1/nodes, /v1/moves and logs. */
#define WORKLOAD_LABEL_MAX (WORKLOAD_NS_MAX + WORKLOAD_KIND_MAX + WORKLOAD_NAME_MAX + 2)

#endif
