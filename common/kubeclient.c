#include "kubeclient.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "bearertoken.h"

/* Longer paths are refused: the pod watch's longest (a 4 KiB continue
 * token, escaped) is under 13 KiB. */
#define KUBECLIENT_PATH_MAX 16384u

struct kubeclient {
	struct kubeaccess access;
	CURL *curl;
	atomic_bool cancelled;
	/* The transfer in progress. */
	const struct kubeclient_handler *h;
	bool answered;		/* h->status was called */
	bool stopped;		/* h->body ended the transfer */
	char errbuf[CURL_ERROR_SIZE];
};

/* The response has begun: its status, once. */
static void answer(struct kubeclient *kc)
{
	long code = 0;

	if (kc->answered)
		return;
	kc->answered = true;
	curl_easy_getinfo(kc->curl, CURLINFO_RESPONSE_CODE, &code);
	kc->h->status(kc->h->ctx, code);
}

static size_t header_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct kubeclient *kc = ctx;
	long code = 0;

	/* The blank line after the headers; a 1xx interim response has one of
	 * its own, and another response follows it. */
	if (size * n == 2 && p[0] == '\r' && p[1] == '\n') {
		curl_easy_getinfo(kc->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200)
			answer(kc);
	}
	return size * n;
}

static size_t body_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct kubeclient *kc = ctx;

	answer(kc);
	if (!kc->h->body(kc->h->ctx, p, size * n)) {
		kc->stopped = true;
		return 0; /* ends the transfer */
	}
	return size * n;
}

/* libcurl calls it about once a second even while nothing arrives. */
static int progress_cb(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct kubeclient *kc = ctx;

	(void)a, (void)b, (void)c, (void)d;
	return atomic_load(&kc->cancelled) ? 1 : 0;
}

static void set_tls(struct kubeclient *kc)
{
	const struct kubeaccess *a = &kc->access;
	struct curl_blob blob;

	if (a->insecure) {
		curl_easy_setopt(kc->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(kc->curl, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (a->ca.data) {
		blob = (struct curl_blob){ a->ca.data, a->ca.len, CURL_BLOB_COPY };
		curl_easy_setopt(kc->curl, CURLOPT_CAINFO_BLOB, &blob);
	} else if (a->ca.file[0]) {
		curl_easy_setopt(kc->curl, CURLOPT_CAINFO, a->ca.file);
	}
	if (a->cert.data) {
		blob = (struct curl_blob){ a->cert.data, a->cert.len, CURL_BLOB_COPY };
		curl_easy_setopt(kc->curl, CURLOPT_SSLCERT_BLOB, &blob);
		blob = (struct curl_blob){ a->key.data, a->key.len, CURL_BLOB_COPY };
		curl_easy_setopt(kc->curl, CURLOPT_SSLKEY_BLOB, &blob);
	} else if (a->cert.file[0]) {
		curl_easy_setopt(kc->curl, CURLOPT_SSLCERT, a->cert.file);
		curl_easy_setopt(kc->curl, CURLOPT_SSLKEY, a->key.file);
	}
}

struct kubeclient *kubeclient_create(struct kubeaccess *access, uint64_t connect_timeout_ms,
				     char *err, size_t errlen)
{
	struct kubeclient *kc = calloc(1, sizeof(*kc));
	CURL *c;

	if (!kc) {
		snprintf(err, errlen, "apiserver client: out of memory");
		return NULL;
	}
	kc->curl = c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "apiserver client: libcurl cannot start a transfer");
		free(kc);
		return NULL;
	}
	kc->access = *access;
	memset(access, 0, sizeof(*access)); /* the PEM buffers are ours now */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "netsched-scorer");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_timeout_ms);
	/* A watch is quiet for minutes: keepalives find a vanished peer. */
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, kc->errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, kc);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, kc);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, kc);
	set_tls(kc);
	return kc;
}

void kubeclient_destroy(struct kubeclient *kc)
{
	if (!kc)
		return;
	curl_easy_cleanup(kc->curl);
	kubeaccess_free(&kc->access);
	free(kc);
}

const char *kubeclient_server(const struct kubeclient *kc)
{
	return kc->access.server;
}

void kubeclient_cancel(struct kubeclient *kc)
{
	atomic_store(&kc->cancelled, true);
}

/* The request's headers: JSON, and the bearer token read now. NULL with
 * why on failure; the token is wiped either way. */
static struct curl_slist *headers(struct kubeclient *kc, int *rc, char *why, size_t whylen)
{
	char token[KUBEACCESS_TOKEN_MAX], hdr[BEARERTOKEN_HEADER_MAX];
	struct curl_slist *h = NULL, *t;

	*rc = kubeaccess_token(&kc->access, token, sizeof(token), why, whylen);
	if (*rc)
		return NULL;
	*rc = -ENOMEM;
	h = curl_slist_append(NULL, "Accept: application/json");
	if (h && token[0]) {
		t = bearertoken_header(token, hdr, sizeof(hdr)) ? NULL : curl_slist_append(h, hdr);
		OPENSSL_cleanse(hdr, sizeof(hdr));
		if (!t)
			curl_slist_free_all(h);
		h = t;
	}
	OPENSSL_cleanse(token, sizeof(token));
	if (!h)
		snprintf(why, whylen, "out of memory");
	else
		*rc = 0;
	return h;
}

int kubeclient_get(struct kubeclient *kc, const char *path, uint64_t timeout_ms,
		   const struct kubeclient_handler *h, char *why, size_t whylen)
{
	return kubeclient_request(kc, "GET", path, NULL, 0, timeout_ms, h, why, whylen);
}

void kubeclient_set_user_agent(struct kubeclient *kc, const char *agent)
{
	curl_easy_setopt(kc->curl, CURLOPT_USERAGENT, agent);
}

int kubeclient_request(struct kubeclient *kc, const char *method, const char *path,
		       const char *body, size_t body_len, uint64_t timeout_ms,
		       const struct kubeclient_handler *h, char *why, size_t whylen)
{
	char url[KUBEACCESS_URL_MAX + KUBECLIENT_PATH_MAX];
	struct curl_slist *hdrs, *t;
	bool get = strcmp(method, "GET") == 0;
	CURLcode cc;
	int rc;

	if (atomic_load(&kc->cancelled))
		return -EINTR;
	if (strlen(path) >= KUBECLIENT_PATH_MAX) {
		snprintf(why, whylen, "a request path of %zu bytes, more than the %u allowed",
			 strlen(path), KUBECLIENT_PATH_MAX - 1);
		return -E2BIG;
	}
	if (!get && strcmp(method, "POST") != 0 && strcmp(method, "PUT") != 0 &&
	    strcmp(method, "PATCH") != 0) {
		snprintf(why, whylen, "method %s is not one this client sends", method);
		return -EINVAL;
	}
	snprintf(url, sizeof(url), "%s%s", kc->access.server, path);
	hdrs = headers(kc, &rc, why, whylen);
	if (!hdrs)
		return rc;
	if (!get) {
		/* A PATCH is a JSON merge patch (RFC 7386): the one kind every
		 * resource takes, custom ones included. */
		t = curl_slist_append(hdrs, strcmp(method, "PATCH") == 0 ?
					    "Content-Type: application/merge-patch+json" :
					    "Content-Type: application/json");
		if (!t) {
			curl_slist_free_all(hdrs);
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
		hdrs = t;
		curl_easy_setopt(kc->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		curl_easy_setopt(kc->curl, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(kc->curl, CURLOPT_CUSTOMREQUEST, method);
	}
	curl_easy_setopt(kc->curl, CURLOPT_URL, url);
	curl_easy_setopt(kc->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(kc->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	kc->h = h;
	kc->answered = kc->stopped = false;
	kc->errbuf[0] = '\0';
	cc = curl_easy_perform(kc->curl);
	curl_easy_setopt(kc->curl, CURLOPT_HTTPHEADER, NULL);
	if (!get) {
		/* The handle is reused: back to a plain GET. */
		curl_easy_setopt(kc->curl, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(kc->curl, CURLOPT_HTTPGET, 1L);
	}
	curl_slist_free_all(hdrs);
	if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && kc->stopped)) {
		answer(kc); /* a response without a body */
		return 0;
	}
	rc = cc == CURLE_OPERATION_TIMEDOUT	? -ETIMEDOUT
	     : cc == CURLE_ABORTED_BY_CALLBACK	? -EINTR
	     : cc == CURLE_OUT_OF_MEMORY	? -ENOMEM
						: -EIO;
	snprintf(why, whylen, "%s", kc->errbuf[0] ? kc->errbuf : curl_easy_strerror(cc));
	return rc;
}
