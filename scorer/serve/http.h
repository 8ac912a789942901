/* The scorer's HTTP server (libmicrohttpd): the extender verbs and the
 * status endpoints.
 *
 *   POST <any prefix>/filter       ext_filter()
 *   POST <any prefix>/prioritize   ext_prioritize()
 *   POST <any prefix>/preempt      ext_preempt()
 *   GET  /healthz                  status_healthz()   process alive
 *   GET  /readyz                   status_readyz()    200, or 503 until warmed up
 *   GET  /metrics                  metrics_render()   Prometheus text format
 *   GET  /v1/nodes                 status_nodes()
 *   GET  /v1/workloads             status_workloads()
 *   GET  /v1/pressure?hot=F        pressure_reply()   the rebalancer's view
 *   GET  /v1/moves                 movesroute_list()
 *   POST /v1/moves                 movesroute_post()  body <= MOVEREQ_BODY_MAX
 * (the last three on the extender's listener only, behind its TLS and
 * client-certificate checks)
 * (HEAD works wherever GET does.)
 *
 * A known path with the wrong method gets 405 with an Allow header, any
 * other path 404, a body over s->limits.max_body_bytes 413 (judged by
 * Content-Length before any byte is read, and again while a chunked body
 * arrives). Every reply is application/json except /metrics (text/plain,
 * version 0.0.4); errors are {"error":"..."}.
 * Bodies buffered across all connections together, and the JSON tokens
 * parsed from them, share one budget (s->request_memory, four bodies of the
 * largest size, an eighth kept for requests under 1 MiB; 503 when full),
 * so no mix of clients can grow memory past it; the Prometheus fallback's
 * replies take from it too (prom.h).
 * /v1/nodes and /metrics are rendered on a thread of their own (one at a
 * time, off the scheduler's threads) and shared by every request waiting,
 * within a budget of their own (statusreply.h; 503 when full). Each
 * connection has deadlines for its whole request and reply, and over the
 * connection limit a new one makes room fairly across client addresses
 * (httpguard.h).
 *
 * With tls->cert set it serves HTTPS only (GnuTLS through libmicrohttpd);
 * with tls->client_ca too, every request needs a client certificate that
 * chains to it (403 otherwise). The files are checked every few seconds
 * and a rotation is served from the next connection on, with no restart
 * and no refused connection. */
#ifndef NETSCHED_HTTP_H
#define NETSCHED_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "httpguard.h"
#include "serve/tls.h"

struct scorer;
struct http_server;

/* Connections each listener serves at once; over that, the connection just
 * accepted makes room fairly across client addresses (httpguard.h). The
 * probe listener's: the kubelet probes one at a time. */
#define HTTP_MAX_CONNECTIONS 256u
#define HTTP_HEALTH_CONNECTIONS 64u
/* Open files the HTTP side may need at once, both listeners at their
 * hard limits (httpguard.h), plus their listening sockets and wake-up
 * pipes: kept free of report connections (ingest.h). */
#define HTTP_FD_RESERVE (HTTPGUARD_HARD_LIMIT(HTTP_MAX_CONNECTIONS) + \
			 HTTPGUARD_HARD_LIMIT(HTTP_HEALTH_CONNECTIONS) + 16u)

/* Listens on addr (an IPv4 or IPv6 literal) and port (0 picks a free one)
 * and serves from internal threads until http_stop(): the verbs, /healthz
 * and /readyz, and with serve_status also /metrics, /v1/nodes and
 * /v1/workloads (false when http_start_health() serves them: then only the
 * scheduler, with its client certificate, has anything to ask here). s and tls (NULL for plain
 * HTTP) must outlive the server. Calls http_request_budget() first unless
 * s->limits.request.budget is set already. NULL on failure, with err
 * holding one line such as "bind 0.0.0.0:8470: Address already in use". */
struct http_server *http_start(struct scorer *s, const char *addr, uint16_t port,
			       const struct tls_files *tls, bool serve_status, char *err,
			       size_t errlen);

/* Sizes s->request_memory from s->limits.max_body_bytes and points
 * s->limits.request.budget at it: called before anything else takes from
 * it (the Prometheus fallback, prom.h), once. */
void http_request_budget(struct scorer *s);

/* Plain HTTP serving GET /healthz, /readyz, /metrics, /v1/nodes and
 * /v1/workloads (404 for any other path, the verbs included): read-only,
 * for the kubelet's probes and Prometheus whatever the main port's TLS
 * mode (neither presents a client certificate). Same ownership as above. */
struct http_server *http_start_health(struct scorer *s, const char *addr, uint16_t port, char *err,
				      size_t errlen);

/* The port actually listened on. */
uint16_t http_port(const struct http_server *h);

/* Stops serving, waits for the threads, frees everything. Accepts NULL. */
void http_stop(struct http_server *h);

#endif
