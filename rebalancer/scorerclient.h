/* The rebalancer's requests to the scorers (libcurl): GET /v1/pressure and
 * POST /v1/moves on the extender listener, over http or https with the
 * scorer's CA and a client certificate (the contract, issue 37). The
 * scorers are tried in the order given; the first that answers serves the
 * request. Replies are read up to a bound. Not thread-safe. */
#ifndef NETSCHED_REBALANCER_SCORERCLIENT_H
#define NETSCHED_REBALANCER_SCORERCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct scorerclient;

struct scorerclient_config {
	const char (*urls)[256];	/* "http(s)://host:port", no trailing slash */
	size_t n_urls;
	const char *ca, *cert, *key;	/* files, or "" */
	uint64_t timeout_ms;
};

/* NULL with err when libcurl cannot start. The config's strings are
 * copied. */
struct scorerclient *scorerclient_create(const struct scorerclient_config *cfg, char *err,
					 size_t errlen);
void scorerclient_destroy(struct scorerclient *sc);

/* GET path (with its query) from the first scorer that answers; the body
 * (at most max bytes) into out, the status into *code, which scorer into
 * *url. 0, or -EIO with why naming every scorer tried and what failed. */
int scorerclient_get(struct scorerclient *sc, const char *path, size_t max, struct buf *out,
		     long *code, const char **url, char *why, size_t whylen);

/* POST body (JSON) to path, the same way. */
int scorerclient_post(struct scorerclient *sc, const char *path, const char *body, size_t len,
		      size_t max, struct buf *out, long *code, const char **url, char *why,
		      size_t whylen);

/* What POSTing to every replica gave. */
struct scorerclient_all {
	unsigned replicas;	/* addresses or URLs tried */
	unsigned accepted;	/* answered 200 */
	unsigned refused;	/* answered something else */
	unsigned unreachable;	/* no answer */
	char why[512];		/* the first refusal's or failure's words */
};

#define SCORERCLIENT_REPLICAS_MAX 16u

/* POST body to path on every scorer replica: a move lives in each replica's
 * memory, and the scheduler may ask any of them. With replicas_name (a DNS
 * name that resolves to every replica's address, such as a headless
 * Service's), each address it resolves to (at most
 * SCORERCLIENT_REPLICAS_MAX) is reached as the first URL's host and port
 * (so TLS checks the certificate against that name); otherwise each URL
 * given. 0 with *all filled, or -errno when the name does not resolve. */
int scorerclient_post_all(struct scorerclient *sc, const char *replicas_name, const char *path,
			  const char *body, size_t len, struct scorerclient_all *all);

#endif
