/* A node's pods in a report (agent/pods.c): which are listed (the busiest
 * with an address and a covered time, busiest first, at most N), what the
 * rest sums to, and a report whose pods would break the node's link
 * bound going without them. Windows and addresses on real interfaces are
 * tested in tests/integration/test_agent_pods.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/pods.h"

static struct report_ip ip_a[2], ip_b[1];

static void setup_ips(void)
{
	report_ip_parse("10.244.0.1", &ip_a[0]);
	report_ip_parse("fd00::1", &ip_a[1]);
	report_ip_parse("10.244.0.2", &ip_b[0]);
}

/* A pod moving rx and tx bytes over covered ms, with n addresses. */
static struct pods_totals pod(uint32_t ifindex, uint64_t rx, uint64_t tx, uint64_t covered,
			      uint32_t n, const struct report_ip *ips)
{
	return (struct pods_totals){ .ifindex = ifindex, .n_ips = n, .ips = ips, .rx_bytes = rx,
				     .tx_bytes = tx, .covered_ms = covered, .rx_recent = rx / 10,
				     .tx_recent = tx / 10 };
}

static void test_pods_select_order_and_rest(void **state)
{
	static struct report_pod listed[REPORT_MAX_PODS];
	struct report_pod rest;
	struct pods_totals in[] = {
		pod(5, 200, 0, 60000, 1, ip_b),
		pod(3, 0, 5000, 60000, 2, ip_a),	/* busiest by rx + tx */
		pod(9, 50, 50, 60000, 1, ip_b),	/* ties with 4: lower ifindex first */
		pod(4, 60, 40, 60000, 1, ip_b),
		pod(7, 900000, 0, 60000, 0, NULL),	/* busiest, but no address: the rest */
		pod(8, 800000, 0, 0, 1, ip_b),		/* no time covered (new): the rest */
		pod(6, 10, 0, 30000, 1, ip_b),		/* over the cap: the rest */
	};
	uint32_t n;

	(void)state;
	setup_ips();
	n = pods_select(in, sizeof(in) / sizeof(in[0]), 4, listed, &rest);
	assert_int_equal(n, 4);
	assert_int_equal(listed[0].tx_bytes, 5000);
	assert_int_equal(listed[0].n_ips, 2);
	assert_true(report_ip_equal(&listed[0].ips[1], &ip_a[1]));
	assert_int_equal(listed[1].rx_bytes, 200);
	assert_int_equal(listed[2].rx_bytes, 60); /* ifindex 4 before 9 */
	assert_int_equal(listed[3].rx_bytes, 50);
	assert_int_equal(listed[0].tx.average, 5000 * 1000 / 60000);
	assert_int_equal(listed[0].tx.recent, 500);
	/* The rest: 7, 8 and 6; the longest covered time; recents added up. */
	assert_int_equal(rest.n_ips, 0);
	assert_int_equal(rest.rx_bytes, 900000 + 800000 + 10);
	assert_int_equal(rest.covered_ms, 60000);
	assert_int_equal(rest.rx.average, (900000 + 800000 + 10) * 1000 / 60000);
	assert_int_equal(rest.rx.recent, 90000 + 80000 + 1);
}

static void test_pods_select_bounds(void **state)
{
	static struct report_pod listed[REPORT_MAX_PODS];
	static struct pods_totals in[PODS_MAX];
	struct report_pod rest;

	(void)state;
	setup_ips();
	/* Nothing: nothing listed, a rest of zeros that validates. */
	assert_int_equal(pods_select(in, 0, 8, listed, &rest), 0);
	assert_int_equal(rest.rx_bytes, 0);
	assert_int_equal(rest.covered_ms, 0);
	/* A cap over the wire's bound is the bound. */
	for (uint32_t i = 0; i < PODS_MAX; i++)
		in[i] = pod(i + 1, i, i, 1000, 1, ip_b);
	assert_int_equal(pods_select(in, PODS_MAX, 1000, listed, &rest), REPORT_MAX_PODS);
	assert_int_equal(listed[0].rx_bytes, PODS_MAX - 1);
	assert_int_equal(listed[REPORT_MAX_PODS - 1].rx_bytes, PODS_MAX - REPORT_MAX_PODS);
	/* Byte counts that would wrap saturate. */
	in[0] = pod(1, UINT64_MAX, 0, 1000, 0, NULL);
	in[1] = pod(2, UINT64_MAX, 0, 1000, 0, NULL);
	assert_int_equal(pods_select(in, 2, 8, listed, &rest), 0);
	assert_int_equal(rest.rx_bytes, UINT64_MAX);
}

/* The listed pods and the rest fill a report that validates; pods adding
 * up to more than twice the node's link make it go without them. */
static void test_pods_fill_withholds(void **state)
{
	static struct pods p;
	static struct report r;
	struct pods_totals in[] = {
		pod(3, 60000000, 1000, 1000, 2, ip_a),	/* 60 MB/s */
		pod(4, 1000, 1000, 1000, 1, ip_b),
	};

	(void)state;
	setup_ips();
	memset(&p, 0, sizeof(p));
	p.cfg.node = "node-1";
	p.n = 2;
	p.n_listed = pods_select(in, 2, 8, p.listed, &p.rest);
	p.have_figures = true;
	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "node-1");
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "eth0");
	r.ifaces[0].traffic.link_bytes_per_second = 125000000; /* 1 Gb/s: 250 MB/s allowed */
	pods_fill(&p, &r, 1);
	assert_true(r.has_pods);
	assert_int_equal(r.pods_seen, 2);
	assert_int_equal(r.n_pods, 2);
	assert_int_equal(report_validate(&r, NULL, 0), 0);
	assert_int_equal(p.health.withheld, 0);

	/* A 100 Mb/s node (25 MB/s allowed): the report goes without pods. */
	r.ifaces[0].traffic.link_bytes_per_second = 12500000;
	pods_fill(&p, &r, 2);
	assert_false(r.has_pods);
	assert_int_equal(r.n_pods, 0);
	assert_int_equal(r.pods_seen, 0);
	assert_int_equal(report_validate(&r, NULL, 0), 0);
	assert_int_equal(p.health.withheld, 1);
	/* The same figures and link: the same verdict, without judging again. */
	pods_fill(&p, &r, 3);
	assert_false(r.has_pods);
	assert_int_equal(p.health.withheld, 2);
	/* Back on a 1 Gb/s link: the pods go again. */
	r.ifaces[0].traffic.link_bytes_per_second = 125000000;
	pods_fill(&p, &r, 4);
	assert_true(r.has_pods);
	assert_int_equal(r.n_pods, 2);
	assert_int_equal(p.health.withheld, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_select_order_and_rest),
		cmocka_unit_test(test_pods_select_bounds),
		cmocka_unit_test(test_pods_fill_withholds),
	};

	return cmocka_run_group_tests_name("pods", tests, NULL, NULL);
}
