/* A byte budget shared by threads: memory that outside clients make us hold
 * (request bodies, their JSON tokens, status replies) is taken from it before it is
 * allocated and given back when freed, so whatever clients do, the total
 * stays under a fixed limit and the process under its memory limit.
 *
 * The last `reserve` bytes go only to small takers: a holder over `small`
 * bytes in all cannot use them, so clients sending the largest bodies never
 * starve the scheduler's ordinary requests of a few hundred KB.
 * Zero-initialised it has no room; thread-safe, never blocks. */
#ifndef NETSCHED_MEMBUDGET_H
#define NETSCHED_MEMBUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct membudget {
	atomic_size_t used;
	size_t limit;
	size_t reserve;		/* of limit, for holders of at most small bytes */
	size_t small;
};

void membudget_init(struct membudget *b, size_t limit, size_t reserve, size_t small);

/* Takes n more bytes for a holder that has *held already; true and *held
 * grown, or false with nothing taken. b NULL: always true (no budget). */
bool membudget_take(struct membudget *b, size_t *held, size_t n);

/* Gives back what a holder has over `keep` bytes (nothing if it has no
 * more); *held becomes at most keep. Accepts b NULL. */
void membudget_shrink(struct membudget *b, size_t *held, size_t keep);

/* Gives back all a holder has; *held becomes 0. Accepts b NULL. */
void membudget_give(struct membudget *b, size_t *held);

size_t membudget_used(const struct membudget *b);

#endif
