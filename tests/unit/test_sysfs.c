/* The sysfs source on a tree the test builds: counters read from kept-open
 * files (re-read after they change), garbage and missing files refused,
 * and link discovery with kinds, bond slaves and default routes. */
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

#include "agent/linkspeed.h"
#include "agent/sysfs.h"
#include "tests/unit/file_tree.h"

static char root[64];

static void put(const char *rel, const char *content)
{
	file_tree_put(root, rel, content);
}

static void put_stats(const char *ifname, const char *rx_bytes)
{
	static const char *const names[] = { "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped",
					     "rx_missed_errors" };
	char rel[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/statistics/%s", ifname, names[i]);
		put(rel, i == 0 ? rx_bytes : "7\n");
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/netsched-sysfs.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_sysfs_reads_kept_open_files(void **state)
{
	struct sysfs_stats st;
	struct ifreading c = { 0 };

	(void)state;
	put_stats("eth0", "18446744073709551615\n"); /* 2^64 - 1 is a legal counter */
	assert_int_equal(sysfs_stats_open(&st, root, "eth0"), 0);
	assert_int_equal(sysfs_stats_read(&st, &c), 0);
	assert_true(c.rx_bytes == UINT64_MAX);
	assert_int_equal(c.tx_bytes, 7);
	assert_int_equal(c.rx_missed_errors, 7);
	/* The same open file shows the new value (pread from 0). */
	put("eth0/statistics/rx_bytes", "12345\n");
	assert_int_equal(sysfs_stats_read(&st, &c), 0);
	assert_int_equal(c.rx_bytes, 12345);
	sysfs_stats_close(&st);
	sysfs_stats_close(&st); /* twice is fine */
}

static void test_sysfs_refuses_garbage(void **state)
{
	static const char *const garbage[] = { "", "-1\n", "12abc\n", "18446744073709551616\n",
					       " 5\n", "0x10\n" };
	struct sysfs_stats st;

	(void)state;
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		struct ifreading c = { .rx_bytes = 99 };

		put_stats("bad0", garbage[i]);
		assert_int_equal(sysfs_stats_open(&st, root, "bad0"), 0);
		if (sysfs_stats_read(&st, &c) != -EIO)
			fail_msg("rx_bytes '%s' was accepted", garbage[i]);
		assert_int_equal(c.rx_bytes, 99); /* untouched */
		sysfs_stats_close(&st);
	}
	assert_int_equal(sysfs_stats_open(&st, root, "missing0"), -ENODEV);
}

static void test_sysfs_links(void **state)
{
	struct ifselect_link l[8];
	char route4[128], route6[128];
	size_t n = 0;

	(void)state;
	put("net/lo/ifindex", "1\n");
	put("net/lo/type", "772\n");
	put("net/eth0/ifindex", "2\n");
	put("net/eth0/type", "1\n");
	put("net/eth0/device", "");
	put("net/eth0/speed", "10000\n");
	put("net/eth1/ifindex", "3\n");
	put("net/eth1/device", "");
	put("net/eth1/bonding_slave/state", "active\n");
	put("net/br0/ifindex", "4\n");
	put("net/br0/uevent", "DEVTYPE=bridge\nINTERFACE=br0\n");
	put("net/veth0/ifindex", "5\n");
	put("net/junk/ifindex", "not a number\n");
	put("route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
		     "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\n"
		     "br0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\n");
	put("ipv6_route", "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
			  "fe800000000000000000000000000001 00000400 00000001 00000000 00000003     veth0\n");
	snprintf(route4, sizeof(route4), "%s/route", root);
	snprintf(route6, sizeof(route6), "%s/ipv6_route", root);
	char net[96];
	snprintf(net, sizeof(net), "%s/net", root);
	assert_int_equal(sysfs_links(net, route4, route6, l, 8, &n), 0);
	assert_int_equal(n, 5); /* junk is skipped */
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(l[i].name, "lo"))
			assert_true(l[i].loopback);
		else if (!strcmp(l[i].name, "eth0"))
			assert_true(l[i].default_route && !l[i].kind[0] && l[i].ifindex == 2);
		else if (!strcmp(l[i].name, "eth1"))
			assert_true(l[i].bond_slave && !l[i].default_route);
		else if (!strcmp(l[i].name, "br0"))
			assert_true(!strcmp(l[i].kind, "bridge") && !l[i].default_route);
		else if (!strcmp(l[i].name, "veth0"))
			assert_true(!strcmp(l[i].kind, "virtual") && l[i].default_route);
		else
			fail_msg("unexpected link %s", l[i].name);
	}
	assert_int_equal(sysfs_links(net, route4, route6, l, 2, &n), -E2BIG);
	assert_int_equal(n, 2);
	assert_true(linkspeed_read(net, "eth0") == 10000000000ULL);
	put("net/eth0/speed", "-1\n");
	assert_true(linkspeed_read(net, "eth0") == 0);	/* unknown */
	assert_true(linkspeed_read(net, "nope0") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysfs_reads_kept_open_files),
		cmocka_unit_test(test_sysfs_refuses_garbage),
		cmocka_unit_test(test_sysfs_links),
	};
	return cmocka_run_group_tests_name("sysfs", tests, setup, teardown);
}
