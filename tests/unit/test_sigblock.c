/* The signals both binaries act on (common/sigblock.c): SIGINT, SIGTERM
 * and SIGHUP blocked in the calling thread and named in the set it hands
 * back for sigwait(); nothing else blocked. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sigblock.h"

static void test_sigblock_stops(void **state)
{
	sigset_t set, now, empty;

	(void)state;
	sigemptyset(&empty);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &empty, NULL), 0);
	sigblock_stops(&set);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	for (int sig = 1; sig < SIGRTMIN; sig++) {
		int want = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;

		assert_int_equal(sigismember(&set, sig), want);
		assert_int_equal(sigismember(&now, sig), want);
	}
	/* The set unblocks them again, as the agent does after starting its
	 * threads. */
	assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	assert_int_equal(sigismember(&now, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigblock_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
