#include "kube/podwatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "kubeclient.h"
#include "worker.h"

/* Out of memory for a request: the next try, in ms. */
#define NOMEM_RETRY_MS 1000u
/* A round after podwatch_stop() began waits for the thread to end. */
#define STOPPING_MS 60000u

struct podwatch {
	struct kubeclient *client;
	struct podinformer *informer;
	struct worker *worker;
};

void podwatch_defaults(struct podwatch_config *cfg)
{
	podinformer_defaults(&cfg->informer);
	cfg->connect_timeout_ms = 5000;
	cfg->index = NULL;
	cfg->weights = NULL;
	cfg->moves = NULL;
}

static void on_status(void *ctx, long code)
{
	podinformer_status(ctx, code);
}

static bool on_body(void *ctx, const char *p, size_t n)
{
	return podinformer_body(ctx, p, n);
}

/* One request: the informer says which, the client makes it. */
static uint64_t round_fn(void *ctx)
{
	struct podwatch *w = ctx;
	const struct kubeclient_handler h = { on_status, on_body, w->informer };
	struct podinformer_request req;
	char why[512] = "";
	int rc;

	if (podinformer_next(w->informer, &req))
		return NOMEM_RETRY_MS;
	rc = kubeclient_get(w->client, req.path, req.timeout_ms, &h, why, sizeof(why));
	if (rc == -EINTR)
		return STOPPING_MS;
	return podinformer_end(w->informer, rc, why);
}

struct podwatch *podwatch_start(const struct podwatch_config *cfg, struct kubeaccess *access,
				struct inflight *in, uint64_t (*now_ns)(void), char *err,
				size_t errlen)
{
	struct podwatch *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "pod watch: out of memory");
		goto fail;
	}
	w->informer = podinformer_create(&cfg->informer, access->server, in, now_ns, clock_unix_ms,
					 (unsigned int)clock_mono_ns());
	if (!w->informer) {
		snprintf(err, errlen, "pod watch: out of memory");
		goto fail;
	}
	podinformer_set_index(w->informer, cfg->index, cfg->weights);
	podinformer_set_moves(w->informer, cfg->moves);
	w->client = kubeclient_create(access, cfg->connect_timeout_ms, err, errlen);
	if (!w->client)
		goto fail;
	w->worker = worker_start("pod watch", round_fn, w, 0, err, errlen);
	if (!w->worker)
		goto fail;
	return w;
fail:
	podwatch_stop(w);
	return NULL;
}

void podwatch_stop(struct podwatch *w)
{
	if (!w)
		return;
	if (w->client)
		kubeclient_cancel(w->client);
	worker_stop(w->worker);
	kubeclient_destroy(w->client);
	podinformer_destroy(w->informer);
	free(w);
}

void podwatch_stats(struct podwatch *w, struct podinformer_stats *out)
{
	podinformer_stats(w ? w->informer : NULL, out);
}
