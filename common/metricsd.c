#include "metricsd.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "buf.h"
#include "httpguard.h"

/* Prometheus and the kubelet's probes need a few connections; the guard
 * shares them fairly, so hostile clients cannot hold every slot and fail
 * the liveness probe. */
#define HTTPD_MAX_CONNECTIONS 32u
/* Per address: over it, that address's oldest silent connection goes, so
 * a hostNetwork pod flooding from the node's address (the kubelet's) does
 * not fail the probe (httpguard.h). */
#define HTTPD_PER_CLIENT 4u
#define HTTPD_HEADER_TIMEOUT_S 3u
#define HTTPD_IDLE_TIMEOUT_S 5u
/* The agent's page of 32 interfaces and 64 scorers is ~30 KB: a client
 * taking a page slower than this is not a scraper. */
#define HTTPD_MIN_BYTES_PER_SECOND (64u * 1024u)
#define HTTPD_MAX_PAGE (256u * 1024u)
/* Kernel buffers each way: a page fits, a client not reading holds little. */
#define HTTPD_SOCKET_BUFFER (32 * 1024)

struct metricsd {
	struct MHD_Daemon *daemon;
	struct httpguard *guard;
	uint16_t port;
	atomic_ulong deadline_closes, reclaimed_idle, reclaimed_busiest;
	metricsd_render_fn render;
	void *ctx;
};

static void render(struct metricsd *h, struct buf *b)
{
	struct metricsd_counters c = {
		.deadline_closes = atomic_load(&h->deadline_closes),
		.reclaimed_idle = atomic_load(&h->reclaimed_idle),
		.reclaimed_busiest = atomic_load(&h->reclaimed_busiest),
	};

	h->render(h->ctx, &c, b);
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
			       struct buf *b)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	size_t len = 0;
	char *body = buf_release(b, &len);

	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	httpguard_replying(c, len);
	rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* Whether the request announces a body: none is ever read here. */
static bool has_body(struct MHD_Connection *c)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0")) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **req)
{
	struct metricsd *h = cls;
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	struct buf b;

	(void)version, (void)data;
	buf_init(&b, HTTPD_MAX_PAGE);
	if (!*req) { /* first call: headers only */
		httpguard_headers_done(c, 0);
		*req = h;
		/* Answered now, so the body is never read (MHD then closes
		 * the connection): a client trickling one holds nothing. */
		if (!get || has_body(c)) {
			buf_puts(&b, "method not allowed: use GET, without a body\n");
			return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", &b);
		}
		return MHD_YES;
	}
	if (*data_len) { /* cannot happen: answered above */
		*data_len = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics") == 0) {
		render(h, &b);
		return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
	}
	if (strcmp(url, "/healthz") == 0) {
		buf_puts(&b, "ok\n");
		return respond(c, MHD_HTTP_OK, "text/plain", &b);
	}
	buf_puts(&b, "not found: try /metrics or /healthz\n");
	return respond(c, MHD_HTTP_NOT_FOUND, "text/plain", &b);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)req, (void)why;
	httpguard_request_done(c);
}

struct metricsd *metricsd_start(const char *addr, uint16_t port, const char *flag,
				metricsd_render_fn fn, void *ctx, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	const union MHD_DaemonInfo *info;
	/* poll(), not epoll: level-triggered, so a client that closes is
	 * forgotten at once (see scorer/serve/http.c). */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
	struct metricsd *h;

	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errlen, "%s %s: not an IP address", flag, addr);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "%s: out of memory", flag);
		return NULL;
	}
	h->render = fn;
	h->ctx = ctx;
	atomic_init(&h->deadline_closes, 0);
	atomic_init(&h->reclaimed_idle, 0);
	atomic_init(&h->reclaimed_busiest, 0);
	h->guard = httpguard_start(&(struct httpguard_config){
		.name = "metrics",
		.header_timeout_s = HTTPD_HEADER_TIMEOUT_S,
		.idle_timeout_s = HTTPD_IDLE_TIMEOUT_S,
		.min_bytes_per_second = HTTPD_MIN_BYTES_PER_SECOND,
		.socket_buffer = HTTPD_SOCKET_BUFFER,
		.max_connections = HTTPD_MAX_CONNECTIONS,
		.max_per_address = HTTPD_PER_CLIENT,
		.deadline = &h->deadline_closes,
		.reclaimed_idle = &h->reclaimed_idle,
		.reclaimed_busiest = &h->reclaimed_busiest,
	}, err, errlen);
	if (!h->guard)
		goto out_free;
	h->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, h,
				     MHD_OPTION_EXTERNAL_LOGGER, httpguard_mhd_log, "metrics",
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT,
				     HTTPGUARD_HARD_LIMIT(HTTPD_MAX_CONNECTIONS),
				     MHD_OPTION_CONNECTION_TIMEOUT, HTTPD_IDLE_TIMEOUT_S,
				     MHD_OPTION_NOTIFY_CONNECTION, httpguard_notify, h->guard,
				     MHD_OPTION_URI_LOG_CALLBACK, httpguard_uri_log, NULL,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				     MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(err, errlen, "%s %s:%u: cannot listen (in use? see the log above)",
			 flag, addr, port);
		goto out_free;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : port;
	return h;

out_free:
	httpguard_stop(h->guard);
	free(h);
	return NULL;
}

void metricsd_stop(struct metricsd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	httpguard_stop(h->guard);
	free(h);
}

uint16_t metricsd_port(const struct metricsd *h)
{
	return h->port;
}
