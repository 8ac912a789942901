/* Which addresses are each pod interface's (agent/podmap.c), from facts as
 * nl_parse_facts() gives them (the recorded kernel replies are in
 * test_nl.c): a route wins over a neighbour, the main table over others,
 * an address goes to one interface; facts about other interfaces and
 * bridges are dropped; every table is bounded; and which notifications
 * call for a new build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <linux/rtnetlink.h>

#include "agent/podmap.h"

static struct podmap map;

/* Pod interfaces: 10 and 11 routed, 20 and 21 ports of bridge 2, 30 a
 * port of bridge 3; 2 and 3 are bridges, 99 is no pod's. */
static const struct podmap_iface ifaces[] = {
	{ 21, 2 }, { 10, 0 }, { 30, 3 }, { 11, 0 }, { 20, 2 },
};
#define N_IFACES (sizeof(ifaces) / sizeof(ifaces[0]))

static struct podmap_fact ip_fact(enum podmap_kind kind, const char *ip, uint32_t ifindex,
				  uint32_t table, uint8_t mac)
{
	struct podmap_fact f = { .kind = kind, .ifindex = ifindex, .table = table };

	assert_int_equal(report_ip_parse(ip, &f.ip), 0);
	f.mac[0] = 2;
	f.mac[5] = mac;
	return f;
}

static struct podmap_fact route(const char *ip, uint32_t oif, uint32_t table)
{
	return ip_fact(PODMAP_ROUTE, ip, oif, table, 0);
}

static struct podmap_fact neigh(const char *ip, uint32_t bridge, uint8_t mac)
{
	return ip_fact(PODMAP_NEIGH, ip, bridge, 0, mac);
}

static struct podmap_fact fdb(uint8_t mac, uint32_t port, uint32_t bridge)
{
	struct podmap_fact f = { .kind = PODMAP_FDB, .ifindex = port, .master = bridge };

	f.mac[0] = 2;
	f.mac[5] = mac;
	return f;
}

/* The addresses of ifindex, space-separated. */
static const char *addrs(uint32_t ifindex)
{
	static char out[512];
	struct report_ip ips[8];
	size_t n = podmap_lookup(&map, ifindex, ips, 8), len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && i < 8; i++) {
		char text[REPORT_IP_STRLEN];

		report_ip_format(&ips[i], text, sizeof(text));
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? " " : "", text);
	}
	return out;
}

static void build(const struct podmap_fact *facts, size_t n)
{
	podmap_begin(&map, ifaces, N_IFACES);
	for (size_t i = 0; i < n; i++)
		podmap_add(&map, &facts[i]);
	podmap_end(&map);
}

static void test_podmap_routed_and_bridged(void **state)
{
	const struct podmap_fact facts[] = {
		route("10.244.0.10", 10, RT_TABLE_MAIN),
		route("fd00:244::10", 10, RT_TABLE_MAIN),
		route("10.244.0.11", 11, 100),		/* another table counts too */
		route("10.244.0.12", 99, RT_TABLE_MAIN),	/* not a pod's interface */
		route("169.254.1.1", 11, RT_TABLE_MAIN),	/* link-local: no pod's */
		neigh("10.244.1.20", 2, 20),
		neigh("fd00:244:1::20", 2, 20),
		neigh("fe80::20", 2, 20),			/* link-local */
		neigh("10.244.1.21", 2, 21),
		neigh("10.244.1.22", 2, 22),			/* its MAC is behind no port */
		neigh("10.231.1.1", 99, 23),			/* a neighbour of the uplink */
		neigh("10.244.3.30", 3, 30),
		fdb(20, 20, 2),
		fdb(21, 21, 2),
		fdb(30, 30, 3),
		fdb(31, 30, 2),				/* on a port of another bridge: no */
		fdb(40, 99, 2),				/* not a pod's port */
	};

	(void)state;
	build(facts, sizeof(facts) / sizeof(facts[0]));
	assert_string_equal(addrs(10), "10.244.0.10 fd00:244::10");
	assert_string_equal(addrs(11), "10.244.0.11");
	assert_string_equal(addrs(20), "10.244.1.20 fd00:244:1::20");
	assert_string_equal(addrs(21), "10.244.1.21");
	assert_string_equal(addrs(30), "10.244.3.30");
	assert_string_equal(addrs(99), "");
	assert_string_equal(addrs(2), "");
	assert_int_equal(map.conflicts, 0);
}

/* One owner per address: a main-table route, then another table's, then
 * a neighbour; among equals the first. */
static void test_podmap_one_owner(void **state)
{
	const struct podmap_fact facts[] = {
		neigh("10.244.0.50", 2, 20),		/* a neighbour says port 20 */
		fdb(20, 20, 2),
		route("10.244.0.50", 11, 100),		/* another table says 11 */
		route("10.244.0.50", 10, RT_TABLE_MAIN),	/* main says 10: wins */
		route("10.244.0.51", 11, RT_TABLE_MAIN),
		route("10.244.0.51", 10, RT_TABLE_MAIN),	/* equal: the first stays */
		route("10.244.0.52", 11, RT_TABLE_MAIN),
		route("10.244.0.52", 11, 100),		/* the same owner twice: no conflict */
	};

	(void)state;
	build(facts, sizeof(facts) / sizeof(facts[0]));
	assert_string_equal(addrs(10), "10.244.0.50");
	assert_string_equal(addrs(11), "10.244.0.51 10.244.0.52");
	assert_string_equal(addrs(20), "");
	assert_int_equal(map.conflicts, 3);
}

/* Deleted facts (a notification's) never enter a build; a lookup with less
 * room says how many there are. */
static void test_podmap_deleted_and_room(void **state)
{
	struct podmap_fact gone = route("10.244.0.60", 10, RT_TABLE_MAIN);
	struct podmap_fact facts[6];
	struct report_ip ips[2];

	(void)state;
	gone.deleted = true;
	facts[0] = gone;
	for (int i = 1; i < 6; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "10.244.0.%d", 60 + i);
		facts[i] = route(ip, 10, RT_TABLE_MAIN);
	}
	build(facts, 6);
	assert_int_equal(podmap_lookup(&map, 10, ips, 2), 5);
	assert_int_equal(ips[0].addr[3], 61);
	assert_int_equal(ips[1].addr[3], 62);
	assert_int_equal(podmap_lookup(&map, 10, ips, 0), 5);
}

/* More facts than room: the first kept, the rest counted. */
static void test_podmap_bounded(void **state)
{
	(void)state;
	map.dropped = 0;
	podmap_begin(&map, ifaces, N_IFACES);
	for (uint32_t i = 0; i < PODMAP_MAX_ADDRS + 10; i++) {
		struct podmap_fact f = { .kind = PODMAP_ROUTE, .ifindex = 10, .table = RT_TABLE_MAIN };

		f.ip.len = 16;
		f.ip.addr[0] = 0xfd;
		memcpy(f.ip.addr + 12, &i, sizeof(i));
		podmap_add(&map, &f);
		f.kind = PODMAP_NEIGH;
		f.ifindex = 2;
		podmap_add(&map, &f);
	}
	for (uint32_t i = 0; i < PODMAP_MAX_FDB + 5; i++) {
		struct podmap_fact f = fdb((uint8_t)i, 20, 2);

		f.mac[4] = (uint8_t)(i >> 8);
		podmap_add(&map, &f);
	}
	podmap_end(&map);
	assert_int_equal(map.n_addrs, PODMAP_MAX_ADDRS);
	assert_int_equal(map.n_neigh, PODMAP_MAX_ADDRS);
	assert_int_equal(map.n_fdb, PODMAP_MAX_FDB);
	/* 10 routes, 10 neighbours, 5 FDB entries, and every neighbour whose
	 * address found no room once resolved. */
	assert_true(map.dropped >= 25);
	/* Interfaces beyond the bound are ignored, not overrun. */
	{
		static struct podmap_iface many[PODMAP_MAX_IFACES + 3];

		for (uint32_t i = 0; i < PODMAP_MAX_IFACES + 3; i++)
			many[i] = (struct podmap_iface){ 1000 + i, 0 };
		podmap_begin(&map, many, PODMAP_MAX_IFACES + 3);
		assert_int_equal(map.n_ifaces, PODMAP_MAX_IFACES);
		podmap_end(&map);
	}
}

struct notice_row {
	const char *name;
	struct podmap_fact f;
	bool deleted;
	bool want;
};

/* After a build knowing 10.244.0.10 on 10, 10.244.1.20 on port 20 (MAC 20)
 * of bridge 2: which notifications call for a new one. */
static void test_podmap_notice(void **state)
{
	const struct podmap_fact facts[] = {
		route("10.244.0.10", 10, RT_TABLE_MAIN),
		neigh("10.244.1.20", 2, 20),
		fdb(20, 20, 2),
	};
	const struct notice_row rows[] = {
		{ "a route through a pod's interface", route("10.244.0.11", 10, RT_TABLE_MAIN), false, true },
		{ "a known address routed elsewhere", route("10.244.0.10", 99, RT_TABLE_MAIN), false, true },
		{ "a route that is no pod's", route("10.9.0.1", 99, RT_TABLE_MAIN), false, false },
		{ "a pod's route removed", route("10.244.0.10", 10, RT_TABLE_MAIN), true, true },
		{ "a known neighbour's state changed", neigh("10.244.1.20", 2, 20), false, false },
		{ "a known neighbour's MAC changed", neigh("10.244.1.20", 2, 21), false, true },
		{ "a new neighbour on the pods' bridge", neigh("10.244.1.21", 2, 21), false, true },
		{ "a neighbour on another device", neigh("10.231.1.1", 99, 50), false, false },
		{ "a known neighbour gone (no MAC said)", neigh("10.244.1.20", 2, 0), true, true },
		{ "an unknown neighbour gone", neigh("10.244.1.29", 2, 29), true, false },
		{ "a known FDB entry again", fdb(20, 20, 2), false, false },
		{ "a new MAC on a pod's port", fdb(22, 20, 2), false, true },
		{ "a known FDB entry aged out", fdb(20, 20, 2), true, true },
		{ "an FDB entry on no pod's port", fdb(22, 99, 2), false, false },
	};

	(void)state;
	build(facts, sizeof(facts) / sizeof(facts[0]));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct podmap_fact f = rows[i].f;

		f.deleted = rows[i].deleted;
		if (podmap_notice(&map, &f) != rows[i].want)
			fail_msg("%s: notice %d, want %d", rows[i].name, !rows[i].want, rows[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podmap_routed_and_bridged),
		cmocka_unit_test(test_podmap_one_owner),
		cmocka_unit_test(test_podmap_deleted_and_room),
		cmocka_unit_test(test_podmap_bounded),
		cmocka_unit_test(test_podmap_notice),
	};

	return cmocka_run_group_tests_name("podmap", tests, NULL, NULL);
}
