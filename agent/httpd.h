/* The agent's own HTTP endpoint (--metrics ADDR:PORT): GET /metrics
 * (agent/metrics.h renders it) and GET /healthz for the DaemonSet's probes,
 * served by common/metricsd.h (its limits and guard).
 *
 * The sampling loop publishes a snapshot after every report with
 * agent_httpd_publish(); the HTTP thread renders only from that snapshot,
 * under a mutex, so a slow or hostile client can never touch or delay
 * sampling. */
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
