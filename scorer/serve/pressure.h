/* GET /v1/pressure?hot=F: the compact view the rebalancer reads
 * (docs/design.md, "The rebalancer's channel"): one short object per
 * tracked node, sorted by name, and the pods of the hot ones.
 *
 *   {"hot":0.900,"windowSeconds":30,"nodes":[{"name":"node-3","fresh":true,
 *    "reports":1234,"linkBytesPerSecond":125000000,"rxBytesPerSecond":...,
 *    "txBytesPerSecond":...,"inflightRxBytesPerSecond":...,
 *    "inflightTxBytesPerSecond":...,"heldForWorkloads":0,"pods":[...]}]}
 *
 * rx/tx are each direction's level as the configured policy scores it
 * (fit_level(): pressure, the average otherwise), without the pods in
 * flight, which inflight* give (the moves' reservations included); both
 * 0 on a node without fresh agent data ("fresh": false). A node is hot
 * when rx or tx is at least hot x its link (a link of unknown speed is
 * never hot); a hot node carries "pods": the running pods its latest
 * report listed (podindex.h), the largest by max(rx, tx) first, at most
 * PRESSURE_MAX_PODS, each with its namespace, name, uid and workload
 * (/v1/workloads' label). A pod whose "namespace/name" the index had to
 * truncate has both empty: it cannot be named to the Eviction API.
 *
 * Bounded: pods for at most PRESSURE_MAX_POD_NODES hot nodes (the hottest
 * by utilization); the others have no "pods" and the reply's
 * "hotNodesWithoutPods" counts them. Rendered on the HTTP server's
 * big-request thread, off the scheduler's. */
#ifndef NETSCHED_PRESSURE_H
#define NETSCHED_PRESSURE_H

#include <stddef.h>
#include <stdint.h>

struct scorer;
struct reply;

#define PRESSURE_MAX_PODS 32u
#define PRESSURE_MAX_POD_NODES 512u
/* hot, in thousandths of a link. */
#define PRESSURE_HOT_DEFAULT_MILLI 900u
#define PRESSURE_HOT_MIN_MILLI 50u
#define PRESSURE_HOT_MAX_MILLI 1000u

/* Reads hot (as received in the query; NULL: absent, the default) into
 * thousandths: a decimal fraction with at most 3 decimals in
 * [0.05, 1.0]. 0, or -EINVAL with err saying what and the range. */
int pressure_hot(const char *v, uint32_t *milli, char *err, size_t errlen);

/* The reply to GET /v1/pressure with hot (NULL: absent): 200 with the
 * view, or 400 naming a bad hot. */
void pressure_reply(struct scorer *s, const char *hot, struct reply *out);

#endif
