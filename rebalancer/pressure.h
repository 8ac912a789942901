/* Reading the scorer's GET /v1/pressure reply (the contract between the
 * scorer and the rebalancer, issue 37) into a decide_snapshot: every node's
 * freshness, reports counter, link, rates and in-flight rates, and the top
 * pods of the nodes over the threshold.
 *
 * What the scorer says decides evictions, so it is read as strictly as any
 * outside input: a field of the wrong type, a name too long for its buffer,
 * more nodes than DECIDE_NODES_MAX or more pods than DECIDE_PODS_PER_NODE
 * on a node, two nodes of one name: an error naming the field, and nothing
 * is kept. Unknown fields are ignored (a newer scorer may add some). */
#ifndef NETSCHED_REBALANCER_PRESSURE_H
#define NETSCHED_REBALANCER_PRESSURE_H

#include <stddef.h>
#include <stdint.h>

#include "decide.h"

/* The largest reply read: 5,000 nodes at about 300 bytes, and 32 pods of
 * about 250 bytes on each node over the threshold, with room. */
#define PRESSURE_BODY_MAX (32u * 1024u * 1024u)

/* Parses len bytes of js into *s (now_s set by the caller). 0, or -EINVAL /
 * -E2BIG / -ENOMEM with err saying what and where; *s is then empty. The
 * pods' Kubernetes facts are left unknown (known false). */
int pressure_parse(const char *js, size_t len, struct decide_snapshot *s, char *err,
		   size_t errlen);

#endif
