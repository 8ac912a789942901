/* The sampler over a sysfs tree the test builds: interfaces found by the
 * spec, counters turned into windowed bytes, a rename that keeps the
 * window, a device that disappears (a gap) and comes back re-created with
 * lower counters (re-primed, no spike), and the 32-bit widening the
 * netlink fallback relies on.
 * Over netlink, a fake kernel replaying recorded replies (fake_netlink.h),
 * pods measured every sample as under --pod-interfaces auto: a link dump
 * the kernel flagged interrupted (pod churn), and the rest of an abandoned
 * dump waiting in the socket, leave the uplink's counters read every
 * sample, to the byte; a kernel that stops answering makes gaps that the
 * report counts as failed samples, never 0 bytes, until it answers again. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/sampler.h"
#include "common/clock.h"
#include "tests/unit/fake_netlink.h"
#include "tests/unit/file_tree.h"

#define TICK (NS_PER_SEC)

static char root[64], net[96], route4[96], route6[96];

static void put(const char *rel, const char *content)
{
	file_tree_put(root, rel, content);
}

/* A hardware NIC: ifindex, a device link, and its counters. */
static void nic(const char *name, unsigned ifindex, unsigned long long rx)
{
	static const char *const files[] = { "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped",
					     "rx_missed_errors" };
	char rel[128], v[32];

	snprintf(rel, sizeof(rel), "net/%s/ifindex", name);
	snprintf(v, sizeof(v), "%u\n", ifindex);
	put(rel, v);
	snprintf(rel, sizeof(rel), "net/%s/device", name);
	put(rel, "");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "net/%s/statistics/%s", name, files[i]);
		snprintf(v, sizeof(v), "%llu\n", i == 0 ? rx : 0ULL);
		put(rel, v);
	}
}

static void rx(const char *name, unsigned long long bytes)
{
	char rel[128], v[32];

	snprintf(rel, sizeof(rel), "net/%s/statistics/rx_bytes", name);
	snprintf(v, sizeof(v), "%llu\n", bytes);
	put(rel, v);
}

static void gone(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", net, name);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/netsched-sampler.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(net, sizeof(net), "%s/net", root);
	snprintf(route4, sizeof(route4), "%s/route", root);
	snprintf(route6, sizeof(route6), "%s/ipv6_route", root);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void start(struct sampler *s, const char *spec)
{
	struct sampler_config cfg = {
		.node = "node-test",
		.source = SAMPLER_SYSFS,
		.interval_ns = TICK,
		.window_ns = 10 * TICK,
		.sysfs_root = net,
		.route4 = route4,
		.route6 = route6,
	};
	char why[128];

	put("route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n");
	put("ipv6_route", "");
	assert_int_equal(ifselect_parse(&cfg.spec, spec, false, why, sizeof(why)), 0);
	assert_int_equal(sampler_init(s, NULL, &cfg), 0);
}

static const struct report_iface *find(const struct report *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_ifaces; i++)
		if (!strcmp(r->ifaces[i].name, name))
			return &r->ifaces[i];
	return NULL;
}

static void test_sampler_bytes_and_selection(void **state)
{
	static struct sampler s;
	static struct report r;
	const struct report_iface *f;
	uint64_t t = 100 * TICK;

	(void)state;
	nic("eth0", 2, 1000);
	nic("eth1", 3, 0);
	put("net/veth9/ifindex", "9\n"); /* virtual: no device behind it */
	start(&s, "eth*");
	assert_int_equal(sampler_tick(&s, t), 0);	/* primes */
	assert_int_equal(sampler_count(&s), 2);
	rx("eth0", 1000 + 5000);
	assert_int_equal(sampler_tick(&s, t + TICK), 0);
	rx("eth0", 1000 + 5000 + 3000);
	assert_int_equal(sampler_tick(&s, t + 2 * TICK), 0);
	memset(&r, 0, sizeof(r));
	sampler_fill(&s, t + 2 * TICK, &r);
	assert_int_equal(r.n_ifaces, 2);
	assert_null(find(&r, "veth9"));
	f = find(&r, "eth0");
	assert_non_null(f);
	assert_int_equal(f->rx_bytes, 8000);
	assert_int_equal(f->traffic.covered_ms, 2000);
	assert_int_equal(f->samples, 2);
	assert_int_equal(f->traffic.rx.peak, 5000);
	assert_int_equal(find(&r, "eth1")->rx_bytes, 0);
	sampler_free(&s);
	gone("eth0");
	gone("eth1");
	gone("veth9");
}

/* Renamed: followed by ifindex, the window kept, the report under the new
 * name. Gone: a gap, not zero traffic. Back, re-created with counters
 * that start again from a lower value: re-primed, never a spike. */
/* Ticks once a second for a rescan period: the sysfs-only sampler looks
 * for renamed, gone and new links on its periodic rescan. */
static uint64_t until_rescan(struct sampler *s, uint64_t t)
{
	for (uint64_t i = 0; i < SAMPLER_RESCAN_NS / TICK; i++)
		assert_int_equal(sampler_tick(s, t += TICK), 0);
	return t;
}

static void test_sampler_rename_disappear_return(void **state)
{
	static struct sampler s;
	static struct report r;
	struct sampler_health h[4];
	char from[160], to[160];
	const struct report_iface *f;
	uint64_t t = 100 * TICK;

	(void)state;
	nic("eth0", 2, 1000);
	start(&s, "eth0,ens5");
	assert_int_equal(sampler_tick(&s, t), 0);
	rx("eth0", 2000);
	assert_int_equal(sampler_tick(&s, t += TICK), 0);

	snprintf(from, sizeof(from), "%s/eth0", net);
	snprintf(to, sizeof(to), "%s/ens5", net);
	assert_int_equal(rename(from, to), 0);
	rx("ens5", 2500);
	t = until_rescan(&s, t);
	memset(&r, 0, sizeof(r));
	sampler_fill(&s, t, &r);
	assert_null(find(&r, "eth0"));
	f = find(&r, "ens5");
	assert_non_null(f);
	assert_int_equal(f->ifindex, 2);
	assert_int_equal(f->rx_bytes, 1500);	/* the window came along */

	gone("ens5");
	t = until_rescan(&s, t);
	assert_int_equal(sampler_count(&s), 0);
	assert_int_equal(sampler_health(&s, h, 4), 1);	/* still known, counts kept */
	assert_true(h[0].gaps >= 1);

	nic("ens5", 7, 10);	/* re-created: new ifindex, counters from scratch */
	t = until_rescan(&s, t);
	assert_int_equal(sampler_count(&s), 1);
	rx("ens5", 510);
	assert_int_equal(sampler_tick(&s, t += TICK), 0);
	memset(&r, 0, sizeof(r));
	sampler_fill(&s, t, &r);
	f = find(&r, "ens5");
	assert_non_null(f);
	assert_int_equal(f->ifindex, 7);
	/* Only real deltas: 500 now; the 1500 have left the 10 s window. */
	assert_int_equal(f->rx_bytes, 500);
	assert_true(f->traffic.rx.peak <= 1500);
	sampler_free(&s);
	gone("ens5");
}


/* eth0 of the recorded namespace (tests/fixtures/netlink/expected.txt). */
#define NL_ETH0 2

static void start_netlink(struct sampler *s, struct nl *nl)
{
	struct sampler_config cfg = {
		.node = "node-test",
		.source = SAMPLER_NETLINK,
		.interval_ns = TICK,
		.window_ns = 10 * TICK,
		.recent_ns = TICK,
		.pods = { .interval_ns = TICK, .reported = 8 },
	};
	char why[128];

	assert_int_equal(ifselect_parse(&cfg.spec, "eth0", false, why, sizeof(why)), 0);
	assert_int_equal(podselect_parse(&cfg.pods.spec, "auto", why, sizeof(why)), 0);
	assert_int_equal(sampler_init(s, nl, &cfg), 0);
}

/* eth0's figures in a report made now. */
static const struct report_iface *eth0_now(struct sampler *s, uint64_t t)
{
	static struct report r;

	memset(&r, 0, sizeof(r));
	sampler_fill(s, t, &r);
	assert_int_equal(r.n_ifaces, 1);
	assert_string_equal(r.ifaces[0].name, "eth0");
	return &r.ifaces[0];
}

static void test_sampler_netlink_churn(void **state)
{
	static struct fake_nl k;
	static struct sampler s;
	const struct report_iface *f;
	struct sampler_health h[4];
	struct nl_health nh;
	uint64_t t = 100 * TICK;
	struct nl *nl;

	(void)state;
	fake_nl_init(&k);
	nl = nl_open_io(&k.io, k.portid);
	assert_non_null(nl);
	nl_set_node(nl, "node-test");
	start_netlink(&s, nl);
	assert_int_equal(sampler_tick(&s, t), 0); /* primes */
	assert_int_equal(sampler_count(&s), 1);
	for (int i = 0; i < 3; i++) {
		k.rx_add[NL_ETH0] += 1000000;
		assert_int_equal(sampler_tick(&s, t += TICK), 0);
	}
	/* A rollout: links come and go while the agent lists them, and the
	 * kernel flags the dump interrupted. */
	k.intr_link_dumps = 1;
	s.rescan_now = true;
	for (int i = 0; i < 5; i++) {
		k.rx_add[NL_ETH0] += 1000000;
		assert_int_equal(sampler_tick(&s, t += TICK), 0);
	}
	/* What an abandoned dump leaves in the socket: skipped. */
	k.stale_next = true;
	for (int i = 0; i < 2; i++) {
		k.rx_add[NL_ETH0] += 1000000;
		assert_int_equal(sampler_tick(&s, t += TICK), 0);
	}
	f = eth0_now(&s, t);
	assert_int_equal(f->samples, 10);
	assert_int_equal(f->rx_bytes, 10000000);
	assert_int_equal(f->failed_samples, 0);
	nl_health(nl, &nh);
	assert_int_equal(nh.interrupted, 1);
	assert_true(nh.stale >= 3);
	assert_int_equal(nh.failed, 0);
	assert_int_equal(k.ebusy, 0);

	/* The kernel stops answering: gaps, counted as failed samples in the
	 * report; the 2 MB moved meanwhile show once it answers again. */
	k.lose_next = 1000;
	for (int i = 0; i < 3; i++) {
		k.rx_add[NL_ETH0] += 1000000;
		assert_int_not_equal(sampler_tick(&s, t += TICK), 0);
	}
	f = eth0_now(&s, t);
	assert_int_equal(f->failed_samples, 3);
	assert_int_equal(f->samples, 7);
	assert_int_equal(sampler_health(&s, h, 4), 1);
	assert_int_equal(h[0].failed, 3);
	assert_int_equal(h[0].failed_in_row, 3);
	k.lose_next = 0;
	k.rx_add[NL_ETH0] += 1000000;
	assert_int_equal(sampler_tick(&s, t += TICK), 0);
	f = eth0_now(&s, t);
	assert_int_equal(f->failed_samples, 0);
	assert_int_equal(sampler_health(&s, h, 4), 1);
	assert_int_equal(h[0].failed, 3);
	assert_int_equal(h[0].failed_in_row, 0);
	sampler_free(&s);
	nl_close(nl);
	fake_nl_free(&k);
}

static void test_sampler_widen32(void **state)
{
	(void)state;
	assert_true(sampler_widen32(0, 5) == 5);
	assert_true(sampler_widen32(0xfffffff0ULL, 0xfffffff8ULL) == 0xfffffff8ULL);
	/* One wrap: 0xfffffff8 -> 0x10 is 24 bytes on. */
	assert_true(sampler_widen32(0xfffffff8ULL, 0x10) == 0x100000010ULL);
	assert_true(sampler_widen32(0x3fffffff8ULL, 0x10) == 0x400000010ULL);
	assert_true(sampler_widen32(0x400000010ULL, 0x20) == 0x400000020ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampler_bytes_and_selection),
		cmocka_unit_test(test_sampler_rename_disappear_return),
		cmocka_unit_test(test_sampler_netlink_churn),
		cmocka_unit_test(test_sampler_widen32),
	};
	return cmocka_run_group_tests_name("sampler", tests, setup, teardown);
}
