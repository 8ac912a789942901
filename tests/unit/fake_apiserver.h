/* A Kubernetes apiserver's pod endpoints for unit tests: a real HTTPS
 * server (libmicrohttpd over GnuTLS, a certificate made for 127.0.0.1 by
 * self_signed.h) that answers GET /api/v1/pods lists and watches with what
 * the test set last, and records the paths and the Authorization header
 * it saw. A watch sends its body, then stays open while hold is set, as a
 * quiet real watch does, until released or the server stops. The pod
 * watch (scorer/kube/kubeclient.c, scorer/kube/podwatch.c) talks to it over real
 * sockets and real TLS with libcurl. Header-only. */
#ifndef NETSCHED_TEST_FAKE_APISERVER_H
#define NETSCHED_TEST_FAKE_APISERVER_H

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

#include "tests/unit/self_signed.h"

struct fake_answer {
	unsigned status;
	char *body;
};

/* Any path holding match, for method: this answer (before "other"). */
#define FAKE_ROUTES 8
struct fake_route {
	char method[8];
	char match[160];
	struct fake_answer a;
};

/* Every request, in order: "METHOD /path" and what it carried. */
#define FAKE_LOG 128
struct fake_logged {
	char line[200];
	char body[1024];
};

struct fake_apiserver {
	struct MHD_Daemon *daemon;
	char url[64];			/* https://127.0.0.1:PORT */
	char *cert, *key;		/* PEM: the server's pair, and the clients' CA */
	pthread_mutex_t lock;
	struct fake_answer list, watch;
	atomic_bool hold;		/* keep watches open after their body */
	atomic_bool closing;
	atomic_uint lists, watches;
	char authorization[256];	/* of the last request */
	char path[1024];		/* of the last request, with its query */
	/* Any other path: this answer (status 0: 404), and what the last
	 * request carried: its method, Content-Type and body (POST, PUT). */
	struct fake_answer other;
	char method[8];
	char content_type[64];
	char upload[8192];
	size_t upload_len;
	struct fake_route routes[FAKE_ROUTES];
	unsigned n_routes;
	struct fake_logged log[FAKE_LOG];
	unsigned n_log;
};

struct fake_stream {
	struct fake_apiserver *fa;
	bool watch;
	char *body;
	size_t len, sent;
};

static ssize_t fake_apiserver_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct fake_stream *st = cls;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	size_t n;

	(void)pos;
	if (st->sent < st->len) {
		n = st->len - st->sent < max ? st->len - st->sent : max;
		memcpy(buf, st->body + st->sent, n);
		st->sent += n;
		return (ssize_t)n;
	}
	if (st->watch && atomic_load(&st->fa->hold) && !atomic_load(&st->fa->closing)) {
		nanosleep(&tick, NULL); /* a quiet watch: nothing yet */
		return 0;
	}
	return MHD_CONTENT_READER_END_OF_STREAM;
}

static void fake_apiserver_stream_free(void *cls)
{
	struct fake_stream *st = cls;

	free(st->body);
	free(st);
}

/* Appends one query argument to fa->path (under the lock). */
static enum MHD_Result fake_apiserver_arg(void *cls, enum MHD_ValueKind kind, const char *key,
					  const char *value)
{
	struct fake_apiserver *fa = cls;
	size_t n = strlen(fa->path);

	(void)kind;
	snprintf(fa->path + n, sizeof(fa->path) - n, "%s%s=%s", strchr(fa->path, '?') ? "&" : "?",
		 key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result fake_apiserver_answer(void *cls, struct MHD_Connection *conn,
					     const char *url, const char *method,
					     const char *version, const char *upload,
					     size_t *upload_size, void **con_cls)
{
	struct fake_apiserver *fa = cls;
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *watch = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
	struct fake_stream *st;
	struct fake_answer a;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)version;
	if (strcmp(method, "GET") != 0) {
		/* A body arrives in pieces: gather it, answer after the last. */
		static int started;
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");

		if (!*con_cls) {
			*con_cls = &started;
			pthread_mutex_lock(&fa->lock);
			fa->upload_len = 0;
			snprintf(fa->content_type, sizeof(fa->content_type), "%s", ct ? ct : "");
			pthread_mutex_unlock(&fa->lock);
			return MHD_YES;
		}
		if (*upload_size) {
			pthread_mutex_lock(&fa->lock);
			if (fa->upload_len + *upload_size < sizeof(fa->upload)) {
				memcpy(fa->upload + fa->upload_len, upload, *upload_size);
				fa->upload_len += *upload_size;
			}
			pthread_mutex_unlock(&fa->lock);
			*upload_size = 0;
			return MHD_YES;
		}
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return MHD_NO;
	pthread_mutex_lock(&fa->lock);
	snprintf(fa->method, sizeof(fa->method), "%s", method);
	fa->upload[fa->upload_len < sizeof(fa->upload) ? fa->upload_len : 0] = '\0';
	if (strcmp(method, "GET") == 0)
		fa->upload_len = 0, fa->upload[0] = '\0';
	snprintf(fa->authorization, sizeof(fa->authorization), "%s", auth ? auth : "");
	snprintf(fa->path, sizeof(fa->path), "%s", url);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, fake_apiserver_arg, fa);
	a = watch ? fa->watch : fa->list;
	if (strcmp(url, "/api/v1/pods"))
		a = fa->other.status ? fa->other : (struct fake_answer){ 404, NULL };
	for (unsigned i = 0; i < fa->n_routes; i++)
		if (!strcmp(fa->routes[i].method, method) && strstr(url, fa->routes[i].match)) {
			a = fa->routes[i].a;
			break;
		}
	if (fa->n_log < FAKE_LOG) {
		struct fake_logged *l = &fa->log[fa->n_log++];

		snprintf(l->line, sizeof(l->line), "%s %s", method, url);
		snprintf(l->body, sizeof(l->body), "%.1023s", fa->upload);
	}
	st->fa = fa;
	st->watch = watch != NULL;
	st->body = strdup(a.body ? a.body : "");
	pthread_mutex_unlock(&fa->lock);
	atomic_fetch_add(watch ? &fa->watches : &fa->lists, 1);
	if (!st->body) {
		free(st);
		return MHD_NO;
	}
	st->len = strlen(st->body);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, fake_apiserver_stream, st,
						 fake_apiserver_stream_free);
	if (!resp) {
		fake_apiserver_stream_free(st);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ret = MHD_queue_response(conn, a.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* What lists (watch false) or watches get from now on (body copied). */
static inline void fake_apiserver_set(struct fake_apiserver *fa, bool watch, unsigned status,
				      const char *body)
{
	struct fake_answer *a = watch ? &fa->watch : &fa->list;
	char *copy = strdup(body);

	pthread_mutex_lock(&fa->lock);
	free(a->body);
	a->body = copy;
	a->status = status;
	pthread_mutex_unlock(&fa->lock);
}

/* What requests to any other path get from now on (body copied). */
static inline void fake_apiserver_set_other(struct fake_apiserver *fa, unsigned status,
					    const char *body)
{
	char *copy = strdup(body);

	pthread_mutex_lock(&fa->lock);
	free(fa->other.body);
	fa->other.body = copy;
	fa->other.status = status;
	pthread_mutex_unlock(&fa->lock);
}

/* What requests with this method to a path holding match get from now on
 * (status and body copied; the same method and match again replaces it). */
static inline void fake_apiserver_route(struct fake_apiserver *fa, const char *method,
					const char *match, unsigned status, const char *body)
{
	char *copy = strdup(body);
	unsigned i;

	pthread_mutex_lock(&fa->lock);
	for (i = 0; i < fa->n_routes; i++)
		if (!strcmp(fa->routes[i].method, method) && !strcmp(fa->routes[i].match, match))
			break;
	if (i < FAKE_ROUTES) {
		if (i == fa->n_routes) {
			fa->n_routes++;
			snprintf(fa->routes[i].method, sizeof(fa->routes[i].method), "%s", method);
			snprintf(fa->routes[i].match, sizeof(fa->routes[i].match), "%s", match);
		} else {
			free(fa->routes[i].a.body);
		}
		fa->routes[i].a = (struct fake_answer){ status, copy };
		copy = NULL;
	}
	pthread_mutex_unlock(&fa->lock);
	free(copy);
}

/* How many logged requests hold every one of the strings in their line
 * (and body, when body_has is not NULL). */
static inline unsigned fake_apiserver_count(struct fake_apiserver *fa, const char *line_has,
					    const char *body_has)
{
	unsigned n = 0;

	pthread_mutex_lock(&fa->lock);
	for (unsigned i = 0; i < fa->n_log; i++)
		if (strstr(fa->log[i].line, line_has) &&
		    (!body_has || strstr(fa->log[i].body, body_has)))
			n++;
	pthread_mutex_unlock(&fa->lock);
	return n;
}

/* The last request's method, Content-Type and body. */
static inline void fake_apiserver_last_upload(struct fake_apiserver *fa, char *method, size_t mlen,
					      char *ctype, size_t clen, char *body, size_t blen)
{
	pthread_mutex_lock(&fa->lock);
	snprintf(method, mlen, "%s", fa->method);
	snprintf(ctype, clen, "%s", fa->content_type);
	snprintf(body, blen, "%s", fa->upload);
	pthread_mutex_unlock(&fa->lock);
}

/* A copy of what the last request carried. */
static inline void fake_apiserver_last(struct fake_apiserver *fa, char *path, size_t plen,
				       char *auth, size_t alen)
{
	pthread_mutex_lock(&fa->lock);
	snprintf(path, plen, "%s", fa->path);
	snprintf(auth, alen, "%s", fa->authorization);
	pthread_mutex_unlock(&fa->lock);
}

static inline void fake_apiserver_stop(struct fake_apiserver *fa)
{
	if (!fa)
		return;
	atomic_store(&fa->closing, true);
	if (fa->daemon)
		MHD_stop_daemon(fa->daemon);
	pthread_mutex_destroy(&fa->lock);
	free(fa->list.body);
	free(fa->watch.body);
	free(fa->other.body);
	for (unsigned i = 0; i < fa->n_routes; i++)
		free(fa->routes[i].a.body);
	free(fa->cert);
	free(fa->key);
	free(fa);
}

/* Listening on a free port of 127.0.0.1 with a new certificate, answering
 * 503 until set; NULL on failure. */
static inline struct fake_apiserver *fake_apiserver_start(void)
{
	struct fake_apiserver *fa = calloc(1, sizeof(*fa));
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;

	if (!fa)
		return NULL;
	pthread_mutex_init(&fa->lock, NULL);
	fa->list.status = fa->watch.status = 503;
	if (self_signed("fake-apiserver", &fa->cert, &fa->key))
		goto fail;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* A thread per connection: a held watch waits in its own. */
	fa->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL,
				      fake_apiserver_answer, fa, MHD_OPTION_SOCK_ADDR, &sa,
				      MHD_OPTION_HTTPS_MEM_KEY, fa->key,
				      MHD_OPTION_HTTPS_MEM_CERT, fa->cert, MHD_OPTION_END);
	info = fa->daemon ? MHD_get_daemon_info(fa->daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (!info)
		goto fail;
	snprintf(fa->url, sizeof(fa->url), "https://127.0.0.1:%u", (unsigned)info->port);
	return fa;
fail:
	fake_apiserver_stop(fa);
	return NULL;
}

/* Polls cond(arg) every 5 ms for at most 10 s (only a broken watch takes
 * that long). */
static inline bool fake_apiserver_wait(bool (*cond)(void *), void *arg)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };

	for (int i = 0; i < 2000; i++) {
		if (cond(arg))
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

#endif
