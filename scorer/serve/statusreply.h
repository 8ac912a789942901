/* The large status replies (/v1/nodes, /metrics), rendered once and shared.
 *
 * With a full table and in-flight pods /v1/nodes is 12.5 MB and takes tens
 * of milliseconds to render. Rendered per request, 32 clients asking and
 * never reading held 465 MB (the pod's limit is 256Mi), and 4 clients
 * asking in a loop pushed a real prioritize's p99 over the scheduler's
 * timeout. Here:
 *   - one reply is rendered at a time, and every request that was waiting
 *     for it shares it (a reference each): 32 readers hold one copy;
 *   - a reply that took render_ns >= 1 ms to render is reused for requests
 *     arriving within STATUSREPLY_REUSE x render_ns after it began, so
 *     rendering takes at most 1 / (1 + STATUSREPLY_REUSE) of one core
 *     whatever clients do; cheap replies (small tables) are always fresh;
 *   - each reply's bytes are charged to a memory budget (membudget.h)
 *     while anyone holds it, and no room is -EBUSY (the server answers
 *     503): however many clients ask and never read, the replies held
 *     stay within it (and the server drops a reply not taken by its
 *     deadline, httpguard.h).
 * The HTTP server calls it from a thread of its own (http.c), never from
 * the threads that answer the scheduler. Thread-safe. */
#ifndef NETSCHED_STATUSREPLY_H
#define NETSCHED_STATUSREPLY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/reply.h"

struct scorer;
struct membudget;

#define STATUSREPLY_REUSE 4u
#define STATUSREPLY_MIN_REUSE_NS 1000000ULL

/* One rendered reply; read-only once made, freed with its last reference. */
struct statusreply {
	atomic_uint refs;
	struct reply reply;
	size_t charged;			/* bytes of budget it holds */
	struct membudget *budget;
	uint64_t started_ns, render_ns;	/* when its render began, and took */
};

typedef void (*statusreply_render_fn)(struct scorer *s, struct reply *out);

/* One endpoint's latest reply. */
struct statusreply_cache {
	pthread_mutex_t lock;		/* one render at a time; latest */
	statusreply_render_fn render;
	/* A reference of its own, dropped when a newer one is rendered: the
	 * latest reply stays charged until the next request for it. */
	struct statusreply *latest;
	size_t last_len;		/* the latest render's size, kept when it is dropped */
};

void statusreply_cache_init(struct statusreply_cache *c, statusreply_render_fn render);
/* Drops the cache's reference; holders keep theirs. */
void statusreply_cache_destroy(struct statusreply_cache *c);

/* A reply for a request that arrived at asked_ns (clock_mono_ns), with a
 * reference for the caller (statusreply_put()): the latest if it began
 * rendering after asked_ns or is reused (above), else a new one. 0,
 * -EBUSY when the budget has no room for it (nothing rendered when even
 * the latest reply's size would not fit), -ENOMEM. */
int statusreply_get(struct statusreply_cache *c, struct scorer *s, struct membudget *budget,
		    uint64_t asked_ns, struct statusreply **out);

/* Drops a reference; the last frees the reply and gives its bytes back.
 * Accepts NULL. The shape of libmicrohttpd's free callback. */
void statusreply_put(void *reply);

#endif
