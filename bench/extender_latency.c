/* netsched-extender-latency: the scheduler's view of the scorer. Posts one
 * request body again and again over ONE keep-alive HTTP/1.1 connection, as
 * kube-scheduler does, and prints latency percentiles measured from the
 * first byte sent to the last byte of the reply received.
 *
 *   extender_latency --http 127.0.0.1:8470 --path /prioritize --body req.json \
 *                    --requests 2000 --warmup 200 --label "names 5000" --target-us 1000
 *
 * A plain socket rather than libcurl: nothing between us and the scorer but
 * the kernel's loopback, so the figures are the scorer's (plus one copy of
 * the body through the socket, which the scheduler pays too). Exits 1 if any
 * request fails (not 200, connection closed, malformed reply).
 *
 * --new-connection opens a connection for every request (the latency then
 * includes the connect), from --sources FIRST-LAST (IPv4 addresses, in
 * turn), as a scheduler that lost its keep-alive connection would; with
 * --timeout-ms a request not answered in time counts as timed out (at
 * that time in the percentiles) instead of ending the run, as the
 * scheduler's httpTimeout does. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hostport.h"
#include "common/units.h"

/* Bounds: bigger than the scorer's default --max-body (32 MiB) would only
 * measure a 413. Replies are at most a little larger than requests. */
#define LAT_MAX_BODY (32u * 1024u * 1024u)
#define LAT_MAX_REPLY (64u * 1024u * 1024u)
#define LAT_MAX_HEADERS (16u * 1024u)
#define LAT_MAX_REQUESTS 1000000u

struct lat_opts {
	char addr[64];
	uint16_t port;
	const char *path, *body_file, *label;
	uint64_t requests, warmup, target_us;
	uint64_t rate; /* requests per second, 0 = back to back */
	bool new_connection;
	uint32_t src_first, src_last;	/* host order; 0: any */
	uint64_t timeout_ms;		/* 0: none, a failure ends the run */
};

/* The reply buffer, reused across requests so steady state allocates nothing. */
struct lat_conn {
	int fd;
	char *rbuf;
	size_t rcap;
};

static int lat_read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	long n;
	int rc = -EIO;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out_close;
	if ((unsigned long)n > LAT_MAX_BODY) {
		rc = -E2BIG;
		goto out_close;
	}
	data = malloc((size_t)n + 1);
	if (!data) {
		rc = -ENOMEM;
		goto out_close;
	}
	if (fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		goto out_close;
	}
	*out = data;
	*len = (size_t)n;
	rc = 0;
out_close:
	fclose(f);
	return rc;
}

/* src: a source address (host order), 0 for any. */
static int lat_connect(const struct lat_opts *o, uint32_t src)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	struct sockaddr_in from = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src) };
	struct timeval tv = { (time_t)(o->timeout_ms / 1000), (long)(o->timeout_ms % 1000) * 1000 };
	int fd, one = 1;

	if (inet_pton(AF_INET, o->addr, &sin.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* The scheduler's Go client sets TCP_NODELAY; without it the header
	 * and body writes would meet Nagle + delayed ACK (40 ms stalls).
	 * SO_SNDTIMEO bounds connect() too. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    (o->timeout_ms && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
			       setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))) ||
	    (src && bind(fd, (struct sockaddr *)&from, sizeof(from))) ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int lat_send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Case-insensitive search for a header's value inside hdr[0..len). */
static const char *lat_header(const char *hdr, size_t len, const char *name)
{
	size_t m = strlen(name);

	for (const char *p = hdr; p + m + 2 < hdr + len; p++) {
		if (p[0] == '\n' && !strncasecmp(p + 1, name, m) && p[1 + m] == ':') {
			p += 2 + m;
			while (*p == ' ')
				p++;
			return p;
		}
	}
	return NULL;
}

/* Reads one complete reply. Returns 0 with the status and the body's
 * length, or -errno / -EPROTO. */
static int lat_read_reply(struct lat_conn *c, unsigned *status, size_t *body_len)
{
	size_t have = 0, hlen = 0, total = 0;
	const char *end = NULL, *cl, *conn;
	uint64_t clen;
	char num[24];

	for (;;) {
		ssize_t r;

		if (have == c->rcap) {
			size_t ncap = c->rcap * 2;
			char *n;

			if (ncap > LAT_MAX_REPLY)
				return -E2BIG;
			n = realloc(c->rbuf, ncap + 1);
			if (!n)
				return -ENOMEM;
			c->rbuf = n;
			c->rcap = ncap;
		}
		r = read(c->fd, c->rbuf + have, c->rcap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ECONNRESET;
		have += (size_t)r;
		if (!end) {
			c->rbuf[have] = '\0';
			end = strstr(c->rbuf, "\r\n\r\n");
			if (!end) {
				if (have > LAT_MAX_HEADERS)
					return -EPROTO;
				continue;
			}
			hlen = (size_t)(end - c->rbuf) + 4;
			if (sscanf(c->rbuf, "HTTP/1.1 %3u ", status) != 1)
				return -EPROTO;
			/* Chunked replies and Connection: close would both
			 * be news: MHD sends a length and keeps the line. */
			cl = lat_header(c->rbuf, hlen, "Content-Length");
			conn = lat_header(c->rbuf, hlen, "Connection");
			if (!cl || (conn && !strncasecmp(conn, "close", 5)))
				return -EPROTO;
			size_t k = strcspn(cl, "\r");

			if (k >= sizeof(num))
				return -EPROTO;
			memcpy(num, cl, k);
			num[k] = '\0';
			if (units_parse_u64(num, LAT_MAX_REPLY, &clen))
				return -EPROTO;
			total = hlen + (size_t)clen;
		}
		if (have >= total)
			break;
	}
	/* One request in flight, so nothing may follow the reply. */
	if (have != total)
		return -EPROTO;
	*body_len = total - hlen;
	if (*body_len && c->rbuf[hlen] != '[' && c->rbuf[hlen] != '{')
		return -EPROTO;
	return 0;
}

static int lat_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t lat_pct(const uint64_t *v, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

static int lat_parse(int argc, char **argv, struct lat_opts *o)
{
	static const struct option lo[] = {
		{ "http", required_argument, NULL, 'h' }, { "path", required_argument, NULL, 'p' },
		{ "body", required_argument, NULL, 'b' }, { "requests", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' }, { "label", required_argument, NULL, 'l' },
		{ "target-us", required_argument, NULL, 't' }, { "rate", required_argument, NULL, 'r' },
		{ "new-connection", no_argument, NULL, 'c' }, { "sources", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 'T' }, { NULL, 0, NULL, 0 },
	};
	char first[32], *last;
	struct in_addr a;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int rc = 0;

		switch (c) {
		case 'h': rc = hostport_parse(optarg, o->addr, sizeof(o->addr), &o->port); break;
		case 'p': o->path = optarg; break;
		case 'b': o->body_file = optarg; break;
		case 'n': rc = units_parse_u64(optarg, LAT_MAX_REQUESTS, &o->requests); break;
		case 'w': rc = units_parse_u64(optarg, LAT_MAX_REQUESTS, &o->warmup); break;
		case 'l': o->label = optarg; break;
		case 't': rc = units_parse_u64(optarg, 60000000, &o->target_us); break;
		case 'r': rc = units_parse_u64(optarg, 1000000, &o->rate); break;
		case 'c': o->new_connection = true; break;
		case 'T': rc = units_parse_u64(optarg, 60000, &o->timeout_ms); break;
		case 's':
			snprintf(first, sizeof(first), "%s", optarg);
			last = strchr(first, '-');
			if (last)
				*last++ = '\0';
			rc = inet_pton(AF_INET, first, &a) == 1 ? 0 : -EINVAL;
			o->src_first = o->src_last = ntohl(a.s_addr);
			if (!rc && last) {
				rc = inet_pton(AF_INET, last, &a) == 1 ? 0 : -EINVAL;
				o->src_last = ntohl(a.s_addr);
			}
			if (o->src_last < o->src_first)
				rc = -EINVAL;
			break;
		default: return -EINVAL;
		}
		if (rc) {
			fprintf(stderr, "extender_latency: bad value %s\n", optarg);
			return -EINVAL;
		}
	}
	if (!o->port || !o->path || !o->body_file || !o->requests || strlen(o->path) > 256) {
		fprintf(stderr, "usage: extender_latency --http ADDR:PORT --path /prioritize "
				"--body FILE --requests N [--warmup N] [--label TEXT] [--target-us US] "
				"[--rate REQ/S] [--new-connection [--sources A-B]] [--timeout-ms MS]\n");
		return -EINVAL;
	}
	if (!o->label)
		o->label = o->path;
	return 0;
}

int main(int argc, char **argv)
{
	struct lat_opts o = { .warmup = 0 };
	struct lat_conn c = { .fd = -1 };
	char *body = NULL, head[512];
	uint64_t *ns = NULL, total_ns = 0;
	size_t body_len = 0, reply_len = 0, hlen;
	uint64_t timed_out = 0;
	uint32_t src = 0;
	unsigned status = 0;
	int rc = 1, err;

	if (lat_parse(argc, argv, &o))
		return 2;
	if ((err = lat_read_file(o.body_file, &body, &body_len))) {
		fprintf(stderr, "extender_latency: %s: %s\n", o.body_file, strerror(-err));
		return 1;
	}
	hlen = (size_t)snprintf(head, sizeof(head),
				"POST %s HTTP/1.1\r\nHost: %s:%u\r\nUser-Agent: netsched-bench\r\n"
				"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
				o.path, o.addr, o.port, body_len);
	ns = calloc(o.requests, sizeof(*ns));
	c.rcap = 64u * 1024u;
	c.rbuf = malloc(c.rcap + 1);
	if (!ns || !c.rbuf || hlen >= sizeof(head)) {
		fprintf(stderr, "extender_latency: out of memory\n");
		goto out_free;
	}
	if (!o.new_connection) {
		c.fd = lat_connect(&o, o.src_first);
		if (c.fd < 0) {
			fprintf(stderr, "extender_latency: connect %s:%u: %s\n", o.addr, o.port,
				strerror(-c.fd));
			goto out_free;
		}
	}
	for (uint64_t i = 0, next = clock_mono_ns(); i < o.warmup + o.requests; i++) {
		struct iovec iov[2] = { { head, hlen }, { body, body_len } };
		uint64_t t0, dt;

		/* --rate: requests start on a fixed schedule, as pods arrive,
		 * instead of back to back. */
		if (o.rate) {
			struct timespec ts = { (time_t)(next / NS_PER_SEC), (long)(next % NS_PER_SEC) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			next += NS_PER_SEC / o.rate;
		}
		t0 = clock_mono_ns();
		if (o.new_connection) {
			src = !o.src_first ? 0 : src && src < o.src_last ? src + 1 : o.src_first;
			if (c.fd >= 0)
				close(c.fd);
			c.fd = lat_connect(&o, src);
		}
		err = c.fd < 0 ? c.fd : lat_send_all(c.fd, iov, 2);
		if (!err)
			err = lat_read_reply(&c, &status, &reply_len);
		dt = clock_mono_ns() - t0;
		if (o.timeout_ms && (err || dt > o.timeout_ms * NS_PER_MS)) {
			/* What the scheduler sees: no answer in time. */
			timed_out += i >= o.warmup;
			dt = o.timeout_ms * NS_PER_MS;
			err = 0;
			status = 200;
			if (!o.new_connection) {
				close(c.fd);
				c.fd = lat_connect(&o, o.src_first);
			}
		}
		if (err || status != 200) {
			fprintf(stderr, "extender_latency: %s: request %llu: %s (status %u)\n", o.label,
				(unsigned long long)i, err ? strerror(-err) : "not 200", status);
			goto out_close;
		}
		if (i >= o.warmup) {
			ns[i - o.warmup] = dt;
			total_ns += dt;
		}
	}
	qsort(ns, o.requests, sizeof(*ns), lat_cmp);
	printf("%-28s %6.0f KB -> %6.0f KB  p50 %7.0f us  p90 %7.0f us  p99 %7.0f us  max %7.0f us"
	       "  %6.0f req/s",
	       o.label, (double)body_len / 1024, (double)reply_len / 1024,
	       (double)lat_pct(ns, o.requests, 50) / 1e3, (double)lat_pct(ns, o.requests, 90) / 1e3,
	       (double)lat_pct(ns, o.requests, 99) / 1e3, (double)ns[o.requests - 1] / 1e3,
	       (double)o.requests * 1e9 / (double)(total_ns ? total_ns : 1));
	if (o.timeout_ms)
		printf("  timed out (%llu ms) %llu of %llu", (unsigned long long)o.timeout_ms,
		       (unsigned long long)timed_out, (unsigned long long)o.requests);
	if (o.target_us)
		printf("  target p99 <= %llu us: %s", (unsigned long long)o.target_us,
		       lat_pct(ns, o.requests, 99) <= o.target_us * 1000 ? "met" : "NOT MET");
	printf("\n");
	rc = 0;
out_close:
	if (c.fd >= 0)
		close(c.fd);
out_free:
	free(c.rbuf);
	free(ns);
	free(body);
	return rc;
}
