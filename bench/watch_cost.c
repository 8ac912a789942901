/* What the pod watch costs the scorer per event: the informer
 * (scorer/kube/podinformer.h) fed a watch stream as kube-apiserver 1.20
 * sends it, each pod once ADDED (pending, no node) and once MODIFIED (bound
 * to one of NODES nodes), pods of WORKLOADS ReplicaSets, in 64 KiB reads.
 * Everything the scorer does with an event runs: the parse, the pod index,
 * the workload model, the pod's weight, the in-flight table. bench/k8s.sh
 * found most of netsched's CPU per pod there rather than in its answers.
 *   build/rel/bench/watch_cost [PODS [NODES [WORKLOADS [ROUNDS]]]]
 * Prints the CPU per event of each round and their median, and the machine.
 * Deterministic input: under `valgrind --tool=callgrind` it shows where the
 * instructions go, whatever else the machine is doing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/machine.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "scorer/kube/podinformer.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/podindex.h"
#include "scorer/pods/podweight.h"
#include "scorer/pods/workload.h"

static uint64_t t_ns = 1000 * NS_PER_SEC;
static uint64_t mono(void) { return t_ns; }
static uint64_t wall(void) { return 1790000000000ULL + t_ns / NS_PER_MS; }

/* One event, as 1.20's apiserver writes a pod made by a ReplicaSet
 * (managedFields included: they are most of the bytes). */
static void put_event(struct buf *b, const char *type, unsigned pod, unsigned rv, unsigned wl,
		      int node)
{
	buf_printf(b,
		   "{\"type\":\"%s\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
		   "\"name\":\"web-%u-%05u\",\"generateName\":\"web-%u-\",\"namespace\":\"bench\","
		   "\"uid\":\"1162e397-9f17-4bef-%04x-%012x\",\"resourceVersion\":\"%u\","
		   "\"creationTimestamp\":\"2026-11-22T11:41:34Z\",\"labels\":{\"app\":\"web-%u\"},"
		   "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		   "\"name\":\"web-%u\",\"uid\":\"5a8c0d3e-1111-4bef-9fb9-%012x\",\"controller\":true,"
		   "\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":\"kube-controller-"
		   "manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-22T11:41"
		   ":34Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":"
		   "{},\"f:labels\":{\".\":{},\"f:app\":{}},\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid"
		   "\\\":\\\"5a8c0d3e\\\"}\":{\".\":{},\"f:apiVersion\":{},\"f:blockOwnerDeletion\":{},"
		   "\"f:controller\":{},\"f:kind\":{},\"f:name\":{},\"f:uid\":{}}}},\"f:spec\":{\"f:"
		   "containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:image\":{},\"f:"
		   "imagePullPolicy\":{},\"f:name\":{},\"f:resources\":{\".\":{},\"f:requests\":{\".\""
		   ":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},\"f:termination"
		   "MessagePolicy\":{}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:restart"
		   "Policy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},\"f:termination"
		   "GracePeriodSeconds\":{}}}}]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		   "\"registry.invalid/pause:never-pulled\",\"resources\":{\"requests\":{\"cpu\":"
		   "\"100m\",\"memory\":\"64Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\","
		   "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],"
		   "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":"
		   "\"ClusterFirst\",",
		   type, wl, pod, wl, pod >> 16, pod, rv, wl, wl, wl);
	if (node >= 0)
		buf_printf(b, "\"nodeName\":\"node-%d\",", node);
	buf_printf(b,
		   "\"securityContext\":{},\"schedulerName\":\"default-scheduler\",\"tolerations\":["
		   "{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
		   "\"NoExecute\",\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/"
		   "unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\""
		   ":300}],\"priority\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":\"Preempt"
		   "LowerPriority\"},\"status\":{\"phase\":\"Pending\",%s\"qosClass\":\"Burstable\"}}}\n",
		   node >= 0 ? "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","
			       "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-22T11:41:35Z\"}],"
			     : "");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Feeds stream to a fresh informer (after an empty list); returns the CPU
 * ns it took, and the events the informer counted in *events. */
static uint64_t run(const struct buf *stream, unsigned pods, unsigned nodes, uint64_t *events)
{
	static const char list[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
				   "{\"resourceVersion\":\"1\"},\"items\":[]}";
	struct inflight_config ic = { .max_pods = pods + 16, .max_nodes = nodes + 16,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };
	struct workload_config wc = { .max_workloads = 50000, .half_life_ns = 60 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = pods + 16, .max_nodes = nodes + 16,
				      .stale_ns = 6 * NS_PER_SEC };
	struct podweight weights = { .cfg = { .doubt_pct = 10 } };
	struct podinformer_request req;
	struct podinformer_config c;
	struct podinformer_stats st;
	struct podinformer *pi = NULL;
	struct inflight *in;
	uint64_t t0, cpu = 0;

	podinformer_defaults(&c);
	in = inflight_create(&ic);
	weights.workloads = workload_create(&wc);
	weights.pods = weights.workloads ? podindex_create(&xc, weights.workloads) : NULL;
	pi = in && weights.pods ? podinformer_create(&c, "https://bench:6443", in, mono, wall, 1) :
				  NULL;
	if (!pi) {
		fprintf(stderr, "watch_cost: out of memory\n");
		goto out;
	}
	podinformer_set_index(pi, weights.pods, &weights);
	/* The list: empty, so the next request is the watch. */
	if (podinformer_next(pi, &req))
		goto out;
	podinformer_status(pi, 200);
	podinformer_body(pi, list, sizeof(list) - 1);
	podinformer_end(pi, 0, NULL);
	if (podinformer_next(pi, &req) || !strstr(req.path, "watch")) {
		fprintf(stderr, "watch_cost: the informer did not ask for a watch\n");
		goto out;
	}
	podinformer_status(pi, 200);
	t0 = machine_cpu_ns();
	for (size_t at = 0; at < stream->len; at += 65536) {
		size_t k = stream->len - at < 65536 ? stream->len - at : 65536;

		t_ns += NS_PER_MS / 16;
		if (!podinformer_body(pi, stream->data + at, k))
			break;
	}
	cpu = machine_cpu_ns() - t0;
	podinformer_stats(pi, &st);
	*events = st.events;
out:
	podinformer_destroy(pi);
	podindex_destroy(weights.pods);
	workload_destroy(weights.workloads);
	inflight_destroy(in);
	return cpu;
}

int main(int argc, char **argv)
{
	unsigned pods = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
	unsigned nodes = argc > 2 ? (unsigned)atoi(argv[2]) : 100;
	unsigned wls = argc > 3 ? (unsigned)atoi(argv[3]) : 30;
	unsigned rounds = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
	uint64_t per_event[32], events = 0;
	char cpu[128];
	struct buf s;
	unsigned rv = 2;

	if (!pods || pods > 1000000 || !nodes || nodes > 100000 || !wls || !rounds || rounds > 32) {
		fprintf(stderr, "usage: watch_cost [PODS [NODES [WORKLOADS [ROUNDS<=32]]]]\n");
		return 2;
	}
	log_set_level(LOG_LVL_ERROR);
	buf_init(&s, (size_t)pods * 8192);
	/* A burst as the scheduler makes it: created, then bound. */
	for (unsigned i = 0; i < pods; i++)
		put_event(&s, "ADDED", i, rv++, i % wls, -1);
	for (unsigned i = 0; i < pods; i++)
		put_event(&s, "MODIFIED", i, rv++, i % wls, (int)(i % nodes));
	if (buf_failed(&s)) {
		fprintf(stderr, "watch_cost: the stream does not fit in memory\n");
		return 1;
	}
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t ns = run(&s, pods, nodes, &events);

		if (events != 2ull * pods) {
			fprintf(stderr, "watch_cost: the informer counted %llu events of %u\n",
				(unsigned long long)events, 2 * pods);
			return 1;
		}
		per_event[r] = ns / events;
		printf("round %u: %llu ns of CPU per event\n", r + 1, (unsigned long long)per_event[r]);
	}
	qsort(per_event, rounds, sizeof(per_event[0]), cmp_u64);
	machine_cpu_model(cpu, sizeof(cpu));
	printf("watch_cost: %u pods of %u workloads on %u nodes, %zu bytes (%zu a event): median %llu "
	       "ns of CPU per event; %s\n",
	       pods, wls, nodes, s.len, s.len / (2 * pods), (unsigned long long)per_event[rounds / 2],
	       cpu);
	buf_free(&s);
	return 0;
}
