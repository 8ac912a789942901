/* An HTTP reply as every endpoint builds it: a status, a body and its type.
 * The extender verbs, the status endpoints, /metrics and the HTTP server's
 * own errors all answer through this one type, so every error looks the
 * same: {"error":"<message>"}.
 *
 * Ownership: body is malloc'd and belongs to whoever holds the reply; the
 * HTTP server frees it once sent (reply_free_body()), tests free() it. A 500
 * may come without a body (memory ran out). */
#ifndef NETSCHED_REPLY_H
#define NETSCHED_REPLY_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

struct reply {
	unsigned status;
	char *body;
	size_t len;
	/* NULL means application/json; a static string otherwise. */
	const char *content_type;
	bool scratch;	/* body is a block of scratch.h's, to be given back */
};

/* Turns a finished buffer into a 200 reply, or a 500 without a body when the
 * buffer failed. Takes the buffer's memory; b is left empty. */
void reply_take(struct buf *b, struct reply *out);

/* Frees the body, or gives it back to scratch.h; body is NULL after. */
void reply_free_body(struct reply *r);

/* A JSON error body {"error":"<msg>"} with the given status (msg is escaped,
 * so it may hold anything). 500 without a body if memory ran out. */
void reply_error(unsigned status, const char *msg, struct reply *out);

#endif
