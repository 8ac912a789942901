/* The report port's connections (NNG pipes): how many, from whom, and how
 * long silent. libnng 1.5 caps none of it: 8,000 connections each holding
 * a part-sent 32 KB message kept 294 MB and never timed out, and 1,100
 * idle ones used every descriptor of a 1024 limit, so the HTTP server could
 * accept nothing (and spun on the failed accepts). Here, through NNG's pipe
 * notifications:
 *   - at most `max` connections: a new one over it makes room by the fair
 *     rule of common/connfair.h (one of the address holding the most; one
 *     that has delivered no report first; the longest silent), so agents,
 *     one connection each, keep theirs against any number of addresses;
 *   - a connection that has delivered no report for `silent_ns` is closed,
 *     and with it any message it left half-sent (NNG allocates a message
 *     whole, up to its receive limit, when its length arrives); what is not
 *     a report of ours (garbage, unsigned or forged with keys set) does not
 *     count as one;
 *   - while descriptors run short (pause_at in use: connections still in
 *     NNG's 10 s handshake, which no notification reports), NNG's
 *     listening socket drops new connection attempts (a socket filter),
 *     so they can never take the descriptors HTTP needs to accept.
 * Memory held by report connections is then at most max x (the receive
 * limit + ~3 KB): ingest.h.
 *
 * A connection closed here is shut down at the kernel, and NNG ends its
 * pipe by itself: libnng 1.5.2's own close of a pipe could lose its
 * receive, and then every pipe closed after it leaked (reportconns.c).
 * Connections evicted to make room end within 100 ms, batched, so the
 * descriptor scan that finds them is not paid per new connection.
 *
 * A thread of its own watches the descriptors every 5 ms and closes the
 * silent twice a second. Thread-safe: NNG's threads call the
 * notifications and, from ingest's receive, reportconns_delivered(). */
#ifndef NETSCHED_REPORTCONNS_H
#define NETSCHED_REPORTCONNS_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

struct registry;
struct reportconns;

struct reportconns_config {
	/* Filled in by reportconns_find_listener(). */
	uint16_t port;
	size_t max;		/* connections at once */
	uint64_t silent_ns;	/* without a report, a connection is closed */
	/* Accepting pauses while descriptor number pause_at is open (about
	 * that many in use; 0: never): below the open-file limit by what
	 * others (HTTP) must keep. */
	size_t pause_at;
	struct registry *counters;	/* report_conn_* (may be NULL); outlives it */
};

/* Watches sock's pipes (before its listener starts, so every pipe is
 * seen). NULL with err set. */
struct reportconns *reportconns_start(nng_socket sock, const struct reportconns_config *cfg,
				      char *err, size_t errlen);
/* After the socket is closed. Accepts NULL. */
void reportconns_stop(struct reportconns *rc);

/* After the listener has started on TCP port: finds NNG's listening
 * socket, so accepting can pause while descriptors run short. 0, or
 * -ENOENT (no pause then; logged unless port is 0, not TCP). */
int reportconns_find_listener(struct reportconns *rc, uint16_t port);

/* What became of a message from pipe p: ingest_message()'s result. */
void reportconns_delivered(struct reportconns *rc, nng_pipe p, int result);

size_t reportconns_count(struct reportconns *rc);

/* At stop, before NNG closes anything: new connections are dropped at the
 * listening socket, no pipe is closed as silent or to make room any more,
 * and every report connection is shut down at the kernel, so NNG ends each
 * pipe by itself. libnng 1.5.2 loses a pipe's receive when the pipe is
 * closed between a read's completion and its callback (tcptran: the
 * callback's next read is refused without completing), and closing the
 * socket then waits for that pipe forever. Returns the connections shut
 * down; 0 when the listening socket is not known (nothing done). */
size_t reportconns_shut(struct reportconns *rc);

/* Report connections still open at the kernel: after reportconns_shut(),
 * those NNG has not yet ended. A scan of the process's descriptors. */
size_t reportconns_open(struct reportconns *rc);

#endif
