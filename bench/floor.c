/* netsched-floor: the cheapest correct kube-scheduler extender, the floor
 * bench/k8s.sh measures netsched against. Whatever an extender does, the
 * scheduler pays for marshalling its request, two HTTP round trips per pod
 * and decoding the reply; this one does nothing else:
 *   POST .../filter      echoes the request's NodeNames (or, with full Node
 *                        objects, its Nodes) back: every node passes
 *   POST .../prioritize  answers [] (no host gets a score)
 * over keep-alive HTTP/1.1 with TCP_NODELAY and a Content-Length, from one
 * thread (epoll). It finds the one member it echoes with jsmn and checks
 * nothing else: its only client is the benchmark's real scheduler.
 *
 * With --scores, prioritize gives every node of the request a score
 * instead (0-10, from its place in the request, so they differ): the
 * cheapest extender that tells the scheduler anything, whose reply the
 * scheduler decodes as it decodes netsched's. The floor's [] costs it
 * nothing to decode, so the gap between the two is what reading scores
 * costs any scoring extender.
 *
 *   floor --http 127.0.0.1:0 [--scores]   prints "listening on 127.0.0.1:PORT"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define JSMN_STATIC
#include <jsmn.h>

#include "common/hostport.h"

/* A request larger than this is refused (the scheduler's largest, full
 * Node objects of 5,000 nodes, is ~16 MB). */
#define FLOOR_MAX_REQUEST (64u * 1024u * 1024u)
#define FLOOR_MAX_HEADERS (16u * 1024u)
#define FLOOR_MAX_EVENTS 64
/* The scheduler's MaxExtenderPriority. */
#define FLOOR_MAX_SCORE 10

static bool scores;	/* --scores */

struct conn {
	int fd;
	char *in;		/* request bytes received */
	size_t in_len, in_cap;
	char *out;		/* reply bytes not yet sent */
	size_t out_len, out_off, out_cap;
	jsmntok_t *tok;		/* reused from request to request */
	size_t tok_cap;
};

static void conn_close(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c->tok);
	free(c);
}

static bool grow(char **p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	char *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, n);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* The declared body length of the request whose headers are hdr[0..n). */
static long content_length(const char *hdr, size_t n)
{
	static const char key[] = "\r\ncontent-length:";
	size_t k = sizeof(key) - 1;

	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(hdr + i, key, k))
			return strtol(hdr + i + k, NULL, 10);
	return 0;
}

/* The first token after token i and everything inside it. */
static int skip(const jsmntok_t *t, int n, int i)
{
	int j = i + 1;

	while (j < n && t[j].start < t[i].end)
		j++;
	return j;
}

/* The value token of member key of object token obj, or -1. */
static int child(const struct conn *c, int n, const char *js, int obj, const char *key)
{
	size_t klen = strlen(key);

	if (obj < 0 || obj >= n || c->tok[obj].type != JSMN_OBJECT)
		return -1;
	for (int i = obj + 1; i + 1 < n && c->tok[i].start < c->tok[obj].end;
	     i = skip(c->tok, n, i + 1)) {
		const jsmntok_t *k = &c->tok[i];

		if ((size_t)(k->end - k->start) == klen && !memcmp(js + k->start, key, klen))
			return i + 1;
	}
	return -1;
}

/* Tokenizes js into c->tok; how many tokens, or -1. */
static int tokenize(struct conn *c, const char *js, size_t len)
{
	jsmn_parser p;
	int n;

	/* jsmn given no array only counts: there is always one. */
	for (;;) {
		jsmntok_t *t;
		size_t cap;

		if (c->tok_cap) {
			jsmn_init(&p);
			n = jsmn_parse(&p, js, len, c->tok, (unsigned)c->tok_cap);
			if (n != JSMN_ERROR_NOMEM)
				break;
		}
		cap = c->tok_cap ? c->tok_cap * 2 : 4096;
		t = realloc(c->tok, cap * sizeof(*t));
		if (!t)
			return -1;
		c->tok = t;
		c->tok_cap = cap;
	}
	return n < 1 ? -1 : n;
}

/* The text of the top-level member named key of the tokenized js, or NULL. */
static const char *member(const struct conn *c, int n, const char *js, const char *key,
			  size_t *vlen)
{
	int v = child(c, n, js, 0, key);

	if (v < 0)
		return NULL;
	*vlen = (size_t)(c->tok[v].end - c->tok[v].start);
	return js + c->tok[v].start;
}

/* Appends one {"Host":...,"Score":...} per node of the tokenized request
 * (NodeNames, else Nodes.items[].metadata.name) to c->out as a JSON array. */
static bool score_all(struct conn *c, int n, const char *js)
{
	int arr = child(c, n, js, 0, "NodeNames"), k = 0;
	bool names = arr >= 0 && c->tok[arr].type == JSMN_ARRAY;

	if (!names)
		arr = child(c, n, js, child(c, n, js, 0, "Nodes"), "items");
	if (arr < 0 || c->tok[arr].type != JSMN_ARRAY)
		return false;
	c->out[c->out_len++] = '[';
	for (int i = arr + 1; i < n && c->tok[i].start < c->tok[arr].end; i = skip(c->tok, n, i), k++) {
		int name = names ? i : child(c, n, js, child(c, n, js, i, "metadata"), "name");
		size_t len;

		if (name < 0 || c->tok[name].type != JSMN_STRING)
			return false;
		len = (size_t)(c->tok[name].end - c->tok[name].start);
		if (!grow(&c->out, &c->out_cap, c->out_len + len + 40))
			return false;
		c->out_len += (size_t)sprintf(c->out + c->out_len, "%s{\"Host\":\"%.*s\",\"Score\":%d}",
					      k ? "," : "", (int)len, js + c->tok[name].start,
					      k % (FLOOR_MAX_SCORE + 1));
	}
	if (!grow(&c->out, &c->out_cap, c->out_len + 1))
		return false;
	c->out[c->out_len++] = ']';
	return true;
}

/* A reply's status line and headers for a body of blen bytes, into hdr
 * (160 bytes hold the longest); their length. */
static size_t head(char *hdr, size_t cap, int status, size_t blen)
{
	return (size_t)snprintf(hdr, cap, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
				"Content-Length: %zu\r\n\r\n", status,
				status == 200 ? "OK" : status == 400 ? "Bad Request" : "Not Found", blen);
}

/* Queues a 200 with the scores of the tokenized request body (--scores):
 * the body is built first, the headers, which need its length, moved in
 * before it. 1: queued; 0: nothing queued, the body names no nodes; -1:
 * out of memory. */
static int scored(struct conn *c, int n, const char *body)
{
	size_t at = c->out_len, hl;
	char hdr[160];

	if (!grow(&c->out, &c->out_cap, c->out_len + 4096))
		return -1;
	if (!score_all(c, n, body)) {
		c->out_len = at;
		return 0;
	}
	hl = head(hdr, sizeof(hdr), 200, c->out_len - at);
	if (!grow(&c->out, &c->out_cap, c->out_len + hl))
		return -1;
	memmove(c->out + at + hl, c->out + at, c->out_len - at);
	memcpy(c->out + at, hdr, hl);
	c->out_len += hl;
	return 1;
}

/* Queues the reply to the request whose body is body[0..len). */
static bool reply(struct conn *c, const char *path, const char *body, size_t len)
{
	const char *v = NULL, *key = "NodeNames";
	size_t plen = strlen(path), vlen = 0, hl;
	char hdr[160];
	int status = 200, n = 0;
	bool filter = plen >= 7 && !strcmp(path + plen - 7, "/filter");
	bool prioritize = plen >= 11 && !strcmp(path + plen - 11, "/prioritize");

	if (filter || (prioritize && scores)) {
		n = tokenize(c, body, len);
		if (n < 0)
			status = 400;
	}
	if (filter && status == 200) {
		v = member(c, n, body, key, &vlen);
		if (!v || (vlen == 4 && !memcmp(v, "null", 4))) {
			key = "Nodes";
			v = member(c, n, body, key, &vlen);
		}
		if (!v)
			status = 400;
	} else if (!filter && !prioritize) {
		status = 404;
	}
	if (status == 200 && prioritize && scores) {
		int rc = scored(c, n, body);

		if (rc)
			return rc > 0;
		status = 400;
	}
	/* {"NodeNames":[...]} or {"Nodes":{...}}; [] for prioritize. */
	size_t blen = status != 200 ? 2 : filter ? strlen(key) + 5 + vlen : 2;
	hl = head(hdr, sizeof(hdr), status, blen);
	if (!grow(&c->out, &c->out_cap, c->out_len + hl + blen))
		return false;
	memcpy(c->out + c->out_len, hdr, hl);
	c->out_len += hl;
	if (status == 200 && filter) {
		c->out_len += (size_t)sprintf(c->out + c->out_len, "{\"%s\":", key);
		memcpy(c->out + c->out_len, v, vlen);
		c->out_len += vlen;
		c->out[c->out_len++] = '}';
	} else {
		memcpy(c->out + c->out_len, status == 200 ? "[]" : "{}", 2);
		c->out_len += 2;
	}
	return true;
}

/* Answers every complete request in c->in. false: close the connection. */
static bool serve(struct conn *c)
{
	size_t used = 0;

	for (;;) {
		char *start = c->in + used, *end, path[256];
		size_t avail = c->in_len - used, hlen;
		long body;

		end = memmem(start, avail, "\r\n\r\n", 4);
		if (!end)
			break;
		hlen = (size_t)(end - start) + 4;
		body = content_length(start, hlen);
		if (body < 0 || (size_t)body > FLOOR_MAX_REQUEST)
			return false;
		if (avail < hlen + (size_t)body)
			break;
		if (sscanf(start, "%*s %255s", path) != 1)
			return false;
		if (!reply(c, path, start + hlen, (size_t)body))
			return false;
		used += hlen + (size_t)body;
	}
	if (used) {
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
	return c->in_len <= FLOOR_MAX_REQUEST + FLOOR_MAX_HEADERS;
}

/* Sends what is queued; false on a broken connection. */
static bool flush(int ep, struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (w < 0 && errno == EAGAIN) {
			struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = c };

			return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
		}
		if (w <= 0)
			return false;
		c->out_off += (size_t)w;
	}
	c->out_off = c->out_len = 0;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

	return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

static bool on_readable(int ep, struct conn *c)
{
	for (;;) {
		ssize_t r;

		if (!grow(&c->in, &c->in_cap, c->in_len + 65536))
			return false;
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (r == 0)
			return false;
		if (r < 0)
			break;
		c->in_len += (size_t)r;
		if (c->in_len > FLOOR_MAX_REQUEST + FLOOR_MAX_HEADERS)
			return false;
	}
	if (errno != EAGAIN)
		return false;
	return serve(c) && flush(ep, c);
}

static int listen_on(const char *spec)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	char addr[64];
	uint16_t port;
	int fd, one = 1;

	if (hostport_parse(spec, addr, sizeof(addr), &port) ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "netsched-floor: --http %s: expected IPV4:PORT\n", spec);
		return -1;
	}
	sin.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl)) {
		fprintf(stderr, "netsched-floor: listen %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	printf("listening on %s:%u\n", addr, ntohs(sin.sin_port));
	fflush(stdout);
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "http", required_argument, NULL, 'h' },
					    { "scores", no_argument, NULL, 's' },
					    { NULL, 0, NULL, 0 } };
	struct epoll_event evs[FLOOR_MAX_EVENTS], ev = { .events = EPOLLIN };
	const char *spec = "127.0.0.1:0";
	int lfd, ep, c, one = 1;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 's') {
			scores = true;
			continue;
		}
		if (c != 'h') {
			fprintf(stderr, "usage: netsched-floor [--http IPV4:PORT] [--scores]\n");
			return 2;
		}
		spec = optarg;
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(spec);
	if (lfd < 0)
		return 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.ptr = NULL;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("netsched-floor: epoll");
		return 1;
	}
	for (;;) {
		int n = epoll_wait(ep, evs, FLOOR_MAX_EVENTS, -1);

		for (int i = 0; i < n; i++) {
			struct conn *k = evs[i].data.ptr;

			if (!k) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (fd < 0)
					continue;
				k = calloc(1, sizeof(*k));
				if (!k) {
					close(fd);
					continue;
				}
				k->fd = fd;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = k };
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
					close(fd);
					free(k);
				}
				continue;
			}
			if ((evs[i].events & EPOLLOUT) && !flush(ep, k)) {
				conn_close(ep, k);
				continue;
			}
			if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !on_readable(ep, k))
				conn_close(ep, k);
		}
	}
}
