#include "serve/statusreply.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "clock.h"
#include "membudget.h"

void statusreply_cache_init(struct statusreply_cache *c, statusreply_render_fn render)
{
	pthread_mutex_init(&c->lock, NULL);
	c->render = render;
	c->latest = NULL;
	c->last_len = 0;
}

void statusreply_cache_destroy(struct statusreply_cache *c)
{
	statusreply_put(c->latest);
	c->latest = NULL;
	pthread_mutex_destroy(&c->lock);
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

/* Whether r answers a request that arrived at asked_ns. */
static bool fresh_enough(const struct statusreply *r, uint64_t asked_ns)
{
	uint64_t reuse = r->render_ns >= STATUSREPLY_MIN_REUSE_NS ? STATUSREPLY_REUSE * r->render_ns : 0;

	return asked_ns <= r->started_ns + reuse;
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
	r->started_ns = clock_mono_ns();
	c->render(s, &r->reply);
	r->render_ns = clock_mono_ns() - r->started_ns;
	if (!r->reply.body) {
		statusreply_put(r);
		return -ENOMEM;
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
