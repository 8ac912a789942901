/* Requests to the apiserver (libcurl): the scorer's pod watch's transport
 * (GET), and the rebalancer's (GET, and POST or PUT of a JSON body).
 *
 * HTTPS only, with the credentials of a struct kubeaccess (kubeaccess.h):
 * its CA (file or PEM data; none: the system's CAs) or
 * insecure-skip-tls-verify, a client certificate and key, and a bearer
 * token read again for every request (common/bearertoken.h), so a rotated
 * ServiceAccount token is used at once. Every request has a connect
 * deadline and a deadline for the whole transfer, and TCP keepalives find a
 * peer that vanished while a watch was quiet.
 *
 * The body streams to the caller as it arrives (a watch lasts minutes), in
 * whatever pieces the network delivers; the caller learns the status code
 * first. Nothing is buffered here. Not thread-safe, except
 * kubeclient_cancel(). */
#ifndef NETSCHED_KUBECLIENT_H
#define NETSCHED_KUBECLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kubeaccess.h"

/* What a transfer calls, in order: status once the response's headers are
 * in, then body for each piece of the body (false ends the transfer: the
 * request still counts as answered). */
struct kubeclient_handler {
	void (*status)(void *ctx, long code);
	bool (*body)(void *ctx, const char *p, size_t n);
	void *ctx;
};

struct kubeclient;

/* access is taken over (its PEM buffers are ours; *access is left empty).
 * NULL with err when libcurl cannot start. */
struct kubeclient *kubeclient_create(struct kubeaccess *access, uint64_t connect_timeout_ms,
				     char *err, size_t errlen);
/* Accepts NULL. */
void kubeclient_destroy(struct kubeclient *kc);

/* "https://host:port" of the apiserver, for logs. */
const char *kubeclient_server(const struct kubeclient *kc);

/* GET server + path within timeout_ms. 0 when the server answered and the
 * body was read to its end or the handler ended it. Otherwise -errno with
 * why saying what failed: -ETIMEDOUT, -EINTR (cancelled), -ENOMEM, -E2BIG
 * (path), the token file's error (kubeaccess_token()), or -EIO (connect,
 * TLS, the connection broke: libcurl's words). */
int kubeclient_get(struct kubeclient *kc, const char *path, uint64_t timeout_ms,
		   const struct kubeclient_handler *h, char *why, size_t whylen);

/* method "POST" or "PUT" with body_len bytes of JSON (Content-Type
 * application/json), "PATCH" with a JSON merge patch (Content-Type
 * application/merge-patch+json), or "GET" (body ignored); the rest as kubeclient_get(),
 * and -EINVAL for another method. */
int kubeclient_request(struct kubeclient *kc, const char *method, const char *path,
		       const char *body, size_t body_len, uint64_t timeout_ms,
		       const struct kubeclient_handler *h, char *why, size_t whylen);

/* The User-Agent header ("netsched-scorer" unless set); agent is copied. */
void kubeclient_set_user_agent(struct kubeclient *kc, const char *agent);

/* From any thread: a transfer in progress ends within about a second, and
 * every later one at once with -EINTR. */
void kubeclient_cancel(struct kubeclient *kc);

#endif
