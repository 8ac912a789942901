/* The nudge's requests (nudgerun.h). */
#include "nudgerun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/units.h"
#include "kubeops.h"
#include "pending.h"

#define MOD "rebalancer"
#define PENDING_PATH "/api/v1/pods?fieldSelector=spec.nodeName%3D%2Cstatus.phase%3DPending" \
		     "&resourceVersion=0"

struct collect {
	struct buf *out;
	size_t max;
	long code;
	bool over;
};

static void on_status(void *ctx, long code)
{
	((struct collect *)ctx)->code = code;
}

static bool on_body(void *ctx, const char *p, size_t n)
{
	struct collect *c = ctx;

	if (c->out->len + n > c->max) {
		c->over = true;
		return false;
	}
	buf_append(c->out, p, n);
	return !buf_failed(c->out);
}

static int call(struct nudge_run *nr, const char *method, const char *path, const char *body,
		size_t len, size_t max, long *code, char *why, size_t whylen)
{
	struct collect c = { &nr->body, max, 0, false };
	const struct kubeclient_handler h = { on_status, on_body, &c };
	int rc;

	buf_reset(&nr->body);
	rc = kubeclient_request(nr->kc, method, path, body, len, nr->timeout_ms, &h, why, whylen);
	*code = c.code;
	if (rc == 0 && c.over) {
		snprintf(why, whylen, "a reply of more than %zu bytes", max);
		return -E2BIG;
	}
	return rc;
}

int nudge_run_init(struct nudge_run *nr, const struct nudge_config *cfg, struct kubeclient *kc,
		   struct rebal_metrics *m)
{
	memset(nr, 0, sizeof(*nr));
	nr->cfg = cfg;
	nr->kc = kc;
	nr->metrics = m;
	nr->timeout_ms = 10000;
	nr->pods = calloc(NUDGE_PODS_MAX, sizeof(*nr->pods));
	if (!nr->pods)
		return -ENOMEM;
	buf_init(&nr->body, PENDING_BODY_MAX);
	return 0;
}

void nudge_run_free(struct nudge_run *nr)
{
	nudge_memory_free(&nr->mem);
	free(nr->pods);
	buf_free(&nr->body);
	memset(nr, 0, sizeof(*nr));
}

/* The pods netsched refused, into nr->pods; how many, or -1 (logged). */
static long list_pending(struct nudge_run *nr)
{
	struct pending_counts c;
	char why[512];
	long code = 0;

	if (call(nr, "GET", PENDING_PATH, NULL, 0, PENDING_BODY_MAX, &code, why, sizeof(why)) ||
	    code != 200) {
		atomic_fetch_add(&nr->metrics->apiserver_errors, 1);
		if (code && code != 200)
			log_warn(MOD, "nudge: the apiserver answered %ld to the list of pending pods: "
				 "%.*s", code, (int)(nr->body.len < 200 ? nr->body.len : 200),
				 nr->body.data ? nr->body.data : "");
		else
			log_warn(MOD, "nudge: cannot list the pending pods: %s", why);
		return -1;
	}
	if (pending_parse(nr->body.data ? nr->body.data : "", nr->body.len, nr->pods,
			  NUDGE_PODS_MAX, &c, why, sizeof(why))) {
		atomic_fetch_add(&nr->metrics->apiserver_errors, 1);
		log_warn(MOD, "nudge: the list of pending pods: %s", why);
		return -1;
	}
	if (c.skipped)
		log_debug(MOD, "nudge: %zu pending pods netsched refused have a bandwidth annotation "
			  "that is not a quantity", c.skipped);
	if (c.over)
		log_info(MOD, "nudge: %zu pods netsched refused are pending; the first %u are looked "
			 "at", c.kept + c.over, NUDGE_PODS_MAX);
	return (long)c.kept;
}

/* Labels one node; true when the apiserver took it. */
static bool label(struct nudge_run *nr, const struct decide_snapshot *s,
		  const struct nudge_pick *k)
{
	const struct decide_node *n = &s->nodes[k->node];
	const struct nudge_pod *p = &nr->pods[k->pod];
	const char *d = k->dir == DECIDE_RX ? "rx" : "tx";
	char esc[1024], path[1200], body[160], why[512], f[32], b[32], a[32];
	long code = 0;
	int len;

	kubeops_escape(n->name, esc, sizeof(esc));
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);
	len = snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"" NUDGE_LABEL "\":\"%llu\"}}}",
		       (unsigned long long)s->now_s);
	units_format_bits_rate(f, sizeof(f), 8.0 * (double)k->free);
	units_format_bits_rate(b, sizeof(b), 8.0 * (double)k->base);
	units_format_bits_rate(a, sizeof(a), 8.0 * (double)p->ask[k->dir]);
	if (call(nr, "PATCH", path, body, (size_t)len, 64u * 1024u, &code, why, sizeof(why)) ||
	    code != 200) {
		atomic_fetch_add(&nr->metrics->apiserver_errors, 1);
		if (code)
			snprintf(why, sizeof(why), "the apiserver answered %ld%s", code,
				 code == 403 ? " (its ClusterRole lacks nodes patch)" : "");
		log_warn(MOD, "%s: %s %s free now, was %s, enough for %s/%s (asks %s %s): cannot "
			 "label it " NUDGE_LABEL ": %s", n->name, d, f, b, p->namespace, p->name, d, a,
			 why);
		return false;
	}
	atomic_fetch_add(&nr->metrics->nudges, 1);
	log_info(MOD, "%s: %s %s free now, was %s, enough for %s/%s (asks %s %s), which netsched "
		 "refused and is pending: labelled " NUDGE_LABEL "=%llu so the scheduler tries it "
		 "again now", n->name, d, f, b, p->namespace, p->name, d, a,
		 (unsigned long long)s->now_s);
	return true;
}

void nudge_run_cycle(struct nudge_run *nr, const struct decide_snapshot *s)
{
	struct nudge_pick picks[NUDGE_NODES_MAX];
	bool look = false, any = false;
	size_t n;
	long pods;

	if (!nr->cfg->on)
		return;
	if (nudge_observe(&nr->mem, nr->cfg, s, &look)) {
		log_warn(MOD, "nudge: out of memory");
		return;
	}
	if (!look)
		return;
	pods = list_pending(nr);
	if (pods < 0)
		return;	/* the bases stay: looked at again next cycle */
	n = nudge_plan(nr->cfg, &nr->mem, s, nr->pods, (size_t)pods, picks, NUDGE_NODES_MAX);
	log_debug(MOD, "nudge: a node gained room; %ld pending pods netsched refused, %zu nodes "
		  "to label", pods, n);
	for (size_t k = 0; k < n; k++)
		any |= label(nr, s, &picks[k]);
	nudge_looked(&nr->mem, s);
	if (any)
		nudge_done(&nr->mem, s->now_s);
}
