/* Reports to every scorer: one NNG push socket per --scorer URL.
 *
 * Each socket dials in the background and redials with backoff (100 ms up to
 * 5 s), so a scorer that is down at start-up or restarts is picked up without
 * the agent noticing. Sends never block: a scorer that is not connected, or
 * whose one-message queue is still full, loses this report and gets the next
 * one (the newest report supersedes every older one anyway). One scorer's
 * trouble therefore never delays sampling or the other scorers.
 *
 * Create before any fork and after leaving a foreign network namespace: NNG
 * starts threads, and dials from the namespace the process is in. */
#ifndef NETSCHED_SENDER_H
#define NETSCHED_SENDER_H

#include <stddef.h>
#include <stdint.h>

#define SENDER_MAX_SCORERS 16
#define SENDER_URL_MAX 256

struct sender_peer {
	char url[SENDER_URL_MAX];
	uint64_t sent;
	uint64_t failed;
};

struct sender;

/* One socket per url (n <= SENDER_MAX_SCORERS). A URL NNG cannot parse is an
 * error; a scorer that is merely unreachable is not. NULL with err set. */
struct sender *sender_create(const char *const *urls, size_t n, char *err, size_t errlen);
/* Accepts NULL. */
void sender_destroy(struct sender *s);

/* Offers the bytes to every scorer; NNG copies them. Returns how many
 * scorers took the report. */
size_t sender_send(struct sender *s, const void *data, size_t len);

/* Scorers and their counts; the pointer is valid until sender_destroy(). */
size_t sender_count(const struct sender *s);
const struct sender_peer *sender_peer(const struct sender *s, size_t i);

#endif
