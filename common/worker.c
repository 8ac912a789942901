#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct worker {
	worker_fn fn;
	void *ctx;
	uint64_t wait_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	bool woken;
};

static void deadline(struct timespec *until, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, until);
	until->tv_sec += (time_t)(ms / 1000);
	until->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		struct timespec until;

		deadline(&until, w->wait_ms);
		pthread_mutex_lock(&w->lock);
		while (!w->stopping && !w->woken &&
		       pthread_cond_timedwait(&w->wake, &w->lock, &until) != ETIMEDOUT)
			;
		w->woken = false;
		if (w->stopping) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		pthread_mutex_unlock(&w->lock);
		w->wait_ms = w->fn(w->ctx);
	}
}

int worker_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

struct worker *worker_start(const char *name, worker_fn fn, void *ctx, uint64_t first_delay_ms,
			    char *err, size_t errlen)
{
	pthread_condattr_t ca;
	struct worker *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "%s: out of memory for its thread", name);
		return NULL;
	}
	w->fn = fn;
	w->ctx = ctx;
	w->wait_ms = first_delay_ms;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, worker_main, w)) {
		snprintf(err, errlen, "%s: cannot start its thread", name);
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

void worker_wake(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->woken = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void worker_stop(struct worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
