/* A small read-only HTTP endpoint for a process's own /metrics and /healthz
 * (the agent's --metrics, the rebalancer's --metrics-listen): GET /metrics
 * renders the page through the owner's callback, GET /healthz answers "ok".
 *
 * Served by libmicrohttpd from one internal thread (poll()), guarded like
 * the scorer's ports (common/httpguard.h): 32 connections at once and 4
 * per client address; over 4 from one address, its oldest silent
 * connection makes room (never the newcomer: the kubelet probes from the
 * node's address, which a hostNetwork pod shares); over 32, the new
 * connection makes room fairly (one of the address holding the most, a
 * silent or idle one first), so the kubelet's probe always gets in however
 * many addresses hold on. Headers within 3 s; a request with a body is
 * answered at once (405) and its body never read; a reply taken at 64 KiB/s
 * at least; 5 s idle at most. The callback runs on the HTTP thread: it
 * must render from what the owner published for it (a snapshot under a
 * lock, atomics), never touch the owner's working state. */
#ifndef NETSCHED_METRICSD_H
#define NETSCHED_METRICSD_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* What the guard did, for the page (netsched_*_http_* counters). */
struct metricsd_counters {
	unsigned long deadline_closes;
	unsigned long reclaimed_idle;
	unsigned long reclaimed_busiest;
};

/* Appends the Prometheus text page to b (at most 256 KiB). */
typedef void (*metricsd_render_fn)(void *ctx, const struct metricsd_counters *c, struct buf *b);

struct metricsd;

/* Listens on addr:port (port 0 picks one); flag names the option in errors
 * ("--metrics"). render and ctx must outlive the server. NULL with err. */
struct metricsd *metricsd_start(const char *addr, uint16_t port, const char *flag,
				metricsd_render_fn render, void *ctx, char *err, size_t errlen);
/* Accepts NULL. */
void metricsd_stop(struct metricsd *d);
uint16_t metricsd_port(const struct metricsd *d);

#endif
