/* The rebalancer's HTTP endpoint (--metrics-listen ADDR:PORT): GET
 * /metrics (metrics.h renders the counters, which are atomics, so no lock
 * is shared with the control loop) and GET /healthz for the Deployment's
 * probes. One libmicrohttpd thread, guarded like the agent's endpoint
 * (common/httpguard.h): 32 connections, 4 per client address, headers
 * within 3 s, a request with a body answered 405 and never read. */
#ifndef NETSCHED_REBALANCER_HTTPD_H
#define NETSCHED_REBALANCER_HTTPD_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct rebal_httpd;

/* Listens on addr:port (port 0 picks one); m must outlive the server.
 * NULL with err set. */
struct rebal_httpd *rebal_httpd_start(const char *addr, uint16_t port, struct rebal_metrics *m,
				      char *err, size_t errlen);
/* Accepts NULL. */
void rebal_httpd_stop(struct rebal_httpd *h);
uint16_t rebal_httpd_port(const struct rebal_httpd *h);

#endif
