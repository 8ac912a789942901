/* Requests to the scorers (scorerclient.h). */
#include "scorerclient.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

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

/* Tries URLs first .. first + count - 1 in order. */
static int request(struct scorerclient *sc, size_t first, size_t count, const char *path,
		   const char *body, size_t len, size_t max, struct buf *out, long *code,
		   const char **url, char *why, size_t whylen)
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
	for (size_t i = first; i < first + count && i < sc->n_urls; i++) {
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
	return request(sc, 0, sc->n_urls, path, NULL, 0, max, out, code, url, why, whylen);
}

int scorerclient_post(struct scorerclient *sc, const char *path, const char *body, size_t len,
		      size_t max, struct buf *out, long *code, const char **url, char *why,
		      size_t whylen)
{
	return request(sc, 0, sc->n_urls, path, body, len, max, out, code, url, why, whylen);
}

/* "host" and "port" of "scheme://host:port" (IPv6 in brackets kept). */
static int split_url(const char *url, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *h = strstr(url, "://"), *end, *colon;
	bool https;

	if (!h)
		return -EINVAL;
	https = strncmp(url, "https", 5) == 0;
	h += 3;
	end = h + strcspn(h, "/");
	colon = *h == '[' ? strchr(h, ']') : h;
	colon = colon ? memchr(colon, ':', (size_t)(end - colon)) : NULL;
	if ((size_t)((colon ? colon : end) - h) >= hcap)
		return -EINVAL;
	snprintf(host, hcap, "%.*s", (int)((colon ? colon : end) - h), h);
	snprintf(port, pcap, "%.*s", colon ? (int)(end - colon - 1) : 0, colon ? colon + 1 : "");
	if (!port[0])
		snprintf(port, pcap, "%s", https ? "443" : "80");
	return 0;
}

static void tally(struct scorerclient_all *all, int rc, long code, const char *who,
		  const char *why, const struct buf *reply)
{
	size_t used = strlen(all->why);

	if (rc == 0 && code == 200) {
		all->accepted++;
		return;
	}
	if (rc == 0)
		all->refused++;
	else
		all->unreachable++;
	if (used == 0 && rc == 0)
		snprintf(all->why, sizeof(all->why), "%s answered %ld: %.*s", who, code,
			 (int)(reply->len < 200 ? reply->len : 200), reply->data ? reply->data : "");
	else if (used == 0)
		snprintf(all->why, sizeof(all->why), "%s", why);
}

int scorerclient_post_all(struct scorerclient *sc, const char *replicas_name, const char *path,
			  const char *body, size_t len, struct scorerclient_all *all)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	char host[256], port[16], addrs[SCORERCLIENT_REPLICAS_MAX][INET6_ADDRSTRLEN];
	struct buf reply;
	size_t n = 0;
	int rc;

	memset(all, 0, sizeof(*all));
	buf_init(&reply, 4096);
	if (!replicas_name || !replicas_name[0]) {
		/* Each URL is a replica. */
		for (size_t i = 0; i < sc->n_urls; i++) {
			char why[512];
			const char *url = "";
			long code = 0;

			all->replicas++;
			rc = request(sc, i, 1, path, body, len, 4096, &reply, &code, &url, why,
				     sizeof(why));
			tally(all, rc, code, sc->urls[i], why, &reply);
		}
		buf_free(&reply);
		return 0;
	}
	if (sc->n_urls == 0 || split_url(sc->urls[0], host, sizeof(host), port, sizeof(port))) {
		snprintf(all->why, sizeof(all->why), "no scorer URL to reach the replicas as");
		buf_free(&reply);
		return -EINVAL;
	}
	rc = getaddrinfo(replicas_name, NULL, &hints, &res);
	if (rc) {
		snprintf(all->why, sizeof(all->why), "%s does not resolve: %s", replicas_name,
			 gai_strerror(rc));
		buf_free(&reply);
		return -ENOENT;
	}
	for (ai = res; ai && n < SCORERCLIENT_REPLICAS_MAX; ai = ai->ai_next) {
		const void *a = ai->ai_family == AF_INET6 ?
			(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
			(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		char text[INET6_ADDRSTRLEN];
		bool seen = false;

		if (!inet_ntop(ai->ai_family, a, text, sizeof(text)))
			continue;
		for (size_t k = 0; k < n; k++)
			seen |= strcmp(addrs[k], text) == 0;
		if (!seen)
			snprintf(addrs[n++], sizeof(addrs[0]), "%s", text);
	}
	freeaddrinfo(res);
	for (size_t k = 0; k < n; k++) {
		char to[256 + 16 + INET6_ADDRSTRLEN + 8], why[512], who[1024];
		struct curl_slist *ct;
		const char *url = "";
		long code = 0;

		/* The first URL's host:port, connected to this replica. */
		snprintf(to, sizeof(to), strchr(addrs[k], ':') ? "%s:%s:[%s]:%s" : "%s:%s:%s:%s",
			 host, port, addrs[k], port);
		ct = curl_slist_append(NULL, to);
		if (!ct) {
			all->unreachable++;
			continue;
		}
		curl_easy_setopt(sc->curl, CURLOPT_CONNECT_TO, ct);
		all->replicas++;
		rc = request(sc, 0, 1, path, body, len, 4096, &reply, &code, &url, why, sizeof(why));
		curl_easy_setopt(sc->curl, CURLOPT_CONNECT_TO, NULL);
		curl_slist_free_all(ct);
		snprintf(who, sizeof(who), "%s (%s)", sc->urls[0], addrs[k]);
		tally(all, rc, code, who, why, &reply);
	}
	if (n == 0)
		snprintf(all->why, sizeof(all->why), "%s resolves to no address", replicas_name);
	buf_free(&reply);
	return 0;
}
