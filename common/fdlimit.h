/* The process's open-file limit, shared by everything that accepts
 * connections: a server that runs out of descriptors cannot accept even
 * the connection that matters (the scheduler's), so each listener gets a
 * budget of its own out of the limit.
 *
 * Containers often start with a soft limit of 1024 under a much higher
 * hard one; fdlimit_raise() takes the hard limit at start-up, before any
 * budget is worked out. */
#ifndef NETSCHED_FDLIMIT_H
#define NETSCHED_FDLIMIT_H

#include <stdbool.h>
#include <stddef.h>

/* Raises the soft RLIMIT_NOFILE to the hard one; returns the soft limit
 * now in force (the old one if raising failed, 1024 if unknown). */
size_t fdlimit_raise(void);

/* The soft limit in force (1024 if unknown). */
size_t fdlimit_current(void);

/* Whether descriptor number fd is open. Descriptors are handed out lowest
 * first, so "the limit minus k is open" means fewer than about k are
 * left. A probe of one fcntl(), no descriptor kept. */
bool fdlimit_in_use(size_t fd);

#endif
