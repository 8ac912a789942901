#include "serve/metrics.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "counters/registry.h"
#include "pods/inflight.h"
#include "pods/moves.h"
#include "log.h"
#include "serve/metricrows.h"
#include "serve/podstatus.h"
#include "kube/podwatch.h"
#include "serve/reply.h"
#include "nodes/table.h"
#include "scorer.h"
#include "nodes/view.h"

#define ATOMIC METRICROWS_ATOMIC
#define U64 METRICROWS_U64
#define SIZE METRICROWS_SIZE
#define BOOL METRICROWS_BOOL
#define NS_SECONDS METRICROWS_NS_SECONDS

static unsigned long get(atomic_ulong *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* labels: "" or one label pair such as verb="filter". */
static void histogram(struct buf *b, const char *name, const char *labels, struct registry_histogram *h)
{
	const char *sep = labels[0] ? "," : "";
	unsigned long cumulative = 0;

	for (size_t i = 0; i <= REGISTRY_LATENCY_BUCKETS; i++) {
		cumulative += get(&h->buckets[i]);
		if (i < REGISTRY_LATENCY_BUCKETS)
			buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %lu\n", name, labels, sep,
				   registry_bucket_seconds(i), cumulative);
		else
			buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %lu\n", name, labels, sep, cumulative);
	}
	buf_printf(b, "%s_sum{%s} %.9f\n", name, labels, (double)get(&h->sum_ns) / 1e9);
	buf_printf(b, "%s_count{%s} %lu\n", name, labels, get(&h->count));
}

/* The registry's counters of reports, connections and requests. */
#define AT(f) offsetof(struct registry, f)
static const struct metricfamily registry_rows[] = {
	{ "reports_total", "counter", "Agent reports received, by what became of them.",
	  "result", "accepted duplicate malformed wrong_version absurd table_full unsigned "
	  "forged impersonated replayed unconfirmed outdated oversize "
	  "pods_oversize pods_duplicate pods_over_link",
	  ATOMIC, { AT(reports_accepted), AT(reports_duplicate), AT(reports_malformed),
	    AT(reports_version), AT(reports_absurd), AT(reports_table_full),
	    AT(reports_unsigned), AT(reports_forged), AT(reports_impersonated),
	    AT(reports_replayed), AT(reports_unconfirmed), AT(reports_outdated),
	    AT(reports_oversize), AT(reports_pods_oversize), AT(reports_pods_duplicate),
	    AT(reports_pods_over_link) } },
	{ "reports_shared_key_total", "counter", "Accepted reports signed with a shared key, which any node holding it could have signed as any other (weaker than per-node keys: docs/security.md).", NULL, NULL, ATOMIC, { AT(reports_shared_key) } },
	{ "report_connections", "gauge", "Report connections open.", NULL, NULL, ATOMIC, { AT(report_conns) } },
	{ "report_connections_capacity", "gauge", "The most report connections kept open.", NULL, NULL, ATOMIC, { AT(report_conns_max) } },
	{ "report_connections_closed_total", "counter", "Report connections the scorer closed: no report within --stale-after (10-120 s), or to make room (one of the address holding the most).",
	  "reason", "silent busiest_address",
	  ATOMIC, { AT(report_conns_closed_silent), AT(report_conns_closed_busiest) } },
	{ "report_accept_pauses_total", "counter", "Times the report port stopped accepting because open files ran short (kept for HTTP).", NULL, NULL, ATOMIC, { AT(report_accept_pauses) } },
	{ "requests_total", "counter", "Extender requests answered, by verb.",
	  "verb", "filter prioritize preempt",
	  ATOMIC, { AT(requests_filter), AT(requests_prioritize), AT(requests_preempt) } },
	{ "bad_requests_total", "counter", "Requests answered with a 4xx status.", NULL, NULL, ATOMIC, { AT(requests_bad) } },
	{ "http_busy_total", "counter", "Requests answered 503: bodies and their tokens in flight had used the request memory budget.", NULL, NULL, ATOMIC, { AT(http_busy) } },
	{ "http_deadline_closes_total", "counter", "Connections closed for not finishing in time: request headers within 5 s, a body or reply at under 1 MiB/s, or idle 120 s.", NULL, NULL, ATOMIC, { AT(http_deadline_closes) } },
	{ "http_connections_reclaimed_total", "counter", "Connections closed to make room for a new one, every slot taken or its address over --connections-per-client: an idle or silent one, or a busy one.",
	  "reason", "idle busiest_address",
	  ATOMIC, { AT(http_reclaimed_idle), AT(http_reclaimed_busiest) } },
	{ "http_replies_busy_total", "counter", "Status replies (/v1/nodes, /metrics) answered 503: the replies held for slow readers had used their memory budget (32 MiB).", NULL, NULL, ATOMIC, { AT(http_replies_busy) } },
};

static const struct metricfamily prometheus_rows[] = {
	{ "prometheus_refreshes_total", "counter", "Fallback queries to Prometheus, by result.",
	  "result", "ok failed",
	  ATOMIC, { AT(prom_refreshes), AT(prom_failures) } },
	{ "prometheus_values_dropped_total", "counter", "Fallback values dropped: NaN, Inf, negative, absurd or without a node name.", NULL, NULL, ATOMIC, { AT(prom_values_dropped) } },
};
#undef AT

/* Renders of each status reply: those that worked, those that failed. */
static void status_renders(struct buf *b, struct registry *c)
{
	static const char *const paths[] = { "/v1/nodes", "/metrics", "/v1/workloads" };

	buf_puts(b, "# HELP netsched_scorer_status_renders_total " "Status replies rendered (each shared by every request within its hold: a big one at most once a second), and renders that failed (over the size limit, or no memory: the error is then answered for 10 s without rendering)." "\n"
		    "# TYPE netsched_scorer_status_renders_total counter\n");
	for (size_t i = 0; i < 3; i++) {
		buf_printf(b, "netsched_scorer_status_renders_total{path=\"%s\",result=\"ok\"} %lu\n",
			   paths[i], get(&c->status_renders[i]) - get(&c->status_render_failures[i]));
		buf_printf(b, "netsched_scorer_status_renders_total{path=\"%s\",result=\"failed\"} %lu\n",
			   paths[i], get(&c->status_render_failures[i]));
	}
}

static void inflight_metrics(struct buf *b, struct scorer *s)
{
#define AT(f) offsetof(struct inflight_stats, f)
	static const struct metricfamily rows[] = {
		{ "inflight_total", "counter", "Pods just placed, by what became of their assumption.",
		  "event", "assumed confirmed moved observed dropped expired faded displaced "
		  "measured unstarted",
		  U64, { AT(assumed), AT(confirmed), AT(moved), AT(observed), AT(dropped),
		    AT(expired), AT(faded), AT(displaced), AT(measured), AT(unstarted) } },
		{ "inflight_cap_hits_total", "counter", "Pods not counted in flight: --inflight-max-pods or --max-nodes reached, every slot holding a bound pod.", NULL, NULL, U64, { AT(cap_hits) } },
		{ "inflight_pods", "gauge", "Pods counted in flight now.", NULL, NULL, SIZE, { AT(pods) } },
		{ "inflight_nodes", "gauge", "Nodes with pods in flight now.", NULL, NULL, SIZE, { AT(nodes) } },
	};
#undef AT
	struct inflight_stats st;

	if (!s->view.inflight)
		return;
	inflight_stats(s->view.inflight, &st);
	metricrows_put(b, rows, METRICROWS_N(rows), &st);
}

/* The pod watch's health. Present whenever in-flight pods are counted, so
 * "no watch" (enabled 0) is a value an alert can see, not a missing series. */
static void podwatch_metrics(struct buf *b, struct scorer *s)
{
	struct watch_snapshot {
		bool enabled;
		struct podinformer_stats st;
	} w;
#define AT(f) offsetof(struct watch_snapshot, f)
	static const struct metricfamily rows[] = {
		{ "pod_watch_enabled", "gauge", "Whether the scorer has apiserver access to confirm in-flight pods.", NULL, NULL, BOOL, { AT(enabled) } },
		{ "pod_watch_synced", "gauge", "Whether the pod watch has listed the pods and is connected.", NULL, NULL, BOOL, { AT(st.synced) } },
		{ "pod_watch_total", "counter", "Pod watch activity: complete lists, watch connections, events applied, 410 re-lists, failures, events over the size limit.",
		  "what", "lists watches events expired errors skipped",
		  U64, { AT(st.lists), AT(st.watches), AT(st.events), AT(st.expired),
		    AT(st.errors), AT(st.skipped) } },
	};
#undef AT

	if (!s->view.inflight)
		return;
	podwatch_stats(s->podwatch, &w.st);
	w.enabled = s->podwatch != NULL;
	metricrows_put(b, rows, METRICROWS_N(rows), &w);
}

static void node_gauges(struct buf *b, struct scorer *s)
{
	struct nodes_snapshot {
		struct view_counts vc;
		uint64_t evicted;
		size_t capacity;
	} n;
#define AT(f) offsetof(struct nodes_snapshot, f)
	static const struct metricfamily rows[] = {
		{ "nodes", "gauge", "Tracked nodes by where their data comes from.",
		  "source", "agent prometheus none",
		  SIZE, { AT(vc.agent), AT(vc.prometheus), AT(vc.none) } },
		{ "nodes_stale", "gauge", "Tracked nodes whose latest report is older than --stale-after.", NULL, NULL, SIZE, { AT(vc.stale) } },
		{ "nodes_evicted_total", "counter", "Stale nodes evicted to make room for new ones (table full).", NULL, NULL, U64, { AT(evicted) } },
		{ "nodes_capacity", "gauge", "Nodes the table can track (--max-nodes).", NULL, NULL, SIZE, { AT(capacity) } },
	};
#undef AT

	/* A scrape without the counts (out of memory) fails as a whole
	 * rather than report every node gone. */
	if (view_count(&s->view, s->now_ns(), &n.vc)) {
		b->failed = true;
		return;
	}
	n.evicted = table_evictions(s->view.table);
	n.capacity = table_capacity(s->view.table);
	metricrows_put(b, rows, METRICROWS_N(rows), &n);
}

/* Per node: what /v1/nodes shows, for dashboards: the traffic figures that
 * have a metric (traffic.h), then these. About 500 bytes a node, so 5,000
 * nodes make a 2.5 MB scrape: cheap next to node_exporter's. */
static void node_series(struct buf *b, struct scorer *s)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "netsched_scorer_node_age_seconds", "Age of a node's data (since its last report when none is fresh)." },
		{ "netsched_scorer_node_score", "A node's extender score, 0..10, as if asked about every node." },
		{ "netsched_scorer_node_inflight_pods", "Pods just placed on a node, not yet measured." },
	};
	struct view_entry *rows = NULL;
	struct policy_node *pn = NULL;
	long n = view_list_scored(&s->view, s->now_ns(), &rows, &pn);

	if (n < 0) {
		b->failed = true;
		return;
	}
	buf_puts(b, "# HELP netsched_scorer_node_source Where a node's data comes from: agent, prometheus or none (1 for the current one).\n"
		    "# TYPE netsched_scorer_node_source gauge\n");
	for (long i = 0; i < n; i++)
		buf_printf(b, "netsched_scorer_node_source{node=\"%s\",source=\"%s\"} 1\n", rows[i].name,
			   view_source_name(rows[i].v.source));
	for (size_t k = 0; k < traffic_n_figures; k++) {
		const struct traffic_figure *f = &traffic_figures[k];

		if (!f->metric)
			continue;
		buf_printf(b, "# HELP netsched_scorer_node_%s %s\n# TYPE netsched_scorer_node_%s gauge\n",
			   f->metric, f->help, f->metric);
		/* Node names follow nodename.h: nothing to escape in a label. */
		for (long i = 0; i < n; i++)
			buf_printf(b, "netsched_scorer_node_%s{node=\"%s\"} %llu\n", f->metric,
				   rows[i].name, (unsigned long long)traffic_get(&rows[i].v.traffic, f));
	}
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[f].name, fam[f].help, fam[f].name);
		for (long i = 0; i < n; i++) {
			const struct view_node *v = &rows[i].v;
			/* Node names follow nodename.h: nothing to escape in a label. */
			buf_printf(b, "%s{node=\"%s\"} ", fam[f].name, rows[i].name);
			switch (f) {
			case 0: buf_printf(b, "%.3f\n", (double)v->age_ns / 1e9); break;
			case 1: buf_printf(b, "%d\n", (int)pn[i].score); break;
			default: buf_printf(b, "%.3f\n", v->inflight.milli_pods / 1000.0); break;
			}
		}
	}
	/* Only nodes an agent has reported: the fallback's have no clock. */
	buf_puts(b, "# HELP netsched_scorer_node_clock_skew_seconds How far behind the scorer's clock a node's agent is (negative: ahead): our clock at its latest report minus the report's window end.\n"
		    "# TYPE netsched_scorer_node_clock_skew_seconds gauge\n");
	for (long i = 0; i < n; i++)
		if (rows[i].v.known)
			buf_printf(b, "netsched_scorer_node_clock_skew_seconds{node=\"%s\"} %.3f\n",
				   rows[i].name, (double)rows[i].v.clock_skew_ms / 1000.0);
	free(pn);
	free(rows);
}

/* The rebalancer's moves (moves.h, movesroute.h); result's values in
 * registry.h's order of refusals, after "accepted". */
static void moves_metrics(struct buf *b, struct scorer *s)
{
	struct moves_snapshot {
		uint64_t result[1 + REGISTRY_MOVE_REFUSALS];
		uint64_t landed, pressure_replies;
		size_t holds, reservations, capacity;
	} m;
#define AT(f) offsetof(struct moves_snapshot, f)
	static const struct metricfamily rows[] = {
		{ "moves_total", "counter", "Moves the rebalancer announced (POST /v1/moves): accepted, and refused by why (nothing changed).",
		  "result", "accepted malformed too_large hold_out_of_range unknown_node same_node absurd_rate table_full", U64,
		  { AT(result[0]), AT(result[1]), AT(result[2]), AT(result[3]), AT(result[4]), AT(result[5]), AT(result[6]), AT(result[7]) } },
		{ "moves_landed_total", "counter", "Reservations ended by a pod of the moved workload bound to the destination.", NULL, NULL, U64, { AT(landed) } },
		{ "moves_active", "gauge", "Moves held now: holds (each keeps its workload off its source node) and, of them, reservations not yet landed; and the table's size (--moves-max).",
		  "kind", "holds reservations capacity", SIZE, { AT(holds), AT(reservations), AT(capacity) } },
		{ "pressure_replies_total", "counter", "GET /v1/pressure answered with the view.", NULL, NULL, U64, { AT(pressure_replies) } },
	};
#undef AT
	_Static_assert(REGISTRY_MOVE_REFUSALS == 7, "moves_total's values name every refusal");
	struct registry *c = &s->counters;
	struct moves_stats st;

	moves_stats(s->view.moves, s->now_ns(), &st);
	m.result[0] = get(&c->moves_accepted);
	for (size_t i = 0; i < REGISTRY_MOVE_REFUSALS; i++)
		m.result[1 + i] = get(&c->moves_refused[i]);
	m.landed = st.landed;
	m.pressure_replies = get(&c->pressure_replies);
	m.holds = st.holds;
	m.reservations = st.reservations;
	m.capacity = st.max;
	metricrows_put(b, rows, METRICROWS_N(rows), &m);
}

/* The scorer itself: readiness, logs, uptime. */
static void scorer_metrics(struct buf *b, struct scorer *s)
{
	struct self_snapshot {
		bool ready;
		uint64_t log_dropped;
		uint64_t uptime_ns;
	} me;
#define AT(f) offsetof(struct self_snapshot, f)
	static const struct metricfamily rows[] = {
		{ "ready", "gauge", "1 when /readyz answers 200: fresh agent data, or the warm-up has passed.", NULL, NULL, BOOL, { AT(ready) } },
		{ "log_lines_dropped_total", "counter", "Log lines dropped because stderr's reader was not keeping up.", NULL, NULL, U64, { AT(log_dropped) } },
		{ "uptime_seconds", "gauge", "Seconds since the scorer started.", NULL, NULL, NS_SECONDS, { AT(uptime_ns) } },
	};
#undef AT
	size_t fresh;

	me.ready = view_ready(&s->view, s->now_ns(), &fresh);
	me.log_dropped = log_dropped_total();
	me.uptime_ns = s->now_ns() - s->view.started_mono_ns;
	metricrows_put(b, rows, METRICROWS_N(rows), &me);
}

void metrics_render(struct scorer *s, struct reply *out)
{
	struct registry *c = &s->counters;
	struct buf b;

	/* Grows as needed; the per-node series of a full table fit with room. */
	buf_init(&b, 16u << 20);
	metricrows_put(&b, registry_rows, METRICROWS_N(registry_rows), c);
	status_renders(&b, c);
	buf_puts(&b, "# HELP netsched_scorer_request_duration_seconds " "Time to answer an extender request, body received to reply ready." "\n"
		     "# TYPE netsched_scorer_request_duration_seconds histogram\n");
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"filter\"", &c->latency_filter);
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"prioritize\"",
		  &c->latency_prioritize);
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"preempt\"",
		  &c->latency_preempt);
	metricrows_put(&b, prometheus_rows, METRICROWS_N(prometheus_rows), c);
	buf_puts(&b, "# HELP netsched_scorer_prometheus_query_duration_seconds " "Time of each fallback query, failed ones included." "\n"
		     "# TYPE netsched_scorer_prometheus_query_duration_seconds histogram\n");
	histogram(&b, "netsched_scorer_prometheus_query_duration_seconds", "", &c->latency_prometheus);

	node_gauges(&b, s);
	node_series(&b, s);
	inflight_metrics(&b, s);
	podwatch_metrics(&b, s);
	podstatus_metrics(&b, s);
	moves_metrics(&b, s);
	scorer_metrics(&b, s);

	reply_take(&b, out);
	if (out->body)
		out->content_type = METRICS_CONTENT_TYPE;
}
