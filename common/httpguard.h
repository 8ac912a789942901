/* What libmicrohttpd does not do for a server facing hostile clients:
 * deadlines for a whole request, and fair shares of the connection slots.
 *
 * Deadlines. MHD's one connection timeout measures inactivity, so a client
 * sending a header line, or a body byte, every few seconds holds its slot
 * forever. The guard gives each connection an absolute deadline instead:
 *   accepted, or its request line read     headers within header_timeout_s
 *   headers complete, body of n bytes       the same deadline + n / min_rate
 *   being answered (slow lane, big body)    none: our own time is not theirs
 *   reply of n bytes queued                 now + header_timeout_s + n / min_rate
 *   request answered (keep-alive)           next request within idle_timeout_s
 * so a real request, however large, is never cut on a link faster than
 * min_rate, and a client that does not read its reply loses it.
 *
 * Fair slots. One address holds at most max_per_address connections that
 * showed no verified client certificate: over it, that address's oldest
 * silent connection (no complete request head within a second of
 * starting one, or of its accept), else its oldest idle one, else its
 * oldest, makes room, never the newcomer: a hostNetwork pod
 * flooding from its node's address cannot keep the kubelet's probes or the
 * scheduler's calls from that address out (they are its newest), and an
 * attacker reopening in a loop only closes its own. Over max_connections,
 * one connection is closed by the rule of common/connfair.h (one of the
 * address holding the most; of those a silent one first, then an idle one,
 * idle meaning between requests or not done sending headers; the one
 * waiting longest), so the scheduler's new connection always gets in
 * however many connections and addresses others use. Each closed one is
 * logged with its address, the count and the limit.
 *
 * A thread checks four times a second and shuts down the socket of a
 * connection past its deadline; MHD then sees the end of the stream and
 * closes it as it would any other. Serving daemons wire it in with
 * MHD_OPTION_NOTIFY_CONNECTION (httpguard_notify, guard),
 * MHD_OPTION_URI_LOG_CALLBACK (httpguard_uri_log, NULL), and call the
 * httpguard_headers_done() ... httpguard_request_done() steps from their
 * handlers. Their MHD_OPTION_CONNECTION_LIMIT must leave room above
 * max_connections (HTTPGUARD_HARD_LIMIT) for the newcomer and for the
 * closed ones MHD has not reaped yet. httpguard_mhd_log is the daemons'
 * libmicrohttpd error log.
 * A guard may serve several daemons and must outlive all of them. */
#ifndef NETSCHED_HTTPGUARD_H
#define NETSCHED_HTTPGUARD_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

/* What a daemon's MHD_OPTION_CONNECTION_LIMIT should be for a guard of
 * max_connections. */
#define HTTPGUARD_HARD_LIMIT(max_connections) ((max_connections) + (max_connections) / 4u + 4u)

struct httpguard;

struct httpguard_config {
	const char *name;		/* "http", "health", "metrics": names its log lines */
	unsigned header_timeout_s;
	unsigned idle_timeout_s;
	uint64_t min_bytes_per_second;	/* bodies and replies move at least this fast */
	unsigned max_connections;	/* over this, one connection is reclaimed */
	/* Unproven connections one address holds at most (0: no cap of its
	 * own); the daemon sets no MHD_OPTION_PER_IP_CONNECTION_LIMIT, which
	 * would refuse the newcomer instead. */
	unsigned max_per_address;
	/* Each connection's kernel send and receive buffers (SO_SNDBUF,
	 * SO_RCVBUF; the kernel doubles it), 0 to leave them: a reply not
	 * read stays there, charged to the container's memory, and the
	 * kernel would grow them to megabytes each. */
	int socket_buffer;
	/* Counters for /metrics, each may be NULL; they must outlive the guard.
	 * deadline: closed past a deadline above (headers, body, reply, idle);
	 * reclaimed_idle, reclaimed_busiest: closed to make room, an idle one
	 * or one of the address holding the most. */
	atomic_ulong *deadline, *reclaimed_idle, *reclaimed_busiest;
};

/* NULL with err set when out of memory or its thread cannot start. cfg is
 * copied (name must be static). */
struct httpguard *httpguard_start(const struct httpguard_config *cfg, char *err, size_t errlen);
/* Accepts NULL. Only after every daemon using it has stopped. */
void httpguard_stop(struct httpguard *g);

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* Returns NULL: the request's con_cls starts out NULL as without it. */
void *httpguard_uri_log(void *cls, const char *uri, struct MHD_Connection *c);

/* The steps of a request (see the top), from the daemon's handlers. */
void httpguard_headers_done(struct MHD_Connection *c, uint64_t body_bytes);
void httpguard_processing(struct MHD_Connection *c);
void httpguard_replying(struct MHD_Connection *c, uint64_t reply_bytes);
void httpguard_request_done(struct MHD_Connection *c);
/* c showed a verified client certificate: closed to make room only when
 * every other connection has too (connfair.h). */
void httpguard_proven(struct MHD_Connection *c);

/* MHD_OPTION_EXTERNAL_LOGGER, httpguard_mhd_log, "module": a client can make
 * libmicrohttpd warn at will (every aborted connection, the per-address
 * cap), so its lines share one budget of a line a second per process. */
void httpguard_mhd_log(void *module, const char *fmt, va_list ap);

#endif
