/* What measuring pods costs the agent per report, as the agent runs: a
 * sample every "second", a report every two (sampler_fill() and
 * report_encode()), the pods read every thirty (the shipped settings); the
 * same loop with the pods
 * off and on, in the namespace it runs in (bench/agent.sh builds one with
 * 110 pods). Ticks run on a fake clock, one "second" apart, so windows and
 * readings work as in production; only the CPU is real.
 *   ip netns exec NS build/rel/bench/pods_cost UPLINK REPORTS ROUNDS
 * Runs off and on in turn ROUNDS times (the machine's load moves between
 * rounds); prints each round's CPU per report (its two samples, a
 * fifteenth of a pods' reading, address lookups, fill and encode included), the median
 * of what the pods add, and the heap they take. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/nl.h"
#include "agent/sampler.h"
#include "common/clock.h"
#include "common/log.h"
#include "proto/report.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* In use, from the heap and mmap()ed alike (large tables start mmap()ed,
 * and after one free come from the heap). */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* One run of reports reports; returns ns of CPU per report, and the heap
 * in use once set up in *heap. */
static double run(const char *uplink, bool pods, uint64_t reports, size_t *heap, uint32_t *seen)
{
	static struct sampler sm;
	static struct report r;
	static uint8_t wire[REPORT_MAX_BYTES];
	struct sampler_config cfg = {
		.node = "bench",
		.source = SAMPLER_NETLINK,
		.interval_ns = NS_PER_SEC,
		.window_ns = 60 * NS_PER_SEC,
		.recent_ns = 2 * NS_PER_SEC,
		.sysfs_root = "/sys/class/net",
		.sysfs_speed = true,
		.pods = { .interval_ns = 30 * NS_PER_SEC, .reported = 32 },
	};
	char err[256];
	uint64_t t0, t1, now = clock_mono_ns();
	size_t before = heap_bytes(), len;
	struct nl *nl;

	if (ifselect_parse(&cfg.spec, uplink, false, err, sizeof(err)) ||
	    podselect_parse(&cfg.pods.spec, pods ? "auto" : "off", err, sizeof(err))) {
		fprintf(stderr, "selection: %s\n", err);
		exit(2);
	}
	nl = nl_open(pods, err, sizeof(err));
	if (!nl || sampler_init(&sm, nl, &cfg)) {
		fprintf(stderr, "setup: %s\n", err);
		exit(1);
	}
	/* A window's worth first, so every window is full, as on a node that
	 * has run a while. */
	for (int i = 0; i < 61; i++)
		sampler_tick(&sm, now += NS_PER_SEC);
	*heap = heap_bytes() - before;
	t0 = cpu_ns();
	for (uint64_t i = 0; i < reports; i++) {
		sampler_tick(&sm, now += NS_PER_SEC);
		sampler_tick(&sm, now += NS_PER_SEC);
		memset(&r, 0, sizeof(r));
		snprintf(r.node, sizeof(r.node), "bench");
		r.window_end_unix_ms = 1;
		sampler_fill(&sm, now, &r);
		if (report_encode(&r, wire, sizeof(wire), &len)) {
			fprintf(stderr, "report not encoded\n");
			exit(1);
		}
	}
	t1 = cpu_ns();
	*seen = r.pods_seen;
	sampler_free(&sm);
	nl_close(nl);
	return (double)(t1 - t0) / (double)reports;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define MAX_ROUNDS 15

int main(int argc, char **argv)
{
	uint64_t reports;
	size_t heap_off = 0, heap_on = 0, rounds;
	uint32_t seen_off, seen_on = 0;
	double add[MAX_ROUNDS];

	if (argc != 4) {
		fprintf(stderr, "usage: %s UPLINK REPORTS ROUNDS\n", argv[0]);
		return 2;
	}
	log_init("pods_cost");
	log_set_level(LOG_LVL_ERROR);
	reports = strtoull(argv[2], NULL, 10);
	rounds = strtoull(argv[3], NULL, 10);
	if (reports == 0 || rounds == 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "REPORTS at least 1, ROUNDS 1 to %d\n", MAX_ROUNDS);
		return 2;
	}
	for (size_t i = 0; i < rounds; i++) {
		double off = run(argv[1], false, reports, &heap_off, &seen_off);
		double on = run(argv[1], true, reports, &heap_on, &seen_on);

		add[i] = on - off;
		printf("round %zu: pods off %.1f us per report, on %.1f us (%u pod interfaces): "
		       "+%.1f us\n", i + 1, off / 1e3, on / 1e3, seen_on, add[i] / 1e3);
	}
	qsort(add, rounds, sizeof(add[0]), cmp_double);
	printf("pods add: %.1f us per report, median of %zu rounds (min %.1f, max %.1f; target: "
	       "at most 20), %zd kB of heap\n", add[rounds / 2] / 1e3, rounds, add[0] / 1e3,
	       add[rounds - 1] / 1e3, ((ssize_t)heap_on - (ssize_t)heap_off) / 1024);
	return 0;
}
