/* GET /metrics (scorer/serve/metrics.c): the Prometheus text that the verbs'
 * counters and latency histograms turn into, and the node gauges by source
 * as the view counts them, the fallback's nodes included (a real HTTP
 * server plays Prometheus: fake_prometheus.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "scorer/serve/extender.h"
#include "scorer/serve/metrics.h"
#include "scorer/prom/prom.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "tests/unit/fake_prometheus.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)

static int setup(void **state)
{
	*state = fake_scorer_new(16, START_NS, 6 * NS_PER_SEC);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	fake_scorer_free(*state);
	return 0;
}

/* node receives rx_per_s bytes per second; the report arrives at arrival. */
static void feed(struct scorer *s, const char *node, uint64_t rx_per_s, uint64_t arrival)
{
	assert_int_equal(fake_feed(s, node, rx_per_s, arrival), TABLE_APPLIED);
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* The whole text, or fails naming the first missing line. */
static void expect_lines(struct scorer *s, const char *const *want, size_t n)
{
	struct reply r;

	metrics_render(s, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, METRICS_CONTENT_TYPE);
	assert_int_equal(r.len, strlen(r.body));
	assert_true(r.len > 0 && r.body[r.len - 1] == '\n');
	for (size_t i = 0; i < n; i++)
		if (!has_line(r.body, want[i]))
			fail_msg("no line \"%s\" in:\n%s", want[i], r.body);
	free(r.body);
}

static void test_metrics_render(void **state)
{
	static const char *const want[] = {
		"# TYPE netsched_scorer_request_duration_seconds histogram",
		"netsched_scorer_requests_total{verb=\"filter\"} 1",
		"netsched_scorer_requests_total{verb=\"prioritize\"} 2",
		"netsched_scorer_bad_requests_total 1",
		"netsched_scorer_request_duration_seconds_bucket{verb=\"prioritize\",le=\"5e-05\"} 2",
		"netsched_scorer_request_duration_seconds_bucket{verb=\"prioritize\",le=\"+Inf\"} 2",
		"netsched_scorer_request_duration_seconds_count{verb=\"prioritize\"} 2",
		"netsched_scorer_request_duration_seconds_count{verb=\"filter\"} 1",
		"netsched_scorer_nodes{source=\"agent\"} 1",
		"netsched_scorer_nodes{source=\"prometheus\"} 0",
		"netsched_scorer_nodes{source=\"none\"} 1",
		"netsched_scorer_nodes_stale 1",
		"netsched_scorer_nodes_capacity 16",
		"netsched_scorer_reports_total{result=\"accepted\"} 0",
		"netsched_scorer_ready 1",	/* a fresh agent */
	};
	const char *ok = "{\"NodeNames\":[\"a\"]}";
	struct scorer *s = *state;
	struct reply r;

	feed(s, "fresh", 10, fake_now);
	feed(s, "stale", 10, fake_now - 10 * NS_PER_SEC);
	ext_filter(s, ok, strlen(ok), &r);
	free(r.body);
	ext_prioritize(s, ok, strlen(ok), &r);
	free(r.body);
	ext_prioritize(s, "x", 1, &r);	/* a 400 is timed too */
	free(r.body);
	expect_lines(s, want, sizeof(want) / sizeof(want[0]));
}

/* Nodes only the fallback serves count as "prometheus"; a silent agent's
 * node it serves too moves there from "none"; every node once, in the
 * counts and in the per-node series. */
static void test_metrics_nodes_by_source(void **state)
{
	static const char *const nodes[] = { "silent", "agentless" };
	static const double rx[] = { 10, 20 }, tx[] = { 1, 2 };
	static const char *const want[] = {
		"netsched_scorer_nodes{source=\"agent\"} 1",
		"netsched_scorer_nodes{source=\"prometheus\"} 2",
		"netsched_scorer_nodes{source=\"none\"} 1",
		"netsched_scorer_nodes_stale 2",
		"netsched_scorer_prometheus_refreshes_total{result=\"ok\"} 1",
		"netsched_scorer_prometheus_query_duration_seconds_count{} 1",
		/* Per node, for dashboards: the same view. */
		"netsched_scorer_node_source{node=\"fresh\",source=\"agent\"} 1",
		"netsched_scorer_node_source{node=\"silent\",source=\"prometheus\"} 1",
		"netsched_scorer_node_source{node=\"agentless\",source=\"prometheus\"} 1",
		"netsched_scorer_node_source{node=\"quiet\",source=\"none\"} 1",
		"netsched_scorer_node_receive_bytes_per_second{node=\"agentless\"} 20",
		"netsched_scorer_node_transmit_bytes_per_second{node=\"agentless\"} 2",
		"netsched_scorer_node_link_bytes_per_second{node=\"agentless\"} 0",
		"netsched_scorer_node_inflight_pods{node=\"quiet\"} 0.000",
	};
	struct prom_config cfg = { .refresh_ms = 3600 * 1000, .timeout_ms = 5000,
				   .connect_timeout_ms = 5000, .max_age_ms = 20000, .max_nodes = 16 };
	struct fake_prometheus *fp = fake_prometheus_start();
	struct scorer *s = *state;
	char err[256];

	assert_non_null(fp);
	fake_prometheus_vector(fp, nodes, rx, tx, 2);
	snprintf(cfg.url, sizeof(cfg.url), "%s", fp->url);
	snprintf(cfg.query.device, sizeof(cfg.query.device), "eth0");
	snprintf(cfg.query.range, sizeof(cfg.query.range), "1m");
	s->view.prom = prom_start(&cfg, &s->counters, s->now_ns, err, sizeof(err));
	assert_non_null(s->view.prom);
	assert_true(fake_prometheus_wait(&s->counters.prom_refreshes, 1));
	feed(s, "fresh", 10, fake_now);
	feed(s, "silent", 10, fake_now - 10 * NS_PER_SEC);
	feed(s, "quiet", 10, fake_now - 10 * NS_PER_SEC);
	expect_lines(s, want, sizeof(want) / sizeof(want[0]));
	prom_stop(s->view.prom);
	s->view.prom = NULL;
	fake_prometheus_stop(fp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metrics_render, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_nodes_by_source, setup, teardown),
	};

	log_init("test_scorer_metrics");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("scorer metrics", tests, NULL, NULL);
}
