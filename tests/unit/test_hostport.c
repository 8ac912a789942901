/* Listen addresses: IPv4 and bracketed IPv6 literals with a port; names
 * and junk refused with the outputs untouched. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/hostport.h"

static void test_hostport(void **state)
{
	static const char *const bad[] = {
		"", ":8470", "0.0.0.0", "0.0.0.0:", "0.0.0.0:65536", "0.0.0.0:84x0",
		"localhost:8470", "::1:8470", "[::1]8470", "[::1", "[nope]:1", "1.2.3.4:-1",
		"0.0.0.0:8470 ",
	};
	char addr[64];
	uint16_t port;

	(void)state;
	assert_int_equal(hostport_parse("0.0.0.0:8470", addr, sizeof(addr), &port), 0);
	assert_string_equal(addr, "0.0.0.0");
	assert_int_equal(port, 8470);
	assert_int_equal(hostport_parse("[::1]:65535", addr, sizeof(addr), &port), 0);
	assert_string_equal(addr, "::1");
	assert_int_equal(port, 65535);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(addr, "untouched");
		port = 7;
		if (hostport_parse(bad[i], addr, sizeof(addr), &port) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
		assert_string_equal(addr, "untouched");
		assert_int_equal(port, 7);
	}
	/* An output too small for the literal is refused, not truncated. */
	assert_int_equal(hostport_parse("127.0.0.1:1", addr, 4, &port), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostport),
	};
	return cmocka_run_group_tests_name("hostport", tests, NULL, NULL);
}
