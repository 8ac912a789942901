#include "serve/statusreply.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "log.h"
#include "membudget.h"

void statusreply_cache_init(struct statusreply_cache *c, statusreply_render_fn render,
			    const struct statusreply_opts *opts)
{
	pthread_mutex_init(&c->lock, NULL);
	c->render = render;
	c->opts = opts ? *opts : (struct statusreply_opts){ 0 };
	if (!c->opts.now_ns)
		c->opts.now_ns = clock_mono_ns;
	if (!c->opts.path)
		c->opts.path = "this reply";
	c->latest = NULL;
	c->last_len = 0;
}

void statusreply_cache_destroy(struct statusreply_cache *c)
{
	statusreply_put(c->latest);
	c->latest = NULL;
	pthread_mutex_destroy(&c->lock);
}

uint64_t statusreply_now(const struct statusreply_cache *c)
{
	return c->opts.now_ns();
}

void statusreply_put(void *reply)
{
	struct statusreply *r = reply;

	if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	reply_free_body(&r->reply);
	membudget_give(r->budget, &r->charged);
	free(r);
}

static struct statusreply *ref(struct statusreply *r)
{
	atomic_fetch_add(&r->refs, 1);
	return r;
}

static void count(atomic_ulong *counter)
{
	if (counter)
		atomic_fetch_add(counter, 1);
}

/* How long after its render began r answers requests (see the header). */
static uint64_t hold_ns(const struct statusreply *r)
{
	uint64_t reuse = r->render_ns >= STATUSREPLY_MIN_REUSE_NS ? STATUSREPLY_REUSE * r->render_ns : 0;
	uint64_t floor = r->failed ? STATUSREPLY_FAIL_HOLD_NS :
			 r->reply.len >= STATUSREPLY_BIG_BYTES ? STATUSREPLY_MIN_INTERVAL_NS : 0;

	return reuse > floor ? reuse : floor;
}

/* Whether r answers a request that arrived at asked_ns. */
static bool fresh_enough(const struct statusreply *r, uint64_t asked_ns)
{
	return asked_ns <= r->started_ns + hold_ns(r);
}

/* r's render left no body: r becomes the small error every request gets
 * until its hold ends. 0, or -ENOMEM. */
static int fail(struct statusreply_cache *c, struct statusreply *r)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s could not be rendered: over its size limit, or out of memory; "
		 "not tried again for %llu s", c->opts.path,
		 (unsigned long long)(hold_ns(r) / NS_PER_SEC));
	reply_error(500, msg, &r->reply);
	if (!r->reply.body)
		return -ENOMEM;
	count(c->opts.failures);
	log_warn("http", "%s: rendering failed after %.3f s (over its size limit, or out of memory); "
		 "answering 500 without rendering for %llu s", c->opts.path,
		 (double)r->render_ns / (double)NS_PER_SEC,
		 (unsigned long long)(hold_ns(r) / NS_PER_SEC));
	return 0;
}

/* Renders a new reply charged to budget; lock held. */
static int render(struct statusreply_cache *c, struct scorer *s, struct membudget *budget,
		  struct statusreply **out)
{
	struct statusreply *r;
	size_t probe = 0;
	char *shrunk;

	/* Not even the last one's size fits: spare the CPU. */
	if (!membudget_take(budget, &probe, c->last_len))
		return -EBUSY;
	r = calloc(1, sizeof(*r));
	if (!r) {
		membudget_give(budget, &probe);
		return -ENOMEM;
	}
	atomic_init(&r->refs, 1);
	r->budget = budget;
	r->charged = probe;
	r->started_ns = c->opts.now_ns();
	count(c->opts.renders);
	c->render(s, &r->reply);
	r->render_ns = c->opts.now_ns() - r->started_ns;
	if (!r->reply.body) {
		r->failed = true;
		if (fail(c, r)) {
			statusreply_put(r);
			return -ENOMEM;
		}
	}
	/* The buffer grew by doubling: hold (and charge) only what is used. */
	shrunk = realloc(r->reply.body, r->reply.len + 1);
	if (shrunk)
		r->reply.body = shrunk;
	if (r->charged < r->reply.len + 1 &&
	    !membudget_take(budget, &r->charged, r->reply.len + 1 - r->charged)) {
		statusreply_put(r);
		return -EBUSY;
	}
	membudget_shrink(budget, &r->charged, r->reply.len + 1);
	c->last_len = r->reply.len + 1;
	*out = r;
	return 0;
}

int statusreply_get(struct statusreply_cache *c, struct scorer *s, struct membudget *budget,
		    uint64_t asked_ns, struct statusreply **out)
{
	struct statusreply *r;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	if (c->latest && fresh_enough(c->latest, asked_ns)) {
		*out = ref(c->latest);
		goto out_unlock;
	}
	/* Its bytes back before new ones are taken (if no reader holds it). */
	statusreply_put(c->latest);
	c->latest = NULL;
	rc = render(c, s, budget, &r);
	if (rc)
		goto out_unlock;
	c->latest = r;
	*out = ref(r);
out_unlock:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int statusreply_latest(struct statusreply_cache *c, struct statusreply **out)
{
	int rc = -EAGAIN;

	pthread_mutex_lock(&c->lock);
	if (c->latest) {
		*out = ref(c->latest);
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}
