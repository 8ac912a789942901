/* The open-file limit (common/fdlimit.c): raising it never lowers it, and
 * the probe tells an open descriptor number from a free one. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/fdlimit.h"

static void test_fdlimit_raise_and_probe(void **state)
{
	size_t before = fdlimit_current(), after;
	struct rlimit rl;
	int fd;

	(void)state;
	assert_true(before >= 16);
	after = fdlimit_raise();
	assert_true(after >= before);
	assert_int_equal(after, fdlimit_current());
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY)
		assert_int_equal(after, rl.rlim_cur);

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(fdlimit_in_use((size_t)fd));
	close(fd);
	assert_false(fdlimit_in_use((size_t)fd));
	assert_false(fdlimit_in_use(after - 1));	/* the top one, free in a test */
	assert_false(fdlimit_in_use(after));	/* beyond the limit: none there */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdlimit_raise_and_probe),
	};
	return cmocka_run_group_tests_name("fdlimit", tests, NULL, NULL);
}
