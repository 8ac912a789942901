/* A node's pods in a report (agent/pods.c): which are listed (the busiest
 * with an address and a covered time, busiest first, at most N), what the
 * rest sums to, and a report whose pods would break the node's link
 * bound going without them; each pod's window through its life (the point
 * of view, a reset, a re-created interface, addresses that move or come
 * back, gaps, absurd samples) on made-up counters; the bounds. On real
 * interfaces: tests/integration/test_agent_pods.sh. */
#include <errno.h>
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
	p.n = p.n_seen = 2;
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

/* ---------------------------------------------- windows and addresses */

#define SEC 1000000000ULL

static struct ifselect_link veth(uint32_t ifindex, const char *name)
{
	struct ifselect_link l = { .ifindex = ifindex, .peer_netns = true };

	snprintf(l.name, sizeof(l.name), "%s", name);
	snprintf(l.kind, sizeof(l.kind), "veth");
	return l;
}

/* The pods' addresses: routes ifindex -> ip, n of them. */
struct route_row {
	uint32_t ifindex;
	const char *ip;
};

static void set_routes(struct pods *p, const struct route_row *rows, size_t n)
{
	struct podmap_iface ifaces[8] = { { 0, 0 } };

	for (size_t i = 0; i < p->n && i < 8; i++)
		ifaces[i] = (struct podmap_iface){ p->ifs[i].ifindex, p->ifs[i].master };
	podmap_begin(p->map, ifaces, p->n < 8 ? p->n : 8);
	for (size_t i = 0; i < n; i++) {
		struct podmap_fact f = { .kind = PODMAP_ROUTE, .ifindex = rows[i].ifindex,
					 .table = 254 };

		assert_int_equal(report_ip_parse(rows[i].ip, &f.ip), 0);
		podmap_add(p->map, &f);
	}
	podmap_end(p->map);
	pods_apply_map(p);
}

/* One reading at t seconds: each {ifindex, host rx, host tx}. */
struct reading {
	uint32_t ifindex;
	uint64_t rx, tx;
};

static void read_at(struct pods *p, uint64_t t, const struct reading *r, size_t n, uint64_t link)
{
	pods_begin_read(p, t * SEC);
	for (size_t i = 0; i < n; i++) {
		struct ifreading c = { .rx_bytes = r[i].rx, .tx_bytes = r[i].tx };

		pods_on_stats(p, r[i].ifindex, &c);
	}
	pods_sample(p, t * SEC, link, true);
}

/* The listed pod with address ip, or NULL. */
static const struct report_pod *listed(const struct pods *p, const char *ip)
{
	struct report_ip want;

	assert_int_equal(report_ip_parse(ip, &want), 0);
	for (uint32_t i = 0; i < p->n_listed; i++)
		for (uint32_t k = 0; k < p->listed[i].n_ips; k++)
			if (report_ip_equal(&p->listed[i].ips[k], &want))
				return &p->listed[i];
	return NULL;
}

/* A node's pods through their lives, on a fake clock and made-up counters:
 * the point of view, a counter reset, a re-created interface, an address
 * that moves, one that comes back, a gap and an absurd sample. */
static void test_pods_windows_and_addresses(void **state)
{
	static struct pods p;
	struct pods_config cfg = { .node = "n", .interval_ns = SEC, .slack_ns = SEC / 2,
				   .window_ns = 10 * SEC, .reported = 8 };
	struct ifselect_link links[2] = { veth(10, "veth10"), veth(11, "veth11") };
	const struct report_pod *a;
	struct pods_health h;

	(void)state;
	assert_int_equal(podselect_parse(&cfg.spec, "auto", NULL, 0), 0);
	assert_int_equal(pods_init(&p, NULL, &cfg), 0);
	pods_sync(&p, links, 2, NULL, 0);
	assert_int_equal(p.n, 2);
	set_routes(&p, (const struct route_row[]){ { 10, "10.244.0.10" }, { 11, "10.244.0.11" } }, 2);
	read_at(&p, 1, (const struct reading[]){ { 10, 0, 0 }, { 11, 0, 0 } }, 2, 0);
	assert_int_equal(p.n_listed, 0); /* primed only: nothing covered */
	read_at(&p, 2, (const struct reading[]){ { 10, 1000, 5000 }, { 11, 100, 100 } }, 2, 0);
	assert_int_equal(p.n_listed, 2);
	/* The pod received what its host side sent. */
	a = listed(&p, "10.244.0.10");
	assert_non_null(a);
	assert_ptr_equal(a, &p.listed[0]);
	assert_int_equal(a->rx_bytes, 5000);
	assert_int_equal(a->tx_bytes, 1000);
	assert_int_equal(a->covered_ms, 1000);
	assert_int_equal(a->rx.recent, 5000);

	/* Counters that go backwards: re-primed, no spike. */
	read_at(&p, 3, (const struct reading[]){ { 10, 10, 10 }, { 11, 200, 200 } }, 2, 0);
	a = listed(&p, "10.244.0.10");
	assert_int_equal(a->rx_bytes, 5000);
	pods_health(&p, &h);
	assert_int_equal(h.resets, 1);

	/* veth10 re-created (ifindex 12), the new pod at the same address:
	 * its own bytes only. */
	links[0] = veth(12, "veth10");
	pods_sync(&p, links, 2, NULL, 0);
	set_routes(&p, (const struct route_row[]){ { 12, "10.244.0.10" }, { 11, "10.244.0.11" } }, 2);
	read_at(&p, 4, (const struct reading[]){ { 12, 70000000, 9000000 }, { 11, 300, 300 } }, 2, 0);
	assert_null(listed(&p, "10.244.0.10")); /* primed: not yet covered */
	read_at(&p, 5, (const struct reading[]){ { 12, 70000010, 9000020 }, { 11, 400, 400 } }, 2, 0);
	a = listed(&p, "10.244.0.10");
	assert_non_null(a);
	assert_int_equal(a->rx_bytes, 20);
	assert_int_equal(a->tx_bytes, 10);
	pods_health(&p, &h);
	assert_int_equal(h.resets, 1); /* the old window's count is kept */

	/* veth11 comes to serve another address: its window starts over. */
	set_routes(&p, (const struct route_row[]){ { 12, "10.244.0.10" }, { 11, "10.244.0.99" } }, 2);
	pods_health(&p, &h);
	assert_int_equal(h.restarts, 1);
	read_at(&p, 6, (const struct reading[]){ { 12, 70000010, 9000020 }, { 11, 500, 500 } }, 2, 0);
	assert_null(listed(&p, "10.244.0.99"));
	assert_null(listed(&p, "10.244.0.11"));
	read_at(&p, 7, (const struct reading[]){ { 12, 70000010, 9000020 }, { 11, 503, 507 } }, 2, 0);
	a = listed(&p, "10.244.0.99");
	assert_non_null(a);
	assert_int_equal(a->rx_bytes, 7);
	assert_int_equal(a->tx_bytes, 3);

	/* An address lost a while (a neighbour aged out), then back: the
	 * same pod, its window kept. */
	set_routes(&p, (const struct route_row[]){ { 11, "10.244.0.99" } }, 1);
	read_at(&p, 8, (const struct reading[]){ { 12, 70000110, 9000020 }, { 11, 503, 507 } }, 2, 0);
	assert_null(listed(&p, "10.244.0.10"));
	assert_true(p.rest.tx_bytes >= 110); /* in the rest meanwhile */
	set_routes(&p, (const struct route_row[]){ { 12, "10.244.0.10" }, { 11, "10.244.0.99" } }, 2);
	read_at(&p, 9, (const struct reading[]){ { 12, 70000110, 9000020 }, { 11, 503, 507 } }, 2, 0);
	a = listed(&p, "10.244.0.10");
	assert_int_equal(a->tx_bytes, 110);
	pods_health(&p, &h);
	assert_int_equal(h.restarts, 1);

	/* A reading without veth11 is a gap; a sample over twice a known
	 * link (1,000 B/s) is dropped. */
	read_at(&p, 10, (const struct reading[]){ { 12, 70000110, 9000020 } }, 1, 0);
	read_at(&p, 11, (const struct reading[]){ { 12, 70100110, 9000020 }, { 11, 503, 507 } }, 2,
		1000);
	pods_health(&p, &h);
	assert_int_equal(h.gaps, 1);
	assert_int_equal(h.absurd, 1);
	assert_int_equal(h.measured, 2);
	assert_int_equal(h.with_ips, 2);

	/* Gone: forgotten at once (its address may be reused). Until the next
	 * reading, reports carry the last one's figures, with as many pods seen
	 * as it measured: fewer seen than listed would be refused whole. */
	pods_sync(&p, links + 1, 1, NULL, 0);
	assert_int_equal(p.n, 1);
	{
		static struct report r;

		snprintf(r.node, sizeof(r.node), "n");
		pods_fill(&p, &r, 12 * SEC);
		assert_true(r.has_pods);
		assert_int_equal(r.n_pods, 2);
		assert_int_equal(r.pods_seen, 2);
		assert_int_equal(report_validate(&r, NULL, 0), 0);
	}
	pods_free(&p);
}

/* More pod interfaces than PODS_MAX: the first measured, the rest counted;
 * a measured uplink is never a pod's. */
static void test_pods_bounded(void **state)
{
	static struct pods p;
	static struct ifselect_link links[PODS_MAX + 3];
	struct pods_config cfg = { .node = "n", .interval_ns = SEC, .window_ns = 10 * SEC,
				   .reported = 8 };
	uint32_t uplink = 1;

	(void)state;
	assert_int_equal(podselect_parse(&cfg.spec, "auto", NULL, 0), 0);
	assert_int_equal(pods_init(&p, NULL, &cfg), 0);
	for (uint32_t i = 0; i < PODS_MAX + 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "veth%u", i);
		links[i] = veth(i + 1, name);
	}
	pods_sync(&p, links, PODS_MAX + 3, &uplink, 1);
	assert_int_equal(p.n, PODS_MAX);
	assert_int_equal(p.health.unmeasured, 2);
	for (size_t i = 0; i < p.n; i++)
		assert_int_not_equal(p.ifs[i].ifindex, 1);
	pods_free(&p);
	pods_free(&p); /* twice: nothing left to free */
	assert_int_equal(pods_init(&p, NULL, &(struct pods_config){ .interval_ns = SEC }), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_select_order_and_rest),
		cmocka_unit_test(test_pods_select_bounds),
		cmocka_unit_test(test_pods_fill_withholds),
		cmocka_unit_test(test_pods_windows_and_addresses),
		cmocka_unit_test(test_pods_bounded),
	};

	return cmocka_run_group_tests_name("pods", tests, NULL, NULL);
}
