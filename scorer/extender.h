/* The kube-scheduler extender protocol: JSON request in, JSON reply out.
 * docs/extender-protocol.md describes the wire format as the scheduler
 * really speaks it.
 *
 * Both handlers read only memory (the node table); they never block on I/O.
 * The body is not modified and need not be NUL-terminated. On return *out
 * holds an HTTP status and a malloc'd JSON body that the caller frees with
 * free(): 200 with the extender reply, 400 with {"error":"..."} naming the
 * problem, or 500 if memory ran out (body may then be NULL). */
#ifndef NETSCHED_EXTENDER_H
#define NETSCHED_EXTENDER_H

#include <stddef.h>
#include <stdint.h>

#include "scorer.h"

struct buf;
struct table_node;

struct ext_reply {
	unsigned status;
	char *body;
	size_t len;
	/* NULL means application/json; a static string otherwise. */
	const char *content_type;
};

/* Filter and prioritize also record their latency in s->counters (every
 * outcome, 400s included), measured with s->now_ns. */

void ext_filter(struct scorer *s, const char *body, size_t len, struct ext_reply *out);
void ext_prioritize(struct scorer *s, const char *body, size_t len, struct ext_reply *out);

/* A JSON error body {"error":"<msg>"} with the given status, for the HTTP
 * layer's own errors (404, 405, 413) so every error looks the same. */
void ext_error(unsigned status, const char *msg, struct ext_reply *out);

/* Turns a finished buffer into a 200 reply, or a 500 without a body when the
 * buffer failed. Takes the buffer's memory; b is left empty. Shared by every
 * endpoint that writes its reply into a struct buf. */
void ext_reply_take(struct buf *b, struct ext_reply *out);

#endif
