#include "podwatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "buf.h"
#include "clock.h"
#include "filter.h"
#include "inflight.h"
#include "json.h"
#include "kubepod.h"
#include "log.h"
#include "worker.h"

/* Bound pods that have not finished: what can carry traffic. A pod that
 * gets bound enters this selection, so the watch reports it as ADDED; one
 * that finishes or is deleted leaves it: DELETED. */
#define SELECTOR "fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded" \
		 "%2Cstatus.phase%21%3DFailed"
#define ERROR_BODY_MAX (64u * 1024u)
/* Tokens per byte of JSON are at most 1/2 (`[0,0,...`); a pod is about 1/8. */
#define TOKENS_FOR(bytes) ((bytes) / 4 + 64)
#define LOG_EVERY_NS (10 * NS_PER_SEC)

enum { WATCH_ENDED = 0, WATCH_EXPIRED = 1 };

struct podwatch {
	struct podwatch_config cfg;
	struct kubeaccess access;
	struct inflight *in;
	uint64_t (*now_ns)(void);
	struct worker *worker;
	CURL *curl;
	atomic_bool stopping;

	pthread_mutex_t lock;		/* guards st */
	struct podwatch_stats st;

	/* The watch thread's own state. */
	char rv[KUBEPOD_RV_MAX + 1];	/* resume from here; "" = list first */
	uint32_t page_pods;
	uint64_t backoff_ms;
	unsigned int seed;
	struct buf body;		/* a list page, an error body, or a watch line */
	bool body_over;			/* it would have passed its maximum */
	bool skipping;			/* inside a watch line over max_event_bytes */
	bool expired;			/* the watch said 410 */
	bool watching;			/* the transfer is a watch, not a list */
	bool failing;			/* the last round failed: log the recovery */
	char why[256];			/* what the last failed round hit */
	struct log_limit err_limit;
};

void podwatch_defaults(struct podwatch_config *cfg)
{
	cfg->page_pods = 500;
	cfg->max_page_bytes = 8u * 1024u * 1024u;
	cfg->max_event_bytes = 2u * 1024u * 1024u;
	cfg->watch_timeout_s = 300;
	cfg->backoff_min_ms = 500;
	cfg->backoff_max_ms = 30000;
	cfg->connect_timeout_ms = 5000;
}

/* ----------------------------------------------------------------- stats */

static void count(struct podwatch *w, uint64_t *field)
{
	pthread_mutex_lock(&w->lock);
	(*field)++;
	pthread_mutex_unlock(&w->lock);
}

static void set_synced(struct podwatch *w, bool on)
{
	pthread_mutex_lock(&w->lock);
	w->st.synced = on;
	pthread_mutex_unlock(&w->lock);
	inflight_set_confirming(w->in, on);
}

void podwatch_stats(struct podwatch *w, struct podwatch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	*out = w->st;
	pthread_mutex_unlock(&w->lock);
}

/* ------------------------------------------------------------------ body */

/* Appends to the body; false when it would pass its maximum (body_over) or
 * memory ran out. */
static bool body_add(struct podwatch *w, const char *p, size_t n)
{
	if (n > w->body.max - w->body.len)
		w->body_over = true;
	buf_append(&w->body, p, n);
	return !buf_failed(&w->body);
}

/* Empties the body for a new transfer of at most max bytes. A page's worth
 * of memory is not kept between rounds. */
static void body_reset(struct podwatch *w, size_t max)
{
	if (w->body.cap > 1024u * 1024u)
		buf_free(&w->body);
	buf_reset(&w->body);
	w->body.max = max;
	w->body_over = false;
}

/* -------------------------------------------------------- applying pods */

static uint64_t declared(const struct kubepod_str *v)
{
	uint64_t bps;

	/* A malformed annotation is the extender's to report (it sees the pod
	 * first); here it simply declares nothing. */
	return v->s && filter_parse_bandwidth(v->s, v->len, &bps) == 0 ? bps : 0;
}

/* The binding time on our monotonic clock. Kubernetes gives wall seconds;
 * a time in the future (clock skew) counts as now. */
static uint64_t bound_mono_ns(const struct kubepod *p, uint64_t now_ns)
{
	int64_t now_s = (int64_t)(clock_unix_ms() / 1000);
	uint64_t ago_ns;

	if (p->scheduled_unix_s <= 0 || p->scheduled_unix_s >= now_s)
		return now_ns;
	ago_ns = (uint64_t)(now_s - p->scheduled_unix_s) * NS_PER_SEC;
	return ago_ns < now_ns ? now_ns - ago_ns : 0;
}

static void apply(struct podwatch *w, enum kubepod_event_type type, const struct kubepod *p)
{
	char label[INFLIGHT_LABEL_MAX + 1];
	struct inflight_pod pod;
	uint64_t now;

	if (!p->uid.s || !p->uid.len)
		return;
	if (type == KUBEPOD_DELETED || p->finished) {
		inflight_drop(w->in, p->uid.s, p->uid.len);
		return;
	}
	if (!p->node.s || !p->node.len)
		return;
	snprintf(label, sizeof(label), "%.*s/%.*s", (int)p->ns.len, p->ns.s ? p->ns.s : "",
		 (int)p->name.len, p->name.s ? p->name.s : "");
	pod = (struct inflight_pod){ declared(&p->ingress), declared(&p->egress), label };
	now = w->now_ns();
	inflight_bound(w->in, p->uid.s, p->uid.len, p->node.s, p->node.len, &pod,
		       bound_mono_ns(p, now), now);
}

static void set_rv(struct podwatch *w, const struct kubepod_str *rv)
{
	if (rv->s && rv->len && rv->len <= KUBEPOD_RV_MAX) {
		memcpy(w->rv, rv->s, rv->len);
		w->rv[rv->len] = '\0';
	}
}

/* One line of the watch stream: one event. 0, or WATCH_EXPIRED. */
static int watch_line(struct podwatch *w, const char *line, size_t len)
{
	struct json doc = { 0 };
	struct kubepod_event ev;
	char err[256], reason[80], msg[200];
	int rc = 0;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return 0;
	if (json_parse(&doc, line, len, TOKENS_FOR(len), err, sizeof(err)) ||
	    kubepod_read_event(&doc, &ev, err, sizeof(err))) {
		count(w, &w->st.errors);
		log_limited(&w->err_limit, w->now_ns(), LOG_EVERY_NS, LOG_LVL_WARN, "podwatch",
			    "a watch event of %zu bytes is unreadable, skipped: %s", len, err);
		goto out;
	}
	if (ev.type == KUBEPOD_ERROR) {
		if (ev.status.code == 410) {
			rc = WATCH_EXPIRED;
			goto out;
		}
		count(w, &w->st.errors);
		log_limited(&w->err_limit, w->now_ns(), LOG_EVERY_NS, LOG_LVL_WARN, "podwatch",
			    "the watch sent an error: %lld %s: %s", (long long)ev.status.code,
			    log_printable(ev.status.reason.s, ev.status.reason.len, reason,
					  sizeof(reason)),
			    log_printable(ev.status.message.s, ev.status.message.len, msg,
					  sizeof(msg)));
		goto out;
	}
	if (ev.type != KUBEPOD_BOOKMARK) {
		apply(w, ev.type, &ev.pod);
		count(w, &w->st.events);
	}
	set_rv(w, &ev.pod.rv);
out:
	json_free(&doc);
	return rc;
}

/* ------------------------------------------------------------ transfers */

static long http_code(struct podwatch *w)
{
	long code = 0;

	curl_easy_getinfo(w->curl, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

static size_t page_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct podwatch *w = ctx;

	return body_add(w, p, size * n) ? size * n : 0;
}

static size_t watch_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct podwatch *w = ctx;
	size_t total = size * n, i = 0;

	if (http_code(w) != 200) /* an error's Status body */
		return page_cb(p, size, n, ctx);
	while (i < total) {
		const char *nl = memchr(p + i, '\n', total - i);
		size_t chunk = nl ? (size_t)(nl - (p + i)) : total - i;

		if (!w->skipping && !body_add(w, p + i, chunk)) {
			w->skipping = true;
			count(w, &w->st.skipped);
			log_limited(&w->err_limit, w->now_ns(), LOG_EVERY_NS, LOG_LVL_WARN,
				    "podwatch", "a watch event is larger than %zu bytes: skipped",
				    w->cfg.max_event_bytes);
		}
		i += chunk;
		if (!nl)
			break;
		i++; /* the newline */
		if (!w->skipping && watch_line(w, w->body.data, w->body.len) == WATCH_EXPIRED) {
			w->expired = true;
			return 0; /* ends the transfer */
		}
		w->skipping = false;
		buf_reset(&w->body);
	}
	return total;
}

/* The watch is in sync once its response starts: a quiet one may send
 * nothing for minutes. */
static size_t header_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct podwatch *w = ctx;

	if (w->watching && size * n == 2 && p[0] == '\r' && http_code(w) == 200)
		set_synced(w, true);
	return size * n;
}

static int progress_cb(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct podwatch *w = ctx;

	(void)a, (void)b, (void)c, (void)d;
	return atomic_load(&w->stopping) ? 1 : 0;
}

/* A GET of server + path. 0 with *code the HTTP status (the body went to
 * the write callback), or -EIO with w->why saying what failed. */
static int get(struct podwatch *w, const char *path, bool watch, long *code)
{
	char url[KUBEACCESS_URL_MAX + KUBEPOD_CONTINUE_MAX * 3 + 512];
	char token[KUBEACCESS_TOKEN_MAX], hdr[KUBEACCESS_TOKEN_MAX + 32];
	struct curl_slist *h = NULL, *t;
	CURLcode cc;
	int rc = -EIO;

	snprintf(url, sizeof(url), "%s%s", w->access.server, path);
	if (kubeaccess_token(&w->access, token, sizeof(token), w->why, sizeof(w->why)))
		return -EIO;
	h = curl_slist_append(h, "Accept: application/json");
	if (h && token[0]) {
		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", token);
		t = curl_slist_append(h, hdr);
		OPENSSL_cleanse(hdr, sizeof(hdr));
		h = t ? t : (curl_slist_free_all(h), NULL);
	}
	OPENSSL_cleanse(token, sizeof(token));
	if (!h) {
		snprintf(w->why, sizeof(w->why), "out of memory");
		return -ENOMEM;
	}
	curl_easy_setopt(w->curl, CURLOPT_URL, url);
	curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, watch ? watch_cb : page_cb);
	curl_easy_setopt(w->curl, CURLOPT_TIMEOUT_MS,
			 watch ? (long)(w->cfg.watch_timeout_s + 30) * 1000L : 60000L);
	w->skipping = false;
	w->expired = false;
	w->watching = watch;
	cc = curl_easy_perform(w->curl);
	*code = http_code(w);
	if (cc == CURLE_OK || (watch && w->expired))
		rc = 0;
	else if (cc == CURLE_WRITE_ERROR && w->body_over)
		snprintf(w->why, sizeof(w->why), "the reply is larger than %zu bytes",
			 w->body.max);
	else
		snprintf(w->why, sizeof(w->why), "%s", curl_easy_strerror(cc));
	curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	return rc;
}

/* What a failed request's Status says, for w->why. */
static void http_error(struct podwatch *w, const char *what, long code)
{
	struct json doc = { 0 };
	struct kubepod_status st;
	char err[128], msg[160] = "";

	if (w->body.len && json_parse(&doc, w->body.data, w->body.len, TOKENS_FOR(w->body.len),
				      err, sizeof(err)) == 0 &&
	    kubepod_read_status(&doc, &st, err, sizeof(err)) == 0)
		log_printable(st.message.s, st.message.len, msg, sizeof(msg));
	json_free(&doc);
	snprintf(w->why, sizeof(w->why), "%s: HTTP %ld%s%s", what, code, msg[0] ? ": " : "", msg);
}

/* Lists every bound pod, a page at a time, and applies each. 0 with w->rv
 * set; -EAGAIN to list again soon (a page too large: fewer pods a page; a
 * continue token expired); -EIO. */
static int list(struct podwatch *w)
{
	char path[KUBEPOD_CONTINUE_MAX * 3 + 256], cont[KUBEPOD_CONTINUE_MAX + 1] = "";
	char rv[KUBEPOD_RV_MAX + 1] = "", err[256];
	size_t pods = 0, pages = 0;
	long code;

	do {
		struct json doc = { 0 };
		struct kubepod_list l;
		struct kubepod p;
		char *esc = NULL;
		int rc;

		if (cont[0]) {
			esc = curl_easy_escape(w->curl, cont, 0);
			if (!esc)
				return -ENOMEM;
		}
		snprintf(path, sizeof(path), "/api/v1/pods?limit=%u&%s%s%s", w->page_pods,
			 SELECTOR, esc ? "&continue=" : "", esc ? esc : "");
		curl_free(esc);
		body_reset(w, w->cfg.max_page_bytes);
		rc = get(w, path, false, &code);
		if (rc && w->body_over && w->page_pods > 1) {
			w->page_pods = w->page_pods > 8 ? w->page_pods / 8 : 1;
			snprintf(w->why, sizeof(w->why), "a page of pods is larger than %zu bytes: "
				 "asking for %u a page", w->cfg.max_page_bytes, w->page_pods);
			return -EAGAIN;
		}
		if (rc)
			return rc;
		if (code == 410 && cont[0]) {
			snprintf(w->why, sizeof(w->why), "the list's continue token expired");
			return -EAGAIN;
		}
		if (code != 200) {
			http_error(w, "listing pods", code);
			return -EIO;
		}
		rc = json_parse(&doc, w->body.data, w->body.len, TOKENS_FOR(w->body.len), err,
				sizeof(err));
		if (!rc)
			rc = kubepod_read_list(&doc, &l, err, sizeof(err));
		if (rc) {
			json_free(&doc);
			snprintf(w->why, sizeof(w->why), "listing pods: the reply is not a pod list: %.180s",
				 err);
			return -EIO;
		}
		for (int it = kubepod_list_item(&doc, &l, -1); it >= 0;
		     it = kubepod_list_item(&doc, &l, it)) {
			if (kubepod_read(&doc, it, &p, err, sizeof(err))) {
				count(w, &w->st.errors);
				log_limited(&w->err_limit, w->now_ns(), LOG_EVERY_NS, LOG_LVL_WARN,
					    "podwatch", "a listed pod is unreadable, skipped: %s", err);
				continue;
			}
			apply(w, KUBEPOD_ADDED, &p);
			pods++;
		}
		memcpy(rv, l.rv.s, l.rv.len);
		rv[l.rv.len] = '\0';
		cont[0] = '\0';
		if (l.cont.s) {
			memcpy(cont, l.cont.s, l.cont.len);
			cont[l.cont.len] = '\0';
		}
		json_free(&doc);
		pages++;
	} while (cont[0] && !atomic_load(&w->stopping));
	if (atomic_load(&w->stopping))
		return -EINTR;
	memcpy(w->rv, rv, sizeof(rv));
	count(w, &w->st.lists);
	log_info("podwatch", "listed %zu bound pods in %zu page(s) from %s at resourceVersion %s; "
		 "watching from there", pods, pages, w->access.server, w->rv);
	return 0;
}

/* One watch, until the server ends it. WATCH_ENDED, WATCH_EXPIRED, -EIO. */
static int watch(struct podwatch *w)
{
	char path[512], *esc;
	long code;
	int rc;

	esc = curl_easy_escape(w->curl, w->rv, 0);
	if (!esc)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/api/v1/pods?watch=1&allowWatchBookmarks=true&"
		 "resourceVersion=%s&timeoutSeconds=%u&%s", esc, w->cfg.watch_timeout_s, SELECTOR);
	curl_free(esc);
	body_reset(w, w->cfg.max_event_bytes);
	count(w, &w->st.watches);
	rc = get(w, path, true, &code);
	if (rc)
		return rc;
	if (w->expired || code == 410)
		return WATCH_EXPIRED;
	if (code != 200) {
		http_error(w, "watching pods", code);
		return -EIO;
	}
	return WATCH_ENDED;
}

/* ---------------------------------------------------------------- thread */

static uint64_t backoff(struct podwatch *w)
{
	uint64_t ms = w->backoff_ms;

	w->backoff_ms = w->backoff_ms * 2 > w->cfg.backoff_max_ms ? w->cfg.backoff_max_ms
								   : w->backoff_ms * 2;
	/* Half to all of it, so replicas and restarts spread out. */
	return ms / 2 + (uint64_t)rand_r(&w->seed) % (ms / 2 + 1);
}

static uint64_t round_fn(void *ctx)
{
	struct podwatch *w = ctx;
	int rc = 0;

	if (atomic_load(&w->stopping))
		return 60000;
	if (!w->rv[0])
		rc = list(w);
	if (!rc)
		rc = watch(w);
	if (atomic_load(&w->stopping))
		return 60000;
	if (rc == WATCH_ENDED || rc == WATCH_EXPIRED || rc == -EAGAIN) {
		if (w->failing)
			log_info("podwatch", "the apiserver answers again: watching pods");
		w->failing = false;
		w->backoff_ms = w->cfg.backoff_min_ms;
		if (rc == WATCH_EXPIRED) {
			/* Events since w->rv are gone: only a new list is whole. */
			count(w, &w->st.expired);
			log_info("podwatch", "resourceVersion %s expired (410 Gone): listing pods "
				 "again", w->rv);
			w->rv[0] = '\0';
		} else if (rc == -EAGAIN) {
			log_info("podwatch", "%s: listing again", w->why);
			w->rv[0] = '\0';
			return w->cfg.backoff_min_ms;
		}
		return 0;
	}
	/* Failed: assumptions can no longer be confirmed, so none may expire. */
	set_synced(w, false);
	count(w, &w->st.errors);
	{
		uint64_t wait = backoff(w);

		if (!w->failing)
			log_warn("podwatch", "%s (%s): in-flight pods count where they were assumed "
				 "until the watch is back; retrying in %llu ms, backing off to %llu ms",
				 w->why, w->access.server, (unsigned long long)wait,
				 (unsigned long long)w->cfg.backoff_max_ms);
		else
			log_limited(&w->err_limit, w->now_ns(), LOG_EVERY_NS, LOG_LVL_WARN,
				    "podwatch", "still failing: %s; retrying in %llu ms", w->why,
				    (unsigned long long)wait);
		w->failing = true;
		return wait;
	}
}

static int setup_curl(struct podwatch *w)
{
	CURL *c = curl_easy_init();
	struct curl_blob blob;

	if (!c)
		return -ENOMEM;
	w->curl = c;
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "netsched-scorer");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)w->cfg.connect_timeout_ms);
	/* A watch is quiet for minutes: keepalives find a vanished peer. */
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
	if (w->access.insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (w->access.ca.data) {
		blob = (struct curl_blob){ w->access.ca.data, w->access.ca.len, CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	} else if (w->access.ca.file[0]) {
		curl_easy_setopt(c, CURLOPT_CAINFO, w->access.ca.file);
	}
	if (w->access.cert.data) {
		blob = (struct curl_blob){ w->access.cert.data, w->access.cert.len, CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
		blob = (struct curl_blob){ w->access.key.data, w->access.key.len, CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
	} else if (w->access.cert.file[0]) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, w->access.cert.file);
		curl_easy_setopt(c, CURLOPT_SSLKEY, w->access.key.file);
	}
	return 0;
}

struct podwatch *podwatch_start(const struct podwatch_config *cfg, struct kubeaccess *access,
				struct inflight *in, uint64_t (*now_ns)(void), char *err,
				size_t errlen)
{
	struct podwatch *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "pod watch: out of memory");
		return NULL;
	}
	w->cfg = *cfg;
	w->access = *access;
	memset(access, 0, sizeof(*access)); /* the PEM buffers are ours now */
	w->in = in;
	w->now_ns = now_ns;
	w->page_pods = cfg->page_pods ? cfg->page_pods : 500;
	w->backoff_ms = cfg->backoff_min_ms;
	w->seed = (unsigned int)clock_mono_ns();
	pthread_mutex_init(&w->lock, NULL);
	if (setup_curl(w)) {
		snprintf(err, errlen, "pod watch: libcurl cannot start a transfer");
		goto fail;
	}
	/* Nothing confirms an assumption until the first list is in. */
	inflight_set_confirming(in, false);
	w->worker = worker_start("pod watch", round_fn, w, 0, err, errlen);
	if (!w->worker)
		goto fail;
	return w;
fail:
	if (w->curl)
		curl_easy_cleanup(w->curl);
	kubeaccess_free(&w->access);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return NULL;
}

void podwatch_stop(struct podwatch *w)
{
	if (!w)
		return;
	atomic_store(&w->stopping, true);
	worker_stop(w->worker);
	curl_easy_cleanup(w->curl);
	kubeaccess_free(&w->access);
	buf_free(&w->body);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
