/* What the scorer learned of pods, shown (podindex.h, workload.h,
 * podweight.h): GET /v1/workloads, each node's top pods in /v1/nodes, and
 * the /metrics families that count the join and the workloads, so an
 * operator sees why a node is hot and what a pod of a workload will weigh.
 * Same reply convention as reply.h. */
#ifndef NETSCHED_PODSTATUS_H
#define NETSCHED_PODSTATUS_H

struct buf;
struct reply;
struct scorer;

/* Top pods per node in /metrics (netsched_scorer_node_top_pod_*): fewer
 * than /v1/nodes lists, for the scrape's size (6 series a node). */
#define PODSTATUS_METRIC_TOP 3u

/* {"enabled":true,"tracked":N,"capacity":M,"averagePerPod":{...},
 *  "workloads":[{"workload":"ns/Kind/name","namespace","kind","name",
 *  "pods","podsMeasured","learned","rxBytesPerSecond","txBytesPerSecond",
 *  "ageSeconds"}]}, sorted by workload; enabled false and no workloads
 * without a pod watch. */
void podstatus_workloads(struct scorer *s, struct reply *out);

/* ,"pods":{"top":[{"pod","workload","rxBytesPerSecond",
 * "txBytesPerSecond"}]}: node's busiest pods in its latest report (nothing
 * without a pod watch). */
void podstatus_node(struct buf *b, struct scorer *s, const char *node);

/* The pod index's and the workload model's families, and every node's
 * top PODSTATUS_METRIC_TOP pods (nothing without a pod watch). */
void podstatus_metrics(struct buf *b, struct scorer *s);

#endif
