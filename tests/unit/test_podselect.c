/* Which interfaces are pods' (`--pod-interfaces`): auto, globs, off, the
 * excludes, and what is never a pod's (lo, bridges, the measured uplinks). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/podselect.h"

/* A node running several CNIs' worth of interfaces. */
struct link_row {
	struct ifselect_link l;
	bool measured;
};

static const struct link_row links[] = {
	{ { .ifindex = 1, .name = "lo", .loopback = true }, false },
	{ { .ifindex = 2, .name = "ens3", .default_route = true }, true },
	{ { .ifindex = 3, .name = "cni0", .kind = "bridge" }, false },
	{ { .ifindex = 4, .name = "veth1a2b", .kind = "veth", .master = 3, .peer_netns = true }, false },
	{ { .ifindex = 5, .name = "cali12ab", .kind = "veth", .peer_netns = true }, false },
	{ { .ifindex = 6, .name = "lxc99", .kind = "netkit", .peer_netns = true }, false },
	{ { .ifindex = 7, .name = "vx0", .kind = "veth" }, false },		/* peer here */
	{ { .ifindex = 8, .name = "flannel.1", .kind = "vxlan", .peer_netns = true }, false },
	{ { .ifindex = 9, .name = "eth0", .kind = "veth", .peer_netns = true }, true },	/* a simulated node's uplink */
	{ { .ifindex = 10, .name = "eni7", .kind = "veth", .peer_netns = true }, false },
	{ { .ifindex = 11, .name = "cali-br", .kind = "bridge" }, false },
};
#define N_LINKS (sizeof(links) / sizeof(links[0]))

struct select_row {
	const char *name;
	const char *spec;
	const char *exclude;	/* NULL: none */
	const char *want;	/* the pods' interfaces, space-separated */
};

static const struct select_row rows[] = {
	{ "auto: veths and netkits into other namespaces, never an uplink", "auto", NULL,
	  "veth1a2b cali12ab lxc99 eni7" },
	{ "a glob by name, whatever the kind, never a bridge", "cali*", NULL, "cali12ab" },
	{ "globs combine", "cali*,lxc*,veth*", NULL, "veth1a2b cali12ab lxc99" },
	{ "auto and a glob", "auto,flannel.1", NULL, "veth1a2b cali12ab lxc99 flannel.1 eni7" },
	{ "a glob never picks the measured uplink, lo or a bridge", "*", NULL,
	  "veth1a2b cali12ab lxc99 vx0 flannel.1 eni7" },
	{ "excludes win", "auto", "eni*,lxc*", "veth1a2b cali12ab" },
	{ "off", "off", NULL, "" },
};

static void test_podselect_match(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct select_row *row = &rows[i];
		struct podselect_spec spec;
		struct ifselect_spec excl = { 0 };
		char why[128], got[256] = "";
		size_t len = 0;

		if (podselect_parse(&spec, row->spec, why, sizeof(why)))
			fail_msg("%s: %s refused: %s", row->name, row->spec, why);
		if (row->exclude && ifselect_parse(&excl, row->exclude, true, why, sizeof(why)))
			fail_msg("%s: exclude %s refused: %s", row->name, row->exclude, why);
		assert_int_equal(podselect_enabled(&spec), row->want[0] != '\0');
		for (size_t k = 0; k < N_LINKS; k++)
			if (podselect_match(&spec, &excl, &links[k].l, links[k].measured))
				len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s",
							len ? " " : "", links[k].l.name);
		if (strcmp(got, row->want))
			fail_msg("%s: got \"%s\", want \"%s\"", row->name, got, row->want);
	}
}

struct parse_row {
	const char *spec;
	const char *why;	/* NULL: accepted */
};

static const struct parse_row parse_rows[] = {
	{ "auto", NULL },
	{ "off", NULL },
	{ "cali*,lxc*", NULL },
	{ "auto,off", "off stands alone" },
	{ "", "item 1: not auto, off or an interface glob" },
	{ "cali*,", "item 2" },
	{ "a/b", "item 1" },
	{ "averyveryverylongname*", "1-15 bytes" },
	{ "cali*,cali*", "cali* named twice" },
};

static void test_podselect_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *row = &parse_rows[i];
		struct podselect_spec spec = { .is_auto = true, .n_globs = 1 }, was = spec;
		char why[128] = "";
		int rc = podselect_parse(&spec, row->spec, why, sizeof(why));

		if (!row->why) {
			if (rc)
				fail_msg("%s refused: %s", row->spec, why);
			continue;
		}
		if (rc != -EINVAL || !strstr(why, row->why))
			fail_msg("%s: rc %d, \"%s\", want \"%s\"", row->spec, rc, why, row->why);
		if (memcmp(&spec, &was, sizeof(spec)))
			fail_msg("%s: spec changed on error", row->spec);
	}
	{
		/* More globs than the bound. */
		char many[1024] = "";
		struct podselect_spec spec;
		char why[128];
		size_t len = 0;

		for (int i = 0; i <= IFSELECT_MAX_ITEMS; i++)
			len += (size_t)snprintf(many + len, sizeof(many) - len, "%sg%d*", i ? "," : "", i);
		assert_int_equal(podselect_parse(&spec, many, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "more than 32 globs"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podselect_match),
		cmocka_unit_test(test_podselect_parse),
	};

	return cmocka_run_group_tests_name("podselect", tests, NULL, NULL);
}
