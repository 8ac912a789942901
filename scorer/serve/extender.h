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

struct reply;
struct scorer;

/* Filter and prioritize also record their latency in s->counters (every
 * outcome, 400s included), measured with s->now_ns. */

void ext_filter(struct scorer *s, const char *body, size_t len, struct reply *out);
void ext_prioritize(struct scorer *s, const char *body, size_t len, struct reply *out);

/* The preempt verb: ExtenderPreemptionArgs in, ExtenderPreemptionResult
 * out (NodeNameToMetaVictims): the candidate nodes where, once their
 * victims are evicted, the filter would pass the pod, with their victims
 * as sent; the others left out (docs/extender-protocol.md). */
void ext_preempt(struct scorer *s, const char *body, size_t len, struct reply *out);

#endif
