/* The rate-limited log line: one per interval, the next one says how many
 * were held back, and the budget is per place. */
#include <fcntl.h>
#include <poll.h>
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
#include "tests/unit/stderr_capture.h"

static void test_log_limited(void **state)
{
	struct log_limit a = { 0 }, b = { 0 };
	uint64_t t = 5 * NS_PER_SEC, sec = NS_PER_SEC;
	char *text;

	(void)state;
	log_init("test");
	assert_true(log_limited(&a, t, sec, LOG_LVL_WARN, "m", "node-%d: bad", 1));
	assert_non_null(strstr(stderr_captured(), "test warn m: node-1: bad\n"));
	for (int i = 0; i < 3; i++)
		assert_false(log_limited(&a, t + 10 * i, sec, LOG_LVL_WARN, "m", "again"));
	assert_string_equal(stderr_captured(), "");
	/* Another place has its own budget. */
	assert_true(log_limited(&b, t, sec, LOG_LVL_WARN, "m", "other"));
	assert_null(strstr(stderr_captured(), "suppressed"));
	/* After the interval: one line, saying how many were held back. */
	assert_true(log_limited(&a, t + sec, sec, LOG_LVL_WARN, "m", "later"));
	text = stderr_captured();
	assert_non_null(strstr(text, "later (3 similar lines suppressed since the last one)"));
	assert_true(log_limited(&a, t + 2 * sec, sec, LOG_LVL_WARN, "m", "quiet"));
	assert_null(strstr(stderr_captured(), "suppressed"));
	/* A level that is off writes nothing but still spends the budget. */
	assert_false(log_limited(&a, t + 3 * sec, sec, LOG_LVL_DEBUG, "m", "debug"));
	assert_false(log_limited(&a, t + 3 * sec, sec, LOG_LVL_WARN, "m", "held"));
	assert_string_equal(stderr_captured(), "");
}

/* Reads the pipe until want shows up or ten seconds pass (a deadline for
 * what happens, long enough for a machine at load 15); returns whether it
 * did. */
static bool read_until(int fd, const char *want)
{
	static char text[1 << 20];
	size_t n = 0;
	uint64_t deadline = clock_mono_ns() + 10 * NS_PER_SEC;

	while (clock_mono_ns() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = read(fd, text + n, sizeof(text) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		text[n] = '\0';
		if (strstr(text, want))
			return true;
		if (n > sizeof(text) / 2) {	/* keep the tail, where the note goes */
			memmove(text, text + n / 2, n - n / 2 + 1);
			n -= n / 2;
		}
	}
	return false;
}

/* stderr is a pipe nobody reads: logging must still return at once, drop
 * what does not fit, count it, and say so once the reader is back. With a
 * blocking write the 20,000th call would never come back (the alarm then
 * ends the test as a failure). */
/* Outside strings for a log line: printable ASCII or '?', cut to fit. */
static void test_log_printable(void **state)
{
	char out[6];

	(void)state;
	assert_string_equal(log_printable("ok\x01\xff" "done", 8, out, sizeof(out)), "ok??d");
	assert_string_equal(log_printable("a\nb", 3, out, sizeof(out)), "a?b");
	assert_string_equal(log_printable(NULL, 5, out, sizeof(out)), "");
	assert_string_equal(log_printable("abc", 3, out, 1), "");
}

/* Issue 39: a server URL with CR/LF from a kubeconfig was logged raw, a
 * forged line after it. Whatever a caller passes on, a line is one line:
 * control characters are written as \xNN, other bytes as they are. */
static void test_log_escapes_controls(void **state)
{
	char *text;

	(void)state;
	log_init("test");
	log_msg(LOG_LVL_WARN, "kube", "server %s", "https://a\r\n2026-11-27T00:00:00Z test info x: forged");
	text = stderr_captured();
	assert_non_null(strstr(text, "test warn kube: server https://a\\x0d\\x0a2026-11-27T00:00:00Z "
				     "test info x: forged\n"));
	assert_null(strchr(text, '\r'));
	assert_int_equal(strchr(text, '\n') - text, (long)strlen(text) - 1);
	log_msg(LOG_LVL_WARN, "m", "tab\there, bell\a, del\x7f, caf\xc3\xa9");
	assert_non_null(strstr(stderr_captured(), "tab\\x09here, bell\\x07, del\\x7f, caf\xc3\xa9\n"));
	/* A line of nothing but control characters still ends in one newline. */
	{
		char many[1100];

		memset(many, '\n', sizeof(many) - 1);
		many[sizeof(many) - 1] = '\0';
		log_msg(LOG_LVL_WARN, "m", "%s", many);
		text = stderr_captured();
		assert_int_equal(strchr(text, '\n') - text, (long)strlen(text) - 1);
	}
}

static void test_log_stalled_reader(void **state)
{
	int p[2], saved = dup(STDERR_FILENO);
	uint64_t before = log_dropped_total();

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	assert_int_not_equal(dup2(p[1], STDERR_FILENO), -1);
	assert_int_equal(log_start(), 0);
	alarm(20);
	for (int i = 0; i < 20000; i++)
		log_msg(LOG_LVL_WARN, "m", "line %d of a flood nobody reads", i);
	alarm(0);
	assert_true(log_dropped_total() - before > 1000);
	/* The reader recovers: the lines still buffered, then the note. */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	assert_true(read_until(p[0], "lines dropped while stderr was blocked"));
	log_msg(LOG_LVL_WARN, "m", "after the stall");
	assert_true(read_until(p[0], "m: after the stall\n"));
	log_stop();
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_limited),
		cmocka_unit_test(test_log_printable),
		cmocka_unit_test(test_log_escapes_controls),
		cmocka_unit_test(test_log_stalled_reader),
	};
	return cmocka_run_group_tests_name("log", tests, stderr_capture_start, stderr_capture_stop);
}
