/* Requests to the scorers (scorerclient.h). */
#include "scorerclient.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

struct scorerclient {
	CURL *curl;
	char (*urls)[256];
	size_t n_urls;
	char ca[1024], cert[1024], key[1024];
	uint64_t timeout_ms;
	char errbuf[CURL_ERROR_SIZE];
	/* The transfer in progress. */
	struct buf *out;
	size_t max;
	bool too_big;
};

static size_t body_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct scorerclient *sc = ctx;

	if (sc->out->len + size * n > sc->max) {
		sc->too_big = true;
		return 0;
	}
	buf_append(sc->out, p, size * n);
	return buf_failed(sc->out) ? 0 : size * n;
}

struct scorerclient *scorerclient_create(const struct scorerclient_config *cfg, char *err,
					 size_t errlen)
{
	struct scorerclient *sc = calloc(1, sizeof(*sc));

	if (!sc || !(sc->urls = calloc(cfg->n_urls ? cfg->n_urls : 1, sizeof(*sc->urls)))) {
		free(sc);
		snprintf(err, errlen, "scorer client: out of memory");
		return NULL;
	}
	sc->curl = curl_easy_init();
	if (!sc->curl) {
		free(sc->urls);
		free(sc);
		snprintf(err, errlen, "scorer client: libcurl cannot start a transfer");
		return NULL;
	}
	memcpy(sc->urls, cfg->urls, cfg->n_urls * sizeof(*sc->urls));
	sc->n_urls = cfg->n_urls;
	snprintf(sc->ca, sizeof(sc->ca), "%s", cfg->ca ? cfg->ca : "");
	snprintf(sc->cert, sizeof(sc->cert), "%s", cfg->cert ? cfg->cert : "");
	snprintf(sc->key, sizeof(sc->key), "%s", cfg->key ? cfg->key : "");
	sc->timeout_ms = cfg->timeout_ms;
	curl_easy_setopt(sc->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(sc->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(sc->curl, CURLOPT_USERAGENT, "netsched-rebalancer");
	curl_easy_setopt(sc->curl, CURLOPT_ERRORBUFFER, sc->errbuf);
	curl_easy_setopt(sc->curl, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(sc->curl, CURLOPT_WRITEDATA, sc);
	curl_easy_setopt(sc->curl, CURLOPT_TIMEOUT_MS, (long)sc->timeout_ms);
	curl_easy_setopt(sc->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(sc->timeout_ms / 2 + 1));
	if (sc->ca[0])
		curl_easy_setopt(sc->curl, CURLOPT_CAINFO, sc->ca);
	if (sc->cert[0]) {
		curl_easy_setopt(sc->curl, CURLOPT_SSLCERT, sc->cert);
		curl_easy_setopt(sc->curl, CURLOPT_SSLKEY, sc->key);
	}
	return sc;
}

void scorerclient_destroy(struct scorerclient *sc)
{
	if (!sc)
		return;
	curl_easy_cleanup(sc->curl);
	free(sc->urls);
	free(sc);
}

static int request(struct scorerclient *sc, const char *path, const char *body, size_t len,
		   size_t max, struct buf *out, long *code, const char **url, char *why,
		   size_t whylen)
{
	struct curl_slist *hdrs = NULL;
	size_t used = 0;

	why[0] = '\0';
	if (body) {
		hdrs = curl_slist_append(NULL, "Content-Type: application/json");
		if (!hdrs) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < sc->n_urls; i++) {
		char u[256 + 1024];
		CURLcode cc;

		snprintf(u, sizeof(u), "%s%s", sc->urls[i], path);
		buf_reset(out);
		sc->out = out;
		sc->max = max;
		sc->too_big = false;
		sc->errbuf[0] = '\0';
		curl_easy_setopt(sc->curl, CURLOPT_URL, u);
		if (body) {
			curl_easy_setopt(sc->curl, CURLOPT_HTTPHEADER, hdrs);
			curl_easy_setopt(sc->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
			curl_easy_setopt(sc->curl, CURLOPT_POSTFIELDS, body);
		} else {
			curl_easy_setopt(sc->curl, CURLOPT_HTTPHEADER, NULL);
			curl_easy_setopt(sc->curl, CURLOPT_HTTPGET, 1L);
		}
		cc = curl_easy_perform(sc->curl);
		if (cc == CURLE_OK) {
			curl_easy_getinfo(sc->curl, CURLINFO_RESPONSE_CODE, code);
			*url = sc->urls[i];
			curl_easy_setopt(sc->curl, CURLOPT_HTTPHEADER, NULL);
			curl_slist_free_all(hdrs);
			return 0;
		}
		if (used < whylen)
			used += (size_t)snprintf(why + used, whylen - used, "%s%s: %s",
						 used ? "; " : "", sc->urls[i],
						 sc->too_big ? "reply larger than the bound" :
						 sc->errbuf[0] ? sc->errbuf : curl_easy_strerror(cc));
	}
	curl_easy_setopt(sc->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (!sc->n_urls)
		snprintf(why, whylen, "no scorer given");
	return -EIO;
}

int scorerclient_get(struct scorerclient *sc, const char *path, size_t max, struct buf *out,
		     long *code, const char **url, char *why, size_t whylen)
{
	return request(sc, path, NULL, 0, max, out, code, url, why, whylen);
}

int scorerclient_post(struct scorerclient *sc, const char *path, const char *body, size_t len,
		      size_t max, struct buf *out, long *code, const char **url, char *why,
		      size_t whylen)
{
	return request(sc, path, body, len, max, out, code, url, why, whylen);
}
