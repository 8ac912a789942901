/* The large status replies (/v1/nodes, /metrics), rendered once and shared.
 *
 * With a full table and in-flight pods /v1/nodes is 12.5 MB and takes tens
 * of milliseconds to render. Rendered per request, 32 clients asking and
 * never reading held 465 MB (the pod's limit is 256Mi), and 4 clients
 * asking in a loop pushed a real prioritize's p99 over the scheduler's
 * timeout. Here:
 *   - one reply is rendered at a time, and every request that was waiting
 *     for it shares it (a reference each): 32 readers hold one copy;
 *   - a reply is reused for requests arriving within its hold after its
 *     render began: STATUSREPLY_REUSE x its render time when that was at
 *     least 1 ms, and at least STATUSREPLY_MIN_INTERVAL_NS for a reply of
 *     STATUSREPLY_BIG_BYTES or more, so rendering takes at most 1 / (1 +
 *     STATUSREPLY_REUSE) of one core, and a big reply is rendered at most
 *     once a second, whatever clients do; cheap small replies are always
 *     fresh;
 *   - a render that fails (the reply over its size cap, 16 MiB for
 *     /v1/nodes, or no memory) is remembered as a small error reply (500)
 *     and held STATUSREPLY_FAIL_HOLD_NS (or its reuse window if longer):
 *     clients asking in a loop get that, not a render each (0.48 s of CPU
 *     a request once);
 *   - each reply's bytes are charged to a memory budget (membudget.h)
 *     while anyone holds it, and no room is -EBUSY (the server answers
 *     503): however many clients ask and never read, the replies held
 *     stay within it (and the server drops a reply not taken by its
 *     deadline, httpguard.h).
 * The time is the cache's clock (clock_mono_ns unless a test gives one),
 * read before and after each render: the rules above never depend on how
 * fast the machine is, only on what the clock says.
 * The HTTP server calls statusreply_get() from a thread of its own
 * (http.c), never from the threads that answer the scheduler. Thread-safe. */
#ifndef NETSCHED_STATUSREPLY_H
#define NETSCHED_STATUSREPLY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/reply.h"

struct scorer;
struct membudget;

#define STATUSREPLY_REUSE 4u
#define STATUSREPLY_MIN_REUSE_NS 1000000ULL
#define STATUSREPLY_BIG_BYTES (1024u * 1024u)
#define STATUSREPLY_MIN_INTERVAL_NS 1000000000ULL
#define STATUSREPLY_FAIL_HOLD_NS 10000000000ULL

/* One rendered reply; read-only once made, freed with its last reference. */
struct statusreply {
	atomic_uint refs;
	struct reply reply;
	size_t charged;			/* bytes of budget it holds */
	struct membudget *budget;
	uint64_t started_ns, render_ns;	/* when its render began, and took */
	bool failed;			/* reply is the error a failed render left */
};

typedef void (*statusreply_render_fn)(struct scorer *s, struct reply *out);

/* What a cache may be given; every field may be NULL. */
struct statusreply_opts {
	uint64_t (*now_ns)(void);	/* the clock; NULL: clock_mono_ns */
	const char *path;		/* names the endpoint in the failure's body */
	/* Counted once per render, and per render that failed; they must
	 * outlive the cache. */
	atomic_ulong *renders, *failures;
};

/* One endpoint's latest reply. */
struct statusreply_cache {
	pthread_mutex_t lock;		/* one render at a time; latest */
	statusreply_render_fn render;
	struct statusreply_opts opts;
	/* A reference of its own, dropped when a newer one is rendered: the
	 * latest reply stays charged until the next request for it. */
	struct statusreply *latest;
	size_t last_len;		/* the latest render's size, kept when it is dropped */
};

/* opts may be NULL; it is copied. */
void statusreply_cache_init(struct statusreply_cache *c, statusreply_render_fn render,
			    const struct statusreply_opts *opts);
/* Drops the cache's reference; holders keep theirs. */
void statusreply_cache_destroy(struct statusreply_cache *c);

/* A reply for a request that arrived at asked_ns (the cache's clock), with
 * a reference for the caller (statusreply_put()): the latest if it began
 * rendering after asked_ns or is within its hold (above), else a new one.
 * 0, -EBUSY when the budget has no room for it (nothing rendered when even
 * the latest reply's size would not fit), -ENOMEM. */
int statusreply_get(struct statusreply_cache *c, struct scorer *s, struct membudget *budget,
		    uint64_t asked_ns, struct statusreply **out);

/* The latest reply, whatever its age, never a render: for a server whose
 * render thread is not running. 0, or -EAGAIN when there is none. */
int statusreply_latest(struct statusreply_cache *c, struct statusreply **out);

/* The cache's clock, for asked_ns. */
uint64_t statusreply_now(const struct statusreply_cache *c);

/* Drops a reference; the last frees the reply and gives its bytes back.
 * Accepts NULL. The shape of libmicrohttpd's free callback. */
void statusreply_put(void *reply);

#endif
