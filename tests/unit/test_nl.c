/* The agent's rtnetlink reading (agent/nl.c):
 *  - replies the kernel really sent, recorded from a namespace with veth,
 *    a bridge and its port, a macvlan, an IPv4 multipath default, an IPv6
 *    default and a default in another table (tests/fixtures/netlink/,
 *    record.sh), read as the agent reads them and held to what iproute2
 *    said of the same namespace (expected.txt): links, kinds, which carry
 *    a default route, which are ports and whose peer is in another
 *    namespace, every counter, over RTM_GETSTATS and the RTM_GETLINK
 *    fallback, and each pod interface's addresses from the routes, the
 *    bridge's neighbours and its FDB (a routed pod, a bridged one);
 *  - every recorded reply cut short at every byte: whatever is reported is
 *    exactly right, never a guess from half a message;
 *  - what no namespace here can produce, built with libmnl: 32-bit
 *    counters only, a stats attribute too short to trust, bond and team
 *    slaves, a link without a name, more links than room, a route whose
 *    table is an attribute, a broken multipath list, an error message;
 *    routes, neighbours and FDB entries that are no pod's, or are gone;
 *  - a socket kept in step (a fake kernel, fake_netlink.h, replaying
 *    what pod churn made the real one send, record-churn.sh): a link dump
 *    flagged NLM_F_DUMP_INTR read to its end and tried again, its links
 *    listed once; the rest of an abandoned dump and an EBUSY waiting in
 *    the socket skipped; a stats dump that ends with an errno; a dump
 *    interrupted every try, and the next call fine; a request never
 *    answered, the socket reopened;
 *  - the real socket, in a namespace of the test's own when it may make
 *    one (root): lo found by name, dumped, read by index, a link change
 *    noticed, and a host route seen in a dump and in notifications. */
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
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/route.h>

#include "agent/nl.h"
#include "tests/unit/fake_netlink.h"

#define FIXTURES "tests/fixtures/netlink"
#define TEST_LINKS 16

/* --------------------------------------------------------------- fixtures */

struct expected_link {
	uint32_t ifindex;
	char name[IFNAMSIZ];
	char kind[16];		/* "" for none */
	bool loopback, default_route;
	bool enslaved;		/* a slave kind: a port of something */
	bool peer;		/* its peer is in another namespace */
	struct ifreading c;
};

static struct expected_link want[TEST_LINKS];
static size_t n_want;

/* What iproute2 says each pod interface's addresses are (record.sh). */
#define TEST_POD_ADDRS 32
struct expected_addr {
	uint32_t ifindex;
	struct report_ip ip;
};
static struct expected_addr want_addrs[TEST_POD_ADDRS];
static size_t n_want_addrs;

static void load_expected(void)
{
	FILE *f = fopen(FIXTURES "/expected.txt", "r");
	char line[256], a[16], b[16], c[16], d[16], a64[64];
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
			want[n_want].enslaved = strcmp(c, "-") != 0;
			n_want++;
		} else if (sscanf(line, "pod %llu %63s", &v[0], a64) == 2) {
			assert_true(n_want_addrs < TEST_POD_ADDRS);
			want_addrs[n_want_addrs].ifindex = (uint32_t)v[0];
			assert_int_equal(report_ip_parse(a64, &want_addrs[n_want_addrs].ip), 0);
			n_want_addrs++;
		} else if (sscanf(line, "peer %llu", &v[0]) == 1) {
			for (size_t i = 0; i < n_want; i++)
				if (want[i].ifindex == v[0])
					want[i].peer = true;
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
	assert_true(n_want >= 7);
	assert_true(n_want_addrs >= 6);
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
		if ((links[i].master != 0) != e->enslaved || links[i].peer_netns != e->peer)
			fail_msg("%s: master %u, peer elsewhere %d; iproute2: enslaved %d, peer %d",
				 e->name, links[i].master, links[i].peer_netns, e->enslaved, e->peer);
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

/* ----------------------------------------------------- pods' addresses */

static const char *const fact_files[] = { "routes4.bin", "routes6.bin", "neigh4.bin", "neigh6.bin",
					  "fdb.bin" };
#define N_FACT_FILES (sizeof(fact_files) / sizeof(fact_files[0]))
#define TEST_FACTS 128

struct facts {
	size_t n;
	struct podmap_fact f[TEST_FACTS];
};

static void collect_fact(void *ctx, const struct podmap_fact *f)
{
	struct facts *fs = ctx;

	assert_true(fs->n < TEST_FACTS);
	fs->f[fs->n++] = *f;
}

static void to_map(void *ctx, const struct podmap_fact *f)
{
	podmap_add(ctx, f);
}

/* The recorded routes, neighbours and FDB through nl_parse_facts() and
 * podmap: every link but lo taken for a pod's, each gets exactly the
 * addresses iproute2's reading of the same namespace gives it (record.sh:
 * cali1 its routes in main and table 100, not the kernel's /128 of the
 * host's own address; eth2, br0's port, what br0's neighbours and FDB say,
 * learned and static; never a link-local address). */
static void test_nl_recorded_pod_addresses(void **state)
{
	static struct podmap map;
	struct ifselect_link links[TEST_LINKS];
	struct podmap_iface ifaces[TEST_LINKS];
	size_t len, n = 0, k = 0, total = 0;
	void *l = load("links.bin", &len);

	(void)state;
	assert_int_equal(nl_parse_links(l, len, links, TEST_LINKS, &n), 0);
	free(l);
	for (size_t i = 0; i < n; i++)
		if (!links[i].loopback)
			ifaces[k++] = (struct podmap_iface){ links[i].ifindex, links[i].master };
	podmap_begin(&map, ifaces, k);
	for (size_t f = 0; f < N_FACT_FILES; f++) {
		void *buf = load(fact_files[f], &len);

		assert_int_equal(nl_parse_facts(buf, len, to_map, &map), 0);
		free(buf);
	}
	podmap_end(&map);
	assert_int_equal(map.conflicts, 0);
	assert_int_equal(map.dropped, 0);
	for (size_t i = 0; i < k; i++) {
		struct report_ip got[8];
		size_t m = podmap_lookup(&map, ifaces[i].ifindex, got, 8);
		char text[REPORT_IP_STRLEN];

		assert_true(m <= 8);
		for (size_t g = 0; g < m; g++) {
			bool found = false;

			for (size_t w = 0; w < n_want_addrs && !found; w++)
				found = want_addrs[w].ifindex == ifaces[i].ifindex &&
					report_ip_equal(&want_addrs[w].ip, &got[g]);
			report_ip_format(&got[g], text, sizeof(text));
			if (!found)
				fail_msg("ifindex %u: %s, which iproute2 does not give it",
					 ifaces[i].ifindex, text);
		}
		total += m;
	}
	if (total != n_want_addrs)
		fail_msg("%zu pod addresses, iproute2 gives %zu", total, n_want_addrs);
}

static bool same_fact(const struct podmap_fact *a, const struct podmap_fact *b)
{
	return a->kind == b->kind && a->deleted == b->deleted && a->ifindex == b->ifindex &&
	       a->master == b->master && a->table == b->table && !memcmp(a->mac, b->mac, 6) &&
	       (a->kind == PODMAP_FDB || report_ip_equal(&a->ip, &b->ip));
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
	/* Facts from a cut reply are facts of the whole one. */
	for (size_t f = 0; f < N_FACT_FILES; f++) {
		static struct facts whole;
		size_t len;
		void *buf = load(fact_files[f], &len), *cut = NULL;

		whole.n = 0;
		assert_int_equal(nl_parse_facts(buf, len, collect_fact, &whole), 0);
		assert_true(whole.n > 0);
		for (size_t k = 0; k < len; k++) {
			static struct facts part;

			free(cut);
			cut = malloc(k ? k : 1);
			assert_non_null(cut);
			memcpy(cut, buf, k);
			part.n = 0;
			nl_parse_facts(cut, k, collect_fact, &part);
			for (size_t i = 0; i < part.n; i++) {
				bool found = false;

				for (size_t w = 0; w < whole.n && !found; w++)
					found = same_fact(&part.f[i], &whole.f[w]);
				if (!found)
					fail_msg("%s cut at %zu: fact %zu is not one of the whole reply's",
						 fact_files[f], k, i);
			}
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

static struct nlmsghdr *route(uint16_t type, uint8_t family, uint8_t dst_len, const void *dst,
			      size_t dst_bytes, uint32_t oif)
{
	struct nlmsghdr *nlh = put(type);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	rtm->rtm_family = family;
	rtm->rtm_dst_len = dst_len;
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	if (dst)
		mnl_attr_put(nlh, RTA_DST, dst_bytes, dst);
	if (oif)
		mnl_attr_put_u32(nlh, RTA_OIF, oif);
	return nlh;
}

static struct nlmsghdr *neigh(uint16_t type, uint8_t family, int ifindex, uint16_t state,
			      uint8_t flags, const void *dst, size_t dst_bytes, size_t mac_bytes,
			      uint32_t master)
{
	static const uint8_t mac[8] = { 2, 0, 0, 0, 0, 7, 0, 0 };
	struct nlmsghdr *nlh = put(type);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	ndm->ndm_family = family;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = state;
	ndm->ndm_flags = flags;
	if (dst)
		mnl_attr_put(nlh, NDA_DST, dst_bytes, dst);
	if (mac_bytes)
		mnl_attr_put(nlh, NDA_LLADDR, mac_bytes, mac);
	if (master)
		mnl_attr_put_u32(nlh, NDA_MASTER, master);
	return nlh;
}

/* What only a forged or future message holds, and what the kernel sends
 * that is no pod's: each fact exactly, or none. */
static void test_nl_built_facts(void **state)
{
	static struct facts fs;
	static const uint8_t v4[4] = { 10, 244, 1, 7 }, v6[16] = { 0xfd, [15] = 7 };
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;

	(void)state;
	msglen = 0;
	done(route(RTM_NEWROUTE, AF_INET, 32, v4, 4, 5));		/* 0: a pod's /32 */
	nlh = route(RTM_NEWROUTE, AF_INET6, 128, v6, 16, 6);		/* 1: table 7 as an attribute */
	mnl_attr_put_u32(nlh, RTA_TABLE, 7);
	done(nlh);
	done(route(RTM_DELROUTE, AF_INET, 32, v4, 4, 5));		/* 2: gone */
	done(route(RTM_NEWROUTE, AF_INET, 24, v4, 4, 5));		/* a prefix: no */
	done(route(RTM_NEWROUTE, AF_INET, 32, v4, 4, 0));		/* no output interface: no */
	done(route(RTM_NEWROUTE, AF_INET6, 128, v4, 4, 5));		/* a 4-byte IPv6 address: no */
	done(route(RTM_NEWROUTE, AF_INET, 32, NULL, 0, 5));		/* no destination: no */
	nlh = route(RTM_NEWROUTE, AF_INET6, 128, v6, 16, 5);		/* the host's own: no */
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_protocol = RTPROT_KERNEL;
	done(nlh);
	nlh = route(RTM_NEWROUTE, AF_INET, 32, v4, 4, 5);		/* a cached clone: no */
	rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_flags = RTM_F_CLONED;
	done(nlh);
	nlh = route(RTM_NEWROUTE, AF_INET, 32, v4, 4, 5);		/* local: no */
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_type = RTN_LOCAL;
	done(nlh);
	done(neigh(RTM_NEWNEIGH, AF_INET, 3, NUD_STALE, 0, v4, 4, 6, 0));	/* 3 */
	done(neigh(RTM_NEWNEIGH, AF_INET6, 3, NUD_FAILED, 0, v6, 16, 6, 0));	/* 4: failed: gone */
	done(neigh(RTM_NEWNEIGH, AF_INET, 3, NUD_INCOMPLETE, 0, v4, 4, 0, 0));	/* 5: no MAC: gone */
	done(neigh(RTM_DELNEIGH, AF_INET, 3, NUD_REACHABLE, 0, v4, 4, 6, 0));	/* 6: gone */
	done(neigh(RTM_NEWNEIGH, AF_INET, 3, NUD_REACHABLE, 0, v4, 4, 8, 0));	/* 7: 8-byte MAC: gone */
	done(neigh(RTM_NEWNEIGH, AF_INET, 3, NUD_REACHABLE, 0, v6, 16, 6, 0));	/* 16 bytes in IPv4: no */
	done(neigh(RTM_NEWNEIGH, AF_INET, 0, NUD_REACHABLE, 0, v4, 4, 6, 0));	/* no device: no */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_REACHABLE, 0, NULL, 0, 6, 3));	/* 8: learned */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_NOARP, 0, NULL, 0, 6, 3));	/* 9: static */
	done(neigh(RTM_DELNEIGH, AF_BRIDGE, 5, NUD_STALE, 0, NULL, 0, 6, 3));	/* 10: aged out */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_PERMANENT, 0, NULL, 0, 6, 3));	/* the port's own: no */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_NOARP, NTF_SELF, NULL, 0, 6, 0));	/* the device's: no */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_REACHABLE, 0, NULL, 0, 6, 0));	/* no bridge: no */
	done(neigh(RTM_NEWNEIGH, AF_BRIDGE, 5, NUD_REACHABLE, 0, NULL, 0, 4, 3));	/* short MAC: no */
	fs.n = 0;
	assert_int_equal(nl_parse_facts(msgbuf, msglen, collect_fact, &fs), 0);
	assert_int_equal(fs.n, 11);
	assert_int_equal(fs.f[0].kind, PODMAP_ROUTE);
	assert_int_equal(fs.f[0].ifindex, 5);
	assert_int_equal(fs.f[0].table, RT_TABLE_MAIN);
	assert_int_equal(fs.f[0].ip.len, 4);
	assert_memory_equal(fs.f[0].ip.addr, v4, 4);
	assert_false(fs.f[0].deleted);
	assert_int_equal(fs.f[1].table, 7);
	assert_memory_equal(fs.f[1].ip.addr, v6, 16);
	assert_true(fs.f[2].deleted);
	assert_int_equal(fs.f[3].kind, PODMAP_NEIGH);
	assert_false(fs.f[3].deleted);
	assert_int_equal(fs.f[3].mac[5], 7);
	for (size_t i = 4; i <= 7; i++)
		if (!fs.f[i].deleted || fs.f[i].kind != PODMAP_NEIGH)
			fail_msg("fact %zu: a neighbour that went, want deleted", i);
	assert_int_equal(fs.f[8].kind, PODMAP_FDB);
	assert_int_equal(fs.f[8].ifindex, 5);
	assert_int_equal(fs.f[8].master, 3);
	assert_false(fs.f[8].deleted);
	assert_false(fs.f[9].deleted);
	assert_true(fs.f[10].deleted);
}


/* ------------------------------------------------- a socket kept in step */

/* Recorded as the kernel sent it under churn: the flag on one message
 * only (the first of a datagram), none on the rest or on NLMSG_DONE. Read
 * alone: what came before the flag, and -EINTR. */
static void test_nl_recorded_interrupted(void **state)
{
	static struct ifselect_link links[64];
	size_t len, n = 0, flagged = 0, msgs = 0;
	void *buf = load("links-intr.bin", &len);
	const struct nlmsghdr *nlh = buf;
	int left = (int)len;

	(void)state;
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left), msgs++)
		flagged += (nlh->nlmsg_flags & NLM_F_DUMP_INTR) != 0;
	assert_int_equal(flagged, 1);
	assert_true(msgs > FAKE_NL_PER_DATAGRAM * 2);
	assert_int_equal(nl_parse_links(buf, len, links, 64, &n), -EINTR);
	assert_true(n > 0 && n < msgs - 1);
	free(buf);
}

static struct nl *fake_open(struct fake_nl *k)
{
	struct nl *nl;

	fake_nl_init(k);
	nl = nl_open_io(&k->io, k->portid);
	assert_non_null(nl);
	nl_set_node(nl, "node-test");
	return nl;
}

/* The links of links.bin, each once. */
static void check_links(const struct ifselect_link *links, size_t n)
{
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(expected(links[i].ifindex));
		for (size_t k = 0; k < i; k++)
			assert_int_not_equal(links[k].ifindex, links[i].ifindex);
	}
}

/* Interrupted: read to its end (nothing left for the next request to
 * trip on), tried again, the links of the whole dump listed once. */
static void test_nl_dump_interrupted(void **state)
{
	static struct fake_nl k;
	struct ifselect_link links[TEST_LINKS];
	struct nl_health h;
	struct seen s = { 0 };
	size_t n = 0;
	struct nl *nl = fake_open(&k);

	(void)state;
	k.intr_link_dumps = 1;
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), 0);
	check_links(links, n);
	/* The next requests, on the same socket: answered, no EBUSY. */
	assert_int_equal(nl_dump_stats(nl, collect, &s), 0);
	check_stats("after an interrupted dump", &s, true);
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), 0);
	check_links(links, n);
	nl_health(nl, &h);
	assert_int_equal(h.interrupted, 1);
	assert_int_equal(h.retries, 1);
	assert_int_equal(h.failed, 0);
	assert_int_equal(h.reopens, 0);
	assert_int_equal(k.ebusy, 0);
	assert_int_equal(k.n, 0);
	nl_close(nl);
	fake_nl_free(&k);
}

/* Interrupted every try: -EINTR, and the socket still in step for the
 * next call. */
static void test_nl_dump_interrupted_every_try(void **state)
{
	static struct fake_nl k;
	struct ifselect_link links[TEST_LINKS];
	struct nl_health h;
	size_t n = 0;
	struct nl *nl = fake_open(&k);

	(void)state;
	k.intr_link_dumps = NL_TRIES;
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), -EINTR);
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), 0);
	check_links(links, n);
	nl_health(nl, &h);
	assert_int_equal(h.interrupted, NL_TRIES);
	assert_int_equal(h.failed, 1);
	assert_int_equal(k.ebusy, 0);
	nl_close(nl);
	fake_nl_free(&k);
}

/* What an abandoned dump leaves (recorded: its rest, then the kernel's
 * EBUSY for the request after it) waits in the socket: skipped, counted,
 * never taken for this request's replies. */
static void test_nl_stale_replies(void **state)
{
	static struct fake_nl k;
	struct ifselect_link links[TEST_LINKS];
	struct nl_health h;
	struct seen s = { 0 };
	size_t n = 0;
	struct nl *nl = fake_open(&k);

	(void)state;
	k.stale_next = true;
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), 0);
	check_links(links, n);
	nl_health(nl, &h);
	assert_true(h.stale >= 3); /* links, the EBUSY, the NLMSG_DONE */
	assert_int_equal(h.retries, 0);
	/* Before a batch of single requests too. */
	k.stale_next = true;
	{
		uint32_t idx[2] = { want[1].ifindex, want[2].ifindex };

		assert_int_equal(nl_read_stats(nl, idx, 2, collect, &s), 0);
	}
	assert_int_equal(s.n, 2);
	check_stats("single requests after stale replies", &s, false);
	nl_close(nl);
	fake_nl_free(&k);
}

/* A stats dump the kernel ended with an errno in NLMSG_DONE (out of
 * memory mid-way): tried again, every interface read. A final answer
 * (not supported) is not tried again. */
static void test_nl_dump_error_midway(void **state)
{
	static struct fake_nl k;
	struct nl_health h;
	struct seen s = { 0 };
	struct nl *nl = fake_open(&k);

	(void)state;
	k.stats_errno = -ENOBUFS;
	k.stats_error_after = 3;
	assert_int_equal(nl_dump_stats(nl, collect, &s), 0);
	/* The first three came twice; the last reading is kept by the caller. */
	assert_int_equal(s.n, n_want + 3);
	check_stats("a dump that failed mid-way, tried again", &s, false);
	nl_health(nl, &h);
	assert_int_equal(h.retries, 1);
	assert_int_equal(h.failed, 0);
	k.stats_errno = -EOPNOTSUPP;
	k.stats_error_after = 1;
	memset(&s, 0, sizeof(s));
	assert_int_equal(nl_dump_stats(nl, collect, &s), 0); /* the RTM_GETLINK fallback */
	nl_health(nl, &h);
	assert_int_equal(h.retries, 1);
	nl_close(nl);
	fake_nl_free(&k);
}

/* No answer: the socket is out of step (a late reply may come any time):
 * reopened, and the request answered on the new one. */
static void test_nl_no_answer_reopens(void **state)
{
	static struct fake_nl k;
	struct ifselect_link links[TEST_LINKS];
	struct nl_health h;
	size_t n = 0;
	unsigned sent;
	struct nl *nl = fake_open(&k);

	(void)state;
	k.lose_next = 1;
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), 0);
	check_links(links, n);
	nl_health(nl, &h);
	assert_int_equal(h.reopens, 1);
	assert_int_equal(k.reopens, 1);
	/* Never answered at all: fails, bounded. */
	k.lose_next = 100;
	sent = k.sent;
	assert_int_equal(nl_links(nl, links, TEST_LINKS, &n), -ETIMEDOUT);
	nl_health(nl, &h);
	assert_int_equal(h.failed, 1);
	assert_int_equal(k.sent - sent, NL_TRIES);
	nl_close(nl);
	fake_nl_free(&k);
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

/* A host route to 10.99.0.7 through lo, added or deleted by ioctl. */
static void lo_route(bool add)
{
	struct rtentry rt = { 0 };
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst;
	struct sockaddr_in *mask = (struct sockaddr_in *)&rt.rt_genmask;
	char dev[] = "lo";
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	dst->sin_family = mask->sin_family = AF_INET;
	dst->sin_addr.s_addr = htonl(0x0a630007);
	mask->sin_addr.s_addr = 0xffffffff;
	rt.rt_flags = RTF_UP | RTF_HOST;
	rt.rt_dev = dev;
	assert_int_equal(ioctl(fd, add ? SIOCADDRT : SIOCDELRT, &rt), 0);
	close(fd);
}

/* The one fact about 10.99.0.7 in fs, or NULL. */
static const struct podmap_fact *fact_of(const struct facts *fs)
{
	static const uint8_t addr[4] = { 10, 99, 0, 7 };

	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].kind == PODMAP_ROUTE && fs->f[i].ip.len == 4 &&
		    !memcmp(fs->f[i].ip.addr, addr, 4))
			return &fs->f[i];
	return NULL;
}

static void test_nl_socket(void **state)
{
	struct ifselect_link links[64];
	char err[256];
	uint32_t idx = 0, one = 1;
	size_t n = 0;
	int lo = 0;
	bool own = *(bool *)*state;
	struct nl *nl = nl_open(false, err, sizeof(err));

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
	assert_false(nl_pod_watch(nl));
	nl_close(nl);
	nl_close(NULL);

	/* Pods' facts, and their notifications, from a namespace of our own. */
	nl = nl_open(true, err, sizeof(err));
	assert_non_null(nl);
	assert_true(nl_pod_watch(nl));
	if (own) {
		static struct facts fs;
		const struct podmap_fact *f;

		lo_route(true);
		fs.n = 0;
		assert_false(nl_pod_changes(nl, collect_fact, &fs));
		f = fact_of(&fs);
		assert_non_null(f);
		assert_false(f->deleted);
		assert_int_equal(f->ifindex, 1);
		fs.n = 0;
		assert_int_equal(nl_pod_facts(nl, true, collect_fact, &fs), 0);
		assert_non_null(fact_of(&fs));
		lo_route(false);
		fs.n = 0;
		nl_pod_changes(nl, collect_fact, &fs);
		f = fact_of(&fs);
		assert_non_null(f);
		assert_true(f->deleted);
	}
	nl_close(nl);
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
		cmocka_unit_test(test_nl_recorded_pod_addresses),
		cmocka_unit_test(test_nl_built_stats),
		cmocka_unit_test(test_nl_built_links),
		cmocka_unit_test(test_nl_built_facts),
		cmocka_unit_test(test_nl_recorded_interrupted),
		cmocka_unit_test(test_nl_dump_interrupted),
		cmocka_unit_test(test_nl_dump_interrupted_every_try),
		cmocka_unit_test(test_nl_stale_replies),
		cmocka_unit_test(test_nl_dump_error_midway),
		cmocka_unit_test(test_nl_no_answer_reopens),
		cmocka_unit_test(test_nl_socket),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
