#include "serve/podstatus.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "pods/podindex.h"
#include "serve/metricrows.h"
#include "serve/reply.h"
#include "scorer.h"
#include "nodes/view.h"
#include "pods/workload.h"

/* /v1/workloads lists every tracked workload: --max-workloads (50,000 at
 * most) of about 300 bytes; like /v1/nodes, within the status replies'
 * budget (statusreply.h). */
#define PODSTATUS_MAX_BODY (16u * 1024u * 1024u)

static void put_u64(struct buf *b, const char *key, uint64_t v)
{
	buf_printf(b, ",\"%s\":", key);
	buf_json_u64(b, v);
}

/* The nodes a learned figure rests on (workload.h), largest share first:
 * at most WORKLOAD_SOURCES, with the age of each one's newest sample. A
 * node that left the index since is named "". */
static void sources(struct buf *b, struct scorer *s, const struct workload_entry *e)
{
	char node[NODENAME_MAX_LEN + 1];

	buf_puts(b, ",\"sources\":[");
	for (uint32_t k = 0; k < e->n_sources; k++) {
		podindex_node_name(s->view.weights.pods, e->sources[k].node, node, sizeof(node));
		buf_puts(b, k ? ",{\"node\":" : "{\"node\":");
		buf_json_cstr(b, node);
		put_u64(b, "pods", e->sources[k].pods);
		put_u64(b, "sharePercent", e->sources[k].share_pct);
		buf_puts(b, ",\"ageSeconds\":");
		buf_json_double(b, (double)e->sources[k].age_ns / (double)NS_PER_SEC);
		buf_puts(b, "}");
	}
	buf_puts(b, "]");
}

void podstatus_workloads(struct scorer *s, struct reply *out)
{
	struct workload *wl = s->view.weights.workloads;
	struct workload_entry *e = NULL;
	struct podindex_stats ps;
	struct workload_stats ws;
	char label[WORKLOAD_LABEL_MAX + 1];
	long n = 0;
	struct buf b;

	buf_init(&b, PODSTATUS_MAX_BODY);
	if (!wl) {
		buf_puts(&b, "{\"enabled\":false,\"workloads\":[]}");
		goto out;
	}
	n = workload_list(wl, s->now_ns(), &e);
	if (n < 0) {
		b.failed = true;
		goto out;
	}
	workload_stats(wl, &ws);
	podindex_stats(s->view.weights.pods, &ps);
	buf_puts(&b, "{\"enabled\":true");
	put_u64(&b, "tracked", ws.tracked);
	put_u64(&b, "live", ws.live);
	put_u64(&b, "learned", ws.learned);
	/* What a pod nothing is known of weighs before its doubt (podweight.h). */
	buf_puts(&b, ",\"averagePerPod\":{\"pods\":");
	buf_json_u64(&b, ps.avg_pods);
	put_u64(&b, "rxBytesPerSecond", ps.avg_rx_bytes_per_second);
	put_u64(&b, "txBytesPerSecond", ps.avg_tx_bytes_per_second);
	/* A median over nodes (podindex.h): how many it is over. */
	put_u64(&b, "nodes", ps.avg_nodes);
	buf_puts(&b, "},\"workloads\":[");
	for (long i = 0; i < n; i++) {
		buf_puts(&b, i ? ",{\"workload\":" : "{\"workload\":");
		buf_json_cstr(&b, workload_label(&e[i].key, label, sizeof(label)));
		buf_puts(&b, ",\"namespace\":");
		buf_json_cstr(&b, e[i].key.ns);
		buf_puts(&b, ",\"kind\":");
		buf_json_cstr(&b, e[i].key.kind);
		buf_puts(&b, ",\"name\":");
		buf_json_cstr(&b, e[i].key.name);
		put_u64(&b, "pods", e[i].pods);
		put_u64(&b, "podsMeasured", e[i].learned ? e[i].demand.pods : 0);
		buf_puts(&b, e[i].learned ? ",\"learned\":true" : ",\"learned\":false");
		put_u64(&b, "rxBytesPerSecond", e[i].demand.rx_bytes_per_second);
		put_u64(&b, "txBytesPerSecond", e[i].demand.tx_bytes_per_second);
		buf_puts(&b, ",\"ageSeconds\":");
		buf_json_double(&b, (double)e[i].age_ns / (double)NS_PER_SEC);
		sources(&b, s, &e[i]);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "]}");
out:
	free(e);
	reply_take(&b, out);
}

void podstatus_node(struct buf *b, struct scorer *s, const char *node)
{
	struct podindex_top top[PODINDEX_TOP];
	size_t n;

	if (!s->view.weights.pods)
		return;
	n = podindex_node_top(s->view.weights.pods, node, strlen(node), top);
	buf_puts(b, ",\"pods\":{\"top\":[");
	for (size_t i = 0; i < n; i++) {
		buf_puts(b, i ? ",{\"pod\":" : "{\"pod\":");
		buf_json_cstr(b, top[i].pod);
		buf_puts(b, ",\"workload\":");
		buf_json_cstr(b, top[i].workload);
		put_u64(b, "rxBytesPerSecond", top[i].rx_bytes_per_second);
		put_u64(b, "txBytesPerSecond", top[i].tx_bytes_per_second);
		buf_puts(b, "}");
	}
	buf_puts(b, "]}");
}

/* A label value: pod and workload labels are made printable ASCII by the
 * index (no '"', '\\' or newline can reach here), so nothing to escape. */
static void top_series(struct buf *b, struct scorer *s)
{
	static const char *const dir[2] = { "rx", "tx" };
	struct view_entry *rows = NULL;
	long n = view_list(&s->view, s->now_ns(), &rows);

	if (n < 0) {
		b->failed = true;
		return;
	}
	buf_printf(b, "# HELP netsched_scorer_node_top_pod_bytes_per_second The busiest pods of a node in its latest report, by direction, from the pod's point of view (the top %u).\n"
		      "# TYPE netsched_scorer_node_top_pod_bytes_per_second gauge\n", PODSTATUS_METRIC_TOP);
	for (long i = 0; i < n; i++) {
		struct podindex_top top[PODINDEX_TOP];
		size_t k = podindex_node_top(s->view.weights.pods, rows[i].name, strlen(rows[i].name), top);

		for (size_t j = 0; j < k && j < PODSTATUS_METRIC_TOP; j++)
			for (int d = 0; d < 2; d++)
				buf_printf(b, "netsched_scorer_node_top_pod_bytes_per_second{node=\"%s\","
					   "pod=\"%s\",workload=\"%s\",direction=\"%s\"} %llu\n",
					   rows[i].name, top[j].pod, top[j].workload, dir[d],
					   (unsigned long long)(d ? top[j].tx_bytes_per_second :
								    top[j].rx_bytes_per_second));
	}
	free(rows);
}

void podstatus_metrics(struct buf *b, struct scorer *s)
{
	struct pods_snapshot {
		struct podindex_stats ps;
		struct workload_stats ws;
	} p;
#define AT(f) offsetof(struct pods_snapshot, f)
	static const struct metricfamily rows[] = {
		{ "pod_traffic_total", "counter", "Pod entries of agents' reports, by what the join made of them: matched to a running pod bound to the node, or not (an unknown address, one of pods on other nodes, one of pods that do not run).",
		  "result", "matched unknown_ip wrong_node not_running",
		  METRICROWS_U64, { AT(ps.matched), AT(ps.unknown_ip), AT(ps.wrong_node),
		    AT(ps.not_running) } },
		{ "pods_indexed", "gauge", "Bound pods the pod index holds, and how many of them run.",
		  "state", "bound running",
		  METRICROWS_SIZE, { AT(ps.pods), AT(ps.running) } },
		{ "pods_not_indexed_total", "counter", "Pods left out of the index: absurd addresses or owner references, or the index full (--max-pods).",
		  "reason", "absurd full",
		  METRICROWS_U64, { AT(ps.ignored), AT(ps.full) } },
		{ "pod_average_bytes_per_second", "gauge", "The cluster's average traffic per measured pod: what a pod nothing is known of weighs.",
		  "direction", "rx tx",
		  METRICROWS_U64, { AT(ps.avg_rx_bytes_per_second), AT(ps.avg_tx_bytes_per_second) } },
		{ "workloads", "gauge", "Workloads tracked (--max-workloads), with a pod in the index (live), with a learned demand.",
		  "state", "tracked live learned",
		  METRICROWS_SIZE, { AT(ws.tracked), AT(ws.live), AT(ws.learned) } },
		{ "workloads_total", "counter", "Workloads let go: idle ones evicted for a new one, new ones refused (all live), idle ones forgotten.",
		  "event", "evicted refused forgotten",
		  METRICROWS_U64, { AT(ws.evicted), AT(ws.refused), AT(ws.forgotten) } },
		{ "workload_samples_total", "counter", "Pod measurements the workloads learned from.", NULL, NULL, METRICROWS_U64, { AT(ws.samples) } },
	};
#undef AT

	if (!s->view.weights.pods)
		return;
	podindex_stats(s->view.weights.pods, &p.ps);
	workload_stats(s->view.weights.workloads, &p.ws);
	metricrows_put(b, rows, METRICROWS_N(rows), &p);
	top_series(b, s);
}
