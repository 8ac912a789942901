#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "prom.h"
#include "clock.h"

static const uint64_t bucket_us[SCORER_LATENCY_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 1000000,
};

void metrics_observe(struct scorer_histogram *h, uint64_t ns)
{
	size_t i = 0;

	while (i < SCORER_LATENCY_BUCKETS && ns > bucket_us[i] * 1000)
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

static unsigned long get(atomic_ulong *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* labels: "" or one label pair such as verb="filter". */
static void histogram(struct buf *b, const char *name, const char *labels, struct scorer_histogram *h)
{
	const char *sep = labels[0] ? "," : "";
	unsigned long cumulative = 0;

	for (size_t i = 0; i <= SCORER_LATENCY_BUCKETS; i++) {
		cumulative += get(&h->buckets[i]);
		if (i < SCORER_LATENCY_BUCKETS)
			buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %lu\n", name, labels, sep,
				   (double)bucket_us[i] / 1e6, cumulative);
		else
			buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %lu\n", name, labels, sep, cumulative);
	}
	buf_printf(b, "%s_sum{%s} %.9f\n", name, labels, (double)get(&h->sum_ns) / 1e9);
	buf_printf(b, "%s_count{%s} %lu\n", name, labels, get(&h->count));
}

/* Nodes that only the fallback serves now: known to a fresh snapshot and
 * without fresh agent data. */
static size_t prometheus_nodes(struct scorer *s, uint64_t now)
{
	char (*names)[PROMQUERY_NODE_MAX + 1];
	size_t cap = table_capacity(s->table), n, served = 0;

	if (!s->prom)
		return 0;
	names = calloc(cap, sizeof(*names));
	if (!names)
		return 0;
	n = prom_nodes(s->prom, now, names, cap);
	for (size_t i = 0; i < n && i < cap; i++) {
		struct table_node tn;

		if (!table_get(s->table, names[i], strlen(names[i]), &tn) ||
		    table_node_age_ns(&tn, now) > s->stale_after_ns)
			served++;
	}
	free(names);
	return served;
}

static void node_gauges(struct buf *b, struct scorer *s)
{
	size_t n = table_count(s->table);
	size_t fresh = table_count_fresh(s->table, s->now_ns(), s->stale_after_ns);
	size_t from_prom = prometheus_nodes(s, s->now_ns());

	/* Counted in two passes, so a report landing in between could make
	 * fresh exceed n for one scrape; clamp rather than print a negative. */
	if (fresh > n)
		fresh = n;
	buf_puts(b, "# HELP netsched_scorer_nodes Tracked nodes by where their data comes from.\n"
		    "# TYPE netsched_scorer_nodes gauge\n");
	buf_printf(b, "netsched_scorer_nodes{source=\"agent\"} %zu\n", fresh);
	buf_printf(b, "netsched_scorer_nodes{source=\"prometheus\"} %zu\n", from_prom);
	buf_printf(b, "netsched_scorer_nodes{source=\"none\"} %zu\n",
		   n - fresh > from_prom ? n - fresh - from_prom : 0);
	buf_puts(b, "# HELP netsched_scorer_nodes_stale Tracked nodes whose latest report is older than --stale-after.\n"
		    "# TYPE netsched_scorer_nodes_stale gauge\n");
	buf_printf(b, "netsched_scorer_nodes_stale %zu\n", n - fresh);
	buf_printf(b, "# HELP netsched_scorer_nodes_evicted_total Stale nodes evicted to make room for new ones (table full).\n"
		      "# TYPE netsched_scorer_nodes_evicted_total counter\n"
		      "netsched_scorer_nodes_evicted_total %llu\n",
		   (unsigned long long)table_evictions(s->table));
	buf_printf(b, "# HELP netsched_scorer_nodes_capacity Nodes the table can track (--max-nodes).\n"
		      "# TYPE netsched_scorer_nodes_capacity gauge\n"
		      "netsched_scorer_nodes_capacity %zu\n", table_capacity(s->table));
}

void metrics_render(struct scorer *s, struct ext_reply *out)
{
	struct scorer_counters *c = &s->counters;
	struct buf b;

	buf_init(&b, 64 * 1024);
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
	buf_printf(&b, "netsched_scorer_reports_total{result=\"replayed\"} %lu\n", get(&c->reports_replayed));

	buf_puts(&b, "# HELP netsched_scorer_requests_total Extender requests answered, by verb.\n"
		     "# TYPE netsched_scorer_requests_total counter\n");
	buf_printf(&b, "netsched_scorer_requests_total{verb=\"filter\"} %lu\n", get(&c->requests_filter));
	buf_printf(&b, "netsched_scorer_requests_total{verb=\"prioritize\"} %lu\n", get(&c->requests_prioritize));
	buf_puts(&b, "# HELP netsched_scorer_bad_requests_total Requests answered with a 4xx status.\n"
		     "# TYPE netsched_scorer_bad_requests_total counter\n");
	buf_printf(&b, "netsched_scorer_bad_requests_total %lu\n", get(&c->requests_bad));

	buf_puts(&b, "# HELP netsched_scorer_request_duration_seconds Time to answer an extender request, body received to reply ready.\n"
		     "# TYPE netsched_scorer_request_duration_seconds histogram\n");
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"filter\"", &c->latency_filter);
	histogram(&b, "netsched_scorer_request_duration_seconds", "verb=\"prioritize\"",
		  &c->latency_prioritize);

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
	buf_printf(&b, "# HELP netsched_scorer_uptime_seconds Seconds since the scorer started.\n"
		       "# TYPE netsched_scorer_uptime_seconds gauge\n"
		       "netsched_scorer_uptime_seconds %.3f\n",
		   (double)(s->now_ns() - s->started_mono_ns) / 1e9);

	ext_reply_take(&b, out);
	if (out->body)
		out->content_type = METRICS_CONTENT_TYPE;
}
