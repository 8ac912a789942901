/* Deadlines libmicrohttpd does not have: a connection must finish a
 * request's headers within a few seconds, however it trickles them.
 *
 * MHD's one connection timeout measures inactivity, so a client sending a
 * header line every few seconds (slowloris) holds its slot forever; with
 * a few hundred such clients nobody else gets in. The guard gives each
 * connection an absolute deadline:
 *   accepted, or its request line read    headers within header_timeout_s
 *   headers complete                      none (the body: MHD's timeout)
 *   request answered (keep-alive)         next request within idle_timeout_s
 * A thread checks four times a second and shuts down the socket of a
 * connection past its deadline; MHD then sees the end of the stream and
 * closes it as it would any other. Serving daemons wire it in with
 * MHD_OPTION_NOTIFY_CONNECTION (httpguard_notify, guard),
 * MHD_OPTION_URI_LOG_CALLBACK (httpguard_uri_log, NULL), and call
 * httpguard_headers_done() and httpguard_request_done() from their handlers.
 * httpguard_mhd_log is the daemons' libmicrohttpd error log.
 * A guard may serve several daemons and must outlive all of them. */
#ifndef NETSCHED_HTTPGUARD_H
#define NETSCHED_HTTPGUARD_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

struct httpguard;

/* name ("http", "metrics") names the guard in its log lines. closed, if
 * not NULL, counts the connections it closes (for /metrics) and must
 * outlive it. NULL with err set when its thread cannot start. */
struct httpguard *httpguard_start(const char *name, unsigned header_timeout_s,
				  unsigned idle_timeout_s, atomic_ulong *closed, char *err,
				  size_t errlen);
/* Accepts NULL. Only after every daemon using it has stopped. */
void httpguard_stop(struct httpguard *g);

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* Returns NULL: the request's con_cls starts out NULL as without it. */
void *httpguard_uri_log(void *cls, const char *uri, struct MHD_Connection *c);
void httpguard_headers_done(struct MHD_Connection *c);
/* MHD_OPTION_EXTERNAL_LOGGER, httpguard_mhd_log, "module": a client can make
 * libmicrohttpd warn at will (every aborted connection, the per-address
 * cap), so its lines share one budget of a line a second per process. */
void httpguard_mhd_log(void *module, const char *fmt, va_list ap);
void httpguard_request_done(struct MHD_Connection *c);

#endif
