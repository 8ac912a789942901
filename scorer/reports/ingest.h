/* Receiving agent reports: an NNG pull socket listening on --listen, whose
 * one receive decodes, validates and applies each report to the node table
 * as it completes, on NNG's thread, one report at a time. A bad report is
 * dropped and counted; it never reaches the table. */
#ifndef NETSCHED_INGEST_H
#define NETSCHED_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "report.h"

struct registry;
struct table;
struct podindex;
struct ingest;

/* Where reports go and what they must pass. The caller owns it and keeps
 * it while the ingest runs; only ingest writes it (keys), one report at a time. */
struct ingest_config {
	struct table *table;		/* accepted reports are applied here */
	/* ... and their pod figures joined here (podindex.h); NULL: not. */
	struct podindex *pods;
	struct registry *counters;	/* each report counted by result */
	uint64_t (*now_ns)(void);	/* monotonic; tests move it */
	/* --key-file: reports must be signed by one of these (keys.n == 0:
	 * unsigned reports are accepted). With key_file set, ingest
	 * re-reads them when the file changes (a Secret update), by the
	 * reload policy of common/filestamp.h, checked as a report arrives
	 * (so the first after a quiet spell already sees a new key). */
	const char *key_file;
	struct keyfile keys;
	/* Our wall clock at start: a signed report whose window ends before
	 * it was captured before we ran, or comes from an agent whose clock is
	 * behind ours (0: no such check). anchors tells the two apart by the
	 * agent's own clock (anchor.h); NULL: every such report is refused. */
	uint64_t started_unix_ms;
	/* Report connections (below): one without a report for this long
	 * (--stale-after, clamped) is closed; and the open files kept free
	 * for HTTP (http.h's HTTP_FD_RESERVE; 0 in tests). */
	uint64_t stale_after_ns;
	size_t fd_reserve;
	struct anchors *anchors;
};

/* Listens on url (e.g. "tcp://0.0.0.0:7470") and starts receiving.
 * A tls+tcp:// url needs cert_key_file: one PEM file with the certificate
 * (chain) and its private key; otherwise it may be NULL. NULL on failure
 * with err filled ("listen tcp://...: Address in use"). */
struct ingest *ingest_start(struct ingest_config *cfg, const char *url,
			    const char *cert_key_file, char *err, size_t errlen);

/* Stops receiving (waits for a report being applied), ends every report
 * connection, then closes the socket; reports still queued are dropped.
 * Accepts NULL. */
void ingest_stop(struct ingest *in);

/* How many ingest_stop() calls gave up waiting for nng_close() and left
 * their socket open until exit (logged as an error when it happens). */
size_t ingest_stops_hung(void);

/* A signed report whose window ends further than this from our wall clock
 * is a replay (or a broken clock): five minutes, as Kerberos allows. Within
 * it an agent's clock may be off: /metrics shows each node's skew
 * (netsched_scorer_node_clock_skew_seconds), the alert NetschedAgentClockSkew
 * fires at 30 s, and one behind ours is judged by its own clock after a
 * scorer restart (anchor.h). */
#define INGEST_MAX_SKEW_MS (5ULL * 60 * 1000)
/* A node's reports are ordered by window end (table.h); one ending ahead of
 * our clock is filed as ending this far ahead at most, so a window claimed
 * in the future holds the order for a second, not for the skew allowed. */
#define INGEST_ORDER_AHEAD_MS 1000ULL

/* Reports over REPORT_MAX_BYTES are counted as oversize, never decoded.
 * NNG refuses a message over its receive limit (NNG_OPT_RECVMAXSZ) before
 * allocating it and closes the connection without telling us; libnng 1.5
 * offers no way to tell that close from any other (its listener statistic
 * "other" counts normal closes too, measured). So NNG's limit is set twice
 * ours: a report too large by up to that much (a bug, a newer agent) arrives
 * and is counted and logged with its size; only larger messages are still
 * dropped unseen. Not higher: a connection holding a message at the limit
 * keeps about that much resident (measured: 19 kB at 16 KiB, 35 kB at 32 KiB,
 * 52 kB at 64 KiB) for as long as it is open (below). */
#define INGEST_WIRE_MAX_BYTES (2u * REPORT_MAX_BYTES)

/* Report connections (reportconns.h): one per agent, so --max-nodes plus
 * an eighth and 64 for reconnects, within what the open-file limit
 * leaves: the HTTP side's (s->limits.fd_reserve) and INGEST_FD_SLACK
 * (files, the Prometheus and apiserver clients) are kept free, and
 * INGEST_HANDSHAKE_FDS for connections in NNG's handshake. A connection
 * without a report for --stale-after (at least 10 s, at most 120 s) is
 * closed: its data would be stale anyway. Each holds at most the receive
 * limit below and ~3 KB (measured), so the report port holds at most
 * (--max-nodes x 1.125 + 64) x 35 KB: 81 MB at --max-nodes 2000. */
#define INGEST_FD_SLACK 64u
#define INGEST_HANDSHAKE_FDS 256u
#define INGEST_MIN_CONNS 16u
#define INGEST_SILENT_MIN_NS (10ULL * 1000000000ULL)
#define INGEST_SILENT_MAX_NS (120ULL * 1000000000ULL)

/* Decodes one message and applies it; what a receive does per message.
 * Exposed for tests and benchmarks. Returns 0 if applied, else -errno. */
int ingest_message(struct ingest_config *cfg, const uint8_t *data, size_t len);

#endif
