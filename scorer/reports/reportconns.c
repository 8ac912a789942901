#include "reports/reportconns.h"

#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "connfair.h"
#include "fdlimit.h"
#include "log.h"
#include "counters/registry.h"
#include "worker.h"

/* Silent connections are looked for this often. */
#define RC_TICK_NS (500ULL * NS_PER_MS)
/* Accepting stays paused at least this long, so it does not flap. */
#define RC_PAUSE_MIN_NS NS_PER_SEC
/* Memory freed by closed connections goes back to the system at most this
 * often: glibc keeps freed blocks in its per-thread arenas (96 MB stayed
 * resident after 8,000 part-sent messages were closed). */
#define RC_TRIM_NS (5ULL * NS_PER_SEC)
/* Each report connection's kernel receive buffer (doubled by the kernel):
 * a message at NNG's receive limit (ingest.h) and its length. */
#define RC_SOCKET_BUFFER (32 * 1024)
/* Pipes closed per batch, outside the lock. */
#define RC_BATCH 256u
/* Connections evicted to make room are ended by the watcher, batched: one
 * scan of the descriptors at most this often (each_connection(): 10 ms
 * with 5,700 connections, so one per eviction would let a flood of new
 * connections buy a core with a hundred a second). */
#define RC_EVICT_SCAN_NS (100ULL * NS_PER_MS)
/* Descriptors left are checked this often (two syscalls): a burst of new
 * connections is stopped within it. At 100 ms, one of 1,100 clients from a
 * loop in Python got 300 descriptors past the check. */
#define RC_FD_CHECK_MS 5u

struct rc_entry {
	struct connfair_conn fair;	/* idle: no report yet; since: the last one, or connected */
	uint32_t id;
};

struct reportconns {
	struct reportconns_config cfg;
	pthread_mutex_t lock;	/* everything below */
	struct connfair fair;
	struct rc_entry **map;	/* by pipe id, open addressing */
	size_t map_size;	/* a power of two, at least 2 x (max + 1) */
	atomic_size_t closed_since_trim;
	atomic_int listen_fd;	/* NNG's, not ours: only a filter is set on it; -1: none */
	/* The watcher's own. */
	struct worker *watcher;
	uint64_t next_tick_ns, last_trim_ns, last_evict_ns;
	/* Evicted, not yet ended (under lock). */
	uint32_t evicted[RC_BATCH];
	size_t n_evicted;
	bool paused;
	uint64_t paused_ns;
	struct log_limit evict_log, silent_log;
};

static atomic_ulong no_counter;

static atomic_ulong *counter(struct reportconns *rc, size_t offset)
{
	return rc->cfg.counters ? (atomic_ulong *)((char *)rc->cfg.counters + offset) : &no_counter;
}

#define COUNT(rc, field) atomic_fetch_add(counter(rc, offsetof(struct registry, field)), 1)

static size_t home(const struct reportconns *rc, uint32_t id)
{
	return (size_t)(id * 2654435761u) & (rc->map_size - 1);
}

static size_t slot_of(const struct reportconns *rc, uint32_t id)
{
	size_t i = home(rc, id);

	while (rc->map[i] && rc->map[i]->id != id)
		i = (i + 1) & (rc->map_size - 1);
	return i;
}

static struct rc_entry *lookup(const struct reportconns *rc, uint32_t id)
{
	return rc->map[slot_of(rc, id)];
}

/* Removes e from the map (backward shift: no tombstones) and the set. */
static void forget(struct reportconns *rc, struct rc_entry *e)
{
	size_t mask = rc->map_size - 1, i = slot_of(rc, e->id), j = i;

	if (rc->map[i] != e)
		return;
	for (;;) {
		size_t h;

		j = (j + 1) & mask;
		if (!rc->map[j])
			break;
		h = home(rc, rc->map[j]->id);
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		rc->map[i] = rc->map[j];
		i = j;
	}
	rc->map[i] = NULL;
	connfair_remove(&rc->fair, &e->fair);
	atomic_store(counter(rc, offsetof(struct registry, report_conns)), connfair_count(&rc->fair));
}

static void close_all(struct reportconns *rc, const uint32_t *ids, size_t n);

/* A pipe by the peer NNG says it has (its REMADDR). */
struct rc_peer {
	uint32_t id;
	bool found;
	uint16_t family;	/* AF_INET, AF_INET6 */
	uint16_t port;		/* network order, as both NNG and the kernel keep it */
	uint8_t addr[16];
};

static bool peer_of_pipe(uint32_t id, struct rc_peer *pe)
{
	nng_sockaddr sa;

	memset(pe, 0, sizeof(*pe));
	pe->id = id;
	if (nng_pipe_get_addr((nng_pipe){ .id = id }, NNG_OPT_REMADDR, &sa))
		return false;
	if (sa.s_family == NNG_AF_INET) {
		pe->family = AF_INET;
		pe->port = sa.s_in.sa_port;
		memcpy(pe->addr, &sa.s_in.sa_addr, 4);
		return true;
	}
	if (sa.s_family == NNG_AF_INET6) {
		pe->family = AF_INET6;
		pe->port = sa.s_in6.sa_port;
		memcpy(pe->addr, sa.s_in6.sa_addr, 16);
		return true;
	}
	return false;
}

static void addr_of_pipe(nng_pipe p, struct connfair_addr *a)
{
	struct rc_peer pe;

	memset(a, 0, sizeof(*a));
	if (!peer_of_pipe((uint32_t)nng_pipe_id(p), &pe))
		return;
	if (pe.family == AF_INET) {
		memcpy(a->bytes, pe.addr, 4);
		a->len = 4;
	} else {
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

		memcpy(&sin6.sin6_addr, pe.addr, 16);
		connfair_addr_of(a, (struct sockaddr *)&sin6);
	}
}

/* A new pipe: tracked, and if over the budget another evicted to make room:
 * forgotten now, ended by the watcher within RC_EVICT_SCAN_NS. */
static void added(struct reportconns *rc, nng_pipe p)
{
	struct rc_entry *e = calloc(1, sizeof(*e));
	uint32_t overflow[4];
	size_t n = 0, over = 0;
	uint64_t now = clock_mono_ns();

	if (!e) {
		nng_pipe_close(p);	/* untracked it could never be bounded */
		return;
	}
	e->id = (uint32_t)nng_pipe_id(p);
	addr_of_pipe(p, &e->fair.addr);
	e->fair.idle = true;
	e->fair.since_ns = now;
	pthread_mutex_lock(&rc->lock);
	if (connfair_add(&rc->fair, &e->fair) < 0) {
		pthread_mutex_unlock(&rc->lock);
		free(e);
		nng_pipe_close(p);
		return;
	}
	rc->map[slot_of(rc, e->id)] = e;
	while (connfair_count(&rc->fair) > rc->cfg.max && n < sizeof(overflow) / sizeof(overflow[0])) {
		struct connfair_conn *v = connfair_victim(&rc->fair, &e->fair);
		struct rc_entry *ve = (struct rc_entry *)v;
		char peer[INET6_ADDRSTRLEN];

		connfair_addr_str(&v->addr, peer, sizeof(peer));
		COUNT(rc, report_conns_closed_busiest);
		log_limited(&rc->evict_log, now, NS_PER_SEC, LOG_LVL_WARN, "ingest",
			    "%zu report connections, the limit: closed %s from %s, which holds %zu, to "
			    "make room", rc->cfg.max, v->idle ? "one that has sent no report" : "one",
			    peer, connfair_addr_count(&rc->fair, &v->addr));
		n++;
		/* With the queue full (a flood of over 2,500 a second), NNG
		 * closes it: the old way, which can leak (each_connection()). */
		if (rc->n_evicted < RC_BATCH)
			rc->evicted[rc->n_evicted++] = ve->id;
		else
			overflow[over++] = ve->id;
		forget(rc, ve);
		free(ve);
	}
	atomic_store(counter(rc, offsetof(struct registry, report_conns)), connfair_count(&rc->fair));
	pthread_mutex_unlock(&rc->lock);
	for (size_t i = 0; i < over; i++)
		nng_pipe_close((nng_pipe){ .id = overflow[i] });
	atomic_fetch_add(&rc->closed_since_trim, over);
}

static void removed(struct reportconns *rc, nng_pipe p)
{
	struct rc_entry *e;

	pthread_mutex_lock(&rc->lock);
	e = lookup(rc, (uint32_t)nng_pipe_id(p));
	if (e) {
		forget(rc, e);
		free(e);
	}
	pthread_mutex_unlock(&rc->lock);
	atomic_fetch_add(&rc->closed_since_trim, 1);
}

static void on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	if (ev == NNG_PIPE_EV_ADD_PRE)
		added(arg, p);
	else if (ev == NNG_PIPE_EV_REM_POST)
		removed(arg, p);
}

static uint64_t watch(void *ctx);

struct reportconns *reportconns_start(nng_socket sock, const struct reportconns_config *cfg,
				      char *err, size_t errlen)
{
	struct reportconns *rc = calloc(1, sizeof(*rc));
	size_t n = 16;
	int rv;

	if (!rc)
		goto out_nomem;
	rc->cfg = *cfg;
	atomic_init(&rc->listen_fd, -1);
	while (n < 2 * (cfg->max + 1))
		n *= 2;
	rc->map = calloc(n, sizeof(*rc->map));
	if (!rc->map || connfair_init(&rc->fair, cfg->max + 1) < 0)
		goto out_nomem;
	rc->map_size = n;
	pthread_mutex_init(&rc->lock, NULL);
	atomic_init(&rc->closed_since_trim, 0);
	if (rc->cfg.counters)
		atomic_store(&rc->cfg.counters->report_conns_max, cfg->max);
	if ((rv = nng_pipe_notify(sock, NNG_PIPE_EV_ADD_PRE, on_pipe, rc)) ||
	    (rv = nng_pipe_notify(sock, NNG_PIPE_EV_REM_POST, on_pipe, rc))) {
		snprintf(err, errlen, "watch report connections: %s", nng_strerror(rv));
		pthread_mutex_destroy(&rc->lock);
		goto out_free;
	}
	rc->watcher = worker_start("reportconns", watch, rc, RC_FD_CHECK_MS, err, errlen);
	if (!rc->watcher) {
		/* The notifications stay registered: the caller closes the
		 * socket before anything else (reportconns_stop() is NULL). */
		pthread_mutex_destroy(&rc->lock);
		goto out_free;
	}
	return rc;

out_nomem:
	snprintf(err, errlen, "out of memory for %zu report connections", cfg->max);
out_free:
	if (rc) {
		connfair_destroy(&rc->fair);
		free(rc->map);
	}
	free(rc);
	return NULL;
}

void reportconns_stop(struct reportconns *rc)
{
	if (!rc)
		return;
	worker_stop(rc->watcher);
	/* The socket is closed: every pipe said REM_POST, or never will. */
	for (size_t i = 0; i < rc->map_size; i++)
		free(rc->map[i]);
	free(rc->map);
	connfair_destroy(&rc->fair);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

/* The local port of TCP socket fd; 0 if it is none. */
static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static bool listening(int fd)
{
	socklen_t il = sizeof(int);
	int on = 0;

	return !getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &il) && on;
}

/* A listening TCP socket bound to port. */
static bool listens_on(int fd, uint16_t port)
{
	return listening(fd) && local_port(fd) == port;
}

int reportconns_find_listener(struct reportconns *rc, uint16_t port)
{
	DIR *d;
	struct dirent *de;

	rc->cfg.port = port;
	if (!port)
		return -ENOENT;
	/* NNG does not hand out its descriptors; its listening socket is the
	 * one open socket listening on our port. */
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == dirfd(d) || !listens_on((int)fd, rc->cfg.port))
			continue;
		/* Connections take the listener's buffer size: a report is
		 * a few KB every few seconds, and the kernel would otherwise
		 * let each connection queue megabytes while we read slower
		 * than a client sends. */
		setsockopt((int)fd, SOL_SOCKET, SO_RCVBUF, &(int){ RC_SOCKET_BUFFER }, sizeof(int));
		atomic_store(&rc->listen_fd, (int)fd);
		break;
	}
	if (d)
		closedir(d);
	if (atomic_load(&rc->listen_fd) < 0) {
		log_warn("ingest", "port %u: NNG's listening socket not found: report connections "
			 "cannot be paused when descriptors run short", rc->cfg.port);
		return -ENOENT;
	}
	return 0;
}

/* A filter that drops every packet to the listening socket fd: new
 * connections' SYNs (those already accepted are other sockets), so clients
 * retry later and no descriptor is taken. */
static int drop_new_connections(int fd)
{
	static struct sock_filter drop[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { .len = 1, .filter = drop };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* Pauses or resumes NNG's accepting (drop_new_connections()). */
static void pause_accepting(struct reportconns *rc, uint64_t now)
{
	int fd = atomic_load(&rc->listen_fd), dummy = 0;
	bool short_of_fds;

	if (fd < 0 || !rc->cfg.pause_at)
		return;
	short_of_fds = fdlimit_in_use(rc->cfg.pause_at);
	if (short_of_fds && !rc->paused) {
		if (drop_new_connections(fd))
			return;
		rc->paused = true;
		rc->paused_ns = now;
		COUNT(rc, report_accept_pauses);
		log_warn("ingest", "%zu open files in use, the most report connections may take: "
			 "not accepting more until some close (%zu report connections open, more "
			 "in NNG's handshake)", rc->cfg.pause_at, reportconns_count(rc));
	} else if (!short_of_fds && rc->paused && now - rc->paused_ns >= RC_PAUSE_MIN_NS) {
		if (setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &dummy, sizeof(dummy)))
			return;
		rc->paused = false;
		log_info("ingest", "open files available again: accepting report connections");
	}
}

/* Which of peers, not yet found, socket fd is connected to; NULL: none. */
static struct rc_peer *peer_of_fd(int fd, struct rc_peer *peers, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct rc_peer *pe = &peers[i];

		if (pe->found || pe->family != ss.ss_family)
			continue;
		if (pe->family == AF_INET && ((struct sockaddr_in *)&ss)->sin_port == pe->port &&
		    !memcmp(&((struct sockaddr_in *)&ss)->sin_addr, pe->addr, 4))
			return &peers[i];
		if (pe->family == AF_INET6 && ((struct sockaddr_in6 *)&ss)->sin6_port == pe->port &&
		    !memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr, pe->addr, 16))
			return &peers[i];
	}
	return NULL;
}

/* The report connections open at the kernel: NNG's accepted sockets on our
 * port (pipes, and those still in the handshake, which no notification
 * shows). With shut, each is shut down both ways on the way (only those
 * to one of peers, if given): its pending receive ends with an error, NNG
 * ends the pipe by itself, and closes the descriptor when the pipe is gone.
 * Never NNG's close of a pipe: libnng 1.5.2 loses the receive of a pipe
 * closed between a read's completion and its callback, and the thread
 * that reaps every pipe, listener and socket of the process then waits
 * for it forever (a flood of connections over the budget, each evicting
 * one still sending, leaked every descriptor closed after it). */
static size_t each_connection(struct reportconns *rc, bool shut, struct rc_peer *peers,
			      size_t n_peers)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (!rc->cfg.port)
		return 0;
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		struct rc_peer *pe = NULL;
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == dirfd(d) ||
		    local_port((int)fd) != rc->cfg.port || listening((int)fd))
			continue;
		if (peers && !(pe = peer_of_fd((int)fd, peers, n_peers)))
			continue;
		n++;
		if (pe)
			pe->found = true;
		if (shut)
			shutdown((int)fd, SHUT_RDWR);
	}
	if (d)
		closedir(d);
	return n;
}

/* Ends pipes ids (at most RC_BATCH) at the kernel (each_connection());
 * NNG closes those it cannot be found for: not TCP, or already gone. */
static void close_all(struct reportconns *rc, const uint32_t *ids, size_t n)
{
	struct rc_peer peers[RC_BATCH];
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (rc->cfg.port && m < RC_BATCH && peer_of_pipe(ids[i], &peers[m]))
			m++;
		else
			nng_pipe_close((nng_pipe){ .id = ids[i] });
	}
	if (m)
		each_connection(rc, true, peers, m);
	for (size_t i = 0; i < m; i++)
		if (!peers[i].found)
			nng_pipe_close((nng_pipe){ .id = peers[i].id });
	atomic_fetch_add(&rc->closed_since_trim, n);
}

size_t reportconns_shut(struct reportconns *rc)
{
	int fd = atomic_load(&rc->listen_fd);

	if (fd < 0)
		return 0;
	/* Nothing else closes a pipe now, or lifts the filter. */
	worker_stop(rc->watcher);
	rc->watcher = NULL;
	if (drop_new_connections(fd))
		log_warn("ingest", "port %u: cannot stop accepting report connections at stop: %s",
			 rc->cfg.port, strerror(errno));
	return each_connection(rc, true, NULL, 0);
}

size_t reportconns_open(struct reportconns *rc)
{
	return each_connection(rc, false, NULL, 0);
}

/* result: what ingest_message() said. */
static bool is_report(int result)
{
	/* Applied, or a real report that changed nothing (a duplicate, an
	 * older window, the table full, values out of range, a clock). */
	return result == 0 || result == -EALREADY || result == -ENOSPC || result == -ERANGE ||
	       result == -ETIME;
}

void reportconns_delivered(struct reportconns *rc, nng_pipe p, int result)
{
	struct rc_entry *e;

	/* Anything else (garbage, unsigned or forged with keys set) leaves
	 * the connection as silent as before: it is closed in time. */
	if (!is_report(result))
		return;
	pthread_mutex_lock(&rc->lock);
	e = lookup(rc, (uint32_t)nng_pipe_id(p));
	if (e) {
		e->fair.idle = false;
		e->fair.since_ns = clock_mono_ns();
	}
	pthread_mutex_unlock(&rc->lock);
}

/* Ends the connections evicted since, at most once per RC_EVICT_SCAN_NS. */
static void end_evicted(struct reportconns *rc, uint64_t now)
{
	uint32_t ids[RC_BATCH];
	size_t n;

	if (now - rc->last_evict_ns < RC_EVICT_SCAN_NS)
		return;
	pthread_mutex_lock(&rc->lock);
	n = rc->n_evicted;
	memcpy(ids, rc->evicted, n * sizeof(ids[0]));
	rc->n_evicted = 0;
	pthread_mutex_unlock(&rc->lock);
	if (!n)
		return;
	rc->last_evict_ns = now;
	close_all(rc, ids, n);
}

/* Closes connections silent longer than silent_ns, RC_BATCH at a time. */
static void close_silent(struct reportconns *rc, uint64_t now)
{
	uint32_t ids[RC_BATCH];
	size_t n = 0;

	pthread_mutex_lock(&rc->lock);
	for (struct connfair_conn *c = rc->fair.head, *next; c && n < RC_BATCH; c = next) {
		struct rc_entry *e = (struct rc_entry *)c;
		char peer[INET6_ADDRSTRLEN];

		next = c->next;
		/* since may be after now: a pipe added since now was read. */
		if (c->since_ns + rc->cfg.silent_ns > now)
			continue;
		connfair_addr_str(&c->addr, peer, sizeof(peer));
		COUNT(rc, report_conns_closed_silent);
		log_limited(&rc->silent_log, now, NS_PER_SEC, LOG_LVL_WARN, "ingest",
			    "closed the report connection from %s: no report for %llu s (a "
			    "half-sent message, or none)", peer,
			    (unsigned long long)(rc->cfg.silent_ns / NS_PER_SEC));
		ids[n++] = e->id;
		forget(rc, e);
		free(e);
	}
	pthread_mutex_unlock(&rc->lock);
	close_all(rc, ids, n);
}

/* The watcher thread: descriptors every few ms, the rest twice a second. */
static uint64_t watch(void *ctx)
{
	struct reportconns *rc = ctx;
	uint64_t now = clock_mono_ns();

	pause_accepting(rc, now);
	end_evicted(rc, now);
	if (now < rc->next_tick_ns)
		return RC_FD_CHECK_MS;
	rc->next_tick_ns = now + RC_TICK_NS;
	close_silent(rc, now);
	if (atomic_load(&rc->closed_since_trim) && now - rc->last_trim_ns >= RC_TRIM_NS) {
		atomic_store(&rc->closed_since_trim, 0);
		rc->last_trim_ns = now;
		malloc_trim(0);
	}
	return RC_FD_CHECK_MS;
}

size_t reportconns_count(struct reportconns *rc)
{
	size_t n;

	pthread_mutex_lock(&rc->lock);
	n = connfair_count(&rc->fair);
	pthread_mutex_unlock(&rc->lock);
	return n;
}
