/* Which interfaces an agent measures: auto by default route, names, globs,
 * excludes, and the devices no glob or auto may pick. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/ifselect.h"

/* The links of a typical Kubernetes node. */
static const struct ifselect_link links[] = {
	{ 1, "lo", "", true, false, false, 0, false },
	{ 2, "ens1f0", "", false, true, false, 0, false },	/* bond slaves */
	{ 3, "ens1f1", "", false, true, false, 0, false },
	{ 4, "bond0", "bond", false, false, true, 0, false },	/* carries the default route */
	{ 5, "ens2", "", false, false, false, 0, false },		/* spare physical NIC */
	{ 6, "cni0", "bridge", false, false, false, 0, false },
	{ 7, "veth1234", "veth", false, false, false, 0, false },
	{ 8, "flannel.1", "vxlan", false, false, false, 0, false },
	{ 9, "eth0", "veth", false, false, true, 0, false },	/* a pod-like node: veth with the route */
	{ 10, "lo2", "", true, false, true, 0, false },		/* absurd, but never lo */
};
#define N_LINKS (sizeof(links) / sizeof(links[0]))

struct select_row {
	const char *name;
	const char *include;
	const char *exclude;	/* NULL: none */
	const char *want;	/* the chosen links' names, space-separated */
};

static const struct select_row rows[] = {
	{ "auto: default-route links, the bond once, never lo", "auto", NULL, "bond0 eth0" },
	{ "glob: physical and bonds, not slaves or virtual", "*", NULL, "bond0 ens2" },
	{ "glob ens*: slaves stay out", "ens*", NULL, "ens2" },
	{ "a slave named explicitly is taken", "ens1f0", NULL, "ens1f0" },
	{ "a veth named explicitly is taken", "veth1234", NULL, "veth1234" },
	{ "lo named explicitly is taken", "lo", NULL, "lo" },
	{ "auto plus a name", "auto,ens2", NULL, "bond0 ens2 eth0" },
	{ "exclude wins over auto", "auto", "eth*", "bond0" },
	{ "exclude wins over a name", "ens2,bond0", "ens2", "bond0" },
	{ "glob matching nothing", "wl*", NULL, "" },
	{ "character class glob", "ens[0-9]", NULL, "ens2" },
};

static void chosen(const struct ifselect_spec *spec, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < N_LINKS; i++) {
		if (!ifselect_match(spec, &links[i]))
			continue;
		if (out[0])
			strncat(out, " ", cap - strlen(out) - 1);
		strncat(out, links[i].name, cap - strlen(out) - 1);
	}
}

static void test_ifselect_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct ifselect_spec spec = { 0 };
		char why[128], got[256];

		if (ifselect_parse(&spec, rows[r].include, false, why, sizeof(why)))
			fail_msg("%s: include '%s' refused: %s", rows[r].name, rows[r].include, why);
		if (rows[r].exclude &&
		    ifselect_parse(&spec, rows[r].exclude, true, why, sizeof(why)))
			fail_msg("%s: exclude '%s' refused: %s", rows[r].name, rows[r].exclude, why);
		chosen(&spec, got, sizeof(got));
		if (strcmp(got, rows[r].want))
			fail_msg("%s: chose '%s', want '%s'", rows[r].name, got, rows[r].want);
	}
}

struct parse_row {
	const char *in;
	const char *why;	/* substring of the reason */
};

static const struct parse_row bad[] = {
	{ "", "item 1" },
	{ "eth0,", "item 2" },
	{ ",eth0", "item 1" },
	{ "a/b", "not an interface name" },
	{ "eth 0", "not an interface name" },
	{ "abcdefghijklmnop", "not an interface name" },	/* 16 bytes */
	{ "eth0,eth0", "named twice" },
	{ "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,aa,bb,cc,dd,ee,ff,gg",
	  "more than 32" },
};

static void test_ifselect_parse_errors(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(bad) / sizeof(bad[0]); r++) {
		struct ifselect_spec spec = { .is_auto = true, .n_include = 1, .include = { "keep" } };
		char why[128] = "";

		assert_int_equal(ifselect_parse(&spec, bad[r].in, false, why, sizeof(why)), -EINVAL);
		if (!strstr(why, bad[r].why))
			fail_msg("'%s': reason '%s' lacks '%s'", bad[r].in, why, bad[r].why);
		/* Untouched on error. */
		assert_true(spec.is_auto);
		assert_int_equal(spec.n_include, 1);
		assert_string_equal(spec.include[0], "keep");
	}
}

static void test_ifselect_virtual(void **state)
{
	(void)state;
	assert_true(ifselect_is_virtual(&links[0]));	/* lo */
	assert_false(ifselect_is_virtual(&links[1]));	/* hardware */
	assert_false(ifselect_is_virtual(&links[3]));	/* bond */
	assert_true(ifselect_is_virtual(&links[5]));	/* bridge */
	assert_true(ifselect_is_virtual(&links[7]));	/* vxlan */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ifselect_rows),
		cmocka_unit_test(test_ifselect_parse_errors),
		cmocka_unit_test(test_ifselect_virtual),
	};
	return cmocka_run_group_tests_name("ifselect", tests, NULL, NULL);
}
