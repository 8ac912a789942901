/* GET /metrics: the scorer's counters (registry.h) and node gauges (view.h)
 * in the Prometheus text format (0.0.4). No C client library for Prometheus
 * is packaged in Debian, so the format is written here and checked in tests
 * with `promtool check metrics`. */
#ifndef NETSCHED_METRICS_H
#define NETSCHED_METRICS_H

struct reply;
struct scorer;

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Same reply convention as reply.h; the body is METRICS_CONTENT_TYPE
 * (500 with no body if memory ran out). The caller frees the body. */
void metrics_render(struct scorer *s, struct reply *out);

#endif
