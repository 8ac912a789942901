/* The rate-limited log line: one per interval, the next one says how many
 * were held back, and the budget is per place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"

static char path[] = "/tmp/netsched-test-log.XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0 || !freopen(path, "w+", stderr))
		return -1;
	close(fd);
	setvbuf(stderr, NULL, _IONBF, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* What was logged since the last call. */
static char *logged(void)
{
	static char text[8192];
	size_t n;

	fflush(stderr);
	rewind(stderr);
	n = fread(text, 1, sizeof(text) - 1, stderr);
	text[n] = '\0';
	if (ftruncate(fileno(stderr), 0))
		fail_msg("cannot empty the log file");
	rewind(stderr);
	return text;
}

static void test_log_limited(void **state)
{
	struct log_limit a = { 0 }, b = { 0 };
	uint64_t t = 5 * NS_PER_SEC, sec = NS_PER_SEC;
	char *text;

	(void)state;
	log_init("test");
	assert_true(log_limited(&a, t, sec, LOG_LVL_WARN, "m", "node-%d: bad", 1));
	assert_non_null(strstr(logged(), "test warn m: node-1: bad\n"));
	for (int i = 0; i < 3; i++)
		assert_false(log_limited(&a, t + 10 * i, sec, LOG_LVL_WARN, "m", "again"));
	assert_string_equal(logged(), "");
	/* Another place has its own budget. */
	assert_true(log_limited(&b, t, sec, LOG_LVL_WARN, "m", "other"));
	assert_null(strstr(logged(), "suppressed"));
	/* After the interval: one line, saying how many were held back. */
	assert_true(log_limited(&a, t + sec, sec, LOG_LVL_WARN, "m", "later"));
	text = logged();
	assert_non_null(strstr(text, "later (3 similar lines suppressed since the last one)"));
	assert_true(log_limited(&a, t + 2 * sec, sec, LOG_LVL_WARN, "m", "quiet"));
	assert_null(strstr(logged(), "suppressed"));
	/* A level that is off writes nothing but still spends the budget. */
	assert_false(log_limited(&a, t + 3 * sec, sec, LOG_LVL_DEBUG, "m", "debug"));
	assert_false(log_limited(&a, t + 3 * sec, sec, LOG_LVL_WARN, "m", "held"));
	assert_string_equal(logged(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_limited),
	};
	return cmocka_run_group_tests_name("log", tests, setup, teardown);
}
