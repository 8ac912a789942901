/* The agent's rtnetlink reading (agent/nl.c):
 *  - replies the kernel really sent, recorded from a namespace with veth,
 *    a bridge and its port, a macvlan, an IPv4 multipath default, an IPv6
 *    default and a default in another table (tests/fixtures/netlink/,
 *    record.sh), read as the agent reads them and held to what iproute2
 *    said of the same namespace (expected.txt): links, kinds, which carry
 *    a default route, and every counter, over RTM_GETSTATS and the
 *    RTM_GETLINK fallback;
 *  - every recorded reply cut short at every byte: whatever is reported is
 *    exactly right, never a guess from half a message;
 *  - what no namespace here can produce, built with libmnl: 32-bit
 *    counters only, a stats attribute too short to trust, bond and team
 *    slaves, a link without a name, more links than room, a route whose
 *    table is an attribute, a broken multipath list, an error message;
 *  - the real socket, in a namespace of the test's own when it may make
 *    one (root): lo found by name, dumped, read by index, and a link
 *    change noticed. */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "agent/nl.h"

#define FIXTURES "tests/fixtures/netlink"
#define TEST_LINKS 16

/* --------------------------------------------------------------- fixtures */

struct expected_link {
	uint32_t ifindex;
	char name[IFNAMSIZ];
	char kind[16];		/* "" for none */
	bool loopback, default_route;
	struct ifreading c;
};

static struct expected_link want[TEST_LINKS];
static size_t n_want;

static void load_expected(void)
{
	FILE *f = fopen(FIXTURES "/expected.txt", "r");
	char line[256], a[16], b[16], c[16], d[16];
	unsigned long long v[6];

	assert_non_null(f);
	n_want = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "link %llu %15s %15s %15s %15s", &v[0], a, b, c, d) == 5) {
			assert_true(n_want < TEST_LINKS);
			want[n_want] = (struct expected_link){ .ifindex = (uint32_t)v[0] };
			snprintf(want[n_want].name, sizeof(want[n_want].name), "%s", a);
			snprintf(want[n_want].kind, sizeof(want[n_want].kind), "%s", strcmp(b, "-") ? b : "");
			want[n_want].loopback = !strcmp(d, "loopback");
			n_want++;
		} else if (sscanf(line, "stats %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
				  &v[4], &v[5]) == 6) {
			for (size_t i = 0; i < n_want; i++)
				if (want[i].ifindex == v[0])
					want[i].c = (struct ifreading){ v[1], v[2], v[3], v[4], v[5] };
		} else if (sscanf(line, "default %15s", a) == 1) {
			for (size_t i = 0; i < n_want; i++)
				if (!strcmp(want[i].name, a))
					want[i].default_route = true;
		}
	}
	fclose(f);
	assert_true(n_want >= 6);
}

/* A recorded reply. */
static void *load(const char *name, size_t *len)
{
	char path[256];
	FILE *f;
	void *buf = malloc(65536); /* aligned for any type, as netlink needs */
	size_t n;

	snprintf(path, sizeof(path), FIXTURES "/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65536, f);
	fclose(f);
	assert_true(n > 0 && n < 65536);
	*len = n;
	return buf;
}

static const struct expected_link *expected(uint32_t ifindex)
{
	for (size_t i = 0; i < n_want; i++)
		if (want[i].ifindex == ifindex)
			return &want[i];
	return NULL;
}

/* -------------------------------------------------------- stats callback */

struct seen {
	size_t n;
	uint32_t ifindex[TEST_LINKS];
	struct ifreading c[TEST_LINKS];
	unsigned bits[TEST_LINKS];
};

static void collect(void *ctx, uint32_t ifindex, const struct ifreading *c, unsigned bits)
{
	struct seen *s = ctx;

	assert_true(s->n < TEST_LINKS);
	s->ifindex[s->n] = ifindex;
	s->c[s->n] = *c;
	s->bits[s->n] = bits;
	s->n++;
}

static bool same(const struct ifreading *a, const struct ifreading *b)
{
	return a->rx_bytes == b->rx_bytes && a->tx_bytes == b->tx_bytes &&
	       a->rx_dropped == b->rx_dropped && a->tx_dropped == b->tx_dropped &&
	       a->rx_missed_errors == b->rx_missed_errors;
}

/* Every interface reported is one iproute2 saw, with its very counters. */
static void check_stats(const char *what, const struct seen *s, bool all)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct expected_link *e = expected(s->ifindex[i]);

		if (!e || !same(&s->c[i], &e->c) || s->bits[i] != 64)
			fail_msg("%s: ifindex %u: rx %llu tx %llu, bits %u; iproute2: %s rx %llu tx %llu",
				 what, s->ifindex[i], (unsigned long long)s->c[i].rx_bytes,
				 (unsigned long long)s->c[i].tx_bytes, s->bits[i], e ? e->name : "none",
				 e ? (unsigned long long)e->c.rx_bytes : 0,
				 e ? (unsigned long long)e->c.tx_bytes : 0);
	}
	if (all && s->n != n_want)
		fail_msg("%s: %zu interfaces, iproute2 saw %zu", what, s->n, n_want);
}

/* ---------------------------------------------------------- recorded */

static void test_nl_recorded_links(void **state)
{
	struct ifselect_link links[TEST_LINKS];
	size_t len4, len6, len, n = 0;
	void *l = load("links.bin", &len), *r4 = load("routes4.bin", &len4);
	void *r6 = load("routes6.bin", &len6);

	(void)state;
	assert_int_equal(nl_parse_links(l, len, links, TEST_LINKS, &n), 0);
	assert_int_equal(n, n_want);
	assert_int_equal(nl_parse_routes(r4, len4, links, n), 0);
	assert_int_equal(nl_parse_routes(r6, len6, links, n), 0);
	for (size_t i = 0; i < n; i++) {
		const struct expected_link *e = expected(links[i].ifindex);

		assert_non_null(e);
		assert_string_equal(links[i].name, e->name);
		assert_string_equal(links[i].kind, e->kind);
		assert_int_equal(links[i].loopback, e->loopback);
		/* eth2 is a bridge's port: a slave, but not a bond's. */
		assert_false(links[i].bond_slave);
		if (links[i].default_route != e->default_route)
			fail_msg("%s: default route %d, iproute2 says %d", e->name,
				 links[i].default_route, e->default_route);
	}
	/* Fewer slots than links: the first ones, and -E2BIG. */
	assert_int_equal(nl_parse_links(l, len, links, 2, &n), -E2BIG);
	assert_int_equal(n, 2);
	assert_string_equal(links[0].name, "lo");
	free(l);
	free(r4);
	free(r6);
}

static void test_nl_recorded_stats(void **state)
{
	static const char *const files[] = { "stats.bin", "getlink-stats.bin" };

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		struct seen s = { 0 };
		size_t len;
		void *buf = load(files[f], &len);

		assert_int_equal(nl_parse_stats(buf, len, collect, &s), 0);
		check_stats(files[f], &s, true);
		free(buf);
	}
}

/* Every recorded reply cut at every byte: nothing but exact figures. */
static void test_nl_recorded_cut(void **state)
{
	static const char *const files[] = { "stats.bin", "getlink-stats.bin", "links.bin",
					     "routes4.bin", "routes6.bin" };
	struct ifselect_link links[TEST_LINKS];
	char what[64];

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len, n;
		void *buf = load(files[f], &len), *cut = NULL;

		for (size_t k = 0; k < len; k++) {
			struct seen s = { 0 };

			/* A copy of exactly k bytes, so ASan sees any read past them. */
			free(cut);
			cut = malloc(k ? k : 1);
			assert_non_null(cut);
			memcpy(cut, buf, k);
			snprintf(what, sizeof(what), "%s cut at %zu", files[f], k);
			nl_parse_stats(cut, k, collect, &s);
			check_stats(what, &s, false);
			nl_parse_links(cut, k, links, TEST_LINKS, &n);
			for (size_t i = 0; i < n; i++)
				if (!expected(links[i].ifindex) ||
				    strcmp(links[i].name, expected(links[i].ifindex)->name))
					fail_msg("%s: link %u '%s'", what, links[i].ifindex, links[i].name);
		}
		free(cut);
		free(buf);
	}
}

/* ------------------------------------------------------------ synthesized */

static char msgbuf[8192] __attribute__((aligned(8)));
static size_t msglen;

static struct nlmsghdr *put(uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(msgbuf + msglen);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_MULTI;
	return nlh;
}

static void done(struct nlmsghdr *nlh)
{
	msglen += NLMSG_ALIGN(nlh->nlmsg_len);
}

static struct nlmsghdr *newlink(int ifindex, const char *name)
{
	struct nlmsghdr *nlh = put(RTM_NEWLINK);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_index = ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static void test_nl_built_stats(void **state)
{
	struct rtnl_link_stats st32 = { .rx_bytes = 4000000000u, .tx_bytes = 7, .rx_dropped = 1,
					.tx_dropped = 2, .rx_missed_errors = 3 };
	struct rtnl_link_stats64 st64 = { .rx_bytes = 1ULL << 40, .rx_missed_errors = 99 };
	struct nlmsghdr *nlh;
	struct if_stats_msg *ifsm;
	struct nlattr *nest;
	struct seen s = { 0 };

	(void)state;
	msglen = 0;
	/* A kernel without 64-bit counters: IFLA_STATS, 32 bits. */
	nlh = newlink(7, "old0");
	mnl_attr_put(nlh, IFLA_STATS, sizeof(st32), &st32);
	done(nlh);
	/* IFLA_STATS64 too short to be one: not trusted, no figures at all. */
	nlh = newlink(8, "short0");
	mnl_attr_put(nlh, IFLA_STATS64, 16, &st64);
	done(nlh);
	/* RTM_NEWSTATS with a missed count, and one whose LINK_64 is short. */
	nlh = put(RTM_NEWSTATS);
	ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
	ifsm->ifindex = 9;
	mnl_attr_put(nlh, IFLA_STATS_LINK_64, sizeof(st64), &st64);
	done(nlh);
	nlh = put(RTM_NEWSTATS);
	ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
	ifsm->ifindex = 10;
	mnl_attr_put(nlh, IFLA_STATS_LINK_64, 8, &st64);
	nest = mnl_attr_nest_start(nlh, IFLA_STATS_LINK_XSTATS); /* what we do not read */
	mnl_attr_nest_end(nlh, nest);
	done(nlh);
	/* An ifindex of 0 is no interface. */
	nlh = newlink(0, "zero");
	mnl_attr_put(nlh, IFLA_STATS64, sizeof(st64), &st64);
	done(nlh);
	assert_int_equal(nl_parse_stats(msgbuf, msglen, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ifindex[0], 7);
	assert_int_equal(s.bits[0], 32);
	assert_int_equal(s.c[0].rx_bytes, 4000000000u);
	assert_int_equal(s.c[0].rx_missed_errors, 3);
	assert_int_equal(s.c[0].tx_dropped, 2);
	assert_int_equal(s.ifindex[1], 9);
	assert_int_equal(s.bits[1], 64);
	assert_int_equal(s.c[1].rx_bytes, 1ULL << 40);
	assert_int_equal(s.c[1].rx_missed_errors, 99);

	/* An error message ends the walk with its errno. */
	msglen = 0;
	nlh = put(NLMSG_ERROR);
	((struct nlmsgerr *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct nlmsgerr)))->error =
		-EOPNOTSUPP;
	done(nlh);
	memset(&s, 0, sizeof(s));
	assert_int_equal(nl_parse_stats(msgbuf, msglen, collect, &s), -EOPNOTSUPP);
	assert_int_equal(s.n, 0);
}

static struct nlmsghdr *slave_link(int ifindex, const char *name, const char *kind,
				   const char *slave_kind)
{
	struct nlmsghdr *nlh = newlink(ifindex, name);
	struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

	if (kind)
		mnl_attr_put_str(nlh, IFLA_INFO_KIND, kind); /* without its NUL, also valid */
	if (slave_kind)
		mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, slave_kind);
	mnl_attr_nest_end(nlh, info);
	return nlh;
}

static void test_nl_built_links(void **state)
{
	struct ifselect_link links[TEST_LINKS];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct nlattr *mp;
	struct rtnexthop *nh;
	size_t n;

	(void)state;
	msglen = 0;
	done(slave_link(2, "eth0", NULL, "bond"));
	done(slave_link(3, "eth1", NULL, "team"));
	done(slave_link(4, "bond0", "bond", NULL));
	done(slave_link(5, "averyveryverylongname0", "a-kind-longer-than-16-bytes", NULL));
	done(newlink(6, NULL)); /* no name: skipped */
	assert_int_equal(nl_parse_links(msgbuf, msglen, links, TEST_LINKS, &n), 0);
	assert_int_equal(n, 4);
	assert_true(links[0].bond_slave);
	assert_true(links[1].bond_slave);
	assert_false(links[2].bond_slave);
	assert_string_equal(links[2].kind, "bond");
	/* Longer than the kernel allows: cut to fit, and ended. */
	assert_int_equal(strlen(links[3].kind), sizeof(links[3].kind) - 1);
	assert_string_equal(links[3].name, "averyveryverylo");

	/* Routes: main table given as an attribute; another table; a
	 * multipath list whose second hop claims more than is there. */
	msglen = 0;
	nlh = put(RTM_NEWROUTE);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_table = RT_TABLE_COMPAT;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_MAIN);
	mnl_attr_put_u32(nlh, RTA_OIF, 4);
	done(nlh);
	nlh = put(RTM_NEWROUTE);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_table = RT_TABLE_MAIN;
	mnl_attr_put_u32(nlh, RTA_TABLE, 100);
	mnl_attr_put_u32(nlh, RTA_OIF, 2);
	done(nlh);
	nlh = put(RTM_NEWROUTE);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_table = RT_TABLE_MAIN;
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	nh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nh) * 2);
	nh[0] = (struct rtnexthop){ .rtnh_len = sizeof(*nh), .rtnh_ifindex = 3 };
	nh[1] = (struct rtnexthop){ .rtnh_len = 200, .rtnh_ifindex = 5 };
	mnl_attr_nest_end(nlh, mp);
	done(nlh);
	/* Not a default: a destination prefix. */
	nlh = put(RTM_NEWROUTE);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_dst_len = 16;
	mnl_attr_put_u32(nlh, RTA_OIF, 5);
	done(nlh);
	assert_int_equal(nl_parse_routes(msgbuf, msglen, links, n), 0);
	assert_false(links[0].default_route); /* table 100 */
	assert_true(links[1].default_route);  /* the good next hop */
	assert_true(links[2].default_route);  /* RTA_TABLE main */
	assert_false(links[3].default_route); /* the broken hop, a prefix */
}

/* --------------------------------------------------------- the real socket */

static void count_lo(void *ctx, uint32_t ifindex, const struct ifreading *c, unsigned bits)
{
	(void)c;
	assert_int_equal(bits, 64);
	if (ifindex == 1)
		(*(int *)ctx)++;
}

static void set_lo(bool up)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
	assert_int_equal(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

static void test_nl_socket(void **state)
{
	struct ifselect_link links[64];
	char err[256];
	uint32_t idx = 0, one = 1;
	size_t n = 0;
	int lo = 0;
	bool own = *(bool *)*state;
	struct nl *nl = nl_open(err, sizeof(err));

	assert_non_null(nl);
	assert_int_equal(nl_ifindex(nl, "lo", &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(nl_ifindex(nl, "no-such-link", &idx), -ENODEV);
	assert_int_equal(nl_ifindex(nl, "a-name-longer-than-ifnamsiz", &idx), -ENODEV);
	assert_true(nl_links(nl, links, 64, &n) == 0 || n == 64);
	assert_true(n >= 1);
	assert_string_equal(links[0].name, "lo");
	assert_true(links[0].loopback);
	assert_int_equal(nl_dump_stats(nl, count_lo, &lo), 0);
	assert_int_equal(lo, 1);
	assert_int_equal(nl_read_stats(nl, &one, 1, count_lo, &lo), 0);
	assert_int_equal(lo, 2);
	assert_int_equal(nl_read_stats(nl, &one, 0, count_lo, &lo), 0);
	assert_int_equal(nl_read_stats(nl, &one, NL_MAX_BATCH + 1, count_lo, &lo), -EOPNOTSUPP);
	assert_false(nl_links_changed(nl));
	if (own) {
		/* Our own namespace: lo may go down and up. */
		set_lo(false);
		set_lo(true);
		assert_true(nl_links_changed(nl));
		assert_false(nl_links_changed(nl));
	}
	nl_close(nl);
	nl_close(NULL);
}

static int setup(void **state)
{
	static bool own;

	/* Root: a network namespace of our own, with only lo in it. */
	own = unshare(CLONE_NEWNET) == 0;
	*state = &own;
	load_expected();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nl_recorded_links),
		cmocka_unit_test(test_nl_recorded_stats),
		cmocka_unit_test(test_nl_recorded_cut),
		cmocka_unit_test(test_nl_built_stats),
		cmocka_unit_test(test_nl_built_links),
		cmocka_unit_test(test_nl_socket),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
