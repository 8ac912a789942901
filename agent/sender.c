#include "sender.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "log.h"
#include "worker.h"

/* One --scorer URL, split so its host can be resolved. */
struct target {
	char url[SENDER_URL_MAX];
	char scheme[16];	/* "tcp://" or "tls+tcp://"; "" for ipc:// (used as is) */
	char host[SENDER_URL_MAX];
	char port[8];
	bool is_name;
};

struct peer {
	struct sender_peer pub;
	nng_socket sock;
	char server[SENDER_URL_MAX];	/* the name its certificate must carry */
	int last_err;		/* logged once per change, not once per report */
	unsigned refused;	/* reports refused in a row */
	bool redialling;	/* opened anew since the last report taken: said once */
	bool queue_only;	/* opened anew: its next report only fills its queue */
};

/* One address to dial, and the name its certificate must carry. */
struct want {
	char url[SENDER_URL_MAX];
	char server[SENDER_URL_MAX];
};

struct sender {
	char ca_file[SENDER_URL_MAX];	/* for tls+tcp:// scorers */
	size_t n_targets;
	struct target targets[SENDER_MAX_SCORERS];
	pthread_mutex_t lock;	/* peers and n_peers */
	size_t n_peers;
	struct peer *peers[SENDER_MAX_PEERS];
	struct worker *resolver;	/* only when a scorer is given by name */
	unsigned retry_s;		/* the resolver's backoff for names that gave nothing */
	struct want wanted[SENDER_MAX_PEERS];	/* the resolver's scratch space */
};

static int target_parse(struct target *t, const char *url, char *err, size_t errlen)
{
	const char *rest, *colon;
	unsigned char bin[16];
	size_t hlen;

	memset(t, 0, sizeof(*t));
	if (strlen(url) >= sizeof(t->url)) {
		snprintf(err, errlen, "scorer %.40s...: URL longer than %zu bytes", url,
			 sizeof(t->url) - 1);
		return -EINVAL;
	}
	strcpy(t->url, url);
	if (strncmp(url, "ipc://", 6) == 0)
		return 0;
	if (strncmp(url, "tcp://", 6) == 0)
		strcpy(t->scheme, "tcp://");
	else if (strncmp(url, "tls+tcp://", 10) == 0)
		strcpy(t->scheme, "tls+tcp://");
	else
		goto bad;
	rest = url + strlen(t->scheme);
	if (rest[0] == '[') { /* an IPv6 literal: no resolution */
		colon = strstr(rest, "]:");
		if (!colon)
			goto bad;
		colon++;
	} else {
		colon = strrchr(rest, ':');
	}
	if (!colon || colon == rest || strlen(colon + 1) == 0 ||
	    strlen(colon + 1) >= sizeof(t->port) || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
		goto bad;
	hlen = (size_t)(colon - rest);
	memcpy(t->host, rest, hlen);
	t->host[hlen] = '\0';
	strcpy(t->port, colon + 1);
	t->is_name = rest[0] != '[' && inet_pton(AF_INET, t->host, bin) != 1;
	return 0;
bad:
	snprintf(err, errlen, "scorer %s: expected tcp://HOST:PORT, tls+tcp://HOST:PORT or ipc://PATH",
		 url);
	return -EINVAL;
}

int sender_check_url(const char *url, char *err, size_t errlen)
{
	struct target t;

	return target_parse(&t, url, err, errlen);
}

/* tls+tcp://: the scorer's certificate must chain to ca_file and name
 * server, the host as the operator wrote it (the URL dialled may be one of
 * its addresses). */
static int dial(struct peer *p, const char *url, const char *ca_file, const char *server)
{
	nng_dialer d;
	int rv = nng_dialer_create(&d, p->sock, url);

	if (rv)
		return rv;
	if (strncmp(url, "tls+tcp://", 10) == 0) {
		rv = nng_dialer_set_string(d, NNG_OPT_TLS_CA_FILE, ca_file);
		if (!rv && server[0])
			rv = nng_dialer_set_string(d, NNG_OPT_TLS_SERVER_NAME, server);
		if (rv)
			return rv;
	}
	return nng_dialer_start(d, NNG_FLAG_NONBLOCK);
}

static struct peer *peer_open(const char *url, const char *ca_file, const char *server)
{
	struct peer *p = calloc(1, sizeof(*p));
	int rv;

	if (!p)
		return NULL;
	snprintf(p->pub.url, sizeof(p->pub.url), "%s", url);
	snprintf(p->server, sizeof(p->server), "%s", server);
	rv = nng_push0_open(&p->sock);
	if (rv) {
		log_error("sender", "scorer %s: %s", url, nng_strerror(rv));
		free(p);
		return NULL;
	}
	/* One queued report at most: an old report is worth nothing once a newer
	 * one exists, and a bounded queue bounds memory per dead scorer. */
	nng_socket_set_int(p->sock, NNG_OPT_SENDBUF, 1);
	nng_socket_set_ms(p->sock, NNG_OPT_RECONNMINT, 100);
	/* At most the default report interval: a restarted scorer refills its
	 * table within about one interval (5,000 agents redial at 2,500/s). */
	nng_socket_set_ms(p->sock, NNG_OPT_RECONNMAXT, 2000);
	nng_socket_set_ms(p->sock, NNG_OPT_SENDTIMEO, 0);
	rv = dial(p, url, ca_file, server);
	if (rv) {
		log_error("sender", "scorer %s: %s", url, nng_strerror(rv));
		nng_close(p->sock);
		free(p);
		return NULL;
	}
	return p;
}

static void peer_close(struct peer *p)
{
	if (!p)
		return;
	nng_close(p->sock);
	free(p);
}

/* How many URLs there are once urls[n], just written, is counted: one
 * more, or none when an earlier one dials the same address (a name listed
 * beside one of its addresses, or a URL given twice): each scorer gets
 * each report once. */
static size_t count_unique(const struct want *urls, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(urls[k].url, urls[n].url))
			return n;
	return n + 1;
}

/* The URLs to dial now: literals as they are, names as their addresses,
 * each once. Returns how many; *unresolved counts names that gave
 * nothing. */
static size_t want_urls(struct sender *s, struct want *urls, size_t *unresolved)
{
	size_t n = 0;

	*unresolved = 0;
	for (size_t i = 0; i < s->n_targets; i++) {
		const struct target *t = &s->targets[i];
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
		struct addrinfo *res = NULL;
		int rc;

		if (!t->is_name) {
			if (n < SENDER_MAX_PEERS) {
				snprintf(urls[n].url, SENDER_URL_MAX, "%s", t->url);
				snprintf(urls[n].server, SENDER_URL_MAX, "%s", t->host);
				n = count_unique(urls, n);
			}
			continue;
		}
		rc = getaddrinfo(t->host, t->port, &hints, &res);
		if (rc) {
			(*unresolved)++;
			log_warn("sender", "scorer %s: cannot resolve %s: %s; retrying", t->url,
				 t->host, gai_strerror(rc));
			continue;
		}
		for (struct addrinfo *a = res; a && n < SENDER_MAX_PEERS; a = a->ai_next) {
			char ip[INET6_ADDRSTRLEN];
			const void *bin = a->ai_family == AF_INET ?
						  (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr :
						  (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;

			if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
			    !inet_ntop(a->ai_family, bin, ip, sizeof(ip)))
				continue;
			snprintf(urls[n].url, SENDER_URL_MAX, a->ai_family == AF_INET6 ?
								       "%s[%s]:%s" : "%s%s:%s",
				 t->scheme, ip, t->port);
			snprintf(urls[n].server, SENDER_URL_MAX, "%s", t->host);
			n = count_unique(urls, n);
		}
		freeaddrinfo(res);
	}
	return n;
}

/* Opens sockets for new addresses and closes those no longer wanted. NNG
 * calls happen outside the lock, so a send never waits on a close. */
static void reconcile(struct sender *s, const struct want *urls, size_t n)
{
	struct peer *add[SENDER_MAX_PEERS], *drop[SENDER_MAX_PEERS];
	size_t n_add = 0, n_drop = 0;

	for (size_t i = 0; i < n; i++) {
		bool have = false;

		pthread_mutex_lock(&s->lock);
		for (size_t k = 0; k < s->n_peers && !have; k++)
			have = strcmp(s->peers[k]->pub.url, urls[i].url) == 0;
		pthread_mutex_unlock(&s->lock);
		if (!have && (add[n_add] = peer_open(urls[i].url, s->ca_file, urls[i].server)) != NULL)
			n_add++;
	}
	pthread_mutex_lock(&s->lock);
	for (size_t k = 0; k < s->n_peers;) {
		bool keep = false;

		for (size_t i = 0; i < n && !keep; i++)
			keep = strcmp(s->peers[k]->pub.url, urls[i].url) == 0;
		if (keep) {
			k++;
			continue;
		}
		drop[n_drop++] = s->peers[k];
		s->peers[k] = s->peers[--s->n_peers];
	}
	for (size_t i = 0; i < n_add; i++) {
		if (s->n_peers < SENDER_MAX_PEERS) {
			s->peers[s->n_peers++] = add[i];
			log_info("sender", "scorer %s: sending reports", add[i]->pub.url);
		} else {
			drop[n_drop++] = add[i];
		}
	}
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n_drop; i++) {
		log_info("sender", "scorer %s: no longer listed; closing", drop[i]->pub.url);
		peer_close(drop[i]);
	}
}

/* One round of name resolution; a name that did not resolve is retried
 * soon, with backoff. */
static uint64_t resolve_round(void *arg)
{
	struct sender *s = arg;
	size_t unresolved, n = want_urls(s, s->wanted, &unresolved);
	unsigned wait_s = unresolved ? s->retry_s : SENDER_RESOLVE_S;

	reconcile(s, s->wanted, n);
	s->retry_s = unresolved ? (s->retry_s * 2 > SENDER_RESOLVE_S ? SENDER_RESOLVE_S : s->retry_s * 2)
				: 1;
	return wait_s * 1000ULL;
}

struct sender *sender_create(const char *const *urls, size_t n, const char *ca_file, char *err,
			     size_t errlen)
{
	struct sender *s;
	bool names = false;

	if (n == 0 || n > SENDER_MAX_SCORERS) {
		snprintf(err, errlen, "%zu scorers, expected 1 to %d", n, SENDER_MAX_SCORERS);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (ca_file)
		snprintf(s->ca_file, sizeof(s->ca_file), "%s", ca_file);
	s->retry_s = 1;
	pthread_mutex_init(&s->lock, NULL);
	for (size_t i = 0; i < n; i++) {
		if (target_parse(&s->targets[i], urls[i], err, errlen)) {
			s->n_targets = i;
			sender_destroy(s);
			return NULL;
		}
		names |= s->targets[i].is_name;
		if (!strncmp(urls[i], "tls+tcp://", 10) && !s->ca_file[0]) {
			snprintf(err, errlen, "scorer %s: a tls+tcp:// scorer needs --scorer-ca to "
				 "verify it", urls[i]);
			s->n_targets = i + 1;
			sender_destroy(s);
			return NULL;
		}
	}
	s->n_targets = n;
	if (!names) { /* nothing to resolve, ever: no thread */
		size_t unresolved;

		reconcile(s, s->wanted, want_urls(s, s->wanted, &unresolved));
		return s;
	}
	s->resolver = worker_start("the scorer name resolver", resolve_round, s, 0, err, errlen);
	if (!s->resolver) {
		sender_destroy(s);
		return NULL;
	}
	return s;
}

void sender_destroy(struct sender *s)
{
	if (!s)
		return;
	worker_stop(s->resolver);
	for (size_t i = 0; i < s->n_peers; i++)
		peer_close(s->peers[i]);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* peers[i] refused SENDER_STUCK_SENDS reports in a row: a socket of its
 * own anew, keeping its counters (the old one stays if that fails). */
static void redial(struct sender *s, size_t i)
{
	struct peer *old = s->peers[i], *fresh = peer_open(old->pub.url, s->ca_file, old->server);

	old->refused = 0;
	if (!fresh)
		return;
	if (!old->redialling)
		log_warn("sender", "scorer %s: %u reports in a row not taken: opening the connection "
			 "anew (a scorer gone without closing it is never heard from again otherwise); "
			 "again every %u until one is taken", old->pub.url, SENDER_STUCK_SENDS,
			 SENDER_STUCK_SENDS);
	fresh->pub = old->pub;
	fresh->pub.redials++;
	fresh->last_err = old->last_err;
	fresh->redialling = true;
	fresh->queue_only = true;
	peer_close(old);
	s->peers[i] = fresh;
}

size_t sender_send(struct sender *s, const void *data, size_t len)
{
	size_t ok = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_peers; i++) {
		struct peer *p = s->peers[i];
		int rv = nng_send(p->sock, (void *)data, len, NNG_FLAG_NONBLOCK);

		if (rv == 0 && p->queue_only) {
			/* Taken by a new socket's empty queue: no sign of the scorer yet. */
			p->pub.sent++;
			ok++;
			p->refused = 0;
			p->queue_only = false;
			continue;
		}
		if (rv == 0) {
			p->pub.sent++;
			ok++;
			p->refused = 0;
			p->redialling = false;
			if (p->last_err)
				log_info("sender", "scorer %s: reports flowing again", p->pub.url);
		} else {
			p->pub.failed++;
			if (rv != p->last_err)
				log_warn("sender", "scorer %s: report not sent: %s (%s; retrying "
					 "in the background, newest report wins)", p->pub.url,
					 nng_strerror(rv),
					 rv == NNG_EAGAIN ? "not connected or not keeping up" :
							    "send failed");
		}
		p->last_err = rv;
		if (rv && ++p->refused >= SENDER_STUCK_SENDS)
			redial(s, i);
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

size_t sender_peers(struct sender *s, struct sender_peer *out, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n_peers;
	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = s->peers[i]->pub;
	pthread_mutex_unlock(&s->lock);
	return n;
}
