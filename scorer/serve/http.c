#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <microhttpd.h>

#include "buf.h"
#include "clock.h"
#include "serve/extender.h"
#include "httpguard.h"
#include "log.h"
#include "serve/metrics.h"
#include "serve/movesroute.h"
#include "serve/pressure.h"
#include "pods/moves.h"
#include "serve/reply.h"
#include "scorer.h"
#include "scratch.h"
#include "serve/status.h"
#include "serve/statusreply.h"
#include "serve/tls.h"
#include "worker.h"

/* Worker threads in libmicrohttpd's pool, each poll()ing the connections
 * it accepted (level-triggered: start_daemon() says why not epoll). */
#define HTTP_THREADS 2u
/* Longer than Go's 90 s idle-connection timeout, so the scheduler closes
 * an idle connection before we do and never sends a request into one we
 * are closing (Go does not retry a POST that hit a closed connection). */
#define HTTP_IDLE_TIMEOUT_S 120u
/* A request's headers, from its first line (or the connection's accept) to
 * the blank line: the scheduler sends them in one write, so a client still
 * sending after this long is trickling them on purpose (httpguard.h). */
#define HTTP_HEADER_TIMEOUT_S 5u
/* After its headers, a body or a reply must move at least this fast: the
 * largest body (--max-body, 32 MiB) gets 5 + 32 s, a 16 MB one 5 + 15 s,
 * far more than any real client on a cluster network needs, and a client
 * trickling a byte every 20 s loses its slot. */
#define HTTP_MIN_BYTES_PER_SECOND (1024u * 1024u)
/* Each connection's kernel buffers, each way (the kernel doubles it): 256
 * KiB in all, so 320 connections not reading their replies hold 80 MiB of
 * kernel memory at most, where the kernel's own growth allowed 4 MiB each.
 * 128 KiB in flight still moves 600 MB/s at a 0.2 ms round trip. */
#define HTTP_SOCKET_BUFFER (64 * 1024)
#define HTTP_BACKLOG 128
/* Per-connection pool for headers and the read buffer; more than ~128 KiB
 * buys nothing (MHD's own advice). */
#define HTTP_CONN_MEMORY (128u * 1024u)
/* Request memory, all connections together (bodies and their JSON tokens,
 * s->request_memory; the Prometheus fallback's reply and its tokens too,
 * prom.h): four bodies of the largest allowed size. The
 * largest body with the most tokens allowed (32 MiB, 4 Mi tokens of 20
 * bytes) needs 112 MiB in all, so it fits alone and at most one such
 * request parses at a time; with the table, in-flight pods and connection
 * buffers this keeps peak RSS under deploy/'s 256Mi
 * (tests/integration/test_memory.sh). */
#define HTTP_BUDGET_BODIES 4u
/* The budget's last eighth only for requests holding at most 1 MiB (the
 * scheduler's NodeNames requests, up to 10,000 nodes: 150 KB and 300 KB of
 * tokens): clients sending the largest bodies cannot starve them. */
#define HTTP_BUDGET_RESERVE_DIV 8u
#define HTTP_SMALL_REQUEST (1024u * 1024u)
/* Status replies (/v1/nodes, /metrics) held at once, shared or not
 * (statusreply.h): two of the largest /v1/nodes (16 MiB, status.c). A
 * budget of their own, so clients that ask and never read cannot take
 * the scheduler's body memory, nor the other way round. */
#define HTTP_STATUS_BUDGET (32u * 1024u * 1024u)
/* Bodies over this are parsed and answered on the big-request thread, not
 * on the HTTP thread that read them: 32 MiB of [1,1,...] takes 70 ms to
 * parse, and the HTTP thread would serve none of its other connections (the
 * scheduler's, perhaps) meanwhile: p99 went from 2 ms to 70 ms. The
 * scheduler's NodeNames requests stay far below it (10,000 names: 150 KB).*/
#define HTTP_INLINE_MAX (1024u * 1024u)
/* The big-request thread yields the CPU to the HTTP threads. The status
 * thread does not: its renders are bounded (statusreply.h), and at nice 10
 * on a busy machine a scrape of /metrics waited past Prometheus's timeout. */
#define HTTP_BIG_NICE 10
#define HTTP_STATUS_NICE 0

/* A queue of requests answered off the HTTP threads, FIFO, and its thread:
 * one for big bodies, one for /v1/nodes and /metrics. While running is
 * false requests are answered inline (start-up failure, shutdown). */
struct bigq {
	struct http_server *h;
	int nice;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t idle;	/* nothing queued, nothing in hand */
	struct request *head, *tail;
	bool running;
	bool busy;		/* the thread holds a request */
	unsigned paused;	/* a daemon is stopping: answer inline */
	pthread_t thread;
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct scorer *s;
	uint16_t port;
	bool v6;
	/* HTTPS: the files, and the rotation that owns the daemon once it
	 * runs (h->daemon is then NULL). */
	const struct tls_files *tls;	/* NULL: plain HTTP */
	struct tls_rotation *rotation;
	struct log_limit refused_log;	/* mTLS refusals */
	struct log_limit busy_log;	/* 503s for a full request memory budget */
	struct httpguard *guard;	/* deadlines and fair slots, all daemons */
	/* The probe and status listener (--health-listen): plain HTTP, one
	 * thread, HTTP_HEALTH_CONNECTIONS. */
	bool health_only;
	bool serves_verbs;		/* filter, prioritize, preempt */
	bool serves_status;		/* /metrics, /v1/nodes, /v1/workloads */
	struct bigq big;
	struct bigq status;		/* renders /v1/nodes, /metrics */
	struct statusreply_cache nodes, metrics, workloads;
	struct membudget status_memory;		/* their bytes */
};

enum route {
	ROUTE_NONE,
	ROUTE_FILTER,
	ROUTE_PRIORITIZE,
	ROUTE_PREEMPT,
	ROUTE_HEALTHZ,
	ROUTE_READYZ,
	ROUTE_METRICS,
	ROUTE_NODES,
	ROUTE_WORKLOADS,
	ROUTE_PRESSURE,		/* GET, extender listener only (pressure.h) */
	ROUTE_MOVES,		/* GET or POST, extender listener only (movesroute.h) */
};

/* The longest hot= of /v1/pressure kept; a longer one is refused whole. */
#define HTTP_HOT_ARG_MAX 23u

/* One request, from its headers to its reply; MHD keeps it as con_cls. */
struct request {
	enum route route;
	bool method_ok;
	bool post;		/* a POST (what /v1/moves does depends on it) */
	char hot[HTTP_HOT_ARG_MAX + 2];	/* /v1/pressure's hot=, truncated past the max */
	bool hot_given;
	size_t max;		/* the body's limit: max_body_bytes, or the route's own */
	struct buf body;
	size_t declared;	/* its Content-Length; 0: none (chunked) */
	size_t charged;		/* bytes of h->buffered this request holds */
	bool too_large;		/* over max_body_bytes: discard, answer 413 */
	bool forbidden;		/* mTLS: no acceptable client certificate, answer 403 */
	bool over_budget;	/* server-wide buffer full: discard, answer 503 */
	/* A big body's or a status reply's trip through the big-request
	 * thread: queued with its connection suspended, then done with the
	 * reply ready and the connection resumed, so MHD calls us again to
	 * send it. */
	bool queued, done;
	struct reply reply;
	uint64_t asked_ns;		/* when its headers were in (clock_mono_ns) */
	struct statusreply *status;	/* /v1/nodes, /metrics: a shared reply (a reference) */
	int status_rc;			/* why there is none: -EBUSY, -ENOMEM */
	struct MHD_Connection *conn;
	struct request *next;
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/* The paths served as they are; the verbs may sit under any prefix
 * (urlPrefix + filterVerb). */
static const struct {
	const char *path;
	enum route route;
} exact_routes[] = {
	{ "/healthz", ROUTE_HEALTHZ },
	{ "/readyz", ROUTE_READYZ },
	{ "/metrics", ROUTE_METRICS },
	{ "/v1/nodes", ROUTE_NODES },
	{ "/v1/workloads", ROUTE_WORKLOADS },
	{ "/v1/pressure", ROUTE_PRESSURE },
	{ "/v1/moves", ROUTE_MOVES },
}, verb_routes[] = {
	{ "/filter", ROUTE_FILTER },
	{ "/prioritize", ROUTE_PRIORITIZE },
	{ "/preempt", ROUTE_PREEMPT },
};

static enum route route_of(const char *url)
{
	size_t n = strlen(url);

	for (size_t i = 0; i < sizeof(exact_routes) / sizeof(exact_routes[0]); i++)
		if (!strcmp(url, exact_routes[i].path))
			return exact_routes[i].route;
	for (size_t i = 0; i < sizeof(verb_routes) / sizeof(verb_routes[0]); i++)
		if (ends_with(url, n, verb_routes[i].path))
			return verb_routes[i].route;
	return ROUTE_NONE;
}

static bool charge(struct http_server *h, struct request *rq, size_t n)
{
	return membudget_take(&h->s->request_memory, &rq->charged, n);
}

static void drop_body(struct http_server *h, struct request *rq)
{
	buf_free(&rq->body);
	membudget_give(&h->s->request_memory, &rq->charged);
}

/* Queues resp (taking it) with its type and an optional extra header; from
 * here the reply has its deadline (httpguard.h). */
static enum MHD_Result queue(struct MHD_Connection *conn, struct MHD_Response *resp, size_t len,
			     unsigned status, const char *type, const char *header,
			     const char *value)
{
	enum MHD_Result ret;

	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    (header && MHD_add_response_header(resp, header, value) != MHD_YES)) {
		MHD_destroy_response(resp);
		return MHD_NO;
	}
	httpguard_replying(conn, len);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Queues reply (taking its body) with an optional extra header. */
static enum MHD_Result respond(struct MHD_Connection *conn, struct reply *reply,
			       const char *header, const char *value)
{
	static const char oom[] = "{\"error\":\"out of memory\"}";
	const char *type = reply->content_type ? reply->content_type : "application/json";
	struct MHD_Response *resp;
	unsigned status = reply->status;
	size_t len = reply->body ? reply->len : sizeof(oom) - 1;

	if (reply->body) {
		/* Sent, a kept block goes back to scratch.h for the next reply. */
		resp = MHD_create_response_from_buffer_with_free_callback(reply->len, reply->body,
									  reply->scratch ? scratch_give : free);
		if (!resp)
			reply_free_body(reply);
	} else {
		status = 500;
		type = "application/json";
		resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom,
						       MHD_RESPMEM_PERSISTENT);
	}
	reply->body = NULL;
	if (!resp)
		return MHD_NO;
	return queue(conn, resp, len, status, type, header, value);
}

/* Queues a shared status reply, handing our reference to the response:
 * libmicrohttpd drops it when the reply is sent or the connection closes. */
static enum MHD_Result respond_shared(struct MHD_Connection *conn, struct statusreply **sr)
{
	struct statusreply *r = *sr;
	struct MHD_Response *resp;

	*sr = NULL;
	resp = MHD_create_response_from_buffer_with_free_callback_cls(r->reply.len, r->reply.body,
								       statusreply_put, r);
	if (!resp) {
		statusreply_put(r);
		return MHD_NO;
	}
	return queue(conn, resp, r->reply.len, r->reply.status,
		     r->reply.content_type ? r->reply.content_type : "application/json", NULL, NULL);
}

static enum MHD_Result respond_error(struct http_server *h, struct MHD_Connection *conn,
				     unsigned status, const char *header, const char *value,
				     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static enum MHD_Result respond_error(struct http_server *h, struct MHD_Connection *conn,
				     unsigned status, const char *header, const char *value,
				     const char *fmt, ...)
{
	struct reply reply;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (status >= 400 && status < 500)
		atomic_fetch_add(&h->s->counters.requests_bad, 1);
	log_debug("http", "%u: %s", status, msg);
	reply_error(status, msg, &reply);
	return respond(conn, &reply, header, value);
}

/* The declared body length; -ENOENT when there is none (chunked or empty).
 * MHD has already refused a malformed one with 400. */
static int content_length(struct MHD_Connection *conn, uint64_t *out)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_CONTENT_LENGTH);
	uint64_t n = 0;

	if (!v || !*v)
		return -ENOENT;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || n > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		n = n * 10 + (uint64_t)(*v - '0');
	}
	*out = n;
	return 0;
}

static bool is_post_route(enum route route)
{
	return route == ROUTE_FILTER || route == ROUTE_PRIORITIZE || route == ROUTE_PREEMPT;
}

/* The rebalancer's routes: on the extender listener only, behind its TLS
 * and client-certificate checks (what is read there decides evictions). */
static bool is_rebalancer_route(enum route route)
{
	return route == ROUTE_PRESSURE || route == ROUTE_MOVES;
}

/* Whether the request's body is read (the others' are refused unread). */
static bool takes_body(const struct request *rq)
{
	return is_post_route(rq->route) || (rq->route == ROUTE_MOVES && rq->post);
}

/* The replies rendered once and shared (statusreply.h). */
static bool is_shared_route(enum route route)
{
	return route == ROUTE_METRICS || route == ROUTE_NODES || route == ROUTE_WORKLOADS;
}

static struct statusreply_cache *status_cache(struct http_server *h, const struct request *rq)
{
	return rq->route == ROUTE_NODES ? &h->nodes : rq->route == ROUTE_WORKLOADS ? &h->workloads :
										   &h->metrics;
}

/* The status reply for rq, or why there is none (rq->status_rc): only on
 * the status thread, the one place a render runs. */
static void get_status(struct http_server *h, struct request *rq)
{
	rq->status_rc = statusreply_get(status_cache(h, rq), h->s, &h->status_memory, rq->asked_ns,
					&rq->status);
}

/* The verb itself. The reply holds no pointer into the body: it is
 * released here, before the reply is sent. */
static void run_verb(struct http_server *h, struct request *rq, struct reply *reply)
{
	const char *body = rq->body.data ? rq->body.data : "";

	if (rq->route == ROUTE_FILTER)
		ext_filter(h->s, body, rq->body.len, reply);
	else if (rq->route == ROUTE_PRESSURE)
		pressure_reply(h->s, rq->hot_given ? rq->hot : NULL, reply);
	else if (rq->route == ROUTE_MOVES && rq->post)
		movesroute_post(h->s, body, rq->body.len, reply);
	else if (rq->route == ROUTE_MOVES)
		movesroute_list(h->s, reply);
	else if (rq->route == ROUTE_PRIORITIZE)
		ext_prioritize(h->s, body, rq->body.len, reply);
	else
		ext_preempt(h->s, body, rq->body.len, reply);
	drop_body(h, rq);
}

/* Suspends conn and queues rq for the big-request thread; false (nothing
 * done) when that thread is not running. Suspended before it is queued, so
 * the thread never resumes a connection not yet suspended. Its time there
 * is ours, not the client's: no deadline meanwhile. */
static bool bigq_push(struct bigq *q, struct MHD_Connection *conn, struct request *rq)
{
	pthread_mutex_lock(&q->lock);
	if (!q->running || q->paused) {
		pthread_mutex_unlock(&q->lock);
		return false;
	}
	httpguard_processing(conn);
	MHD_suspend_connection(conn);
	rq->conn = conn;
	rq->queued = true;
	rq->next = NULL;
	if (q->tail)
		q->tail->next = rq;
	else
		q->head = rq;
	q->tail = rq;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	return true;
}

/* Answers queued requests until stopped and the queue is empty. A request
 * stays alive while its connection is suspended: MHD cannot finish it. */
static void *bigq_main(void *arg)
{
	struct bigq *q = arg;
	struct http_server *h = q->h;

	if (q->nice)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), q->nice);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct request *rq;

		while (!q->head && q->running)
			pthread_cond_wait(&q->wake, &q->lock);
		rq = q->head;
		if (!rq)
			break;
		q->head = rq->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		pthread_mutex_unlock(&q->lock);
		if (is_shared_route(rq->route))
			get_status(h, rq);
		else
			run_verb(h, rq, &rq->reply);
		rq->done = true;
		MHD_resume_connection(rq->conn);
		pthread_mutex_lock(&q->lock);
		q->busy = false;
		if (!q->head)
			pthread_cond_broadcast(&q->idle);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void bigq_init(struct bigq *q, struct http_server *h, int nice)
{
	q->h = h;
	q->nice = nice;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	pthread_cond_init(&q->idle, NULL);
}

static void bigq_destroy(struct bigq *q)
{
	pthread_cond_destroy(&q->idle);
	pthread_cond_destroy(&q->wake);
	pthread_mutex_destroy(&q->lock);
}

static int bigq_start(struct bigq *q)
{
	int rc;

	q->running = true;
	rc = worker_thread_create(&q->thread, bigq_main, q);
	if (rc)
		q->running = false;
	return rc;
}

/* Answers what is queued (resuming those connections) and stops the
 * thread; from then on big requests are answered inline. */
static void bigq_stop(struct bigq *q)
{
	pthread_mutex_lock(&q->lock);
	if (!q->running) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	q->running = false;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
}

/* MHD must not stop a daemon with a connection suspended (it aborts): new
 * big requests are answered inline meanwhile, and the queue is emptied
 * (every connection in it resumed) before MHD_stop_daemon(), which takes
 * the resumed ones back first. */
static void bigq_pause(struct bigq *q)
{
	pthread_mutex_lock(&q->lock);
	q->paused++;
	while (q->head || q->busy)
		pthread_cond_wait(&q->idle, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

static void bigq_resume(struct bigq *q)
{
	pthread_mutex_lock(&q->lock);
	q->paused--;
	pthread_mutex_unlock(&q->lock);
}

static void stop_daemon(struct http_server *h, struct MHD_Daemon *d)
{
	bigq_pause(&h->big);
	bigq_pause(&h->status);
	MHD_stop_daemon(d);
	bigq_resume(&h->status);
	bigq_resume(&h->big);
}

/* /v1/nodes, /v1/workloads and /metrics: rendered on the status thread,
 * never on the threads that answer the scheduler. While it is not running
 * (a daemon stopping for a certificate rotation, or it never started) the
 * latest reply answers, whatever its age, else a 503. */
static enum MHD_Result answer_shared(struct http_server *h, struct MHD_Connection *conn,
				     struct request *rq)
{
	if (!rq->done) {
		if (bigq_push(&h->status, conn, rq))
			return MHD_YES;
		rq->status_rc = statusreply_latest(status_cache(h, rq), &rq->status);
		if (rq->status_rc == -EAGAIN)
			return respond_error(h, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1",
					     "status replies are not being rendered right now; retry");
	}
	if (rq->status)
		return respond_shared(conn, &rq->status);
	if (rq->status_rc == -EBUSY) {
		atomic_fetch_add(&h->s->counters.http_replies_busy, 1);
		log_limited(&h->busy_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "http",
			    "status replies held reached their limit of %zu bytes; answering 503",
			    h->status_memory.limit);
		return respond_error(h, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1",
				     "too many large replies in flight; retry");
	}
	return respond_error(h, conn, 500, NULL, NULL, "out of memory for the reply");
}

/* A request whose body has been read (or that has none): the answer
 * given while the body came (a refusal), else the verb's, on the
 * big-request thread when queue says so and it takes it, else here. */
static enum MHD_Result answer_body(struct http_server *h, struct MHD_Connection *conn,
				   struct request *rq, bool queue)
{
	struct reply reply;

	if (buf_failed(&rq->body))
		return respond_error(h, conn, 500, NULL, NULL, "out of memory for the body");
	if (rq->done)
		return respond(conn, &rq->reply, NULL, NULL);
	if (queue && bigq_push(&h->big, conn, rq))
		return MHD_YES;
	run_verb(h, rq, &reply);
	return respond(conn, &reply, NULL, NULL);
}

/* /v1/pressure and /v1/moves. The listings and the pressure view are
 * rendered on the big-request thread (5,000 nodes take milliseconds the
 * scheduler's threads should not wait for); a move, one short body, is
 * judged here. */
static enum MHD_Result answer_rebalancer(struct http_server *h, struct MHD_Connection *conn,
					 struct request *rq)
{
	if (!rq->method_ok)
		return respond_error(h, conn, 405, MHD_HTTP_HEADER_ALLOW,
				     rq->route == ROUTE_MOVES ? "GET, HEAD, POST" : "GET, HEAD",
				     "method not allowed here; use %s",
				     rq->route == ROUTE_MOVES ? "GET or POST" : "GET");
	if (rq->too_large) {
		movesroute_too_large(h->s);
		atomic_fetch_add(&h->s->counters.requests_bad, 1);
		return respond_error(h, conn, 413, NULL, NULL, "body over the limit of %zu bytes "
				     "for a move", rq->max);
	}
	if (rq->over_budget)
		return respond_error(h, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1",
				     "too many large requests in flight; retry");
	return answer_body(h, conn, rq, !rq->post);
}

/* Every answer, once the request is complete or as soon as it is known to be
 * an error. */
static enum MHD_Result answer(struct http_server *h, struct MHD_Connection *conn,
			      struct request *rq)
{
	struct reply reply;

	if (rq->forbidden)
		return respond_error(h, conn, 403, NULL, NULL,
				     "the scheduler's client certificate is required (mTLS)");
	switch (rq->route) {
	case ROUTE_NONE:
		if (!h->serves_verbs)
			return respond_error(h, conn, 404, NULL, NULL, "no such path here; this port "
					     "serves only GET /healthz, /readyz, /metrics, /v1/nodes and "
					     "/v1/workloads");
		if (!h->serves_status)
			return respond_error(h, conn, 404, NULL, NULL, "no such path here; this port "
					     "serves POST .../filter, .../prioritize, .../preempt, GET "
					     "/healthz, /readyz, /v1/pressure and GET or POST /v1/moves: "
					     "/metrics, /v1/nodes and /v1/workloads are on the "
					     "--health-listen port");
		return respond_error(h, conn, 404, NULL, NULL,
				     "no such path; try POST .../filter, .../prioritize, .../preempt, "
				     "GET /healthz, /readyz, /metrics, /v1/nodes, /v1/workloads, "
				     "/v1/pressure, or GET or POST /v1/moves");
	case ROUTE_HEALTHZ:
	case ROUTE_READYZ:
	case ROUTE_METRICS:
	case ROUTE_NODES:
	case ROUTE_WORKLOADS:
		if (!rq->method_ok)
			return respond_error(h, conn, 405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD",
					     "method not allowed here; use GET");
		if (rq->route == ROUTE_HEALTHZ) {
			status_healthz(h->s, &reply);
			return respond(conn, &reply, NULL, NULL);
		}
		if (rq->route == ROUTE_READYZ) {
			status_readyz(h->s, &reply);
			return respond(conn, &reply, NULL, NULL);
		}
		return answer_shared(h, conn, rq);
	case ROUTE_PRESSURE:
	case ROUTE_MOVES:
		return answer_rebalancer(h, conn, rq);
	case ROUTE_FILTER:
	case ROUTE_PRIORITIZE:
	case ROUTE_PREEMPT:
		break;
	}
	if (!rq->method_ok)
		return respond_error(h, conn, 405, MHD_HTTP_HEADER_ALLOW, "POST",
				     "method not allowed here; use POST");
	if (rq->too_large)
		return respond_error(h, conn, 413, NULL, NULL, "body over the limit of %zu bytes",
				     h->s->limits.max_body_bytes);
	if (rq->over_budget) {
		atomic_fetch_add(&h->s->counters.http_busy, 1);
		log_limited(&h->busy_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "http",
			    "request memory in use reached its limit of %zu bytes; answering 503",
			    h->s->request_memory.limit);
		return respond_error(h, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1",
				     "too many large requests in flight; retry");
	}
	return answer_body(h, conn, rq, rq->body.len > HTTP_INLINE_MAX);
}

/* The first call for a request: only the headers are in. An error is
 * answered right away when a body follows, so that body is never read (MHD
 * then closes the connection); without a body, the answer waits for the
 * request's end so the connection stays usable. */
static enum MHD_Result begin(struct http_server *h, struct MHD_Connection *conn, const char *url,
			     const char *method, void **con_cls)
{
	size_t max = h->s->limits.max_body_bytes;
	struct request *rq;
	uint64_t declared = 0;
	bool has_length, has_body;

	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return MHD_NO;
	rq->asked_ns = clock_mono_ns();
	rq->route = route_of(url);
	if ((!h->serves_verbs && (is_post_route(rq->route) || is_rebalancer_route(rq->route))) ||
	    (!h->serves_status && is_shared_route(rq->route)))
		rq->route = ROUTE_NONE;
	rq->post = !strcmp(method, MHD_HTTP_METHOD_POST);
	if (is_post_route(rq->route))
		rq->method_ok = rq->post;
	else
		rq->method_ok = !strcmp(method, MHD_HTTP_METHOD_GET) ||
				!strcmp(method, MHD_HTTP_METHOD_HEAD) ||
				(rq->route == ROUTE_MOVES && rq->post);
	if (rq->route == ROUTE_MOVES)
		max = MOVEREQ_BODY_MAX;
	if (rq->route == ROUTE_PRESSURE) {
		const char *hot = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "hot");

		rq->hot_given = hot != NULL;
		if (hot)
			snprintf(rq->hot, sizeof(rq->hot), "%s", hot);
	}
	rq->max = max;
	buf_init(&rq->body, max);
	*con_cls = rq;
	has_length = content_length(conn, &declared) == 0;
	has_body = has_length ? declared > 0 :
		   MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					       MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
	/* The whole request's deadline: only a body we will read counts
	 * (chunked: the largest allowed); any other is answered at once. */
	httpguard_headers_done(conn, !takes_body(rq) || !rq->method_ok || !has_body ? 0 :
				     has_length && declared < max ? declared : max);

	if (h->tls && h->tls->client_ca[0]) {
		char why[256];

		if (tls_verify_client(conn, h->tls, why, sizeof(why))) {
			/* Scanners and misconfigured clients: count them all,
			 * log a line a second. */
			unsigned long bad = atomic_fetch_add(&h->s->counters.requests_bad, 1) + 1;

			log_limited(&h->refused_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "http",
				    "refused a request (%lu so far): %s", bad, why);
			rq->forbidden = true;
			return answer(h, conn, rq);
		}
		httpguard_proven(conn);
	}

	if (takes_body(rq) && rq->method_ok) {
		rq->declared = has_length && declared <= max ? (size_t)declared : 0;
		if (has_length && declared > max) {
			rq->too_large = true;
			return answer(h, conn, rq);
		}
		/* Bytes are charged as they arrive, never as announced: four
		 * clients announcing the largest body and trickling it would
		 * otherwise hold the whole budget with a few bytes each. */
		return MHD_YES;
	}
	return has_body ? answer(h, conn, rq) : MHD_YES;
}

/* A piece of the body. MHD cannot answer in the middle of a body, so an
 * oversized one is discarded as it comes and answered at its end. */
static void receive(struct http_server *h, struct request *rq, const char *data, size_t n)
{
	size_t max = rq->max, len = rq->body.len;

	if (!takes_body(rq) || !rq->method_ok || rq->too_large || rq->over_budget)
		return;
	if (n > max - len) {
		rq->too_large = true;
		drop_body(h, rq);
		return;
	}
	if (len + n > rq->charged && !charge(h, rq, len + n - rq->charged)) {
		rq->over_budget = true;
		drop_body(h, rq);
		return;
	}
	/* The whole announced body at once, in a kept block if one is large
	 * enough (scratch.h); only its bytes as they arrive are charged. */
	if (!len)
		buf_start(&rq->body, rq->declared && rq->declared <= SCRATCH_BLOCK_MAX ? rq->declared : n);
	buf_append(&rq->body, data, n);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *h = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq)
		return begin(h, conn, url, method, con_cls);
	if (*upload_size) {
		receive(h, rq, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	return answer(h, conn, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct http_server *h = cls;
	struct request *rq = *con_cls;

	(void)why;
	httpguard_request_done(conn);
	if (!rq)
		return;
	drop_body(h, rq);
	reply_free_body(&rq->reply);	/* a big request's reply that was never sent */
	statusreply_put(rq->status);
	free(rq);
	*con_cls = NULL;
}

/* Our own listening socket, so a failure to bind names its cause. Returns
 * the descriptor and the bound port, or -1 with err filled. */
static int listen_on(const char *addr, uint16_t port, bool *v6, uint16_t *bound, char *err,
		     size_t errlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	int fd, one = 1;
	const char *what;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sl = sizeof(*sin);
		*v6 = false;
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sl = sizeof(*sin6);
		*v6 = true;
	} else {
		snprintf(err, errlen, "listen %s:%u: not an IPv4 or IPv6 address", addr, port);
		return -1;
	}
	/* Non-blocking: every pool thread polls it and only one wins the accept. */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		what = "socket";
		goto out_err;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		what = "setsockopt SO_REUSEADDR";
		goto out_close;
	}
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		what = "bind";
		goto out_close;
	}
	if (listen(fd, HTTP_BACKLOG)) {
		what = "listen";
		goto out_close;
	}
	sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		what = "getsockname";
		goto out_close;
	}
	*bound = ntohs(ss.ss_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
	return fd;

out_close:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
out_err:
	snprintf(err, errlen, "%s %s%s%s:%u: %s", what, *v6 ? "[" : "", addr, *v6 ? "]" : "", port,
		 strerror(errno));
	return -1;
}

/* A daemon serving fd, over TLS with p's certificates when p is set.
 * MHD_USE_ITC makes it quiescable, for certificate rotation. poll(), not
 * epoll: with edge-triggered epoll a client that sends a byte and closes
 * leaves its connection in CLOSE-WAIT until the idle timeout (MHD reads the
 * byte and is never woken for the end of the stream), and some 260 such
 * clients in a second held every connection slot for two minutes.
 * Level-triggered poll() sees the close at once. */
static struct MHD_Daemon *start_daemon(struct http_server *h, int fd, const struct tls_pems *p)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
			 MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem more[5];
	size_t n = 0;

	if (h->v6)
		flags |= MHD_USE_IPv6;
	/* The probe listener makes do with MHD's one internal thread. */
	if (!h->health_only)
		more[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, HTTP_THREADS, NULL };
	if (p) {
		flags |= MHD_USE_TLS;
		more[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, p->key };
		more[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, p->cert };
		/* A trust list makes GnuTLS ask for a client certificate;
		 * begin() then verifies it on every request. */
		if (p->ca)
			more[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, p->ca };
	}
	more[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, httpguard_mhd_log, "http",
				MHD_OPTION_LISTEN_SOCKET, fd,
				/* Room above the guard's own limit, which makes
				 * room fairly (httpguard.h). */
				MHD_OPTION_CONNECTION_LIMIT,
				HTTPGUARD_HARD_LIMIT(h->health_only ? HTTP_HEALTH_CONNECTIONS :
								      HTTP_MAX_CONNECTIONS),
				/* No MHD_OPTION_PER_IP_CONNECTION_LIMIT: it refuses
				 * the newcomer, the kubelet's probe perhaps, where
				 * the guard closes the address's oldest silent one. */
				MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_TIMEOUT_S,
				MHD_OPTION_NOTIFY_CONNECTION, httpguard_notify, h->guard,
				MHD_OPTION_URI_LOG_CALLBACK, httpguard_uri_log, NULL,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_ARRAY, more,
				MHD_OPTION_END);
}

/* The rotation's way to start a daemon with new certificates, and to stop
 * one. */
static struct MHD_Daemon *restart_daemon(void *ctx, int fd, const struct tls_pems *p)
{
	return start_daemon(ctx, fd, p);
}

static void retire_daemon(void *ctx, struct MHD_Daemon *d)
{
	stop_daemon(ctx, d);
}

void http_request_budget(struct scorer *s)
{
	size_t max = s->limits.max_body_bytes;
	size_t budget = max > SIZE_MAX / HTTP_BUDGET_BODIES ? SIZE_MAX : max * HTTP_BUDGET_BODIES;

	membudget_init(&s->request_memory, budget, budget / HTTP_BUDGET_RESERVE_DIV,
		       HTTP_SMALL_REQUEST);
	s->limits.request.budget = &s->request_memory;
}

static void status_cache_init(struct statusreply_cache *c, statusreply_render_fn render,
			      const char *path, struct registry *counters, int which)
{
	statusreply_cache_init(c, render, &(struct statusreply_opts){
		.path = path,
		.renders = &counters->status_renders[which],
		.failures = &counters->status_render_failures[which],
	});
}

/* What a server holds once its daemon and queues have stopped (or never
 * started): the guard, the status caches, the queues' memory. */
static void server_free(struct http_server *h)
{
	httpguard_stop(h->guard);
	statusreply_cache_destroy(&h->workloads);
	statusreply_cache_destroy(&h->metrics);
	statusreply_cache_destroy(&h->nodes);
	bigq_destroy(&h->status);
	bigq_destroy(&h->big);
	free(h);
}

static struct http_server *serve(struct scorer *s, const char *addr, uint16_t port,
				 const struct tls_files *tls, bool health_only, bool serves_status,
				 char *err, size_t errlen)
{
	struct tls_pems pems = { 0 };
	struct http_server *h;
	int fd;

	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "http: out of memory");
		return NULL;
	}
	h->s = s;
	h->health_only = health_only;
	h->serves_verbs = !health_only;
	h->serves_status = serves_status;
	bigq_init(&h->big, h, HTTP_BIG_NICE);
	bigq_init(&h->status, h, HTTP_STATUS_NICE);
	if (!health_only && !s->limits.request.budget)
		http_request_budget(s);
	if (tls && tls->cert[0]) {
		h->tls = tls;
		if (tls_load(tls, &pems, err, errlen))
			goto out_free_server;
	}
	membudget_init(&h->status_memory, HTTP_STATUS_BUDGET, 0, 0);
	status_cache_init(&h->nodes, status_nodes, "/v1/nodes", &s->counters, REGISTRY_STATUS_NODES);
	status_cache_init(&h->metrics, metrics_render, "/metrics", &s->counters,
			  REGISTRY_STATUS_METRICS);
	status_cache_init(&h->workloads, status_workloads, "/v1/workloads", &s->counters,
			  REGISTRY_STATUS_WORKLOADS);
	h->guard = httpguard_start(&(struct httpguard_config){
		.name = health_only ? "health" : "http",
		.header_timeout_s = HTTP_HEADER_TIMEOUT_S,
		.idle_timeout_s = HTTP_IDLE_TIMEOUT_S,
		.min_bytes_per_second = HTTP_MIN_BYTES_PER_SECOND,
		.socket_buffer = HTTP_SOCKET_BUFFER,
		.max_connections = health_only ? HTTP_HEALTH_CONNECTIONS : HTTP_MAX_CONNECTIONS,
		.max_per_address = s->limits.connections_per_client ?
				   s->limits.connections_per_client : SCORER_DEFAULT_CONNECTIONS_PER_CLIENT,
		.deadline = &s->counters.http_deadline_closes,
		.reclaimed_idle = &s->counters.http_reclaimed_idle,
		.reclaimed_busiest = &s->counters.http_reclaimed_busiest,
	}, err, errlen);
	if (!h->guard)
		goto out_free_server;
	/* Without it big requests are answered inline: slower for others,
	 * still correct. Status replies never are: their renders would take
	 * the scheduler's threads. */
	if (!health_only && bigq_start(&h->big))
		log_warn("http", "no thread for big requests: bodies over %u bytes are parsed on the "
			 "HTTP threads", HTTP_INLINE_MAX);
	if (serves_status && bigq_start(&h->status)) {
		snprintf(err, errlen, "http: cannot start the thread that renders status replies");
		goto out_free_server;
	}
	fd = listen_on(addr, port, &h->v6, &h->port, err, errlen);
	if (fd < 0)
		goto out_free_server;
	/* MHD owns fd from here: MHD_stop_daemon() closes it. */
	h->daemon = start_daemon(h, fd, h->tls ? &pems : NULL);
	if (!h->daemon) {
		close(fd);
		snprintf(err, errlen, "http%s %s%s%s:%u: libmicrohttpd failed to start%s (see the log "
			 "above)", h->tls ? "s" : "", h->v6 ? "[" : "", addr, h->v6 ? "]" : "",
			 h->port, h->tls ? ": are the certificate and key a matching PEM pair?" : "");
		goto out_free_server;
	}
	if (h->tls) {
		/* The rotation takes the daemon and the PEMs, even on failure. */
		h->rotation = tls_rotation_start(tls, &pems, h->daemon, restart_daemon, retire_daemon,
						 h, err, errlen);
		h->daemon = NULL;
		if (!h->rotation)
			goto out_free_server;
	}
	return h;

out_free_server:
	tls_free(&pems);
	bigq_stop(&h->big);
	bigq_stop(&h->status);
	server_free(h);
	return NULL;
}

struct http_server *http_start(struct scorer *s, const char *addr, uint16_t port,
			       const struct tls_files *tls, bool serve_status, char *err,
			       size_t errlen)
{
	return serve(s, addr, port, tls, false, serve_status, err, errlen);
}

struct http_server *http_start_health(struct scorer *s, const char *addr, uint16_t port, char *err,
				      size_t errlen)
{
	return serve(s, addr, port, NULL, true, true, err, errlen);
}

uint16_t http_port(const struct http_server *h)
{
	return h->port;
}

void http_stop(struct http_server *h)
{
	if (!h)
		return;
	/* First the queued requests, resuming their connections: MHD cannot
	 * stop with a connection suspended. Later ones are answered inline. */
	bigq_stop(&h->big);
	bigq_stop(&h->status);
	tls_rotation_stop(h->rotation);
	if (h->daemon)
		stop_daemon(h, h->daemon);
	server_free(h);
}
