#include "prom/prom.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "bearertoken.h"
#include "buf.h"
#include "clock.h"
#include "counters/registry.h"
#include "log.h"
#include "membudget.h"
#include "worker.h"

/* A failing Prometheus is logged at the first failure, then once a minute. */
#define PROM_LOG_QUIET_NS (60ULL * NS_PER_SEC)

struct snapshot {
	uint64_t fetched_ns;	/* when the request that produced it was sent */
	struct promquery_result r;
};

struct prom {
	struct registry *counters;
	uint64_t (*now_ns)(void);
	struct prom_config cfg;
	char query[PROMQUERY_MAX_LEN];
	struct worker *refresher;
	unsigned failures;	/* in a row; the refresher's own */
	struct log_limit failure_log;
	pthread_mutex_t lock;	/* snap */
	struct snapshot *snap;
	CURL *curl;
};

static void snapshot_free(struct snapshot *sn)
{
	if (!sn)
		return;
	promquery_result_free(&sn->r);
	free(sn);
}

/* A reply as it arrives, its bytes charged to the budget first. */
struct reply_body {
	struct buf b;
	struct membudget *budget;	/* may be NULL */
	size_t charged;
	bool no_room;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct reply_body *r = arg;

	/* Returning less than given aborts the transfer: over the cap, or
	 * no room in the budget, stop. */
	if (!membudget_take(r->budget, &r->charged, size * n)) {
		r->no_room = true;
		return 0;
	}
	buf_append(&r->b, data, size * n);
	return buf_failed(&r->b) ? 0 : size * n;
}

/* Why a transfer stopped in on_body(). */
static void write_error(const struct reply_body *r, char *why, size_t len)
{
	if (r->no_room)
		snprintf(why, len, "no room for a reply over %zu bytes in the request memory "
			 "budget (%zu of %zu bytes in use, the reply's included): dropped",
			 r->b.len, membudget_used(r->budget), r->budget->limit);
	else
		snprintf(why, len, "reply over the size limit (%u bytes)", PROM_MAX_REPLY_BYTES);
}

/* One refresh: 0 and a new snapshot in *out, or -errno with why. */
static int refresh(struct prom *p, struct snapshot **out, char *why, size_t len)
{
	char url[PROM_URL_MAX + PROMQUERY_MAX_LEN * 3 + 32];
	char hdr[BEARERTOKEN_HEADER_MAX];
	struct curl_slist *headers = NULL;
	struct snapshot *sn = NULL;
	char *escaped = NULL;
	long status = 0;
	CURLcode cc;
	struct reply_body body = { .budget = p->cfg.budget };
	int rc = -EIO;

	buf_init(&body.b, PROM_MAX_REPLY_BYTES);
	escaped = curl_easy_escape(p->curl, p->query, 0);
	if (!escaped || (size_t)snprintf(url, sizeof(url), "%s/api/v1/query?query=%s", p->cfg.url,
					 escaped) >= sizeof(url)) {
		snprintf(why, len, "query URL too long");
		goto out;
	}
	/* Read again every time: Kubernetes rotates projected tokens. */
	if (p->cfg.token_file[0]) {
		rc = bearertoken_header_file(p->cfg.token_file, hdr, sizeof(hdr), why, len);
		if (rc)
			goto out;
		headers = curl_slist_append(NULL, hdr);
		OPENSSL_cleanse(hdr, sizeof(hdr));
		rc = -EIO;
		if (!headers) {
			snprintf(why, len, "out of memory");
			goto out;
		}
	}
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, &body);
	sn = calloc(1, sizeof(*sn));
	if (!sn) {
		rc = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto out;
	}
	sn->fetched_ns = p->now_ns();
	cc = curl_easy_perform(p->curl);
	if (cc == CURLE_WRITE_ERROR) {
		rc = body.no_room ? -EBUSY : -E2BIG;
		write_error(&body, why, len);
		goto out;
	}
	if (cc != CURLE_OK) {
		rc = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
		snprintf(why, len, "%s", curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	/* Prometheus answers errors (bad query, timeout) as JSON with 4xx/5xx:
	 * parse them for the message, but a non-200 is never data. */
	rc = promquery_parse_budget(body.b.data ? body.b.data : "", body.b.len,
				    promquery_node_label(&p->cfg.query), p->cfg.max_nodes,
				    p->cfg.budget, &sn->r, why, len);
	if (rc == 0 && status != 200) {
		snprintf(why, len, "HTTP status %ld", status);
		rc = -EBADMSG;
	} else if (rc && status != 200) {
		size_t k = strlen(why);

		snprintf(why + k, len - k, " (HTTP status %ld)", status);
	}
	if (rc)
		goto out;
	*out = sn;
	sn = NULL;
out:
	snapshot_free(sn);
	curl_slist_free_all(headers);
	curl_free(escaped);
	buf_free(&body.b);
	membudget_give(body.budget, &body.charged);
	return rc;
}

/* One refresh; the next comes after the interval, later while it fails. */
static uint64_t prom_refresh(void *arg)
{
	struct prom *p = arg;
	struct snapshot *sn = NULL, *old = NULL;
	uint64_t start = clock_mono_ns(), wait_ms;
	char why[512] = "";
	int rc;

	rc = refresh(p, &sn, why, sizeof(why));
	registry_observe(&p->counters->latency_prometheus, clock_mono_ns() - start);
	if (rc) {
		atomic_fetch_add(&p->counters->prom_failures, 1);
		p->failures++;
		/* Back off while it fails: 2x, 3x, 4x the interval. */
		wait_ms = p->cfg.refresh_ms * (p->failures < 4 ? p->failures + 1 : 4);
		log_limited(&p->failure_log, clock_mono_ns(), PROM_LOG_QUIET_NS, LOG_LVL_WARN, "prom",
			    "%s: refresh failed (%u in a row): %s; next try in %llu ms, last good "
			    "data kept until it is %llu ms old", p->cfg.url, p->failures, why,
			    (unsigned long long)wait_ms, (unsigned long long)p->cfg.max_age_ms);
		return wait_ms;
	}
	if (p->failures)
		log_info("prom", "%s: refreshing again after %u failures", p->cfg.url, p->failures);
	log_debug("prom", "%s: %zu nodes, %zu values dropped, %.1f ms", p->cfg.url, sn->r.n,
		  sn->r.dropped, (double)(clock_mono_ns() - start) / 1e6);
	p->failures = 0;
	pthread_mutex_lock(&p->lock);
	old = p->snap;
	p->snap = sn;
	pthread_mutex_unlock(&p->lock);
	/* Counted once served: a reader that sees the count sees the data. */
	atomic_fetch_add(&p->counters->prom_values_dropped, sn->r.dropped);
	atomic_fetch_add(&p->counters->prom_refreshes, 1);
	snapshot_free(old);
	return p->cfg.refresh_ms;
}

struct prom *prom_start(const struct prom_config *cfg, struct registry *counters,
			uint64_t (*now_ns)(void), char *err, size_t errlen)
{
	struct prom *p;
	char why[256];

	if (strncmp(cfg->url, "http://", 7) && strncmp(cfg->url, "https://", 8)) {
		snprintf(err, errlen, "prometheus %s: expected an http:// or https:// URL", cfg->url);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "prometheus: out of memory");
		return NULL;
	}
	p->counters = counters;
	p->now_ns = now_ns;
	p->cfg = *cfg;
	/* A trailing slash would make ".../api/v1/query" start with "//". */
	while (strlen(p->cfg.url) > 8 && p->cfg.url[strlen(p->cfg.url) - 1] == '/')
		p->cfg.url[strlen(p->cfg.url) - 1] = '\0';
	if (promquery_build(&cfg->query, p->query, sizeof(p->query), why, sizeof(why))) {
		snprintf(err, errlen, "prometheus query: %s", why);
		free(p);
		return NULL;
	}
	p->curl = curl_easy_init();
	if (!p->curl) {
		snprintf(err, errlen, "prometheus: libcurl cannot start");
		free(p);
		return NULL;
	}
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(p->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "netsched-scorer");
	curl_easy_setopt(p->curl, CURLOPT_ACCEPT_ENCODING, "");
	if (cfg->ca_file[0])
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->insecure) {
		curl_easy_setopt(p->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(p->curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	pthread_mutex_init(&p->lock, NULL);
	p->refresher = worker_start("prometheus: the refresh", prom_refresh, p, 0, err, errlen);
	if (!p->refresher) {
		curl_easy_cleanup(p->curl);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	log_info("prom", "fallback for silent agents: %s every %llu ms: %s", p->cfg.url,
		 (unsigned long long)cfg->refresh_ms, p->query);
	return p;
}

void prom_stop(struct prom *p)
{
	if (!p)
		return;
	worker_stop(p->refresher);
	curl_easy_cleanup(p->curl);
	snapshot_free(p->snap);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static const struct snapshot *fresh(const struct prom *p, uint64_t now_ns, uint64_t *age_ns)
{
	uint64_t age;

	if (!p->snap)
		return NULL;
	age = now_ns > p->snap->fetched_ns ? now_ns - p->snap->fetched_ns : 0;
	if (age > p->cfg.max_age_ms * NS_PER_MS)
		return NULL;
	if (age_ns)
		*age_ns = age;
	return p->snap;
}

bool prom_get(struct prom *p, const char *node, size_t len, uint64_t now_ns, uint64_t *rx,
	      uint64_t *tx, uint64_t *age_ns)
{
	const struct snapshot *sn;
	size_t lo = 0, hi;
	bool found = false;

	if (!p || len > NODENAME_MAX_LEN)
		return false;
	pthread_mutex_lock(&p->lock);
	sn = fresh(p, now_ns, age_ns);
	hi = sn ? sn->r.n : 0;
	while (lo < hi) { /* values are sorted by node */
		size_t mid = lo + (hi - lo) / 2;
		const char *name = sn->r.values[mid].node;
		int c = strncmp(name, node, len);

		if (c == 0 && name[len] != '\0')
			c = 1;
		if (c == 0) {
			*rx = sn->r.values[mid].rx_bytes_per_second;
			*tx = sn->r.values[mid].tx_bytes_per_second;
			found = true;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	pthread_mutex_unlock(&p->lock);
	return found;
}

size_t prom_nodes(struct prom *p, uint64_t now_ns, char (*names)[NODENAME_MAX_LEN + 1],
		  size_t cap)
{
	const struct snapshot *sn;
	size_t n = 0;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	sn = fresh(p, now_ns, NULL);
	if (sn) {
		n = sn->r.n;
		for (size_t i = 0; i < n && i < cap; i++)
			memcpy(names[i], sn->r.values[i].node, sizeof(names[i]));
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}
