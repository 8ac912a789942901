/* A background thread that runs one job now and again until stopped: the
 * agent's resolver, the scorer's Prometheus refresh and certificate check.
 *
 * The job runs without any lock held, then says how long to sleep before it
 * runs again. The sleep uses the monotonic clock, so a stepped wall clock
 * neither skips nor stretches it, and worker_stop() cuts it short. */
#ifndef NETSCHED_WORKER_H
#define NETSCHED_WORKER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* pthread_create() for a thread that takes no signal (the log writer, the
 * big-request thread): the binaries take theirs on the main thread, with
 * sigwait() or handlers. 0 or -errno. */
int worker_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);

/* Runs one round; returns the milliseconds to wait before the next. */
typedef uint64_t (*worker_fn)(void *ctx);

struct worker;

/* Starts a thread that calls fn(ctx) after first_delay_ms, then again after
 * whatever each call returns. Returns the worker, or NULL with err saying
 * why (name names the worker in it). ctx is not owned. */
struct worker *worker_start(const char *name, worker_fn fn, void *ctx, uint64_t first_delay_ms,
			    char *err, size_t errlen);

/* Ends the sleep at once: the next round runs now. */
void worker_wake(struct worker *w);

/* Stops the thread (waiting for a round in progress to finish) and frees
 * the worker. Accepts NULL. */
void worker_stop(struct worker *w);

#endif
