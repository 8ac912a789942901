/* Reports to every scorer: one NNG push socket per scorer address.
 *
 * A --scorer URL whose host is a name (tcp://netsched-scorer-headless:7470)
 * stands for every address the name resolves to: a headless Service lists
 * each scorer replica, and every replica must get every report. A resolver
 * thread re-resolves every SENDER_RESOLVE_S seconds (sooner while a name does
 * not resolve) and opens or closes sockets to match, so DNS never runs on the
 * sampling path. IP literals and ipc:// are used as they are.
 *
 * Each socket dials in the background and redials with backoff (100 ms up
 * to 2 s). Sends never block: a scorer that is not connected, or whose
 * one-message queue is still full, loses this report and gets the next one
 * (the newest report supersedes every older one). One scorer's trouble
 * therefore never delays sampling or the other scorers, and memory is
 * bounded by SENDER_MAX_PEERS sockets of one queued report each.
 *
 * A scorer that vanished without closing its connection (its node lost
 * power, its pod's network namespace was removed) leaves a pipe TCP keeps
 * retransmitting into for many minutes, and a Service's address that looks
 * connected the whole time. So after SENDER_STUCK_SENDS reports in a row
 * refused, a peer's socket is opened anew: it dials again, and a Service
 * sends the new connection to a live replica.
 *
 * Create after leaving a foreign network namespace and before any fork:
 * NNG starts threads. sender_send() and the counters are for one thread
 * (the sampling loop); the resolver only takes a short lock. */
#ifndef NETSCHED_SENDER_H
#define NETSCHED_SENDER_H

#include <stddef.h>
#include <stdint.h>

#define SENDER_MAX_SCORERS 16	/* --scorer URLs */
#define SENDER_MAX_PEERS 64	/* addresses over all of them */
#define SENDER_URL_MAX 256
#define SENDER_RESOLVE_S 30
/* Reports in a row a peer refused before its socket is opened anew: 10 s at
 * the default 2 s interval, past any pause of a live scorer's reading. */
#define SENDER_STUCK_SENDS 5

struct sender_peer {
	char url[SENDER_URL_MAX];	/* as dialled: an address, never a name */
	uint64_t sent;
	uint64_t failed;
	uint64_t redials;		/* sockets opened anew (SENDER_STUCK_SENDS) */
};

struct sender;

/* urls[0..n) must parse (tcp://HOST:PORT, tls+tcp://HOST:PORT or
 * ipc://PATH); a name that does not resolve yet is not an error. A
 * tls+tcp:// scorer is verified against ca_file (required then): its
 * certificate must chain to it and name HOST as written. Returns NULL with
 * err set. */
struct sender *sender_create(const char *const *urls, size_t n, const char *ca_file, char *err,
			     size_t errlen);
/* Stops the resolver and closes every socket. Accepts NULL. */
void sender_destroy(struct sender *s);

/* Whether url is one sender_create() accepts: 0, or -EINVAL with err set. */
int sender_check_url(const char *url, char *err, size_t errlen);

/* Offers the bytes to every scorer address; NNG copies them. Returns how
 * many took the report. */
size_t sender_send(struct sender *s, const void *data, size_t len);

/* A copy of the per-address counts, for metrics: fills up to cap entries
 * and returns how many there are. */
size_t sender_peers(struct sender *s, struct sender_peer *out, size_t cap);

#endif
