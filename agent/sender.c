#include "sender.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "log.h"

struct peer {
	struct sender_peer pub;
	nng_socket sock;
	bool open;
	int last_err;	/* logged once per change, not once per report */
};

struct sender {
	size_t n;
	struct peer peers[SENDER_MAX_SCORERS];
};

static int peer_open(struct peer *p, const char *url, char *err, size_t errlen)
{
	int rv;

	if (strlen(url) >= sizeof(p->pub.url)) {
		snprintf(err, errlen, "scorer %.40s...: URL longer than %zu bytes", url,
			 sizeof(p->pub.url) - 1);
		return -EINVAL;
	}
	strcpy(p->pub.url, url);
	rv = nng_push0_open(&p->sock);
	if (rv) {
		snprintf(err, errlen, "scorer %s: %s", url, nng_strerror(rv));
		return -ENOMEM;
	}
	p->open = true;
	/* One queued report at most: an old report is worth nothing once a newer
	 * one exists, and a bounded queue bounds memory per dead scorer. */
	nng_socket_set_int(p->sock, NNG_OPT_SENDBUF, 1);
	nng_socket_set_ms(p->sock, NNG_OPT_RECONNMINT, 100);
	nng_socket_set_ms(p->sock, NNG_OPT_RECONNMAXT, 5000);
	nng_socket_set_ms(p->sock, NNG_OPT_SENDTIMEO, 0);
	rv = nng_dial(p->sock, url, NULL, NNG_FLAG_NONBLOCK);
	if (rv) {
		snprintf(err, errlen, "scorer %s: %s", url, nng_strerror(rv));
		return -EINVAL;
	}
	return 0;
}

struct sender *sender_create(const char *const *urls, size_t n, char *err, size_t errlen)
{
	struct sender *s;

	if (n > SENDER_MAX_SCORERS) {
		snprintf(err, errlen, "%zu scorers, limit %d", n, SENDER_MAX_SCORERS);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		s->n = i + 1;
		if (peer_open(&s->peers[i], urls[i], err, errlen)) {
			sender_destroy(s);
			return NULL;
		}
	}
	return s;
}

void sender_destroy(struct sender *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->peers[i].open)
			nng_close(s->peers[i].sock);
	free(s);
}

size_t sender_send(struct sender *s, const void *data, size_t len)
{
	size_t ok = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct peer *p = &s->peers[i];
		int rv = nng_send(p->sock, (void *)data, len, NNG_FLAG_NONBLOCK);

		if (rv == 0) {
			p->pub.sent++;
			ok++;
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
	}
	return ok;
}

size_t sender_count(const struct sender *s)
{
	return s->n;
}

const struct sender_peer *sender_peer(const struct sender *s, size_t i)
{
	return i < s->n ? &s->peers[i].pub : NULL;
}
