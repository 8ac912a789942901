/* What the scorer shows of pods (scorer/serve/podstatus.c): GET /v1/workloads,
 * each node's top pods in /v1/nodes, the /metrics families; and nothing of
 * it without a pod watch. A fake scorer, a pod index fed by hand, a
 * report joined as the ingest would. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/pods/inflight.h"
#include "scorer/serve/metrics.h"
#include "scorer/pods/podindex.h"
#include "scorer/serve/reply.h"
#include "scorer/serve/status.h"
#include "scorer/pods/workload.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define UNIX_MS 1800000000000ULL

static struct kubepod replica(const char *uid, const char *ip)
{
	struct kubepod p = { .ns = { "shop", 4 }, .node = { "n1", 2 }, .running = true,
			     .n_ips = 1, .owner = { .kind = { "ReplicaSet", 10 },
						    .name = { "web-abc12", 9 },
						    .template_hash = { "abc12", 5 } } };

	p.uid.len = strlen(uid);
	memcpy(p.uid.s, uid, p.uid.len);
	p.name = (struct kubepod_str){ uid, strlen(uid) };
	/* Started long enough ago to be learned from. */
	p.started_unix_s = (int64_t)(UNIX_MS / 1000) - 3600;
	assert_int_equal(report_ip_parse(ip, &p.ips[0]), 0);
	return p;
}

/* n1 reports two pods: a at 5000 B/s in, b at 1000; n2 nothing. */
static struct scorer *scorer_with_pods(void)
{
	struct scorer *s = fake_scorer_new(8, START_NS, STALE_NS);
	struct workload_config wc = { .max_workloads = 8, .half_life_ns = 600 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = 8, .max_nodes = 8, .stale_ns = STALE_NS };
	struct kubepod a = replica("a", "10.0.0.1"), b = replica("b", "10.0.0.2");
	/* Its NIC counted what its pods moved (podindex.h holds them to it). */
	struct report r = fake_report("n1", 6000, 6000, 1000000000);
	struct report r2 = fake_report("n2", 0, 0, 1000000000);

	assert_non_null(s);
	s->view.weights.workloads = workload_create(&wc);
	s->view.weights.pods = podindex_create(&xc, s->view.weights.workloads);
	assert_non_null(s->view.weights.pods);
	podindex_update(s->view.weights.pods, &a, fake_now, UNIX_MS);
	podindex_update(s->view.weights.pods, &b, fake_now, UNIX_MS);
	r.has_pods = true;
	r.n_pods = 2;
	r.pods_seen = 2;
	r.pods[0].n_ips = r.pods[1].n_ips = 1;
	r.pods[0].ips[0] = a.ips[0];
	r.pods[1].ips[0] = b.ips[0];
	report_pod_count(&r.pods[0], 50000, 5000, 10000);
	report_pod_count(&r.pods[1], 10000, 1000, 10000);
	assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &r2, fake_now), TABLE_APPLIED);
	podindex_join(s->view.weights.pods, &r, fake_now);
	podindex_tick(s->view.weights.pods, fake_now);
	workload_tick(s->view.weights.workloads, fake_now);
	return s;
}

static void scorer_free(struct scorer *s)
{
	podindex_destroy(s->view.weights.pods);
	workload_destroy(s->view.weights.workloads);
	inflight_destroy(s->view.inflight);
	fake_scorer_free(s);
}

static void test_podstatus_workloads(void **state)
{
	struct scorer *s = scorer_with_pods();
	struct reply out;

	(void)state;
	fake_now += 2 * NS_PER_SEC;
	status_workloads(s, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(strstr(out.body, "{\"enabled\":true,\"tracked\":1,\"live\":1,\"learned\":1,"
				      "\"averagePerPod\":{\"pods\":2,\"rxBytesPerSecond\":3000,"
				      "\"txBytesPerSecond\":300,\"nodes\":1},\"workloads\":[{\"workload\":"
				      "\"shop/Deployment/web\",\"namespace\":\"shop\",\"kind\":"
				      "\"Deployment\",\"name\":\"web\",\"pods\":2,\"podsMeasured\":2,"
				      "\"learned\":true,\"rxBytesPerSecond\":5000,\"txBytesPerSecond\":500,"
				      "\"ageSeconds\":2.000,\"sources\":[{\"node\":\"n1\",\"pods\":2,"
				      "\"sharePercent\":100,\"ageSeconds\":2.000}]}"));
	free(out.body);
	scorer_free(s);
}

static void test_podstatus_nodes(void **state)
{
	struct scorer *s = scorer_with_pods();
	struct reply out;

	(void)state;
	status_nodes(s, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(strstr(out.body, "\"pods\":{\"top\":[{\"pod\":\"shop/a\",\"workload\":"
				      "\"shop/Deployment/web\",\"rxBytesPerSecond\":5000,"
				      "\"txBytesPerSecond\":500},{\"pod\":\"shop/b\",\"workload\":"
				      "\"shop/Deployment/web\",\"rxBytesPerSecond\":1000,"
				      "\"txBytesPerSecond\":100}]}"));
	/* n2: no pods reported. */
	assert_non_null(strstr(out.body, "\"pods\":{\"top\":[]}"));
	free(out.body);
	scorer_free(s);
}

static void test_podstatus_metrics(void **state)
{
	static const char *const want[] = {
		"netsched_scorer_pod_traffic_total{result=\"matched\"} 2\n",
		"netsched_scorer_pod_traffic_total{result=\"unknown_ip\"} 0\n",
		"netsched_scorer_pods_indexed{state=\"running\"} 2\n",
		"netsched_scorer_pods_not_indexed_total{reason=\"absurd\"} 0\n",
		"netsched_scorer_pod_average_bytes_per_second{direction=\"rx\"} 3000\n",
		"netsched_scorer_workloads{state=\"learned\"} 1\n",
		"netsched_scorer_workloads_total{event=\"evicted\"} 0\n",
		"netsched_scorer_workload_samples_total 2\n",
		"netsched_scorer_node_top_pod_bytes_per_second{node=\"n1\",pod=\"shop/a\","
		"workload=\"shop/Deployment/web\",direction=\"rx\"} 5000\n",
		"netsched_scorer_node_top_pod_bytes_per_second{node=\"n1\",pod=\"shop/b\","
		"workload=\"shop/Deployment/web\",direction=\"tx\"} 100\n",
		/* Each reason a pod list is dropped for: its own count. */
		"netsched_scorer_reports_total{result=\"pods_oversize\"} 3\n",
		"netsched_scorer_reports_total{result=\"pods_duplicate\"} 4\n",
		"netsched_scorer_reports_total{result=\"pods_over_link\"} 5\n",
		"netsched_scorer_reports_total{result=\"malformed\"} 0\n",
	};
	struct scorer *s = scorer_with_pods();
	struct reply out;

	(void)state;
	atomic_store(&s->counters.reports_pods_oversize, 3);
	atomic_store(&s->counters.reports_pods_duplicate, 4);
	atomic_store(&s->counters.reports_pods_over_link, 5);
	metrics_render(s, &out);
	assert_int_equal(out.status, 200);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out.body, want[i]))
			fail_msg("/metrics lacks %s", want[i]);
	free(out.body);
	scorer_free(s);
}

/* No pod watch: the endpoint says so, the rest shows nothing of pods. */
static void test_podstatus_disabled(void **state)
{
	struct scorer *s = fake_scorer_new(8, START_NS, STALE_NS);
	struct report r = fake_report("n1", 0, 0, 0);
	struct reply out;

	(void)state;
	assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	status_workloads(s, &out);
	assert_string_equal(out.body, "{\"enabled\":false,\"workloads\":[]}");
	free(out.body);
	status_nodes(s, &out);
	assert_null(strstr(out.body, "\"pods\""));
	free(out.body);
	metrics_render(s, &out);
	assert_null(strstr(out.body, "netsched_scorer_pod_traffic_total"));
	assert_null(strstr(out.body, "netsched_scorer_workloads"));
	free(out.body);
	fake_scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podstatus_workloads),
		cmocka_unit_test(test_podstatus_nodes),
		cmocka_unit_test(test_podstatus_metrics),
		cmocka_unit_test(test_podstatus_disabled),
	};
	return cmocka_run_group_tests_name("podstatus", tests, NULL, NULL);
}
