/* The agent's /metrics page rendered from snapshots (agent/metrics.c): each
 * row renders one snapshot and names lines that must appear, and lines that
 * must not. The HTTP server around it is tests/integration/test_agent.sh's
 * and test_connections.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/metrics.h"
#include "common/buf.h"

static void no_report(struct agent_metrics_snapshot *m)
{
	(void)m;
}

/* eth0: 1 MB/s in, 250 KB/s out, 10 Gb/s, drops; lo: idle, speed
 * unknown. */
static void two_ifaces(struct agent_metrics_snapshot *m)
{
	struct report_iface *e = &m->report.ifaces[0], *l = &m->report.ifaces[1];

	m->have_report = true;
	m->report.n_ifaces = 2;
	strcpy(e->name, "eth0");
	e->traffic.rx.average = 1000000;
	e->traffic.tx.average = 250000;
	e->traffic.covered_ms = 2000;
	e->traffic.link_bytes_per_second = 1250000000;
	e->traffic.rx_dropped = 3;
	e->traffic.rx_missed = 4;
	e->traffic.tx_dropped = 5;
	strcpy(l->name, "lo");
	l->traffic.covered_ms = 2000;
}

static void health_and_peers(struct agent_metrics_snapshot *m)
{
	m->n_ifaces = 1;
	strcpy(m->ifaces[0].name, "eth0");
	m->ifaces[0].absurd = 7;
	m->ifaces[0].gaps = 8;
	m->ifaces[0].resets = 9;
	m->ifaces[0].failed = 10;
	m->ifaces[0].failed_in_row = 4;
	m->n_peers = 2;
	strcpy(m->peers[0].url, "tcp://10.0.0.1:7470");
	m->peers[0].sent = 100;
	m->peers[0].failed = 1;
	/* Not a URL we would dial, but label values are escaped whatever
	 * they hold. */
	strcpy(m->peers[1].url, "ipc:///a\"b\\c");
	m->peers[1].sent = 2;
}

/* Pods measured: totals only, never a label per pod. */
static void pods(struct agent_metrics_snapshot *m)
{
	m->have_pods = true;
	m->pods = (struct pods_health){ .measured = 110, .with_ips = 108, .listed = 32,
					.rx_bytes_per_second = 5000000, .tx_bytes_per_second = 7,
					.unmeasured = 1, .restarts = 2, .withheld = 3 };
}

static void netlink(struct agent_metrics_snapshot *m)
{
	m->have_nl = true;
	m->nl = (struct nl_health){ .requests = 1000, .interrupted = 12, .retries = 13,
				    .stale = 44, .failed = 1, .reopens = 2 };
}

#define MAX_LINES 12

struct render_row {
	const char *name;
	void (*fill)(struct agent_metrics_snapshot *m);
	struct agent_metrics_process process;
	const char *want[MAX_LINES];
	const char *never[MAX_LINES];
};

static const struct render_row rows[] = {
	{ "before the first report: the families, no series, the process",
	  no_report,
	  { .cpu_seconds = 1.5, .resident_bytes = 4096, .log_lines_dropped = 2 },
	  { "# TYPE netsched_agent_receive_bytes_per_second gauge\n",
	    "# TYPE netsched_agent_reports_sent_total counter\n",
	    "netsched_agent_log_lines_dropped_total 2\n",
	    "process_cpu_seconds_total 1.500\n",
	    "process_resident_memory_bytes 4096\n" },
	  { "{interface=", "{scorer=" } },
	{ "two interfaces: the average rates, the link in bytes, drops with misses",
	  two_ifaces,
	  { .cpu_seconds = 0 },
	  { "netsched_agent_receive_bytes_per_second{interface=\"eth0\"} 1000000\n",
	    "netsched_agent_transmit_bytes_per_second{interface=\"eth0\"} 250000\n",
	    "netsched_agent_link_speed_bytes_per_second{interface=\"eth0\"} 1250000000\n",
	    "netsched_agent_receive_dropped_packets{interface=\"eth0\"} 7\n",
	    "netsched_agent_transmit_dropped_packets{interface=\"eth0\"} 5\n",
	    "netsched_agent_receive_bytes_per_second{interface=\"lo\"} 0\n",
	    "netsched_agent_link_speed_bytes_per_second{interface=\"lo\"} 0\n" },
	  { 0 } },
	{ "sampler counts per interface, reports per scorer, escaped labels",
	  health_and_peers,
	  { .cpu_seconds = 0 },
	  { "netsched_agent_samples_dropped_total{interface=\"eth0\"} 7\n",
	    "netsched_agent_sample_gaps_total{interface=\"eth0\"} 8\n",
	    "netsched_agent_interface_resets_total{interface=\"eth0\"} 9\n",
	    "netsched_agent_sample_read_failures_total{interface=\"eth0\"} 10\n",
	    "# TYPE netsched_agent_sample_failures_in_row gauge\n",
	    "netsched_agent_sample_failures_in_row{interface=\"eth0\"} 4\n",
	    "netsched_agent_reports_sent_total{scorer=\"tcp://10.0.0.1:7470\"} 100\n",
	    "netsched_agent_reports_failed_total{scorer=\"tcp://10.0.0.1:7470\"} 1\n",
	    "netsched_agent_reports_sent_total{scorer=\"ipc:///a\\\"b\\\\c\"} 2\n" },
	  { "{interface=\"eth0\"} 1000000" } },
	{ "pods: their totals, no series per pod",
	  pods,
	  { .cpu_seconds = 0 },
	  { "netsched_agent_pod_interfaces 110\n",
	    "netsched_agent_pod_interfaces_with_address 108\n",
	    "netsched_agent_pods_listed 32\n",
	    "netsched_agent_pods_receive_bytes_per_second 5000000\n",
	    "netsched_agent_pods_transmit_bytes_per_second 7\n",
	    "netsched_agent_pod_interfaces_unmeasured_total 1\n",
	    "netsched_agent_pod_windows_restarted_total 2\n",
	    "netsched_agent_pod_reports_withheld_total 3\n",
	    "# TYPE netsched_agent_pod_sample_gaps_total counter\n" },
	  { "{pod", "{ip" } },
	{ "netlink: how the socket kept in step",
	  netlink,
	  { .cpu_seconds = 0 },
	  { "netsched_agent_netlink_requests_total 1000\n",
	    "netsched_agent_netlink_dumps_interrupted_total 12\n",
	    "netsched_agent_netlink_retries_total 13\n",
	    "netsched_agent_netlink_stale_replies_total 44\n",
	    "netsched_agent_netlink_requests_failed_total 1\n",
	    "netsched_agent_netlink_socket_reopens_total 2\n",
	    "# TYPE netsched_agent_netlink_socket_reopens_total counter\n",
	    "netsched_agent_netlink_socket_reopen_errors_total 0\n" },
	  { 0 } },
	{ "without netlink (sysfs), no netlink rows",
	  no_report,
	  { .cpu_seconds = 0 },
	  { "process_cpu_seconds_total" },
	  { "netsched_agent_netlink" } },
	{ "without pods measured, no pod rows",
	  no_report,
	  { .cpu_seconds = 0 },
	  { "process_cpu_seconds_total" },
	  { "netsched_agent_pod" } },
	{ "connections the endpoint closed, by why",
	  no_report,
	  { .http_deadline_closes = 3, .http_reclaimed_idle = 4, .http_reclaimed_busiest = 5 },
	  { "netsched_agent_http_deadline_closes_total 3\n",
	    "netsched_agent_http_connections_reclaimed_total{reason=\"idle\"} 4\n",
	    "netsched_agent_http_connections_reclaimed_total{reason=\"busiest_address\"} 5\n" },
	  { 0 } },
};

static void test_agent_metrics_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		static struct agent_metrics_snapshot m;
		struct buf b;
		char *page;

		memset(&m, 0, sizeof(m));
		rows[r].fill(&m);
		buf_init(&b, 1 << 20);
		agent_metrics_render(&m, &rows[r].process, &b);
		assert_false(buf_failed(&b));
		page = buf_release(&b, NULL);
		assert_non_null(page);
		for (size_t i = 0; i < MAX_LINES && rows[r].want[i]; i++)
			if (!strstr(page, rows[r].want[i]))
				fail_msg("%s: no \"%s\" in:\n%s", rows[r].name, rows[r].want[i], page);
		for (size_t i = 0; i < MAX_LINES && rows[r].never[i]; i++)
			if (strstr(page, rows[r].never[i]))
				fail_msg("%s: \"%s\" in:\n%s", rows[r].name, rows[r].never[i], page);
		/* Every line ends: the text format is line by line. */
		assert_int_equal(page[strlen(page) - 1], '\n');
		free(page);
	}
}

/* The process's own figures come from the kernel: some CPU time, some
 * resident memory, none of the HTTP counts touched. */
static void test_agent_metrics_process_read(void **state)
{
	struct agent_metrics_process p = { .http_deadline_closes = 42 };

	(void)state;
	agent_metrics_process_read(&p);
	assert_true(p.resident_bytes > 0);
	assert_true(p.cpu_seconds >= 0);
	assert_int_equal(p.http_deadline_closes, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_metrics_rows),
		cmocka_unit_test(test_agent_metrics_process_read),
	};
	return cmocka_run_group_tests_name("agent_metrics", tests, NULL, NULL);
}
