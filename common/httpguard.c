#include "httpguard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "clock.h"
#include "connfair.h"
#include "log.h"
#include "worker.h"

#define GUARD_CHECK_MS 250u
/* A connection still without a complete request head this long after it
 * began one (or was accepted) is silent: the scheduler and the kubelet
 * send theirs in one write, at once. Silent ones make room first, so a
 * caller's connection just opened (not yet read) outlasts a flood's. */
#define GUARD_SILENT_NS (1000ull * 1000 * 1000)

enum phase {
	PHASE_HEADERS,		/* accepted, or a request line read */
	PHASE_BODY,		/* headers complete, the body coming */
	PHASE_PROCESSING,	/* ours: no deadline */
	PHASE_REPLY,		/* the reply being sent */
	PHASE_IDLE,		/* between requests */
};

/* One connection; MHD keeps it as the socket context. */
struct guarded {
	struct httpguard *g;
	struct guarded *prev, *next;
	struct connfair_conn fair;	/* in g->fair until shut */
	int fd;
	enum phase phase;
	uint64_t request_ns;	/* when its current request (or the connection) began */
	uint64_t deadline_ns;	/* 0: none */
	bool shut;
};

struct httpguard {
	struct httpguard_config cfg;
	uint64_t header_ns, idle_ns;
	pthread_mutex_t lock;	/* the list, the fair set and every entry's fields */
	struct guarded *head;
	struct connfair fair;
	struct worker *checker;
	atomic_ulong own_deadline, own_idle, own_busiest;	/* when the caller keeps none */
	struct log_limit closed_log, reclaim_log;
};

/* Whether a connection in phase p gives us nothing to do: between
 * requests, or not done sending its headers (the scheduler sends them in
 * one write; a connection still at it is silent or trickling). Such go
 * first, the longest waiting first, so the scheduler's keep-alive
 * connection, used a moment ago, outlasts connections that do nothing. */
static bool idle_phase(enum phase p)
{
	return p == PHASE_IDLE || p == PHASE_HEADERS;
}

static const char *phase_why(enum phase p)
{
	switch (p) {
	case PHASE_HEADERS: return "no complete request headers in time";
	case PHASE_BODY: return "request body not complete in time";
	case PHASE_REPLY: return "reply not taken in time";
	case PHASE_IDLE: return "idle too long";
	case PHASE_PROCESSING: break;
	}
	return "past its deadline";
}

/* Closes e's connection: a shutdown, not a close, so the descriptor stays
 * MHD's, and MHD removes the entry (httpguard_notify, CLOSED) before it
 * closes the descriptor, so it cannot be reused under us. Lock held. */
static void shut(struct httpguard *g, struct guarded *e)
{
	shutdown(e->fd, SHUT_RDWR);
	e->shut = true;
	connfair_remove(&g->fair, &e->fair);
}

static uint64_t check(void *ctx)
{
	struct httpguard *g = ctx;
	uint64_t now = clock_mono_ns();

	pthread_mutex_lock(&g->lock);
	for (struct guarded *e = g->head; e; e = e->next) {
		char peer[INET6_ADDRSTRLEN];
		uint64_t n;

		if (!e->shut && e->phase == PHASE_HEADERS && now - e->request_ns >= GUARD_SILENT_NS)
			e->fair.silent = true;
		if (e->shut || !e->deadline_ns || now < e->deadline_ns)
			continue;
		shut(g, e);
		n = atomic_fetch_add(g->cfg.deadline, 1) + 1;
		connfair_addr_str(&e->fair.addr, peer, sizeof(peer));
		log_limited(&g->closed_log, now, NS_PER_SEC, LOG_LVL_WARN, g->cfg.name,
			    "closed a connection from %s: %s (headers within %u s, bodies and "
			    "replies at %llu bytes/s at least, idle %u s at most); %llu so far",
			    peer, phase_why(e->phase), g->cfg.header_timeout_s,
			    (unsigned long long)g->cfg.min_bytes_per_second, g->cfg.idle_timeout_s,
			    (unsigned long long)n);
	}
	pthread_mutex_unlock(&g->lock);
	return GUARD_CHECK_MS;
}

struct httpguard *httpguard_start(const struct httpguard_config *cfg, char *err, size_t errlen)
{
	struct httpguard *g = calloc(1, sizeof(*g));

	if (!g || connfair_init(&g->fair, HTTPGUARD_HARD_LIMIT(cfg->max_connections)) < 0) {
		snprintf(err, errlen, "%s: out of memory for the connection guard", cfg->name);
		free(g);
		return NULL;
	}
	g->cfg = *cfg;
	if (!g->cfg.min_bytes_per_second)
		g->cfg.min_bytes_per_second = 1;
	g->header_ns = (uint64_t)cfg->header_timeout_s * NS_PER_SEC;
	g->idle_ns = (uint64_t)cfg->idle_timeout_s * NS_PER_SEC;
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->own_deadline, 0);
	atomic_init(&g->own_idle, 0);
	atomic_init(&g->own_busiest, 0);
	if (!g->cfg.deadline)
		g->cfg.deadline = &g->own_deadline;
	if (!g->cfg.reclaimed_idle)
		g->cfg.reclaimed_idle = &g->own_idle;
	if (!g->cfg.reclaimed_busiest)
		g->cfg.reclaimed_busiest = &g->own_busiest;
	g->checker = worker_start(cfg->name, check, g, GUARD_CHECK_MS, err, errlen);
	if (!g->checker) {
		pthread_mutex_destroy(&g->lock);
		connfair_destroy(&g->fair);
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
	connfair_destroy(&g->fair);
	free(g);
}

/* What kind of connection v is, for the log: whoever reads it learns why
 * that one went. */
static const char *kind_of(const struct connfair_conn *v)
{
	return v->silent ? "silent" : v->idle ? "idle" : "busy";
}

/* Closes victim to make room, counts and logs it: the address, how many
 * it holds, the limit (what's says which) and which connection went. Lock
 * held. */
static void reclaim(struct httpguard *g, struct guarded *victim, const char *what, uint64_t now)
{
	struct connfair_conn *v = &victim->fair;
	char peer[INET6_ADDRSTRLEN];
	uint64_t n;

	connfair_addr_str(&v->addr, peer, sizeof(peer));
	n = atomic_fetch_add(v->idle ? g->cfg.reclaimed_idle : g->cfg.reclaimed_busiest, 1) + 1;
	log_limited(&g->reclaim_log, now, NS_PER_SEC, LOG_LVL_WARN, g->cfg.name,
		    "%s: %zu connections open, %s; closed the oldest %s one (%s %.1f s); %llu such "
		    "so far", peer, connfair_addr_count(&g->fair, &v->addr), what, kind_of(v),
		    v->idle ? "idle" : "in its request",
		    (double)(now - v->since_ns) / (double)NS_PER_SEC, (unsigned long long)n);
	shut(g, victim);
}

static struct guarded *entry_of_fair(struct connfair_conn *v)
{
	return (struct guarded *)((char *)v - offsetof(struct guarded, fair));
}

/* Which connections of address a have bytes waiting unread (FIONREAD):
 * a probe whose request the server has not parsed yet, against a flood
 * that reopens silent connections faster than any of them turns silent.
 * Only when the address is over its cap: a walk of the list, and one
 * ioctl per connection of that address. Lock held. */
static void mark_talking(struct httpguard *g, const struct connfair_addr *a)
{
	for (struct guarded *c = g->head; c; c = c->next) {
		int unread = 0;

		if (c->shut || c->fair.addr.len != a->len ||
		    memcmp(c->fair.addr.bytes, a->bytes, a->len))
			continue;
		c->fair.talking = c->phase == PHASE_HEADERS && ioctl(c->fd, FIONREAD, &unread) == 0 &&
				  unread > 0;
	}
}

/* e just in: over its address's own cap, that address's oldest silent
 * connection makes room (connfair.h), never e: the newcomer may be the
 * kubelet's probe or the scheduler's call from a node whose hostNetwork
 * pod floods from the same address, and an attacker reopening in a loop
 * only closes its own. Then, over max_connections, connections are closed
 * by the fair rule until there is room again. Lock held. */
static void make_room(struct httpguard *g, struct guarded *e, uint64_t now)
{
	char what[96];

	if (g->cfg.max_per_address && !e->fair.proven &&
	    connfair_addr_unproven(&g->fair, &e->fair.addr) > g->cfg.max_per_address) {
		struct connfair_conn *v;

		mark_talking(g, &e->fair.addr);
		v = connfair_victim_at(&g->fair, &e->fair.addr, &e->fair);

		snprintf(what, sizeof(what), "limit %u", g->cfg.max_per_address);
		if (v)
			reclaim(g, entry_of_fair(v), what, now);
	}
	while (connfair_count(&g->fair) > g->cfg.max_connections) {
		struct connfair_conn *v = connfair_victim(&g->fair, &e->fair);

		if (!v)
			break;
		snprintf(what, sizeof(what), "the most of any address; %zu in all, limit %u",
			 connfair_count(&g->fair), g->cfg.max_connections);
		reclaim(g, entry_of_fair(v), what, now);
	}
}

static void started(struct httpguard *g, struct MHD_Connection *c, void **socket_context)
{
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c,
								    MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
								    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct guarded *e;
	uint64_t now;

	/* Without memory or a descriptor the connection goes unguarded:
	 * MHD's own timeout still ends it. */
	e = fd ? calloc(1, sizeof(*e)) : NULL;
	if (!e)
		return;
	e->g = g;
	e->fd = fd->connect_fd;
	if (g->cfg.socket_buffer) {
		setsockopt(e->fd, SOL_SOCKET, SO_SNDBUF, &g->cfg.socket_buffer, sizeof(int));
		setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &g->cfg.socket_buffer, sizeof(int));
	}
	connfair_addr_of(&e->fair.addr, ci ? ci->client_addr : NULL);
	pthread_mutex_lock(&g->lock);
	now = clock_mono_ns();
	e->phase = PHASE_HEADERS;
	e->fair.idle = idle_phase(e->phase);
	e->request_ns = e->fair.since_ns = now;
	e->deadline_ns = now + g->header_ns;
	e->next = g->head;
	if (g->head)
		g->head->prev = e;
	g->head = e;
	if (connfair_add(&g->fair, &e->fair) < 0)
		shut(g, e);	/* MHD's own limit is above ours: never here */
	else
		make_room(g, e, now);
	pthread_mutex_unlock(&g->lock);
	*socket_context = e;
}

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct httpguard *g = cls;
	struct guarded *e = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		started(g, c, socket_context);
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
	connfair_remove(&g->fair, &e->fair);
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

/* Moves e to phase p with deadline (0: none), under the lock. */
static void enter(struct guarded *e, enum phase p, uint64_t deadline, uint64_t now)
{
	e->phase = p;
	e->deadline_ns = deadline;
	e->fair.idle = idle_phase(p);
	e->fair.silent = false;		/* until check() finds it so again */
	e->fair.since_ns = now;
}

/* n bytes at the guard's slowest allowed rate, in ns. */
static uint64_t transfer_ns(const struct httpguard *g, uint64_t n)
{
	uint64_t rate = g->cfg.min_bytes_per_second;

	return n / rate * NS_PER_SEC + n % rate * NS_PER_SEC / rate;
}

void *httpguard_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct guarded *e = entry_of(c);

	(void)cls;
	(void)uri;
	if (!e)
		return NULL;
	pthread_mutex_lock(&e->g->lock);
	/* A request line after an idle spell: the headers follow promptly.
	 * The first request keeps the deadline from the accept. */
	if (e->phase == PHASE_IDLE) {
		uint64_t now = clock_mono_ns();

		e->request_ns = now;
		enter(e, PHASE_HEADERS, now + e->g->header_ns, now);
	}
	pthread_mutex_unlock(&e->g->lock);
	return NULL;
}

/* Moves c's connection to phase p and its deadline: a body's counts from
 * its request's start, a reply's from now, and both allow for bytes. */
static void step(struct MHD_Connection *c, enum phase p, uint64_t bytes)
{
	struct guarded *e = entry_of(c);
	struct httpguard *g;
	uint64_t now, deadline = 0;

	if (!e)
		return;
	g = e->g;
	pthread_mutex_lock(&g->lock);
	now = clock_mono_ns();
	if (p == PHASE_BODY)
		deadline = e->request_ns + g->header_ns + transfer_ns(g, bytes);
	else if (p == PHASE_REPLY)
		deadline = now + g->header_ns + transfer_ns(g, bytes);
	else if (p == PHASE_IDLE)
		deadline = now + g->idle_ns;
	enter(e, p, deadline, now);
	pthread_mutex_unlock(&g->lock);
}

void httpguard_headers_done(struct MHD_Connection *c, uint64_t body_bytes)
{
	step(c, PHASE_BODY, body_bytes);
}

void httpguard_processing(struct MHD_Connection *c)
{
	step(c, PHASE_PROCESSING, 0);
}

void httpguard_replying(struct MHD_Connection *c, uint64_t reply_bytes)
{
	step(c, PHASE_REPLY, reply_bytes);
}

void httpguard_request_done(struct MHD_Connection *c)
{
	step(c, PHASE_IDLE, 0);
}

void httpguard_proven(struct MHD_Connection *c)
{
	struct guarded *e = entry_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&e->g->lock);
	connfair_prove(&e->g->fair, &e->fair);
	pthread_mutex_unlock(&e->g->lock);
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
