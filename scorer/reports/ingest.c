#include "reports/ingest.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>

#include "reports/anchor.h"
#include "clock.h"
#include "fdlimit.h"
#include "keyfile.h"
#include "log.h"
#include "pods/podindex.h"
#include "counters/registry.h"
#include "reports/reportconns.h"
#include "nodes/table.h"

/* Messages thrown away at stop, at most. */
#define INGEST_DRAIN_MAX 100000

struct ingest {
	struct ingest_config *cfg;
	nng_socket sock;
	nng_listener listener;
	struct reportconns *conns;
	nng_aio *recv;		/* the one receive, re-armed by its completion */
	uint64_t next_key_check;	/* only the completion reads and writes it */
	atomic_bool stopping;
	char url[256];		/* what it listens on, for log lines (cut if longer) */
	struct ingest *next_hung;	/* in the list of those whose close hung */
};

/* A flood of bad reports must not become a flood of log lines: at most one
 * line per second, with the count of what was not logged. */
static void log_rejected(const char *why)
{
	static struct log_limit limit;

	log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ingest",
		    "report rejected: %s", why);
}

/* The instance whose report node holds now, for a log line (0: none). */
static uint64_t tn_instance(struct ingest_config *c, const char *node)
{
	struct table_node tn;

	return table_get(c->table, node, strlen(node), &tn) ? tn.instance_id : 0;
}

/* A signed report whose window ends before this scorer started: no table
 * of ours saw it, so only time tells a replay from a live agent whose clock
 * is behind ours, and ours is the wrong clock to judge it by (anchor.h).
 * An instance the table already holds is ordered there. 0: go on and
 * apply it; else the report is counted and dropped. */
static int judge_before_start(struct ingest_config *c, const struct report *r)
{
	static struct log_limit live_log;
	uint64_t before = c->started_unix_ms - r->window_end_unix_ms;
	enum anchor_verdict v;
	char err[512];

	if (tn_instance(c, r->node) == r->instance_id)
		return 0;
	v = c->anchors ? anchors_judge(c->anchors, r->node, strlen(r->node), r->instance_id, r->seq,
				       r->window_end_unix_ms, c->now_ns()) :
			 ANCHOR_REPLAYED;
	if (v == ANCHOR_LIVE) {
		log_limited(&live_log, clock_mono_ns(), NS_PER_SEC, LOG_LVL_INFO, "ingest",
			    "%s: instance %016llx's clock is about %llu s behind ours: its reports "
			    "are judged by its own clock", r->node, (unsigned long long)r->instance_id,
			    (unsigned long long)((clock_unix_ms() - r->window_end_unix_ms) / 1000));
		return 0;
	}
	if (v == ANCHOR_HELD) {
		atomic_fetch_add(&c->counters->reports_unconfirmed, 1);
		snprintf(err, sizeof(err), "%s: signed report %llu ends %llu ms before this scorer "
			 "started (instance %016llx): replayed, or the agent's clock is behind ours; "
			 "held until the instance's next report shows its clock running", r->node,
			 (unsigned long long)r->seq, (unsigned long long)before,
			 (unsigned long long)r->instance_id);
		log_rejected(err);
		return -EAGAIN;
	}
	/* Captured before we started, or the held report sent again. */
	atomic_fetch_add(&c->counters->reports_replayed, 1);
	snprintf(err, sizeof(err), "%s: signed report %llu ends %llu ms before this scorer started "
		 "(instance %016llx) and is no newer than the one held: replayed", r->node,
		 (unsigned long long)r->seq, (unsigned long long)before,
		 (unsigned long long)r->instance_id);
	log_rejected(err);
	return -ETIME;
}

int ingest_message(struct ingest_config *c, const uint8_t *data, size_t len)
{
	struct report r;
	char err[512];
	int64_t skew_ms;
	int rc;

	if (len > REPORT_MAX_BYTES) {
		/* Its own line a second: a flood of garbage must not hide it. */
		static struct log_limit limit;

		atomic_fetch_add(&c->counters->reports_oversize, 1);
		log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_WARN, "ingest",
			    "report rejected: a message of %zu bytes, over the report limit of %u "
			    "bytes", len, REPORT_MAX_BYTES);
		return -EMSGSIZE;
	}
	rc = report_decode_verified(data, len, c->keys.n ? &c->keys : NULL, &r, err, sizeof(err));
	if (rc) {
		atomic_fetch_add(rc == -EPROTO	      ? &c->counters->reports_version :
				 rc == -ERANGE	      ? &c->counters->reports_absurd :
				 rc == -ENOKEY	      ? &c->counters->reports_unsigned :
				 rc == -EKEYREJECTED ? &c->counters->reports_forged :
				 rc == -EPERM	      ? &c->counters->reports_impersonated :
				 rc == -REPORT_EPODS_OVERSIZE ? &c->counters->reports_pods_oversize :
				 rc == -REPORT_EPODS_DUPLICATE ? &c->counters->reports_pods_duplicate :
				 rc == -REPORT_EPODS_OVER_LINK ? &c->counters->reports_pods_over_link :
							&c->counters->reports_malformed,
				 1);
		log_rejected(err);
		return rc;
	}
	/* How far behind ours the agent's clock is, before the window end is
	 * capped for ordering below. */
	skew_ms = (int64_t)clock_unix_ms() - (int64_t)r.window_end_unix_ms;
	if (!c->keys.n && r.window_end_unix_ms > clock_unix_ms() + INGEST_MAX_SKEW_MS) {
		/* Unsigned reports may come from an agent whose clock is behind,
		 * but none can have measured the future. */
		atomic_fetch_add(&c->counters->reports_absurd, 1);
		snprintf(err, sizeof(err), "%s: report %llu ends %llu s ahead of our clock, limit "
			 "%llu s", r.node, (unsigned long long)r.seq,
			 (unsigned long long)((r.window_end_unix_ms - clock_unix_ms()) / 1000),
			 (unsigned long long)(INGEST_MAX_SKEW_MS / 1000));
		log_rejected(err);
		return -ERANGE;
	}
	if (c->keys.n) {
		/* A signature proves who sent a report, not when: an old one
		 * captured off the wire and sent again is refused by its time. */
		uint64_t now = clock_unix_ms(), end = r.window_end_unix_ms;
		uint64_t skew = now > end ? now - end : end - now;

		if (skew > INGEST_MAX_SKEW_MS) {
			atomic_fetch_add(&c->counters->reports_replayed, 1);
			snprintf(err, sizeof(err), "%s: signed report %llu ends %llu s %s our clock, "
				 "limit %llu s: replayed, or a clock is wrong", r.node,
				 (unsigned long long)r.seq, (unsigned long long)(skew / 1000),
				 now > end ? "behind" : "ahead of",
				 (unsigned long long)(INGEST_MAX_SKEW_MS / 1000));
			log_rejected(err);
			return -ETIME;
		}
	}
	if (c->keys.n && r.window_end_unix_ms < c->started_unix_ms) {
		rc = judge_before_start(c, &r);
		if (rc)
			return rc;
	}
	{
		uint64_t cap = clock_unix_ms() + INGEST_ORDER_AHEAD_MS;

		if (r.window_end_unix_ms > cap)
			r.window_end_unix_ms = cap;
	}
	switch (table_apply_skewed(c->table, &r, c->now_ns(), skew_ms)) {
	case TABLE_EVICTED: {
		/* A flood of new names evicts at will: a line a second. */
		static struct log_limit limit;

		log_limited(&limit, clock_mono_ns(), NS_PER_SEC, LOG_LVL_INFO, "ingest",
			    "%s: new node with the table full at %zu: evicted the stalest", r.node,
			    table_capacity(c->table));
	}
		/* fall through */
	case TABLE_APPLIED:
		atomic_fetch_add(&c->counters->reports_accepted, 1);
		if (r.signed_with == REPORT_SIGNED_SHARED)
			atomic_fetch_add(&c->counters->reports_shared_key, 1);
		/* Its pods' traffic onto the pods (podindex.h), here, off every
		 * request: only a report the table took is as new as its node's. */
		podindex_join(c->pods, &r, c->now_ns());
		log_debug("ingest", "%s: seq %llu, %u interfaces", r.node,
			  (unsigned long long)r.seq, r.n_ifaces);
		return 0;
	case TABLE_DUPLICATE:
		/* Signed, so not a stray retransmission but a replay. */
		atomic_fetch_add(c->keys.n ? &c->counters->reports_replayed :
					     &c->counters->reports_duplicate,
				 1);
		return -EALREADY;
	case TABLE_OUTDATED:
		/* An earlier agent instance's report (replayed, or late after a
		 * restart), or a clock stepped back: the newer data stays. */
		atomic_fetch_add(&c->counters->reports_outdated, 1);
		snprintf(err, sizeof(err), "%s: report %llu of instance %016llx ends before the "
			 "node's latest window (instance %016llx): outdated or replayed", r.node,
			 (unsigned long long)r.seq, (unsigned long long)r.instance_id,
			 (unsigned long long)tn_instance(c, r.node));
		log_rejected(err);
		return -EALREADY;
	case TABLE_FULL:
	default:
		atomic_fetch_add(&c->counters->reports_table_full, 1);
		snprintf(err, sizeof(err), "%s: node table full at %zu nodes", r.node,
			 table_capacity(c->table));
		log_rejected(err);
		return -ENOSPC;
	}
}

/* A rotated Secret replaces the key file: pick the new keys up. A file
 * that no longer parses keeps the old keys (and says so). */
static void reload_keys(struct ingest_config *c, uint64_t *next_check)
{
	char err[256];
	uint64_t now = clock_mono_ns();
	int rc;

	if (!c->key_file || now < *next_check)
		return;
	*next_check = now + FILE_RELOAD_CHECK_NS;
	rc = keyfile_reload(c->key_file, &c->keys, err, sizeof(err));
	if (rc < 0)
		log_error("ingest", "key file changed but cannot be used: %s; keeping the %zu "
			  "key(s) in use", err, c->keys.n);
	else if (rc > 0)
		log_info("ingest", "key file %s reloaded: %zu key(s)", c->key_file, c->keys.n);
}

/* What happens to one received message: decoded and applied, its pipe
 * told, freed. */
static void ingest_take(struct ingest *in, nng_msg *msg)
{
	int rv = ingest_message(in->cfg, nng_msg_body(msg), nng_msg_len(msg));

	reportconns_delivered(in->conns, nng_msg_get_pipe(msg), rv);
	nng_msg_free(msg);
}

/* Each report is applied in its receive's completion, on the NNG thread that
 * finished it, which then re-arms the receive. When a receive waits, PULL
 * completes it synchronously in the pipe's own callback (libnng 1.5.2,
 * pull0_recv_cb), so a report costs no wake-up of a thread of ours: with
 * a thread waiting on the aio, a report cost 15 us of CPU instead of 8-10
 * (bench/run, 5,000 nodes from 8 senders). Only one receive is ever
 * armed, so completions never overlap and the table sees one writer. No
 * timeout: a timed receive joins NNG's timer queue and wakes its timer
 * thread per report. ingest_stop() stops the aio, which waits for a
 * completion under way and refuses the re-arm after it. */
static void ingest_recv_done(void *arg)
{
	struct ingest *in = arg;
	int rv = nng_aio_result(in->recv);

	if (rv == NNG_ECANCELED || rv == NNG_ECLOSED)
		return;
	if (rv) {
		log_warn("ingest", "receive: %s", nng_strerror(rv));
	} else {
		/* Here, not before the receive: a report after a quiet spell
		 * is judged by keys checked now (a clock read unless a check
		 * is due). */
		reload_keys(in->cfg, &in->next_key_check);
		ingest_take(in, nng_aio_get_msg(in->recv));
	}
	if (!atomic_load(&in->stopping))
		nng_recv_aio(in->sock, in->recv);
}

/* The report connections' budget (ingest.h): one per agent and a margin,
 * within what the open-file limit leaves. */
static void conns_config(const struct ingest_config *in, struct reportconns_config *c)
{
	size_t nodes = table_capacity(in->table), limit = fdlimit_current();
	size_t reserve = in->fd_reserve + INGEST_FD_SLACK;
	size_t by_nodes = nodes + nodes / 8 + 64;
	size_t by_fds = limit > reserve + INGEST_HANDSHAKE_FDS + INGEST_MIN_CONNS ?
			limit - reserve - INGEST_HANDSHAKE_FDS : INGEST_MIN_CONNS;
	uint64_t silent = in->stale_after_ns;

	memset(c, 0, sizeof(*c));
	c->max = by_nodes < by_fds ? by_nodes : by_fds;
	/* Past this many open files, report connections (and those still in
	 * NNG's handshake) would eat into HTTP's share, or exceed what the
	 * budget needs: no need to look higher (the probe makes the kernel
	 * grow the descriptor table to it). */
	c->pause_at = limit > reserve ? limit - reserve : 0;
	if (c->pause_at > c->max + INGEST_HANDSHAKE_FDS + reserve)
		c->pause_at = c->max + INGEST_HANDSHAKE_FDS + reserve;
	c->silent_ns = silent < INGEST_SILENT_MIN_NS ? INGEST_SILENT_MIN_NS :
		       silent > INGEST_SILENT_MAX_NS ? INGEST_SILENT_MAX_NS : silent;
	c->counters = in->counters;
	if (c->max < nodes)
		log_warn("ingest", "the open-file limit %zu leaves room for %zu report connections, "
			 "fewer than --max-nodes %zu: raise the limit (the container's nofile)",
			 limit, c->max, nodes);
}

struct ingest *ingest_start(struct ingest_config *c, const char *url, const char *cert_key_file,
			    char *err, size_t errlen)
{
	struct reportconns_config cc;
	struct ingest *in;
	int rv, port = 0;

	in = calloc(1, sizeof(*in));
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	in->cfg = c;
	snprintf(in->url, sizeof(in->url), "%s", url);
	atomic_init(&in->stopping, false);
	rv = nng_pull0_open(&in->sock);
	if (rv) {
		snprintf(err, errlen, "open pull socket: %s", nng_strerror(rv));
		goto out_free;
	}
	/* NNG drops anything larger before we see it (ingest.h). */
	rv = nng_socket_set_size(in->sock, NNG_OPT_RECVMAXSZ, INGEST_WIRE_MAX_BYTES);
	if (rv) {
		snprintf(err, errlen, "set receive limit: %s", nng_strerror(rv));
		goto out_close;
	}
	rv = nng_aio_alloc(&in->recv, ingest_recv_done, in);
	if (rv) {
		snprintf(err, errlen, "receive: %s", nng_strerror(rv));
		goto out_close;
	}
	nng_aio_set_timeout(in->recv, NNG_DURATION_INFINITE);
	rv = nng_listener_create(&in->listener, in->sock, url);
	if (rv) {
		snprintf(err, errlen, "listen %s: %s", url, nng_strerror(rv));
		goto out_close;
	}
	if (cert_key_file && cert_key_file[0]) {
		rv = nng_listener_set_string(in->listener, NNG_OPT_TLS_CERT_KEY_FILE, cert_key_file);
		if (rv) {
			snprintf(err, errlen, "listen %s: certificate and key %s: %s", url,
				 cert_key_file, nng_strerror(rv));
			goto out_close;
		}
	}
	conns_config(c, &cc);
	in->conns = reportconns_start(in->sock, &cc, err, errlen);
	if (!in->conns)
		goto out_close;
	rv = nng_listener_start(in->listener, 0);
	if (rv) {
		snprintf(err, errlen, "listen %s: %s", url, nng_strerror(rv));
		goto out_close;
	}
	if (!nng_listener_get_int(in->listener, NNG_OPT_TCP_BOUND_PORT, &port))
		reportconns_find_listener(in->conns, (uint16_t)port);
	log_info("ingest", "%s: at most %zu report connections (--max-nodes %zu, open files %zu "
		 "with %zu kept for others; new ones wait past %zu open); one silent %llu s is "
		 "closed", url, cc.max, table_capacity(c->table), fdlimit_current(),
		 c->fd_reserve + INGEST_FD_SLACK, cc.pause_at,
		 (unsigned long long)(cc.silent_ns / NS_PER_SEC));
	nng_recv_aio(in->sock, in->recv);
	return in;

out_close:
	nng_close(in->sock);
	reportconns_stop(in->conns);
	nng_aio_free(in->recv);
out_free:
	free(in);
	return NULL;
}

/* How long ingest_stop() waits for nng_close(). */
#define INGEST_CLOSE_WAIT_S 5
/* How long it waits for shut-down connections to end: NNG ends each within
 * a wake-up of its threads. */
#define INGEST_SHUT_WAIT_MS 2000

/* Ingests whose socket never closed: kept so their memory stays reachable
 * (and their pipe callbacks valid) for the rest of the process. */
static struct ingest *hung;
static atomic_size_t hung_count;

size_t ingest_stops_hung(void)
{
	return atomic_load(&hung_count);
}

static void *close_socket(void *arg)
{
	nng_close(*(nng_socket *)arg);
	return NULL;
}

/* nng_close(in->sock), waiting at most INGEST_CLOSE_WAIT_S. It deadlocks
 * when it closes a pipe between a read's completion and its callback
 * (reportconns_shut(): before connections were shut first, 3 of 5 stops
 * under ASan on a busy machine while reports streamed in). A connection
 * that outlived INGEST_SHUT_WAIT_MS can still meet that, and a scorer that
 * cannot stop is worse than one that leaves a socket behind at exit.
 * false: it did not return in time; the closing thread is left detached. */
static bool close_bounded(struct ingest *in)
{
	struct timespec until;
	pthread_t t;

	if (pthread_create(&t, NULL, close_socket, &in->sock)) {
		nng_close(in->sock);
		return true;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += INGEST_CLOSE_WAIT_S;
	if (pthread_timedjoin_np(t, NULL, &until) == 0)
		return true;
	log_error("ingest", "closing the report socket on %s did not finish within %d s (a libnng 1.5.2 "
		  "deadlock in nng_close(), nanomsg/nng#1543): left open until the process exits",
		  in->url, INGEST_CLOSE_WAIT_S);
	pthread_detach(t);
	return false;
}

/* Takes and frees what pipes hold: each pipe then reads again, and so
 * sees its connection end. */
static void drain(struct ingest *in)
{
	for (int i = 0; i < INGEST_DRAIN_MAX; i++) {
		nng_msg *msg;

		if (nng_recvmsg(in->sock, &msg, NNG_FLAG_NONBLOCK))
			break;
		nng_msg_free(msg);
	}
}

/* Until NNG has ended every report connection reportconns_shut() shut
 * down, or INGEST_SHUT_WAIT_MS passed. */
static void wait_connections_end(struct ingest *in, size_t shut)
{
	uint64_t until = clock_mono_ns() + INGEST_SHUT_WAIT_MS * 1000000ULL;
	size_t open = shut;

	while (open && clock_mono_ns() < until) {
		drain(in);
		usleep(1000);
		open = reportconns_open(in->conns);
	}
	if (open)
		log_warn("ingest", "%s: %zu of %zu report connections not ended %d ms after being "
			 "shut down: closing the socket with them", in->url, open, shut,
			 INGEST_SHUT_WAIT_MS);
}

void ingest_stop(struct ingest *in)
{
	size_t shut;

	if (!in)
		return;
	atomic_store(&in->stopping, true);
	/* Ends the receive, waits for a completion under way, and refuses
	 * its re-arm. */
	nng_aio_stop(in->recv);
	/* The connections end by themselves before NNG closes anything
	 * (reportconns.h: a pipe closed under a receive never finishes, and
	 * nng_close() waits for it forever; nanomsg/nng#1543, #1813). */
	shut = reportconns_shut(in->conns);
	if (shut)
		wait_connections_end(in, shut);
	nng_listener_close(in->listener);
	/* No message left waiting either: libnng 1.5.2's nng_close() could
	 * wait forever for a pipe whose message nobody took. */
	drain(in);
	if (!close_bounded(in)) {
		/* The close may still touch the connection table (its pipe
		 * callbacks) and the aio: both stay, reachable, until exit. */
		in->next_hung = hung;
		hung = in;
		atomic_fetch_add(&hung_count, 1);
		return;
	}
	reportconns_stop(in->conns);
	nng_aio_free(in->recv);
	free(in);
}
