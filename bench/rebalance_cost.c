/* netsched-rebalance-cost: what one cycle of the rebalancer costs it, in
 * process, one thread, at 5,000 nodes: reading the scorers' /v1/pressure
 * (pressure.c) with 250 nodes hot in tx (5%), each listing 32 pods, then
 * counting the reports (decide_observe) and planning (decide_plan), the
 * hot nodes' pods all movable (one workload each), destinations sought
 * among the 4,750 others; the limits raised so every hot node plans a move
 * (the most work a plan can do).
 * CPU time per step (median of RUNS) and the reply's size; the apiserver's
 * and the scorers' round trips are not in it. Prints the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/machine.h"
#include "common/buf.h"
#include "rebalancer/decide.h"
#include "rebalancer/pressure.h"

#define NODES 5000u
#define HOT 250u
#define PODS 32u
#define RUNS 15
#define LINK 125000000ULL

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void reply(struct buf *b, uint64_t reports)
{
	buf_reset(b);
	buf_puts(b, "{\"hot\":0.900,\"windowSeconds\":30,\"nodes\":[");
	for (unsigned i = 0; i < NODES; i++) {
		bool hot = i % (NODES / HOT) == 0;

		buf_printf(b, "%s{\"name\":\"node-%05u\",\"fresh\":true,\"reports\":%llu,"
			   "\"linkBytesPerSecond\":%llu,\"rxBytesPerSecond\":%llu,"
			   "\"txBytesPerSecond\":%llu,\"inflightRxBytesPerSecond\":0,"
			   "\"inflightTxBytesPerSecond\":%u,\"heldForWorkloads\":0",
			   i ? "," : "", i, (unsigned long long)reports, LINK,
			   (unsigned long long)(LINK / 10 + i * 1000),
			   (unsigned long long)(hot ? LINK * 95 / 100 : LINK / 5 + i * 1000), i % 7);
		if (hot) {
			buf_puts(b, ",\"pods\":[");
			for (unsigned k = 0; k < PODS; k++)
				buf_printf(b, "%s{\"namespace\":\"team-%u\",\"name\":\"web-%05u-%02u\","
					   "\"uid\":\"%08x-0000-4000-8000-%012u\",\"workload\":"
					   "\"team-%u/Deployment/web-%05u-%02u\",\"rxBytesPerSecond\":%u,"
					   "\"txBytesPerSecond\":%llu}", k ? "," : "", i % 10, i, k,
					   i, k, i % 10, i, k, 1000 * k,
					   (unsigned long long)(LINK * 95 / 100 / PODS - k * 1000));
			buf_puts(b, "]");
		}
		buf_puts(b, "}");
	}
	buf_puts(b, "],\"hotNodesWithoutPods\":0}");
}

int main(void)
{
	uint64_t parse[RUNS], observe[RUNS], plan[RUNS];
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_outcome *out = calloc(NODES, sizeof(*out));
	struct buf b;
	char err[256], cpu[128];
	size_t n = 0, moves = 0, bytes = 0;

	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	cfg.min_age_s = 0;
	cfg.max_per_cycle = HOT;
	cfg.max_per_hour = 2048;
	cfg.max_per_namespace = 1000;
	if (!out || decide_memory_init(&m)) {
		fprintf(stderr, "netsched-rebalance-cost: out of memory\n");
		return 1;
	}
	buf_init(&b, PRESSURE_BODY_MAX);
	for (int r = 0; r < RUNS; r++) {
		struct decide_snapshot s = { .now_s = 1800000000 };
		uint64_t t0, t1, t2, t3;

		reply(&b, (uint64_t)r + 1);
		if (buf_failed(&b)) {
			fprintf(stderr, "netsched-rebalance-cost: reply over its bound\n");
			return 1;
		}
		bytes = b.len;
		t0 = machine_cpu_ns();
		if (pressure_parse(b.data, b.len, &s, err, sizeof(err))) {
			fprintf(stderr, "netsched-rebalance-cost: %s\n", err);
			return 1;
		}
		t1 = machine_cpu_ns();
		for (size_t i = 0; i < s.n_nodes; i++)
			for (size_t k = 0; k < s.nodes[i].n_pods; k++) {
				s.nodes[i].pods[k].known = true;
				s.nodes[i].pods[k].owner = DECIDE_OWNER_REPLICASET;
			}
		if (decide_observe(&m, &cfg, &s)) {
			fprintf(stderr, "netsched-rebalance-cost: out of memory\n");
			return 1;
		}
		t2 = machine_cpu_ns();
		n = decide_plan(&cfg, &m, &s, out, NODES);
		t3 = machine_cpu_ns();
		moves = 0;
		for (size_t k = 0; k < n; k++)
			moves += out[k].reason == DECIDE_MOVE;
		parse[r] = t1 - t0;
		observe[r] = t2 - t1;
		plan[r] = t3 - t2;
		decide_snapshot_free(&s);
	}
	qsort(parse, RUNS, sizeof(parse[0]), cmp_u64);
	qsort(observe, RUNS, sizeof(observe[0]), cmp_u64);
	qsort(plan, RUNS, sizeof(plan[0]), cmp_u64);
	machine_cpu_model(cpu, sizeof(cpu));
	printf("rebalance cycle, %u nodes, %u hot with %u pods each, reply %.1f MB, median of %d "
	       "(CPU time, one thread, %s):\n", NODES, HOT, PODS, bytes / 1e6, RUNS, cpu);
	printf("  read /v1/pressure   %.2f ms\n", parse[RUNS / 2] / 1e6);
	printf("  count reports       %.2f ms\n", observe[RUNS / 2] / 1e6);
	printf("  plan                %.2f ms (%zu hot nodes, %zu moves planned on the last run)\n",
	       plan[RUNS / 2] / 1e6, n, moves);
	buf_free(&b);
	free(out);
	decide_memory_free(&m);
	return 0;
}
