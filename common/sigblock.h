/* The signals both binaries act on: SIGINT and SIGTERM end them, SIGHUP
 * reloads their files (and would otherwise end them without a word). */
#ifndef NETSCHED_SIGBLOCK_H
#define NETSCHED_SIGBLOCK_H

#include <signal.h>

/* Blocks those three in the calling thread, and so in every thread it
 * starts after (NNG's, libmicrohttpd's, curl's), which must never take
 * them; *set holds them, for sigwait() or to unblock them again. */
void sigblock_stops(sigset_t *set);

#endif
