#include "serve/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "counters/registry.h"
#include "pods/inflight.h"
#include "pods/moves.h"
#include "log.h"
#include "serve/podstatus.h"
#include "kube/podwatch.h"
#include "serve/reply.h"
#include "nodes/table.h"
#include "scorer.h"
#include "nodes/view.h"

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

static void inflight_metrics(struct buf *b, struct scorer *s)
{
	struct inflight_stats st;

	if (!s->view.inflight)
		return;
	inflight_stats(s->view.inflight, &st);
	buf_puts(b, "# HELP netsched_scorer_inflight_total Pods just placed, by what became of their assumption.\n"
		    "# TYPE netsched_scorer_inflight_total counter\n");
	buf_printf(b, "netsched_scorer_inflight_total{event=\"assumed\"} %llu\n", (unsigned long long)st.assumed);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"confirmed\"} %llu\n", (unsigned long long)st.confirmed);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"moved\"} %llu\n", (unsigned long long)st.moved);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"observed\"} %llu\n", (unsigned long long)st.observed);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"dropped\"} %llu\n", (unsigned long long)st.dropped);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"expired\"} %llu\n", (unsigned long long)st.expired);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"faded\"} %llu\n", (unsigned long long)st.faded);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"displaced\"} %llu\n", (unsigned long long)st.displaced);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"measured\"} %llu\n", (unsigned long long)st.measured);
	buf_printf(b, "netsched_scorer_inflight_total{event=\"unstarted\"} %llu\n", (unsigned long long)st.unstarted);
	buf_printf(b, "# HELP netsched_scorer_inflight_cap_hits_total Pods not counted in flight: --inflight-max-pods or --max-nodes reached, every slot holding a bound pod.\n"
		      "# TYPE netsched_scorer_inflight_cap_hits_total counter\n"
		      "netsched_scorer_inflight_cap_hits_total %llu\n", (unsigned long long)st.cap_hits);
	buf_printf(b, "# HELP netsched_scorer_inflight_pods Pods counted in flight now.\n"
		      "# TYPE netsched_scorer_inflight_pods gauge\n"
		      "netsched_scorer_inflight_pods %zu\n", st.pods);
	buf_printf(b, "# HELP netsched_scorer_inflight_nodes Nodes with pods in flight now.\n"
		      "# TYPE netsched_scorer_inflight_nodes gauge\n"
		      "netsched_scorer_inflight_nodes %zu\n", st.nodes);
}

/* The pod watch's health. Present whenever in-flight pods are counted, so
 * "no watch" (enabled 0) is a value an alert can see, not a missing series. */
static void podwatch_metrics(struct buf *b, struct scorer *s)
{
	struct podinformer_stats st;

	if (!s->view.inflight)
		return;
	podwatch_stats(s->podwatch, &st);
	buf_printf(b, "# HELP netsched_scorer_pod_watch_enabled Whether the scorer has apiserver access to confirm in-flight pods.\n"
		      "# TYPE netsched_scorer_pod_watch_enabled gauge\n"
		      "netsched_scorer_pod_watch_enabled %d\n", s->podwatch ? 1 : 0);
	buf_printf(b, "# HELP netsched_scorer_pod_watch_synced Whether the pod watch has listed the pods and is connected.\n"
		      "# TYPE netsched_scorer_pod_watch_synced gauge\n"
		      "netsched_scorer_pod_watch_synced %d\n", st.synced ? 1 : 0);
	buf_puts(b, "# HELP netsched_scorer_pod_watch_total Pod watch activity: complete lists, watch connections, events applied, 410 re-lists, failures, events over the size limit.\n"
		    "# TYPE netsched_scorer_pod_watch_total counter\n");
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"lists\"} %llu\n", (unsigned long long)st.lists);
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"watches\"} %llu\n", (unsigned long long)st.watches);
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"events\"} %llu\n", (unsigned long long)st.events);
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"expired\"} %llu\n", (unsigned long long)st.expired);
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"errors\"} %llu\n", (unsigned long long)st.errors);
	buf_printf(b, "netsched_scorer_pod_watch_total{what=\"skipped\"} %llu\n", (unsigned long long)st.skipped);
}

static void node_gauges(struct buf *b, struct scorer *s)
{
	struct view_counts vc;

	/* A scrape without the counts (out of memory) fails as a whole
	 * rather than report every node gone. */
	if (view_count(&s->view, s->now_ns(), &vc)) {
		b->failed = true;
		return;
	}
	buf_puts(b, "# HELP netsched_scorer_nodes Tracked nodes by where their data comes from.\n"
		    "# TYPE netsched_scorer_nodes gauge\n");
	buf_printf(b, "netsched_scorer_nodes{source=\"agent\"} %zu\n", vc.agent);
	buf_printf(b, "netsched_scorer_nodes{source=\"prometheus\"} %zu\n", vc.prometheus);
	buf_printf(b, "netsched_scorer_nodes{source=\"none\"} %zu\n", vc.none);
	buf_puts(b, "# HELP netsched_scorer_nodes_stale Tracked nodes whose latest report is older than --stale-after.\n"
		    "# TYPE netsched_scorer_nodes_stale gauge\n");
	buf_printf(b, "netsched_scorer_nodes_stale %zu\n", vc.stale);
	buf_printf(b, "# HELP netsched_scorer_nodes_evicted_total Stale nodes evicted to make room for new ones (table full).\n"
		      "# TYPE netsched_scorer_nodes_evicted_total counter\n"
		      "netsched_scorer_nodes_evicted_total %llu\n",
		   (unsigned long long)table_evictions(s->view.table));
	buf_printf(b, "# HELP netsched_scorer_nodes_capacity Nodes the table can track (--max-nodes).\n"
		      "# TYPE netsched_scorer_nodes_capacity gauge\n"
		      "netsched_scorer_nodes_capacity %zu\n", table_capacity(s->view.table));
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

/* The rebalancer's moves (moves.h, movesroute.h). */
static void moves_metrics(struct buf *b, struct scorer *s)
{
	static const char *const why[REGISTRY_MOVE_REFUSALS] = {
		"malformed", "too_large", "hold_out_of_range", "unknown_node", "same_node",
		"absurd_rate", "table_full",
	};
	struct registry *c = &s->counters;
	struct moves_stats st;

	moves_stats(s->view.moves, s->now_ns(), &st);
	buf_puts(b, "# HELP netsched_scorer_moves_total Moves the rebalancer announced (POST /v1/moves): accepted, and refused by why (nothing changed).\n"
		    "# TYPE netsched_scorer_moves_total counter\n");
	buf_printf(b, "netsched_scorer_moves_total{result=\"accepted\"} %lu\n", get(&c->moves_accepted));
	for (size_t i = 0; i < REGISTRY_MOVE_REFUSALS; i++)
		buf_printf(b, "netsched_scorer_moves_total{result=\"%s\"} %lu\n", why[i],
			   get(&c->moves_refused[i]));
	buf_printf(b, "# HELP netsched_scorer_moves_landed_total Reservations ended by a pod of the moved workload bound to the destination.\n"
		      "# TYPE netsched_scorer_moves_landed_total counter\n"
		      "netsched_scorer_moves_landed_total %llu\n", (unsigned long long)st.landed);
	buf_printf(b, "# HELP netsched_scorer_moves_active Moves held now: holds (each keeps its workload off its source node) and, of them, reservations not yet landed; and the table's size (--moves-max).\n"
		      "# TYPE netsched_scorer_moves_active gauge\n"
		      "netsched_scorer_moves_active{kind=\"holds\"} %zu\n"
		      "netsched_scorer_moves_active{kind=\"reservations\"} %zu\n"
		      "netsched_scorer_moves_active{kind=\"capacity\"} %zu\n",
		   st.holds, st.reservations, st.max);
	buf_printf(b, "# HELP netsched_scorer_pressure_replies_total GET /v1/pressure answered with the view.\n"
		      "# TYPE netsched_scorer_pressure_replies_total counter\n"
		      "netsched_scorer_pressure_replies_total %lu\n", get(&c->pressure_replies));
}

void metrics_render(struct scorer *s, struct reply *out)
{
	struct registry *c = &s->counters;
	size_t fresh;
	struct buf b;

	/* Grows as needed; the per-node series of a full table fit with room. */
	buf_init(&b, 16u << 20);
	buf_puts(&b, "# HELP netsched_scorer_reports_total Agent reports received, by what became of them.\n"
		     "# TYPE netsched_scorer_reports_total counter\n");
	buf_printf(&b, "netsched_scorer_reports_total{result=\"accepted\"} %lu\n", get(&c->reports_accepted));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"duplicate\"} %lu\n", get(&c->reports_duplicate));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"malformed\"} %lu\n", get(&c->reports_malformed));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"wrong_version\"} %lu\n", get(&c->reports_version));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"absurd\"} %lu\n", get(&c->reports_absurd));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"table_full\"} %lu\n", get(&c->reports_table_full));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"unsigned\"} %lu\n", get(&c->reports_unsigned));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"forged\"} %lu\n", get(&c->reports_forged));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"impersonated\"} %lu\n", get(&c->reports_impersonated));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"replayed\"} %lu\n", get(&c->reports_replayed));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"unconfirmed\"} %lu\n", get(&c->reports_unconfirmed));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"outdated\"} %lu\n", get(&c->reports_outdated));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"oversize\"} %lu\n", get(&c->reports_oversize));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"pods_oversize\"} %lu\n", get(&c->reports_pods_oversize));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"pods_duplicate\"} %lu\n", get(&c->reports_pods_duplicate));
	buf_printf(&b, "netsched_scorer_reports_total{result=\"pods_over_link\"} %lu\n", get(&c->reports_pods_over_link));
	buf_puts(&b, "# HELP netsched_scorer_reports_shared_key_total Accepted reports signed with a shared key, which any node holding it could have signed as any other (weaker than per-node keys: docs/security.md).\n"
		     "# TYPE netsched_scorer_reports_shared_key_total counter\n");
	buf_printf(&b, "netsched_scorer_reports_shared_key_total %lu\n", get(&c->reports_shared_key));
	buf_puts(&b, "# HELP netsched_scorer_report_connections Report connections open.\n"
		     "# TYPE netsched_scorer_report_connections gauge\n");
	buf_printf(&b, "netsched_scorer_report_connections %lu\n", get(&c->report_conns));
	buf_printf(&b, "# HELP netsched_scorer_report_connections_capacity The most report connections kept open.\n"
		       "# TYPE netsched_scorer_report_connections_capacity gauge\n"
		       "netsched_scorer_report_connections_capacity %lu\n", get(&c->report_conns_max));
	buf_puts(&b, "# HELP netsched_scorer_report_connections_closed_total Report connections the scorer closed: no report within --stale-after (10-120 s), or to make room (one of the address holding the most).\n"
		     "# TYPE netsched_scorer_report_connections_closed_total counter\n");
	buf_printf(&b, "netsched_scorer_report_connections_closed_total{reason=\"silent\"} %lu\n", get(&c->report_conns_closed_silent));
	buf_printf(&b, "netsched_scorer_report_connections_closed_total{reason=\"busiest_address\"} %lu\n", get(&c->report_conns_closed_busiest));
	buf_puts(&b, "# HELP netsched_scorer_report_accept_pauses_total Times the report port stopped accepting because open files ran short (kept for HTTP).\n"
		     "# TYPE netsched_scorer_report_accept_pauses_total counter\n");
	buf_printf(&b, "netsched_scorer_report_accept_pauses_total %lu\n", get(&c->report_accept_pauses));

	buf_puts(&b, "# HELP netsched_scorer_requests_total Extender requests answered, by verb.\n"
		     "# TYPE netsched_scorer_requests_total counter\n");
	buf_printf(&b, "netsched_scorer_requests_total{verb=\"filter\"} %lu\n", get(&c->requests_filter));
	buf_printf(&b, "netsched_scorer_requests_total{verb=\"prioritize\"} %lu\n", get(&c->requests_prioritize));
	buf_printf(&b, "netsched_scorer_requests_total{verb=\"preempt\"} %lu\n", get(&c->requests_preempt));
	buf_puts(&b, "# HELP netsched_scorer_bad_requests_total Requests answered with a 4xx status.\n"
		     "# TYPE netsched_scorer_bad_requests_total counter\n");
	buf_printf(&b, "netsched_scorer_bad_requests_total %lu\n", get(&c->requests_bad));
	buf_puts(&b, "# HELP netsched_scorer_http_busy_total Requests answered 503: bodies and their tokens in flight had used the request memory budget.\n"
		     "# TYPE netsched_scorer_http_busy_total counter\n");
	buf_printf(&b, "netsched_scorer_http_busy_total %lu\n", get(&c->http_busy));
	buf_puts(&b, "# HELP netsched_scorer_http_deadline_closes_total Connections closed for not finishing in time: request headers within 5 s, a body or reply at under 1 MiB/s, or idle 120 s.\n"
		     "# TYPE netsched_scorer_http_deadline_closes_total counter\n");
	buf_printf(&b, "netsched_scorer_http_deadline_closes_total %lu\n", get(&c->http_deadline_closes));
	buf_puts(&b, "# HELP netsched_scorer_http_connections_reclaimed_total Connections closed to make room for a new one, every slot taken or its address over --connections-per-client: an idle or silent one, or a busy one.\n"
		     "# TYPE netsched_scorer_http_connections_reclaimed_total counter\n");
	buf_printf(&b, "netsched_scorer_http_connections_reclaimed_total{reason=\"idle\"} %lu\n", get(&c->http_reclaimed_idle));
	buf_printf(&b, "netsched_scorer_http_connections_reclaimed_total{reason=\"busiest_address\"} %lu\n", get(&c->http_reclaimed_busiest));
	buf_puts(&b, "# HELP netsched_scorer_http_replies_busy_total Status replies (/v1/nodes, /metrics) answered 503: the replies held for slow readers had used their memory budget (32 MiB).\n"
		     "# TYPE netsched_scorer_http_replies_busy_total counter\n");
	buf_printf(&b, "netsched_scorer_http_replies_busy_total %lu\n", get(&c->http_replies_busy));
	buf_puts(&b, "# HELP netsched_scorer_status_renders_total Status replies rendered (each shared by every request within its hold: a big one at most once a second), and renders that failed (over the size limit, or no memory: the error is then answered for 10 s without rendering).\n"
		     "# TYPE netsched_scorer_status_renders_total counter\n");
	{
		static const char *const paths[] = { "/v1/nodes", "/metrics", "/v1/workloads" };

		for (size_t i = 0; i < 3; i++) {
			buf_printf(&b, "netsched_scorer_status_renders_total{path=\"%s\",result=\"ok\"} %lu\n",
				   paths[i], get(&c->status_renders[i]) - get(&c->status_render_failures[i]));
			buf_printf(&b, "netsched_scorer_status_renders_total{path=\"%s\",result=\"failed\"} %lu\n",
				   paths[i], get(&c->status_render_failures[i]));
		}
	}

	buf_puts(&b, "# HELP netsched_scorer_request_duration_seconds Time to answer an extender request, body received to reply ready.\n"
		     "# TYPE netsched_scorer_request_duration_seconds histogram\n");
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"filter\"", &c->latency_filter);
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"prioritize\"",
		  &c->latency_prioritize);
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"preempt\"",
		  &c->latency_preempt);

	buf_puts(&b, "# HELP netsched_scorer_prometheus_refreshes_total Fallback queries to Prometheus, by result.\n"
		     "# TYPE netsched_scorer_prometheus_refreshes_total counter\n");
	buf_printf(&b, "netsched_scorer_prometheus_refreshes_total{result=\"ok\"} %lu\n", get(&c->prom_refreshes));
	buf_printf(&b, "netsched_scorer_prometheus_refreshes_total{result=\"failed\"} %lu\n", get(&c->prom_failures));
	buf_puts(&b, "# HELP netsched_scorer_prometheus_values_dropped_total Fallback values dropped: NaN, Inf, negative, absurd or without a node name.\n"
		     "# TYPE netsched_scorer_prometheus_values_dropped_total counter\n");
	buf_printf(&b, "netsched_scorer_prometheus_values_dropped_total %lu\n", get(&c->prom_values_dropped));
	buf_puts(&b, "# HELP netsched_scorer_prometheus_query_duration_seconds Time of each fallback query, failed ones included.\n"
		     "# TYPE netsched_scorer_prometheus_query_duration_seconds histogram\n");
	histogram(&b, "netsched_scorer_prometheus_query_duration_seconds", "", &c->latency_prometheus);

	node_gauges(&b, s);
	node_series(&b, s);
	inflight_metrics(&b, s);
	podwatch_metrics(&b, s);
	podstatus_metrics(&b, s);
	moves_metrics(&b, s);
	buf_printf(&b, "# HELP netsched_scorer_ready 1 when /readyz answers 200: fresh agent data, or the warm-up has passed.\n"
		       "# TYPE netsched_scorer_ready gauge\n"
		       "netsched_scorer_ready %d\n", view_ready(&s->view, s->now_ns(), &fresh) ? 1 : 0);
	buf_printf(&b, "# HELP netsched_scorer_log_lines_dropped_total Log lines dropped because stderr's reader was not keeping up.\n"
		       "# TYPE netsched_scorer_log_lines_dropped_total counter\n"
		       "netsched_scorer_log_lines_dropped_total %llu\n",
		   (unsigned long long)log_dropped_total());
	buf_printf(&b, "# HELP netsched_scorer_uptime_seconds Seconds since the scorer started.\n"
		       "# TYPE netsched_scorer_uptime_seconds gauge\n"
		       "netsched_scorer_uptime_seconds %.3f\n",
		   (double)(s->now_ns() - s->view.started_mono_ns) / 1e9);

	reply_take(&b, out);
	if (out->body)
		out->content_type = METRICS_CONTENT_TYPE;
}
