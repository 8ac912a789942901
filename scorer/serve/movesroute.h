/* POST and GET /v1/moves (moves.h): the rebalancer announces a move
 * before it evicts; the on-call engineer and the tests list them.
 *
 * POST: the body is read by movereq_parse() (movereq.h), then judged against the nodes the
 * scorer tracks: `from` and `to` must be nodes the table holds and
 * differ, and neither rate may exceed MOVES_RATE_LINKS times the wider of
 * their links. 200 {"accepted":true,"holdSeconds":N}; 400 naming the
 * field, node, number and limit; 413 over MOVEREQ_BODY_MAX; 503 when the
 * table is full. A refused move changes nothing, and is counted by why
 * (registry.h) and logged, a line a second at most.
 *
 * GET: {"moves":[{"namespace","pod","uid","workload","from","to",
 * "rxBytesPerSecond","txBytesPerSecond","holdSeconds","remainingSeconds",
 * "landed"}]}, sorted by from, to, uid. */
#ifndef NETSCHED_MOVESROUTE_H
#define NETSCHED_MOVESROUTE_H

#include <stddef.h>

struct scorer;
struct reply;

void movesroute_post(struct scorer *s, const char *body, size_t len, struct reply *out);
void movesroute_list(struct scorer *s, struct reply *out);

/* The 413 for a body over MOVEREQ_BODY_MAX that the HTTP server refused
 * before reading it: counted as the parser's refusal would be. */
void movesroute_too_large(struct scorer *s);

#endif
