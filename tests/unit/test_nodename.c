/* The one node-name rule: what the API server accepts as a node name, and
 * messages that never echo a byte that is not printable. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/nodename.h"

struct row {
	const char *name;
	int rc;
	const char *why;	/* substring of the message */
};

static const struct row rows[] = {
	{ "node-1", 0, NULL },
	{ "ip-10-0-0-1.eu-west-1.compute.internal", 0, NULL },
	{ "a", 0, NULL },
	{ "0", 0, NULL },
	{ "", -EINVAL, "empty" },
	{ "Node-1", -EINVAL, "byte 0 is 'N'" },
	{ "node_1", -EINVAL, "byte 4 is '_'" },
	{ "-node", -EINVAL, "byte 0 is '-'" },
	{ "node-", -EINVAL, "byte 4 is '-'" },
	{ ".node", -EINVAL, "byte 0 is '.'" },
	{ "node.", -EINVAL, "byte 4 is '.'" },
	{ "a..b", -EINVAL, "byte 1 is '.'" },
	{ "a..b", -EINVAL, "byte 1 is '.'" },
	{ "a-.b", -EINVAL, "byte 1 is '-'" },
	{ "a b", -EINVAL, "byte 1 is 0x20" },
	{ "a/b", -EINVAL, "byte 1 is '/'" },
	{ "a\"b", -EINVAL, "byte 1 is '\"'" },
	{ "a\\b", -EINVAL, "byte 1 is '\\'" },
	{ "a\nb", -EINVAL, "byte 1 is 0x0a" },
	{ "a\x7f", -EINVAL, "byte 1 is 0x7f" },
	{ "caf\xc3\xa9", -EINVAL, "byte 3 is 0xc3" },
	{ "a\xff", -EINVAL, "byte 1 is 0xff" },
};

static void test_nodename_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char why[256] = "";
		int rc = nodename_check(rows[i].name, strlen(rows[i].name), why, sizeof(why));

		if (rc != rows[i].rc)
			fail_msg("row %zu: rc %d, want %d (%s)", i, rc, rows[i].rc, why);
		if (rows[i].why && !strstr(why, rows[i].why))
			fail_msg("row %zu: \"%s\" does not say \"%s\"", i, why, rows[i].why);
		for (const char *c = why; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
				fail_msg("row %zu: the message echoes byte 0x%02x", i, (unsigned char)*c);
		assert_int_equal(nodename_valid(rows[i].name, strlen(rows[i].name)), rc == 0);
	}
}

/* 253 bytes is the longest DNS subdomain; a NUL inside is a bad byte, not
 * the end of the name. */
static void test_nodename_length_and_nul(void **state)
{
	char name[NODENAME_MAX_LEN + 2], why[256];

	(void)state;
	memset(name, 'a', sizeof(name));
	assert_int_equal(nodename_check(name, NODENAME_MAX_LEN, why, sizeof(why)), 0);
	assert_int_equal(nodename_check(name, NODENAME_MAX_LEN + 1, why, sizeof(why)), -E2BIG);
	assert_non_null(strstr(why, "254 bytes long, limit 253"));
	assert_int_equal(nodename_check("a\0b", 3, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "byte 1 is 0x00"));
	assert_int_equal(nodename_check("a\0b", 3, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodename_rows),
		cmocka_unit_test(test_nodename_length_and_nul),
	};
	return cmocka_run_group_tests_name("nodename", tests, NULL, NULL);
}
