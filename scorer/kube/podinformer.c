#include "kube/podinformer.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h> /* curl_easy_escape() alone: no transfer happens here */

#include "buf.h"
#include "clock.h"
#include "pods/inflight.h"
#include "json.h"
#include "log.h"
#include "pods/moves.h"
#include "parse/podlabel.h"
#include "pods/podindex.h"
#include "pods/podweight.h"
#include "units.h"

/* Bound pods that have not finished: what can carry traffic. A pod that
 * gets bound enters this selection, so the watch reports it as ADDED; one
 * that finishes or is deleted leaves it: DELETED. */
#define SELECTOR "fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded" \
		 "%2Cstatus.phase%21%3DFailed"
/* Tokens per byte of JSON are at most 1/2 (`[0,0,...`); a pod is about 1/8. */
#define TOKENS_FOR(bytes) ((bytes) / 4 + 64)
#define LIST_TIMEOUT_MS 60000u
/* How long a watch may outlive its server-side end before the client gives
 * up on it: the server's clock and queue may run a little late. */
#define WATCH_GRACE_MS 30000u

struct podinformer {
	struct podinformer_config cfg;
	char server[PODINFORMER_SERVER_MAX];
	struct inflight *in;
	uint64_t (*now_ns)(void);
	uint64_t (*unix_ms)(void);

	pthread_mutex_t lock;		/* st */
	struct podinformer_stats st;
	/* Bound pods go here too, and weigh what it says (may be NULL). */
	struct podindex *index;
	const struct podweight *weights;
	struct moves *moves;		/* reservations bound pods land on (may be NULL) */

	/* Where the protocol is. */
	char rv[KUBEPOD_RV_MAX + 1];		/* watch from here; "" = list first */
	char cont[KUBEPOD_CONTINUE_MAX + 1];	/* the list's next page; "" = its first */
	char list_rv[KUBEPOD_RV_MAX + 1];	/* the list's version, from its last page */
	uint32_t page_pods;
	size_t list_pods, list_pages;
	/* Why the list started over, for its line: the page sizes that were
	 * too large ("500, 62"), a continue token that expired. */
	char shrunk[64];
	bool cont_expired;

	/* The request in progress. */
	enum podinformer_verb verb;
	long code;				/* 0 until the response starts */
	uint64_t started_ns;
	struct buf body;			/* a list page, an error body or one watch line */
	bool over;				/* the body passed its bound */
	bool skipping;				/* inside a watch line over max_event_bytes */
	bool gone;				/* the watch stream said 410 */
	uint64_t progress;			/* events and bookmarks this watch applied */

	/* Backoff. */
	uint64_t backoff_ms;			/* the next wait, before jitter */
	unsigned int seed;
	unsigned int gone_in_row;		/* 410s since the last progress */
	bool failing;				/* a request failed since the last answer */
	struct log_limit log;			/* every line of the watch */
};

void podinformer_defaults(struct podinformer_config *cfg)
{
	cfg->page_pods = 500;
	cfg->max_page_bytes = 8u * 1024u * 1024u;
	cfg->max_event_bytes = 2u * 1024u * 1024u;
	cfg->watch_timeout_s = 300;
	cfg->backoff_min_ms = 500;
	cfg->backoff_max_ms = 30000;
}

/* One line of the watch's log, at most one a second (log.h). */
static void say(struct podinformer *pi, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct podinformer *pi, enum log_level level, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_limited(&pi->log, pi->now_ns(), NS_PER_SEC, level, "podwatch", "%s", line);
}

/* ----------------------------------------------------------------- stats */

static void count(struct podinformer *pi, uint64_t *field)
{
	pthread_mutex_lock(&pi->lock);
	(*field)++;
	pthread_mutex_unlock(&pi->lock);
}

static void set_synced(struct podinformer *pi, bool on)
{
	pthread_mutex_lock(&pi->lock);
	pi->st.synced = on;
	pthread_mutex_unlock(&pi->lock);
	inflight_set_confirming(pi->in, on);
}

void podinformer_stats(struct podinformer *pi, struct podinformer_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pi)
		return;
	pthread_mutex_lock(&pi->lock);
	*out = pi->st;
	pthread_mutex_unlock(&pi->lock);
}

/* ------------------------------------------------------------ lifecycle */

struct podinformer *podinformer_create(const struct podinformer_config *cfg, const char *server,
				       struct inflight *in, uint64_t (*now_ns)(void),
				       uint64_t (*unix_ms)(void), unsigned int seed)
{
	struct podinformer *pi = calloc(1, sizeof(*pi));

	if (!pi)
		return NULL;
	pi->cfg = *cfg;
	snprintf(pi->server, sizeof(pi->server), "%s", server);
	pi->in = in;
	pi->now_ns = now_ns;
	pi->unix_ms = unix_ms;
	pi->page_pods = cfg->page_pods ? cfg->page_pods : 500;
	pi->backoff_ms = cfg->backoff_min_ms;
	pi->seed = seed;
	buf_init(&pi->body, cfg->max_page_bytes);
	pthread_mutex_init(&pi->lock, NULL);
	/* Nothing confirms an assumption until the first list is in. */
	inflight_set_confirming(in, false);
	return pi;
}

void podinformer_set_index(struct podinformer *pi, struct podindex *index,
			   const struct podweight *weights)
{
	pi->index = index;
	pi->weights = weights;
}

void podinformer_set_moves(struct podinformer *pi, struct moves *moves)
{
	pi->moves = moves;
}

/* A pod bound where the rebalancer reserved room for its workload: the
 * reservation has landed (moves.h). */
static void landed(struct podinformer *pi, const struct kubepod *p, uint64_t bound_ns, uint64_t now)
{
	char label[WORKLOAD_LABEL_MAX + 1];
	struct workload_key k;

	if (!pi->moves || workload_key_of(&p->ns, &p->owner, &p->name, &k))
		return;
	workload_label(&k, label, sizeof(label));
	moves_bound(pi->moves, p->uid.s, p->uid.len, p->node.s, p->node.len, label, strlen(label),
		    bound_ns, now);
}

void podinformer_destroy(struct podinformer *pi)
{
	if (!pi)
		return;
	buf_free(&pi->body);
	pthread_mutex_destroy(&pi->lock);
	free(pi);
}

/* -------------------------------------------------------- applying pods */

static uint64_t declared(const struct kubepod_str *v, const struct bwannot_key *k)
{
	uint64_t bps;

	/* A malformed annotation is the extender's to report (it sees the pod
	 * first); here it simply declares nothing. */
	return v->s && bwannot_parse(k, v->s, v->len, &bps) == 0 ? bps : 0;
}

/* The binding time on our monotonic clock. Kubernetes gives wall seconds;
 * a time in the future (clock skew) counts as now. */
static uint64_t bound_mono_ns(struct podinformer *pi, const struct kubepod *p, uint64_t now_ns)
{
	int64_t now_s = (int64_t)(pi->unix_ms() / 1000);
	uint64_t ago_ns;

	if (p->scheduled_unix_s <= 0 || p->scheduled_unix_s >= now_s)
		return now_ns;
	ago_ns = (uint64_t)(now_s - p->scheduled_unix_s) * NS_PER_SEC;
	return ago_ns < now_ns ? now_ns - ago_ns : 0;
}

/* A reason as received into out, printable and NUL-terminated ("": none). */
static void copy_printable(char *out, size_t cap, const struct kubepod_str *v)
{
	if (v->s && v->len)
		log_printable(v->s, v->len, out, cap);
	else
		out[0] = '\0';
}

static void apply(struct podinformer *pi, enum kubepod_event_type type, const struct kubepod *p)
{
	char label[INFLIGHT_LABEL_MAX + 1], waiting[32];
	struct inflight_binding b;
	struct inflight_pod pod;
	struct podweight_pod pw;
	struct workload_key key;
	bool has_key;
	uint64_t now;

	if (!p->uid.len)
		return;
	now = pi->now_ns();
	if (type == KUBEPOD_DELETED || p->finished) {
		inflight_drop(pi->in, p->uid.s, p->uid.len);
		if (pi->index)
			podindex_remove(pi->index, p->uid.s, p->uid.len, now);
		return;
	}
	if (!p->node.s || !p->node.len)
		return;
	/* Its workload, once for the index and for its weight. */
	has_key = !workload_key_of(&p->ns, &p->owner, &p->name, &key);
	if (pi->index)
		podindex_update_keyed(pi->index, p, has_key ? &key : NULL, now, pi->unix_ms());
	podlabel_format(p->ns.s, p->ns.len, p->name.s, p->name.len, label, sizeof(label));
	pw = (struct podweight_pod){ declared(&p->ingress, p->ingress_key),
				     declared(&p->egress, p->egress_key), &p->ns, &p->name,
				     &p->owner, label };
	podweight_of_keyed(pi->weights, &pw, has_key ? &key : NULL, &pod, NULL, NULL);
	/* Whether it can run, and what its node's link lets it weigh
	 * (inflight.h: "never starts"). */
	copy_printable(waiting, sizeof(waiting), &p->waiting);
	b = (struct inflight_binding){
		.uid = p->uid.s,
		.uid_len = p->uid.len,
		.node = { p->node.s, p->node.len, podindex_node_link(pi->index, p->node.s, p->node.len) },
		.bound_ns = bound_mono_ns(pi, p, now),
		.started = p->started,
		.waiting = waiting[0] ? waiting : NULL,
	};
	inflight_bound_run(pi->in, &b, &pod, now);
	landed(pi, p, b.bound_ns, now);
}

/* A version or continue token; kubepod.h bounds them below cap. */
static void copy_str(char *out, size_t cap, const struct kubepod_str *v)
{
	size_t n = v->s && v->len < cap ? v->len : 0;

	if (n)
		memcpy(out, v->s, n);
	out[n] = '\0';
}

/* ----------------------------------------------------------- the stream */

/* One line of the watch stream: one event. Returns whether it was a 410. */
static bool watch_line(struct podinformer *pi, const char *line, size_t len)
{
	struct json doc = { 0 };
	struct kubepod_event ev;
	char err[256], reason[80], msg[200];
	bool gone = false;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return false;
	/* The event's pod is its "object", at depth 1. */
	if (json_parse_shallow(&doc, line, len, TOKENS_FOR(len), 1 + KUBEPOD_DEPTH, NULL, err,
			       sizeof(err)) ||
	    kubepod_read_event(&doc, &ev, err, sizeof(err))) {
		count(pi, &pi->st.errors);
		say(pi, LOG_LVL_WARN, "a watch event of %zu bytes is unreadable, skipped: %s", len, err);
		goto out;
	}
	if (ev.type == KUBEPOD_ERROR) {
		gone = ev.status.code == 410;
		if (gone)
			goto out;
		count(pi, &pi->st.errors);
		say(pi, LOG_LVL_WARN, "the watch sent an error: %lld %s: %s", (long long)ev.status.code,
		    log_printable(ev.status.reason.s, ev.status.reason.len, reason, sizeof(reason)),
		    log_printable(ev.status.message.s, ev.status.message.len, msg, sizeof(msg)));
		goto out;
	}
	if (ev.type != KUBEPOD_BOOKMARK) {
		apply(pi, ev.type, &ev.pod);
		count(pi, &pi->st.events);
	}
	if (ev.pod.rv.s && ev.pod.rv.len)
		copy_str(pi->rv, sizeof(pi->rv), &ev.pod.rv);
	pi->progress++;
out:
	json_free(&doc);
	return gone;
}

static bool watch_bytes(struct podinformer *pi, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t chunk = nl ? (size_t)(nl - (p + i)) : n - i;

		if (!pi->skipping && chunk > pi->body.max - pi->body.len) {
			pi->skipping = true;
			buf_reset(&pi->body);
			count(pi, &pi->st.skipped);
			say(pi, LOG_LVL_WARN, "a watch event is larger than %zu bytes: skipped",
			    pi->cfg.max_event_bytes);
		}
		if (!pi->skipping)
			buf_append(&pi->body, p + i, chunk);
		i += chunk;
		if (!nl)
			break;
		i++; /* the newline */
		if (!pi->skipping && !buf_failed(&pi->body) &&
		    watch_line(pi, pi->body.data, pi->body.len)) {
			pi->gone = true;
			return false; /* ends the transfer: only a new list is whole */
		}
		pi->skipping = false;
		buf_reset(&pi->body);
	}
	return true;
}

/* ------------------------------------------------------------- requests */

/* Empties the body for a transfer of at most max bytes. A page's worth of
 * memory is not kept between requests. */
static void body_reset(struct podinformer *pi, size_t max)
{
	if (pi->body.cap > 1024u * 1024u)
		buf_free(&pi->body);
	buf_reset(&pi->body);
	pi->body.max = max;
}

int podinformer_next(struct podinformer *pi, struct podinformer_request *req)
{
	const char *from = pi->rv[0] ? pi->rv : pi->cont;
	char *esc = NULL;

	pi->code = 0;
	pi->over = pi->skipping = pi->gone = false;
	pi->progress = 0;
	pi->started_ns = pi->now_ns();
	if (from[0]) {
		esc = curl_easy_escape(NULL, from, 0);
		if (!esc)
			return -ENOMEM;
	}
	if (!pi->rv[0]) {
		pi->verb = PODINFORMER_LIST;
		snprintf(req->path, sizeof(req->path), "/api/v1/pods?limit=%u&%s%s%s", pi->page_pods,
			 SELECTOR, esc ? "&continue=" : "", esc ? esc : "");
		req->timeout_ms = LIST_TIMEOUT_MS;
		body_reset(pi, pi->cfg.max_page_bytes);
	} else {
		pi->verb = PODINFORMER_WATCH;
		snprintf(req->path, sizeof(req->path), "/api/v1/pods?watch=1&allowWatchBookmarks=true&"
			 "resourceVersion=%s&timeoutSeconds=%u&%s", esc, pi->cfg.watch_timeout_s,
			 SELECTOR);
		req->timeout_ms = (uint64_t)pi->cfg.watch_timeout_s * 1000u + WATCH_GRACE_MS;
		body_reset(pi, pi->cfg.max_event_bytes);
		count(pi, &pi->st.watches);
	}
	req->verb = pi->verb;
	curl_free(esc);
	return 0;
}

void podinformer_status(struct podinformer *pi, long code)
{
	pi->code = code;
	if (code != 200) {
		/* A Status body, kept for its message. */
		pi->body.max = PODINFORMER_ERROR_BODY_MAX;
		return;
	}
	if (pi->failing)
		say(pi, LOG_LVL_INFO, "the apiserver answers again: %s pods", pi->verb == PODINFORMER_LIST
		    ? "listing" : "watching");
	pi->failing = false;
	/* In sync once the watch's response starts: a quiet one may send
	 * nothing for minutes. */
	if (pi->verb == PODINFORMER_WATCH)
		set_synced(pi, true);
}

bool podinformer_body(struct podinformer *pi, const char *p, size_t n)
{
	if (pi->verb == PODINFORMER_WATCH && pi->code == 200)
		return watch_bytes(pi, p, n);
	if (pi->over)
		return false;
	if (n > pi->body.max - pi->body.len) {
		pi->over = true;
		/* An error body is only read for its message: the start will do. */
		if (pi->code != 200) {
			buf_append(&pi->body, p, pi->body.max - pi->body.len);
			return true;
		}
		return false;
	}
	buf_append(&pi->body, p, n);
	return !buf_failed(&pi->body);
}

/* ---------------------------------------------------------------- endings */

/* A round without progress: the wait before the next, then twice that. */
static uint64_t retry(struct podinformer *pi)
{
	uint64_t ms = pi->backoff_ms;

	pi->backoff_ms = ms * 2 < pi->cfg.backoff_max_ms ? ms * 2 : pi->cfg.backoff_max_ms;
	/* Nothing is watched while it waits: nothing may expire. */
	set_synced(pi, false);
	/* Half to all of it, so replicas and restarts spread out. */
	return ms / 2 + (uint64_t)rand_r(&pi->seed) % (ms / 2 + 1);
}

/* A failed request: counted, logged, and retried after a backoff. */
static uint64_t failed(struct podinformer *pi, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static uint64_t failed(struct podinformer *pi, const char *fmt, ...)
{
	char why[512];
	uint64_t wait;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	count(pi, &pi->st.errors);
	wait = retry(pi);
	if (!pi->failing)
		say(pi, LOG_LVL_WARN, "%s (%s): in-flight pods count where they were assumed until the "
		    "watch is back; retrying in %llu ms, backing off to %llu ms", why, pi->server,
		    (unsigned long long)wait, (unsigned long long)pi->cfg.backoff_max_ms);
	else
		say(pi, LOG_LVL_WARN, "still failing: %s; retrying in %llu ms", why,
		    (unsigned long long)wait);
	pi->failing = true;
	return wait;
}

/* What a failed request's Status says. */
static void http_error(struct podinformer *pi, const char *what, char *out, size_t cap)
{
	struct json doc = { 0 };
	struct kubepod_status st;
	char err[128], msg[160] = "";

	if (pi->body.len && json_parse(&doc, pi->body.data, pi->body.len,
				       TOKENS_FOR(pi->body.len), err, sizeof(err)) == 0 &&
	    kubepod_read_status(&doc, &st, err, sizeof(err)) == 0)
		log_printable(st.message.s, st.message.len, msg, sizeof(msg));
	json_free(&doc);
	snprintf(out, cap, "%s: HTTP %ld%s%s", what, pi->code, msg[0] ? ": " : "", msg);
}

/* The list starts over from its first page, after a wait (retry()). Said
 * in the line of the list once whole: a line now would hold back that one. */
static uint64_t list_again(struct podinformer *pi, const char *why)
{
	log_debug("podwatch", "%s: listing again", why);
	pi->cont[0] = '\0';
	pi->list_pods = pi->list_pages = 0;
	return retry(pi);
}

/* Applies one page; 0 or -EBADMSG with err. */
static int list_page(struct podinformer *pi, char *err, size_t errlen)
{
	struct json doc = { 0 };
	struct kubepod_list l;
	struct kubepod p;
	char why[256];
	int rc;

	/* The pods are the items, at depth 2. */
	rc = json_parse_shallow(&doc, pi->body.data ? pi->body.data : "", pi->body.len,
				TOKENS_FOR(pi->body.len), 2 + KUBEPOD_DEPTH, NULL, why, sizeof(why));
	if (!rc)
		rc = kubepod_read_list(&doc, &l, why, sizeof(why));
	if (rc) {
		json_free(&doc);
		snprintf(err, errlen, "listing pods: the reply is not a pod list: %.180s", why);
		return -EBADMSG;
	}
	if (pi->list_pages == 0 && pi->index)
		podindex_list_begin(pi->index);
	for (int it = kubepod_list_item(&doc, &l, -1); it >= 0; it = kubepod_list_item(&doc, &l, it)) {
		if (kubepod_read(&doc, it, &p, why, sizeof(why))) {
			count(pi, &pi->st.errors);
			say(pi, LOG_LVL_WARN, "a listed pod is unreadable, skipped: %s", why);
			continue;
		}
		apply(pi, KUBEPOD_ADDED, &p);
		pi->list_pods++;
	}
	copy_str(pi->list_rv, sizeof(pi->list_rv), &l.rv);
	copy_str(pi->cont, sizeof(pi->cont), &l.cont);
	pi->list_pages++;
	json_free(&doc);
	return 0;
}

static uint64_t list_end(struct podinformer *pi, int rc, const char *why)
{
	char err[512];
	size_t k = strlen(pi->shrunk);

	if (pi->over && pi->code == 200 && pi->page_pods > 1) {
		snprintf(pi->shrunk + k, sizeof(pi->shrunk) - k, "%s%u", k ? ", " : "", pi->page_pods);
		pi->page_pods = pi->page_pods > 8 ? pi->page_pods / 8 : 1;
		return list_again(pi, "a page was larger than the bytes a page may have");
	}
	if (pi->over && pi->code == 200) {
		snprintf(err, sizeof(err), "listing pods: a page of one pod is larger than %zu bytes",
			 pi->cfg.max_page_bytes);
		rc = -E2BIG;
	} else if (rc) {
		snprintf(err, sizeof(err), "listing pods: %s", why);
	} else if (pi->code == 410 && pi->cont[0]) {
		pi->cont_expired = true;
		return list_again(pi, "the list's continue token expired");
	} else if (pi->code != 200) {
		http_error(pi, "listing pods", err, sizeof(err));
	} else {
		rc = list_page(pi, err, sizeof(err));
	}
	if (rc || pi->code != 200) {
		pi->cont[0] = '\0';
		pi->list_pods = pi->list_pages = 0;
		return failed(pi, "%s", err);
	}
	if (pi->cont[0] && pi->list_pages > PODINFORMER_MAX_LIST_PODS / pi->page_pods) {
		snprintf(err, sizeof(err), "listing pods: still a continue token after %zu pages of "
			 "up to %u pods, more than a cluster holds (%u)", pi->list_pages,
			 pi->page_pods, PODINFORMER_MAX_LIST_PODS);
		pi->cont[0] = '\0';
		pi->list_pods = pi->list_pages = 0;
		return failed(pi, "%s", err);
	}
	if (pi->cont[0])
		return 0; /* the next page at once */
	memcpy(pi->rv, pi->list_rv, sizeof(pi->rv));
	count(pi, &pi->st.lists);
	if (pi->index)
		podindex_list_end(pi->index, pi->now_ns());
	if (pi->shrunk[0])
		snprintf(err, sizeof(err), " (pages of %s pods were larger than %zu bytes: asking for "
			 "%u a page)", pi->shrunk, pi->cfg.max_page_bytes, pi->page_pods);
	else
		err[0] = '\0';
	/* Within a run of 410s, each round's line is the 410's, with its wait. */
	if (pi->gone_in_row >= 2)
		log_debug("podwatch", "listed %zu bound pods again at resourceVersion %s",
			  pi->list_pods, pi->rv);
	else
		say(pi, LOG_LVL_INFO, "listed %zu bound pods in %zu page(s) from %s at "
		    "resourceVersion %s; watching from there%s%s", pi->list_pods, pi->list_pages,
		    pi->server, pi->rv, err,
		    pi->cont_expired ? " (a continue token expired: the list started over)" : "");
	pi->shrunk[0] = '\0';
	pi->cont_expired = false;
	pi->list_pods = pi->list_pages = 0;
	return 0;
}

static uint64_t watch_end(struct podinformer *pi, int rc, const char *why)
{
	uint64_t lasted_ms = (pi->now_ns() - pi->started_ns) / NS_PER_MS, wait;
	char err[512], rv[KUBEPOD_RV_MAX + 1];

	/* Progress: it moved the version, or it was open as long as the
	 * longest wait, which costs no more than a backed-off retry. */
	if (pi->progress || lasted_ms >= pi->cfg.backoff_max_ms) {
		pi->backoff_ms = pi->cfg.backoff_min_ms;
		pi->gone_in_row = 0;
	}
	if (pi->gone || pi->code == 410) {
		/* Events since pi->rv are gone: only a new list is whole. */
		count(pi, &pi->st.expired);
		memcpy(rv, pi->rv, sizeof(rv));
		pi->rv[0] = '\0';
		if (++pi->gone_in_row == 1) {
			say(pi, LOG_LVL_INFO, "resourceVersion %s expired (410 Gone): listing pods again",
			    rv);
			return 0;
		}
		wait = retry(pi);
		say(pi, LOG_LVL_WARN, "resourceVersion %s expired (410 Gone), %u times without an event "
		    "in between: listing pods again in %llu ms", rv, pi->gone_in_row,
		    (unsigned long long)wait);
		return wait;
	}
	if (rc)
		return failed(pi, "watching pods: %s", why);
	if (pi->code != 200) {
		http_error(pi, "watching pods", err, sizeof(err));
		return failed(pi, "%s", err);
	}
	if (pi->progress || lasted_ms >= pi->cfg.backoff_max_ms)
		return 0; /* the server ended it: resume at once */
	wait = retry(pi);
	say(pi, LOG_LVL_WARN, "the watch ended after %llu ms without an event: watching again in "
	    "%llu ms", (unsigned long long)lasted_ms, (unsigned long long)wait);
	return wait;
}

uint64_t podinformer_end(struct podinformer *pi, int rc, const char *why)
{
	return pi->verb == PODINFORMER_LIST ? list_end(pi, rc, why ? why : "")
					    : watch_end(pi, rc, why ? why : "");
}
