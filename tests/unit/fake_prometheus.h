/* A Prometheus HTTP API for unit tests: a real HTTP server (libmicrohttpd)
 * on 127.0.0.1 that answers GET /api/v1/query with whatever status and
 * body the test set last, and counts the queries and the bearer tokens it
 * saw. The scorer's fallback (scorer/prom/prom.c) talks to it over real
 * sockets with libcurl. Header-only: each test is one translation unit. */
#ifndef NETSCHED_TEST_FAKE_PROMETHEUS_H
#define NETSCHED_TEST_FAKE_PROMETHEUS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <microhttpd.h>

struct fake_prometheus {
	struct MHD_Daemon *daemon;
	char url[64];
	pthread_mutex_t lock;
	unsigned status;		/* what the next query gets */
	char *body;
	atomic_uint queries;
	char authorization[128];	/* of the last query */
};

static enum MHD_Result fake_prometheus_answer(void *cls, struct MHD_Connection *conn,
					      const char *url, const char *method,
					      const char *version, const char *upload,
					      size_t *upload_size, void **con_cls)
{
	struct fake_prometheus *fp = cls;
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned status;
	char *body;

	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	pthread_mutex_lock(&fp->lock);
	snprintf(fp->authorization, sizeof(fp->authorization), "%s", auth ? auth : "");
	status = strcmp(url, "/api/v1/query") ? 404 : fp->status;
	body = strdup(fp->body ? fp->body : "");
	pthread_mutex_unlock(&fp->lock);
	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	atomic_fetch_add(&fp->queries, 1);
	return ret;
}

/* The next queries get status and body (copied). */
static inline void fake_prometheus_set(struct fake_prometheus *fp, unsigned status,
				       const char *body)
{
	char *copy = strdup(body);

	pthread_mutex_lock(&fp->lock);
	free(fp->body);
	fp->body = copy;
	fp->status = status;
	pthread_mutex_unlock(&fp->lock);
}

/* Listening on a free port of 127.0.0.1, answering 503 until set; NULL on
 * failure. */
static inline struct fake_prometheus *fake_prometheus_start(void)
{
	struct fake_prometheus *fp = calloc(1, sizeof(*fp));
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;

	if (!fp)
		return NULL;
	pthread_mutex_init(&fp->lock, NULL);
	fp->status = 503;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fp->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				      fake_prometheus_answer, fp,
				      MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
	info = fp->daemon ? MHD_get_daemon_info(fp->daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (!info) {
		if (fp->daemon)
			MHD_stop_daemon(fp->daemon);
		pthread_mutex_destroy(&fp->lock);
		free(fp);
		return NULL;
	}
	snprintf(fp->url, sizeof(fp->url), "http://127.0.0.1:%u", (unsigned)info->port);
	return fp;
}

static inline void fake_prometheus_stop(struct fake_prometheus *fp)
{
	if (!fp)
		return;
	MHD_stop_daemon(fp->daemon);
	pthread_mutex_destroy(&fp->lock);
	free(fp->body);
	free(fp);
}

/* Waits until *counter reaches want, at most 10 s (the fallback's first
 * refresh starts at once; this only bounds a broken one). */
static inline bool fake_prometheus_wait(atomic_ulong *counter, unsigned long want)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };

	for (int i = 0; i < 2000; i++) {
		if (atomic_load(counter) >= want)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* An instant-query reply: each node's rx and tx series. */
static inline void fake_prometheus_vector(struct fake_prometheus *fp, const char *const *nodes,
					  const double *rx, const double *tx, size_t n)
{
	size_t cap = 128 + n * 256, len = 0;
	char *b = malloc(cap);

	if (!b)
		return;
	len += (size_t)snprintf(b + len, cap - len,
				"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(b + len, cap - len,
					"%s{\"metric\":{\"instance\":\"%s\",\"netsched_dir\":\"rx\"},"
					"\"value\":[1,\"%g\"]},"
					"{\"metric\":{\"instance\":\"%s\",\"netsched_dir\":\"tx\"},"
					"\"value\":[1,\"%g\"]}",
					i ? "," : "", nodes[i], rx[i], nodes[i], tx[i]);
	snprintf(b + len, cap - len, "]}}");
	fake_prometheus_set(fp, 200, b);
	free(b);
}

#endif
