/* The agent's own HTTP endpoint (--metrics ADDR:PORT): GET /metrics in the
 * Prometheus text format, and GET /healthz for the DaemonSet's probes.
 *
 * The sampling loop publishes a snapshot after every report with
 * agent_metrics_publish(); the HTTP thread renders only from that snapshot, under
 * a mutex, so a slow or hostile scraper can never touch or delay sampling.
 * Served by libmicrohttpd from one internal thread (poll()), 32 connections
 * at most and 4 per client address, each of which must send its headers
 * within 3 s and is closed after 5 s idle. */
#ifndef NETSCHED_AGENT_METRICS_H
#define NETSCHED_AGENT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "sampler.h"
#include "sender.h"

struct agent_metrics;

/* Listens on addr:port (port 0 picks one). NULL with err set. */
struct agent_metrics *agent_metrics_start(const char *addr, uint16_t port, char *err, size_t errlen);
/* Accepts NULL. */
void agent_metrics_stop(struct agent_metrics *m);
uint16_t agent_metrics_port(const struct agent_metrics *m);

/* Copies what /metrics shows: the latest report, the sampler's per-interface
 * counts and the sender's per-scorer counts. Accepts m == NULL. */
void agent_metrics_publish(struct agent_metrics *m, const struct report *r, const struct sampler *sm,
		     struct sender *snd);

#endif
