/* netsched-pressure-cost: what GET /v1/pressure costs the scorer
 * (scorer/serve/pressure.c), in-process, one thread, at 5,000 nodes each
 * reporting 32 pods (bench/podfeed.h) joined to the pod index:
 *  - 5% of the nodes hot (250 with their pods listed) and 100 moves held;
 *  - every node hot: pods listed for the 512 hottest (the reply's bound);
 * CPU time per render (median of RENDERS) and the reply's size; and what
 * moves cost a 5,000-name prioritize with the table full (4,096 moves):
 * the reservations looked up for every name, the request pod's own moves
 * once. The
 * rebalancer polls it every few seconds; it runs on the HTTP server's
 * big-request thread, never on the scheduler's. Prints the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/machine.h"
#include "bench/podfeed.h"
#include "bench/podfeed_index.h"
#include "common/clock.h"
#include "common/namekey.h"
#include "scorer/nodes/table.h"
#include "scorer/nodes/view.h"
#include "scorer/pods/moves.h"
#include "scorer/pods/podindex.h"
#include "scorer/pods/workload.h"
#include "scorer/scorer.h"
#include "scorer/serve/pressure.h"
#include "scorer/serve/reply.h"

#define NODES 5000u
#define PODS 32u
#define RENDERS 21u
#define LINK (10000000000ULL / 8)	/* 10 Gb/s */

static uint64_t fake_now = 1000ULL * NS_PER_SEC;
static uint64_t fake_clock(void)
{
	return fake_now;
}

/* Node n's report: hot ones at 95% of the link in, the others at 20%. */
static void report_of(struct report *r, uint64_t n, uint64_t seq, bool hot)
{
	uint64_t rx = hot ? LINK * 95 / 100 : LINK / 5;

	memset(r, 0, sizeof(*r));
	snprintf(r->node, sizeof(r->node), "node-%llu", (unsigned long long)n);
	r->instance_id = 1;
	r->seq = seq;
	r->window_end_unix_ms = 1800000000000ULL + seq * 2000;
	r->window_start_unix_ms = r->window_end_unix_ms - 30000;
	r->n_ifaces = 1;
	snprintf(r->ifaces[0].name, sizeof(r->ifaces[0].name), "ens192");
	/* The pods' traffic comes on top (podfeed_fill()): a little less. */
	report_iface_count(&r->ifaces[0], (rx - 600000) * 30, rx / 10 * 30, 30000);
	r->ifaces[0].traffic.link_bytes_per_second = LINK;
	podfeed_fill(r, n, PODS);
}

/* Every node reports once more, hot_every-th ones hot (1: all). */
static void feed(struct scorer *s, uint64_t seq, unsigned hot_every)
{
	static struct report r;

	for (uint64_t n = 0; n < NODES; n++) {
		report_of(&r, n, seq, n % hot_every == 0);
		table_apply(s->view.table, &r, fake_now);
		podindex_join(s->view.weights.pods, &r, fake_now);
	}
}

static void got(size_t i, uint64_t rx, uint64_t tx, void *ctx)
{
	*(uint64_t *)ctx += i + rx + tx;
}

/* CPU ns a 5,000-name request spends on moves: reservations of every name
 * (in VIEW_BATCH chunks, as the view asks) and its workload's moves. */
static double request_us(struct moves *m)
{
	static struct namekey keys[NODES];
	static char names[NODES][24];
	struct moves_mine mine;
	uint64_t sum = 0, t0;

	for (unsigned n = 0; n < NODES; n++) {
		snprintf(names[n], sizeof(names[n]), "node-%u", n);
		keys[n] = namekey_of(names[n], strlen(names[n]));
	}
	t0 = machine_cpu_ns();
	for (unsigned r = 0; r < 100; r++) {
		for (unsigned n = 0; n < NODES; n += VIEW_BATCH)
			moves_reserved_each(m, keys + n, NODES - n < VIEW_BATCH ? NODES - n : VIEW_BATCH,
					    fake_now, got, &sum);
		moves_mine(m, "feed/Deployment/d3", 18, fake_now, &mine);
		sum += mine.n;
	}
	if (sum == 1)
		printf(" ");
	return (double)(machine_cpu_ns() - t0) / 100 / 1000;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median CPU time of RENDERS renders, and the last reply's size. */
static double render_ms(struct scorer *s, size_t *bytes)
{
	uint64_t t[RENDERS];

	for (unsigned i = 0; i < RENDERS; i++) {
		struct reply out;
		uint64_t t0 = machine_cpu_ns();

		pressure_reply(s, NULL, &out);
		t[i] = machine_cpu_ns() - t0;
		if (out.status != 200) {
			fprintf(stderr, "pressure: %u %.*s\n", out.status, (int)out.len, out.body);
			exit(1);
		}
		*bytes = out.len;
		free(out.body);
	}
	qsort(t, RENDERS, sizeof(t[0]), by_u64);
	return (double)t[RENDERS / 2] / 1e6;
}

int main(void)
{
	struct workload_config wc = { .max_workloads = 1000, .half_life_ns = 600 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = NODES * PODS, .max_nodes = NODES,
				      .stale_ns = 6 * NS_PER_SEC };
	static struct scorer s;
	uint64_t unix_ms = clock_unix_ms();
	size_t some_bytes, all_bytes;
	double some, all;
	char model[128];

	machine_cpu_model(model, sizeof(model));
	{
		double load[3] = { 0 };

		getloadavg(load, 3);
		printf("/v1/pressure, machine: %ld cpus, %s, load %.2f\n",
		       sysconf(_SC_NPROCESSORS_ONLN), model, load[0]);
	}
	s.now_ns = fake_clock;
	s.view.policy = POLICY_PRESSURE;
	s.view.direction = POLICY_DIR_FIT;
	s.view.stale_after_ns = 6 * NS_PER_SEC;
	s.view.table = table_create(NODES);
	s.view.weights.workloads = workload_create(&wc);
	s.view.weights.pods = podindex_create(&xc, s.view.weights.workloads);
	s.view.moves = moves_create(MOVES_DEFAULT_MAX);
	if (!s.view.table || !s.view.weights.pods || !s.view.moves) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (uint64_t n = 0; n < NODES; n++)
		podfeed_index_node(s.view.weights.pods, n, PODS, fake_now, unix_ms, 3600);
	for (unsigned m = 0; m < 100; m++) {
		struct movereq rq = { .ns = "feed", .workload = "feed/Deployment/d0",
					    .rx_bytes_per_second = 1000, .hold_s = 300 };

		snprintf(rq.pod, sizeof(rq.pod), "p-%u-0", m * 20);
		snprintf(rq.uid, sizeof(rq.uid), "feed-%u-0", m * 20);
		snprintf(rq.from, sizeof(rq.from), "node-%u", m * 20);
		snprintf(rq.to, sizeof(rq.to), "node-%u", m * 20 + 1);
		moves_put(s.view.moves, &rq, fake_now);
	}
	feed(&s, 1, 20);
	some = render_ms(&s, &some_bytes);
	fake_now += 2 * NS_PER_SEC;
	feed(&s, 2, 1);
	all = render_ms(&s, &all_bytes);
	printf("pressure render, %u nodes, 5%% hot, 100 moves:  %6.2f ms CPU, %zu kB\n", NODES, some,
	       some_bytes / 1000);
	printf("pressure render, %u nodes, all hot (512 with pods): %6.2f ms CPU, %zu kB\n", NODES,
	       all, all_bytes / 1000);
	printf("moves on a 5,000-name prioritize, no moves:        %6.1f us CPU\n",
	       request_us(NULL));
	printf("moves on a 5,000-name prioritize, 100 moves held:   %6.1f us CPU\n",
	       request_us(s.view.moves));
	for (unsigned m = 100; m < MOVES_DEFAULT_MAX; m++) {
		struct movereq rq = { .ns = "feed", .rx_bytes_per_second = 1000, .hold_s = 300 };

		snprintf(rq.workload, sizeof(rq.workload), "feed/Deployment/d%u", m % 8);
		snprintf(rq.pod, sizeof(rq.pod), "p-%u-1", m);
		snprintf(rq.uid, sizeof(rq.uid), "feed-%u-1", m);
		snprintf(rq.from, sizeof(rq.from), "node-%u", m % NODES);
		snprintf(rq.to, sizeof(rq.to), "node-%u", (m * 7 + 3) % NODES);
		moves_put(s.view.moves, &rq, fake_now);
	}
	printf("moves on a 5,000-name prioritize, 4,096 moves held: %6.1f us CPU\n",
	       request_us(s.view.moves));
	moves_destroy(s.view.moves);
	podindex_destroy(s.view.weights.pods);
	workload_destroy(s.view.weights.workloads);
	table_destroy(s.view.table);
	return 0;
}
