/* netsched-feed: pretends to be many agents. Sends synthetic reports for
 * --nodes nodes from --senders NNG push sockets (one thread each) to one
 * scorer, as fast as possible or at --rate reports per node per second, for
 * --duration seconds. Used by `make bench` (ingest throughput, a populated
 * table for the extender benchmarks) and by load tests. --pods N adds N
 * pods' traffic to each node's report (bench/podfeed.h says which); --link
 * sets every node's link, bytes per second (10 Gb/s otherwise), so a test
 * can make nodes hot.
 *
 *   netsched-feed --scorer tcp://127.0.0.1:7470 --nodes 5000 --senders 16 --duration 5
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>
#include <nng/supplemental/util/platform.h>

#include "common/clock.h"
#include "common/units.h"
#include "proto/report.h"
#include "bench/podfeed.h"

struct feed {
	const char *url;
	uint64_t nodes, senders, rate, duration_ms, once, pods;
	uint64_t link;		/* bytes per second; 0: 10 Gb/s */
};

struct sender {
	const struct feed *f;
	unsigned idx;
	uint64_t sent, failed;
};

/* Node i gets rx traffic i * 1000 B/s, so scores are predictable; its
 * link is link bytes per second (0: 10 Gb/s). */
static void fill(struct report *r, uint64_t node, uint64_t instance, uint64_t seq, uint64_t link)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->node, sizeof(r->node), "node-%llu", (unsigned long long)node);
	r->instance_id = instance;
	r->seq = seq;
	r->window_end_unix_ms = clock_unix_ms();
	r->window_start_unix_ms = r->window_end_unix_ms - 60000;
	r->sample_interval_ms = 1000;
	r->n_ifaces = 1;
	snprintf(r->ifaces[0].name, sizeof(r->ifaces[0].name), "ens192");
	report_iface_count(&r->ifaces[0], node * 1000 * 60, node * 500 * 60, 60000);
	r->ifaces[0].samples = 60;
	r->ifaces[0].samples_expected = 60;
	r->ifaces[0].traffic.link_bytes_per_second = link ? link : 10000000000ULL / 8;
}

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	const struct feed *f = s->f;
	uint64_t end = clock_mono_ns() + f->duration_ms * NS_PER_MS, seq = 0;
	uint64_t instance = 0x5eed000000000000ULL + s->idx;
	uint64_t period_ns = f->rate ? NS_PER_SEC / f->rate : 0, next = clock_mono_ns();
	uint8_t buf[REPORT_MAX_BYTES];
	struct report r;
	nng_socket sock;
	int rv;

	if ((rv = nng_push0_open(&sock))) {
		fprintf(stderr, "netsched-feed: sender %u: open push socket: %s\n", s->idx, nng_strerror(rv));
		s->failed++;
		return NULL;
	}
	if ((rv = nng_dial(sock, f->url, NULL, 0))) {
		fprintf(stderr, "netsched-feed: sender %u: dial %s: %s\n", s->idx, f->url, nng_strerror(rv));
		nng_close(sock);
		s->failed++;
		return NULL;
	}
	do {
		seq++;
		/* Each sender owns the nodes congruent to its index. */
		for (uint64_t n = s->idx; n < f->nodes; n += f->senders) {
			size_t len;

			fill(&r, n, instance + (n << 16), seq, f->link);
			if (f->pods)
				podfeed_fill(&r, n, f->pods);
			if (report_encode(&r, buf, sizeof(buf), &len) ||
			    nng_send(sock, buf, len, 0))
				s->failed++;
			else
				s->sent++;
		}
		if (period_ns) {
			struct timespec ts;

			next += period_ns;
			ts.tv_sec = (time_t)(next / NS_PER_SEC);
			ts.tv_nsec = (long)(next % NS_PER_SEC);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	} while (!f->once && clock_mono_ns() < end);
	/* Let queued messages drain before the socket goes. */
	nng_msleep(200);
	nng_close(sock);
	return NULL;
}

static int parse(int argc, char **argv, struct feed *f)
{
	static const struct option lo[] = {
		{ "scorer", required_argument, NULL, 's' }, { "nodes", required_argument, NULL, 'n' },
		{ "senders", required_argument, NULL, 'k' }, { "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' }, { "once", no_argument, NULL, 'o' },
		{ "pods", required_argument, NULL, 'p' }, { "link", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int rc = 0;

		switch (c) {
		case 's': f->url = optarg; break;
		case 'n': rc = units_parse_u64(optarg, 1000000, &f->nodes); break;
		case 'k': rc = units_parse_u64(optarg, 1024, &f->senders); break;
		case 'r': rc = units_parse_u64(optarg, 1000000, &f->rate); break;
		case 'd': rc = units_parse_duration_ms(optarg, &f->duration_ms); break;
		case 'o': f->once = 1; break;
		case 'p': rc = units_parse_u64(optarg, PODFEED_MAX_PODS, &f->pods); break;
		case 'l': rc = units_parse_u64(optarg, 400000000000ULL, &f->link); break;
		default: return -EINVAL;
		}
		if (rc) {
			fprintf(stderr, "netsched-feed: bad value %s\n", optarg);
			return -EINVAL;
		}
	}
	if (!f->url || !f->nodes || !f->senders) {
		fprintf(stderr, "usage: netsched-feed --scorer URL --nodes N --senders K "
				"[--rate R/s per node] [--duration 5s | --once] [--pods N per node] "
				"[--link B/s per node]\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct feed f = { .duration_ms = 5000 };
	struct sender *s;
	pthread_t *th;
	uint64_t sent = 0, failed = 0, t0;
	double secs;

	if (parse(argc, argv, &f))
		return 2;
	s = calloc(f.senders, sizeof(*s));
	th = calloc(f.senders, sizeof(*th));
	if (!s || !th)
		return 1;
	t0 = clock_mono_ns();
	for (unsigned i = 0; i < f.senders; i++) {
		int rv;

		s[i] = (struct sender){ .f = &f, .idx = i };
		rv = pthread_create(&th[i], NULL, send_loop, &s[i]);
		if (rv) {
			fprintf(stderr, "netsched-feed: start sender %u: %s\n", i, strerror(rv));
			f.senders = i;	/* join only the ones that run */
			failed++;
			break;
		}
	}
	for (unsigned i = 0; i < f.senders; i++) {
		pthread_join(th[i], NULL);
		sent += s[i].sent;
		failed += s[i].failed;
	}
	secs = (double)(clock_mono_ns() - t0) / 1e9;
	printf("sent %llu reports (%llu failed) for %llu nodes from %llu senders in %.2f s: %.0f reports/s\n",
	       (unsigned long long)sent, (unsigned long long)failed, (unsigned long long)f.nodes,
	       (unsigned long long)f.senders, secs, (double)sent / secs);
	free(s);
	free(th);
	return failed ? 1 : 0;
}
