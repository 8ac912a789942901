/* netsched-podjoin-cost: what learning from pods costs the scorer,
 * in-process, one thread, CPU time of this thread:
 *  - ingest and join at 5,000 nodes x 110 pods (bench/podfeed.h): every
 *    node's report (64 pods listed, the rest summed) through
 *    ingest_message() (decode, checks, the node table, the join onto a pod
 *    index holding all 550,000 pods, samples into 8 workloads per node's
 *    pods), beside the same reports without pods; as a share of one core
 *    at the shipped report interval (2 s: 2,500 reports a second); every
 *    report a new reading of the pods (the worst case), and the same
 *    reports again (what 14 of 15 are with the agent's 30 s readings);
 *  - the memory the pod index and workloads take, per node (RSS growth);
 *  - the same with every pod just started and in flight (a scale-up of
 *    every node at once, the worst case for the join telling the in-flight
 *    pods what it measured: inflight_measured() for each report's 64 listed
 *    pods); with pods that have run an hour (the figures above) the join
 *    tells it nothing;
 *  - the learned-demand lookup prioritize makes once per request
 *    (podweight_of() for a replica of a learned workload, 10,000 workloads
 *    tracked), beside a declared pod and a pod of no known workload.
 * Prints the figures and the machine (bench/machine.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/machine.h"
#include "bench/podfeed.h"
#include "bench/podfeed_index.h"
#include "common/clock.h"
#include "proto/report.h"
#include "scorer/pods/inflight.h"
#include "scorer/reports/ingest.h"
#include "scorer/pods/podindex.h"
#include "scorer/pods/podweight.h"
#include "scorer/counters/registry.h"
#include "scorer/nodes/table.h"
#include "scorer/pods/workload.h"

#define NODES 5000u
#define PODS 110u
#define ROUNDS 4u
#define REPORT_INTERVAL_S 2u	/* the agent's shipped --report-interval */
#define LOOKUPS 1000000u

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Node n's report, round seq, packed into wire[n]; with pods, their
 * figures are the agent's reading number reading. */
static void report_for(uint64_t n, uint64_t seq, bool pods, uint64_t reading, uint8_t *wire,
		       size_t *len)
{
	static struct report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "node-%llu", (unsigned long long)n);
	r.instance_id = 0x5eed000000000000ULL + n;
	r.seq = seq;
	r.window_end_unix_ms = clock_unix_ms() - 4000 + seq * 500;
	r.window_start_unix_ms = r.window_end_unix_ms - 60000;
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "ens192");
	report_iface_count(&r.ifaces[0], n * 60000, n * 30000, 60000);
	r.ifaces[0].samples = r.ifaces[0].samples_expected = 60;
	r.ifaces[0].traffic.link_bytes_per_second = 10000000000ULL / 8;
	if (pods) {
		podfeed_fill(&r, n, PODS);
		/* A new reading in every report (the worst case: the agent
		 * reads pods every 30 s and reports every 2 s, and the join
		 * samples a reading once). */
		for (uint32_t j = 0; j < r.n_pods; j++)
			report_pod_count(&r.pods[j], r.pods[j].rx_bytes + reading, r.pods[j].tx_bytes,
					 r.pods[j].covered_ms);
		report_pod_count(&r.pods_rest, r.pods_rest.rx_bytes + reading, r.pods_rest.tx_bytes,
				 r.pods_rest.covered_ms);
	}
	if (report_encode(&r, wire, REPORT_MAX_BYTES, len)) {
		fprintf(stderr, "report_encode failed for node %llu\n", (unsigned long long)n);
		exit(1);
	}
}

static uint8_t wire[NODES][REPORT_MAX_BYTES];
static size_t len[NODES];

/* report_decode() alone over the last round's reports: CPU ns per report. */
static double decode_only(void)
{
	static struct report r;
	uint64_t t0 = machine_cpu_ns(), ok = 0;
	char err[128];

	for (uint64_t n = 0; n < NODES; n++)
		ok += report_decode(wire[n], len[n], &r, err, sizeof(err)) == 0;
	if (ok != NODES)
		fprintf(stderr, "decode: %llu of %u\n", (unsigned long long)ok, NODES);
	return (double)(machine_cpu_ns() - t0) / NODES;
}

/* ROUNDS rounds of every node's report, each with a new reading of the
 * pods (fresh) or the last one again; CPU ns per report. */
static double ingest_rounds(struct ingest_config *ic, bool pods, bool fresh, uint64_t *seq)
{
	uint64_t spent = 0, n_ok = 0;

	for (unsigned round = 0; round < ROUNDS; round++) {
		uint64_t t0;

		static uint64_t reading;

		++*seq;
		reading += fresh;
		for (uint64_t n = 0; n < NODES; n++)
			report_for(n, *seq, pods, reading, wire[n], &len[n]);
		t0 = machine_cpu_ns();
		for (uint64_t n = 0; n < NODES; n++)
			n_ok += ingest_message(ic, wire[n], len[n]) == 0;
		spent += machine_cpu_ns() - t0;
	}
	if (n_ok != (uint64_t)ROUNDS * NODES)
		fprintf(stderr, "only %llu of %u reports applied\n", (unsigned long long)n_ok,
			ROUNDS * NODES);
	return (double)spent / (ROUNDS * NODES);
}

static uint64_t fake_now = 1000ULL * NS_PER_SEC;
static uint64_t fake_clock(void)
{
	return fake_now;
}

/* Every pod of every node started anew age_s ago (it stopped running,
 * then ran again) and bound to its node, in flight, weighing 1 MB/s. */
static void restart_all(struct podindex *x, struct inflight *in, uint64_t unix_ms, int64_t age_s)
{
	struct inflight_pod w = { 1000000, 1000000, 0, 0, false, false, "feed/p",
				  INFLIGHT_LEARNED };
	char uid[32], node[32];

	for (uint64_t n = 0; n < NODES; n++) {
		for (uint64_t j = 0; j < PODS; j++) {
			snprintf(uid, sizeof(uid), "feed-%llu-%llu", (unsigned long long)n,
				 (unsigned long long)j);
			snprintf(node, sizeof(node), "node-%llu", (unsigned long long)n);
			inflight_bound(in, uid, strlen(uid), node, strlen(node), &w, fake_now,
				       fake_now);
		}
		podfeed_index_node(x, n, PODS, fake_now, unix_ms, -1);
		podfeed_index_node(x, n, PODS, fake_now, unix_ms, age_s);
	}
}

static double lookup_ns(const struct podweight *w, const struct podweight_pod *pod)
{
	struct inflight_pod out;
	uint64_t sum = 0, t0 = machine_cpu_ns();

	for (unsigned i = 0; i < LOOKUPS; i++) {
		podweight_of(w, pod, &out, NULL, NULL);
		sum += out.rx_bytes_per_second;
	}
	if (sum == 1)
		printf(" ");
	return (double)(machine_cpu_ns() - t0) / LOOKUPS;
}

int main(void)
{
	struct workload_config wc = { .max_workloads = 10000, .half_life_ns = 600 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = NODES * PODS, .max_nodes = NODES,
				      .stale_ns = 6 * NS_PER_SEC };
	/* deploy/'s hold and fade, room for every pod. */
	struct inflight_config fc = { .max_pods = NODES * PODS, .max_nodes = NODES,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };
	struct inflight *in = inflight_create(&fc);
	struct inflight_stats is;
	static struct registry counters;
	struct ingest_config ic = { .counters = &counters, .now_ns = fake_clock };
	struct workload *wl = workload_create(&wc);
	struct podindex *x = NULL;
	struct podindex_stats st;
	struct workload_stats ws;
	uint64_t seq = 0, unix_ms = clock_unix_ms(), t0;
	long rss0, rss1;
	double plain, joined, repeated, decode, per_node_kb, fill_s, young;
	char model[128];

	machine_cpu_model(model, sizeof(model));
	printf("pods in the scorer, machine: %ld cpus, %s\n", sysconf(_SC_NPROCESSORS_ONLN), model);
	ic.table = table_create(NODES);
	if (!wl || !ic.table || !in) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	/* Without pods first: the baseline the join adds to. */
	plain = ingest_rounds(&ic, false, true, &seq);
	rss0 = rss_kb();
	xc.inflight = in;
	x = podindex_create(&xc, wl);
	if (!x) {
		fprintf(stderr, "out of memory for %u pods\n", NODES * PODS);
		return 1;
	}
	t0 = machine_cpu_ns();
	for (uint64_t n = 0; n < NODES; n++)
		podfeed_index_node(x, n, PODS, fake_now, unix_ms, 3600);
	fill_s = (double)(machine_cpu_ns() - t0) / 1e9;
	ic.pods = x;
	joined = ingest_rounds(&ic, true, true, &seq);
	repeated = ingest_rounds(&ic, true, false, &seq);
	decode = decode_only();
	workload_tick(wl, fake_now);
	rss1 = rss_kb();
	per_node_kb = (double)(rss1 - rss0) / NODES;
	podindex_stats(x, &st);
	workload_stats(wl, &ws);
	printf("ingest, %u nodes, report without pods:       %6.1f us CPU per report\n", NODES,
	       plain / 1000);
	printf("ingest + join, %u pods a node (64 listed), a new reading in each: %.1f us CPU per "
	       "report: %.1f%% of a core at %u reports/s (%u nodes every %u s)\n", PODS, joined / 1000,
	       joined * NODES / REPORT_INTERVAL_S / 1e7, NODES / REPORT_INTERVAL_S, NODES,
	       REPORT_INTERVAL_S);
	printf("  of which decoding and validating the report alone: %.1f us\n", decode / 1000);
	printf("the same, the pods' reading repeated (14 of 15 reports): %6.1f us CPU per report: "
	       "%.1f%% of a core\n", repeated / 1000, repeated * NODES / REPORT_INTERVAL_S / 1e7);
	printf("  (joined %llu entries, %llu unmatched; %zu pods indexed, %zu workloads, %llu "
	       "samples; indexing the %u pods took %.2f s)\n", (unsigned long long)st.matched,
	       (unsigned long long)(st.unknown_ip + st.wrong_node + st.not_running), st.pods,
	       ws.tracked, (unsigned long long)ws.samples, NODES * PODS, fill_s);
	restart_all(x, in, unix_ms, 5);
	young = ingest_rounds(&ic, true, true, &seq);
	inflight_stats(in, &is);
	printf("the same, every pod started 5 s ago and in flight (each report tells the in-flight "
	       "pods of its 64 listed): %.1f us CPU per report: %.1f%% of a core (%zu pods in "
	       "flight, %llu measured whole)\n", young / 1000, young * NODES / REPORT_INTERVAL_S / 1e7,
	       is.pods, (unsigned long long)is.measured);
	printf("memory of the pod index and workloads:  %.1f kB per node (%u pods a node; RSS "
	       "%ld -> %ld kB)\n", per_node_kb, PODS, rss0, rss1);

	/* The prioritize path: one podweight_of() per request. 10,000
	 * workloads learned, as a busy cluster has. */
	{
		struct workload_config wc2 = { .max_workloads = 10000,
					       .half_life_ns = 600 * NS_PER_SEC };
		struct workload *many = workload_create(&wc2);
		struct podweight w = { .cfg = { .doubt_pct = 10 }, .workloads = many, .pods = x };
		struct kubepod_owner rs = { .kind = { "ReplicaSet", 10 },
					    .name = { "web-4711-abc12", 14 },
					    .template_hash = { "abc12", 5 } };
		struct kubepod_str ns = { "shop", 4 }, name = { "web-4711-abc12-x1", 17 };
		struct podweight_pod learned = { 0, 0, &ns, &name, &rs, "shop/pod" };
		struct podweight_pod declared = { 80000000, 80000000, &ns, &name, &rs, "shop/pod" };
		struct podweight_pod bare = { 0, 0, &ns, &name, NULL, "shop/pod" };
		char key_name[32];

		for (unsigned i = 0; many && i < 10000; i++) {
			struct workload_key k = { "shop", "Deployment", "" };
			int32_t id;

			snprintf(key_name, sizeof(key_name), "web-%u", i);
			snprintf(k.name, sizeof(k.name), "%s", key_name);
			id = workload_ref(many, &k, fake_now);
			workload_sample(many, id, i + 1, 1000 + i, 100, fake_now);
		}
		workload_tick(many, fake_now);
		printf("learned-demand lookup (podweight_of), once per prioritize request:\n");
		printf("  a replica of a learned workload (10,000 tracked): %6.1f ns\n",
		       lookup_ns(&w, &learned));
		printf("  a pod declaring both directions:                  %6.1f ns\n",
		       lookup_ns(&w, &declared));
		printf("  a bare pod of no known workload (the fallback):   %6.1f ns\n",
		       lookup_ns(&w, &bare));
		workload_destroy(many);
	}
	podindex_destroy(x);
	inflight_destroy(in);
	workload_destroy(wl);
	table_destroy(ic.table);
	return 0;
}
