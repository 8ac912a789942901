/* The connection guard (common/httpguard.h) on a real libmicrohttpd daemon
 * over loopback, with raw client sockets from several loopback addresses:
 * the per-address cap closes that address's oldest connection and never
 * the newcomer, nor another address's, nor a proven one; over
 * max_connections one of the address holding the most goes; a connection
 * past its headers', body's or idle deadline is shut, counted and logged
 * with its address and the limits; libmicrohttpd's own lines are trimmed
 * and named. Every wait polls against a generous deadline: nothing here
 * depends on speed, only on order. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <microhttpd.h>

#include "common/httpguard.h"
#include "stderr_capture.h"

#define WAIT_MS 30000	/* generous: CI may be loaded */

struct srv {
	struct httpguard *guard;
	struct MHD_Daemon *daemon;
	uint16_t port;
	atomic_uint started, closed;
	atomic_ulong deadline, idle, busiest;
};

/* The guard's notify, counting what it saw, so a test knows the guard has
 * taken a connection (and made room for it) before it looks. */
static void notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code)
{
	struct srv *s = cls;

	httpguard_notify(s->guard, c, socket_context, code);
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&s->started, 1);
	else
		atomic_fetch_add(&s->closed, 1);
}

/* The steps a serving daemon takes: headers (body announced), a body
 * read, ours, the reply; /proven marks the connection as a verified
 * client's would be. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **req)
{
	static int first;
	struct MHD_Response *resp;
	enum MHD_Result rc;

	(void)cls, (void)method, (void)version, (void)data;
	if (!*req) {
		const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							      MHD_HTTP_HEADER_CONTENT_LENGTH);

		httpguard_headers_done(c, len ? strtoull(len, NULL, 10) : 0);
		if (!strcmp(url, "/proven"))
			httpguard_proven(c);
		*req = &first;
		return MHD_YES;
	}
	if (*data_len) {
		*data_len = 0;
		return MHD_YES;
	}
	httpguard_processing(c);
	resp = MHD_create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
	httpguard_replying(c, 2);
	rc = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return rc;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)req, (void)why;
	httpguard_request_done(c);
}

static struct srv *srv_start(unsigned max_conns, unsigned per_addr, unsigned header_s,
			     unsigned idle_s)
{
	struct srv *s = calloc(1, sizeof(*s));
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;
	char err[256];

	assert_non_null(s);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	s->guard = httpguard_start(&(struct httpguard_config){
		.name = "test",
		.header_timeout_s = header_s,
		.idle_timeout_s = idle_s,
		.min_bytes_per_second = 1000,
		.max_connections = max_conns,
		.max_per_address = per_addr,
		.socket_buffer = 16384,
		.deadline = &s->deadline,
		.reclaimed_idle = &s->idle,
		.reclaimed_busiest = &s->busiest,
	}, err, sizeof(err));
	assert_non_null(s->guard);
	s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
				     NULL, on_request, s,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_CONNECTION_LIMIT, HTTPGUARD_HARD_LIMIT(max_conns),
				     MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				     MHD_OPTION_NOTIFY_CONNECTION, notify, s,
				     MHD_OPTION_URI_LOG_CALLBACK, httpguard_uri_log, NULL,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				     MHD_OPTION_END);
	assert_non_null(s->daemon);
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	s->port = info->port;
	return s;
}

static void srv_stop(struct srv *s)
{
	MHD_stop_daemon(s->daemon);
	httpguard_stop(s->guard);
	free(s);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A connection from 127.0.0.last, once the guard has taken it. */
static int conn_open(struct srv *s, unsigned last)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(s->port) };
	unsigned before = atomic_load(&s->started);
	uint64_t end = now_ms() + WAIT_MS;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	src.sin_addr.s_addr = htonl(0x7f000000u | last);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
	while (atomic_load(&s->started) == before) {
		if (now_ms() > end)
			fail_msg("the server never took the connection from 127.0.0.%u", last);
		poll(NULL, 0, 5);
	}
	return fd;
}

/* Whether the server ended fd: end of stream (or a reset) within the
 * deadline. Bytes of a reply before the end are skipped. */
static bool ended(int fd, unsigned wait_ms)
{
	uint64_t end = now_ms() + wait_ms;
	char b[512];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)(end > now_ms() ? end - now_ms() : 0);
		ssize_t n;

		if (poll(&p, 1, left) <= 0)
			return false;
		n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
}

/* Whether fd is still open now: nothing to read and no end of stream. */
static bool still_open(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);

	return n < 0 && errno == EAGAIN;
}

/* What was logged since the test emptied the capture must come to hold
 * want: the guard's thread shuts a connection first and logs after, so
 * the client may see the end before the line is written. */
static void logged(const char *want)
{
	if (!stderr_capture_wait(want, WAIT_MS)) {
		printf("log lacks \"%s\"\n", want);	/* stderr is the capture */
		fail_msg("log lacks \"%s\"", want);
	}
}

/* One keep-alive GET on fd; the reply's status line must be 200 and the
 * body "ok". */
static void get(int fd, const char *path)
{
	char rq[128], b[1024];
	size_t got = 0;
	uint64_t end = now_ms() + WAIT_MS;
	int n = snprintf(rq, sizeof(rq), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);

	assert_int_equal(send(fd, rq, (size_t)n, MSG_NOSIGNAL), n);
	while (got < sizeof(b) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		b[got] = '\0';
		if (strstr(b, "\r\n\r\nok"))
			break;
		if (now_ms() > end || poll(&p, 1, 100) < 0)
			fail_msg("no reply to GET %s: \"%s\"", path, b);
		r = recv(fd, b + got, sizeof(b) - 1 - got, MSG_DONTWAIT);
		if (r == 0)
			fail_msg("closed before replying to GET %s: \"%s\"", path, b);
		if (r > 0)
			got += (size_t)r;
	}
	assert_non_null(strstr(b, "HTTP/1.1 200"));
}

/* Over the per-address cap the address's oldest connection goes, never the
 * newcomer, and it is counted and logged with the address, the count and
 * the limit; another address's connections are not touched. */
static void test_per_address_cap(void **state)
{
	struct srv *s = srv_start(64, 2, 60, 60);
	int a, b, other, c;

	(void)state;
	stderr_captured();
	a = conn_open(s, 1);
	b = conn_open(s, 1);
	other = conn_open(s, 9);
	assert_true(still_open(a));
	c = conn_open(s, 1);	/* the third of 127.0.0.1, over its cap of 2 */
	assert_true(ended(a, WAIT_MS));
	assert_true(still_open(b));
	assert_true(still_open(c));
	assert_true(still_open(other));
	assert_int_equal(atomic_load(&s->idle), 1);	/* it was waiting for headers */
	assert_int_equal(atomic_load(&s->busiest), 0);
	get(c, "/");	/* the newcomer is served */
	get(other, "/");
	logged("127.0.0.1: 3 connections open, limit 2; closed the oldest");
	close(a), close(b), close(c), close(other);
	srv_stop(s);
}

/* A connection that proved itself does not count toward its address's
 * cap and is never the one that makes room for unproven ones. */
static void test_proven_spared(void **state)
{
	struct srv *s = srv_start(64, 2, 60, 60);
	int p, e, f, g;

	(void)state;
	p = conn_open(s, 3);
	get(p, "/proven");	/* now proven, and idle: the oldest of 127.0.0.3 */
	e = conn_open(s, 3);
	f = conn_open(s, 3);	/* two unproven: at the cap, not over */
	assert_true(still_open(p));
	assert_true(still_open(e));
	g = conn_open(s, 3);
	assert_true(ended(e, WAIT_MS));	/* the oldest unproven one */
	assert_true(still_open(p));
	assert_true(still_open(f));
	assert_true(still_open(g));
	get(p, "/");
	close(p), close(e), close(f), close(g);
	srv_stop(s);
}

/* Over max_connections one connection of the address holding the most
 * goes, its oldest: a lone caller from another address gets in and keeps
 * its connection. */
static void test_busiest_address_pays(void **state)
{
	struct srv *s = srv_start(4, 0, 60, 60);
	int flood[4], caller;

	(void)state;
	stderr_captured();
	for (int i = 0; i < 4; i++)
		flood[i] = conn_open(s, 7);
	assert_int_equal(atomic_load(&s->idle) + atomic_load(&s->busiest), 0);
	caller = conn_open(s, 8);	/* the fifth, over 4 */
	assert_true(ended(flood[0], WAIT_MS));
	for (int i = 1; i < 4; i++)
		assert_true(still_open(flood[i]));
	assert_true(still_open(caller));
	get(caller, "/");
	assert_int_equal(atomic_load(&s->idle) + atomic_load(&s->busiest), 1);
	logged("127.0.0.7: 4 connections open, the most of any address; 5 in all, limit 4; "
	       "closed the oldest");
	for (int i = 0; i < 4; i++)
		close(flood[i]);
	close(caller);
	srv_stop(s);
}

/* A connection that sends no request head is shut at its header deadline;
 * one whose body stops coming at its body deadline; one idle between
 * requests at the idle deadline. Each is counted, and the log names the
 * address, why and the limits. A connection that keeps to them stays. */
static void test_deadlines(void **state)
{
	struct srv *s = srv_start(64, 0, 3, 30);
	const char head[] = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n";
	int silent, body, idle;

	(void)state;
	stderr_captured();
	silent = conn_open(s, 4);
	assert_true(ended(silent, WAIT_MS));
	/* Logged after it is counted: then the count is there to read. */
	logged("closed a connection from 127.0.0.4: no complete request headers in time "
	       "(headers within 3 s, bodies and replies at 1000 bytes/s at least, idle 30 s "
	       "at most); 1 so far");
	assert_int_equal(atomic_load(&s->deadline), 1);

	body = conn_open(s, 5);
	assert_int_equal(send(body, head, sizeof(head) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(head) - 1);
	assert_int_equal(send(body, "abc", 3, MSG_NOSIGNAL), 3);	/* 3 of 10 bytes */
	assert_true(ended(body, WAIT_MS));
	logged("127.0.0.5: request body not complete in time");
	assert_int_equal(atomic_load(&s->deadline), 2);

	srv_stop(s);
	s = srv_start(64, 0, 30, 2);
	idle = conn_open(s, 6);
	get(idle, "/");
	assert_true(ended(idle, WAIT_MS));
	logged("127.0.0.6: idle too long");
	assert_int_equal(atomic_load(&s->deadline), 1);
	assert_int_equal(atomic_load(&s->idle) + atomic_load(&s->busiest), 0);
	close(silent), close(body), close(idle);
	srv_stop(s);
}

/* A guard without counters of the caller's keeps its own, and a request
 * after an idle spell gets a fresh header deadline (the connection is
 * served again, not cut at the deadline of its accept). */
static void test_keepalive_requests(void **state)
{
	struct httpguard *g;
	char err[128];
	int fd;
	struct srv *s = srv_start(64, 0, 30, 60);

	(void)state;
	fd = conn_open(s, 10);
	get(fd, "/");
	get(fd, "/");
	get(fd, "/");
	assert_true(still_open(fd));
	assert_int_equal(atomic_load(&s->deadline), 0);
	close(fd);
	srv_stop(s);

	g = httpguard_start(&(struct httpguard_config){ .name = "bare", .max_connections = 4 },
			    err, sizeof(err));
	assert_non_null(g);
	httpguard_stop(g);
	httpguard_stop(NULL);
}

static void mhd_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	httpguard_mhd_log("metrics", fmt, ap);
	va_end(ap);
}

/* libmicrohttpd's lines: one line, its trailing newline trimmed, named by
 * the daemon's module. */
static void test_mhd_log(void **state)
{
	const char *log;

	(void)state;
	stderr_captured();
	mhd_log("Failed to accept connection: %s\r\n", "Too many open files");
	log = stderr_captured();
	assert_non_null(strstr(log, " metrics: Failed to accept connection: Too many open files\n"));
	assert_null(strstr(log, "Too many open files\r"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_address_cap),
		cmocka_unit_test(test_proven_spared),
		cmocka_unit_test(test_busiest_address_pays),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_keepalive_requests),
		cmocka_unit_test(test_mhd_log),
	};
	return cmocka_run_group_tests_name("httpguard", tests, stderr_capture_start,
					   stderr_capture_stop);
}
