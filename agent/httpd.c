#include "httpd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "buf.h"
#include "metrics.h"
#include "metricsd.h"

struct agent_httpd {
	struct metricsd *d;
	pthread_mutex_t lock;
	struct agent_metrics_snapshot snap;	/* guarded by lock */
};

void agent_httpd_publish(struct agent_httpd *h, const struct report *r, const struct sampler *sm,
			 struct sender *snd)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	agent_metrics_snapshot_fill(&h->snap, r, sm, snd);
	pthread_mutex_unlock(&h->lock);
}

/* On the HTTP thread: the process's figures now, the rest from the last
 * snapshot. */
static void render(void *ctx, const struct metricsd_counters *c, struct buf *b)
{
	struct agent_httpd *h = ctx;
	struct agent_metrics_process p;

	agent_metrics_process_read(&p);
	p.http_deadline_closes = c->deadline_closes;
	p.http_reclaimed_idle = c->reclaimed_idle;
	p.http_reclaimed_busiest = c->reclaimed_busiest;
	pthread_mutex_lock(&h->lock);
	agent_metrics_render(&h->snap, &p, b);
	pthread_mutex_unlock(&h->lock);
}

struct agent_httpd *agent_httpd_start(const char *addr, uint16_t port, char *err, size_t errlen)
{
	struct agent_httpd *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errlen, "--metrics: out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->d = metricsd_start(addr, port, "--metrics", render, h, err, errlen);
	if (!h->d) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	return h;
}

void agent_httpd_stop(struct agent_httpd *h)
{
	if (!h)
		return;
	metricsd_stop(h->d);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

uint16_t agent_httpd_port(const struct agent_httpd *h)
{
	return metricsd_port(h->d);
}
