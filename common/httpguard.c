#include "httpguard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "log.h"
#include "worker.h"

#define GUARD_CHECK_MS 250u

/* One connection; MHD keeps it as the socket context. */
struct guarded {
	struct httpguard *g;
	struct guarded *prev, *next;
	int fd;
	uint64_t deadline_ns;	/* 0: none */
	bool shut;
	char peer[INET6_ADDRSTRLEN];
};

struct httpguard {
	const char *name;
	uint64_t header_ns, idle_ns;
	pthread_mutex_t lock;	/* the list and every entry's fields */
	struct guarded *head;
	struct worker *checker;
	atomic_ulong own_closed;	/* when the caller keeps no count */
	atomic_ulong *closed;
	struct log_limit closed_log;
};

static void peer_name(struct MHD_Connection *c, char *out, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
								    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(out, len, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  (socklen_t)len);
}

/* Shutting the socket down, not closing it: the descriptor stays MHD's,
 * and MHD removes the entry (httpguard_notify, CLOSED) before it closes
 * the descriptor, so it cannot be reused under us. */
static uint64_t check(void *ctx)
{
	struct httpguard *g = ctx;
	uint64_t now = clock_mono_ns();

	pthread_mutex_lock(&g->lock);
	for (struct guarded *e = g->head; e; e = e->next) {
		uint64_t n;

		if (e->shut || !e->deadline_ns || now < e->deadline_ns)
			continue;
		shutdown(e->fd, SHUT_RDWR);
		e->shut = true;
		n = atomic_fetch_add(g->closed, 1) + 1;
		log_limited(&g->closed_log, now, NS_PER_SEC, LOG_LVL_WARN, g->name,
			    "closed a connection from %s: no complete request headers within %llu s "
			    "(or %llu s idle); %llu such connections so far", e->peer,
			    (unsigned long long)(g->header_ns / NS_PER_SEC),
			    (unsigned long long)(g->idle_ns / NS_PER_SEC), (unsigned long long)n);
	}
	pthread_mutex_unlock(&g->lock);
	return GUARD_CHECK_MS;
}

struct httpguard *httpguard_start(const char *name, unsigned header_timeout_s,
				  unsigned idle_timeout_s, atomic_ulong *closed, char *err,
				  size_t errlen)
{
	struct httpguard *g = calloc(1, sizeof(*g));

	if (!g) {
		snprintf(err, errlen, "%s: out of memory for the connection guard", name);
		return NULL;
	}
	g->name = name;
	g->header_ns = (uint64_t)header_timeout_s * NS_PER_SEC;
	g->idle_ns = (uint64_t)idle_timeout_s * NS_PER_SEC;
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->own_closed, 0);
	g->closed = closed ? closed : &g->own_closed;
	g->checker = worker_start(name, check, g, GUARD_CHECK_MS, err, errlen);
	if (!g->checker) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

void httpguard_stop(struct httpguard *g)
{
	if (!g)
		return;
	worker_stop(g->checker);
	/* Every daemon has stopped: each connection said CLOSED. */
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct httpguard *g = cls;
	struct guarded *e = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		/* Without memory or a descriptor the connection goes
		 * unguarded: MHD's own timeout still ends it. */
		e = ci ? calloc(1, sizeof(*e)) : NULL;
		if (!e)
			return;
		e->g = g;
		e->fd = ci->connect_fd;
		peer_name(c, e->peer, sizeof(e->peer));
		pthread_mutex_lock(&g->lock);
		e->deadline_ns = clock_mono_ns() + g->header_ns;
		e->next = g->head;
		if (g->head)
			g->head->prev = e;
		g->head = e;
		pthread_mutex_unlock(&g->lock);
		*socket_context = e;
		return;
	}
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	pthread_mutex_unlock(&g->lock);
	free(e);
	*socket_context = NULL;
}

static struct guarded *entry_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* deadline: 0 for none; earlier_only keeps an earlier one. */
static void set_deadline(struct MHD_Connection *c, uint64_t deadline, bool earlier_only)
{
	struct guarded *e = entry_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&e->g->lock);
	if (!earlier_only || !e->deadline_ns || deadline < e->deadline_ns)
		e->deadline_ns = deadline;
	pthread_mutex_unlock(&e->g->lock);
}

void *httpguard_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct guarded *e = entry_of(c);

	(void)cls;
	(void)uri;
	/* A request line after an idle spell: the headers follow promptly. */
	if (e)
		set_deadline(c, clock_mono_ns() + e->g->header_ns, true);
	return NULL;
}

void httpguard_mhd_log(void *module, const char *fmt, va_list ap)
{
	static struct log_limit limit;
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, module, "%s", line);
}

void httpguard_headers_done(struct MHD_Connection *c)
{
	set_deadline(c, 0, false);
}

void httpguard_request_done(struct MHD_Connection *c)
{
	struct guarded *e = entry_of(c);

	if (e)
		set_deadline(c, clock_mono_ns() + e->g->idle_ns, false);
}
