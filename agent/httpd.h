/* The agent's own HTTP endpoint (--metrics ADDR:PORT): GET /metrics
 * (agent/metrics.h renders it) and GET /healthz for the DaemonSet's probes.
 *
 * The sampling loop publishes a snapshot after every report with
 * agent_httpd_publish(); the HTTP thread renders only from that snapshot,
 * under a mutex, so a slow or hostile client can never touch or delay
 * sampling. Served by libmicrohttpd from one internal thread (poll()),
 * guarded like the scorer's ports (common/httpguard.h): 32 connections
 * at once and 4 per client address; over 4 from one address, its oldest
 * silent connection makes room (never the newcomer: the kubelet probes
 * from the node's address, which a hostNetwork pod shares); over 32, the
 * new connection makes room fairly (one of the address holding the most,
 * a silent or idle one first), so the kubelet's probe always gets in
 * however many addresses hold on. Headers
 * within 3 s; a request with a body is answered at once (405) and its body
 * never read; a reply taken at 64 KiB/s at least; 5 s idle at most. */
#ifndef NETSCHED_AGENT_HTTPD_H
#define NETSCHED_AGENT_HTTPD_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "sampler.h"
#include "sender.h"

struct agent_httpd;

/* Listens on addr:port (port 0 picks one). NULL with err set. */
struct agent_httpd *agent_httpd_start(const char *addr, uint16_t port, char *err, size_t errlen);
/* Accepts NULL. */
void agent_httpd_stop(struct agent_httpd *h);
uint16_t agent_httpd_port(const struct agent_httpd *h);

/* Copies what /metrics shows (agent_metrics_snapshot_fill()). Accepts
 * h == NULL. */
void agent_httpd_publish(struct agent_httpd *h, const struct report *r, const struct sampler *sm,
			 struct sender *snd);

#endif
