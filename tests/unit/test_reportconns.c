/* The report port's connection budget (scorer/reports/reportconns.c) on real NNG
 * sockets over loopback: over its budget a new connection makes room, and
 * what it delivers is reported without closing it. Silence,
 * the descriptor pause and many addresses are tests/integration/
 * test_report_port.sh's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>
#include <nng/supplemental/util/platform.h>

#include "common/clock.h"
#include "scorer/counters/registry.h"
#include "scorer/reports/reportconns.h"

#define PUSHERS 5

static struct registry counters;

/* Polls for up to 5 s until rc holds n connections. */
static bool holds(struct reportconns *rc, size_t n)
{
	for (int i = 0; i < 500; i++) {
		if (reportconns_count(rc) == n)
			return true;
		nng_msleep(10);
	}
	return false;
}

/* A pull socket listening on a free loopback port, watched by a
 * reportconns of cfg; its URL in url. */
static struct reportconns *listening(nng_socket *pull, const struct reportconns_config *cfg,
				     char *url, size_t urllen)
{
	struct reportconns *rc;
	nng_listener l;
	char err[256];
	int port = 0;

	assert_int_equal(nng_pull0_open(pull), 0);
	rc = reportconns_start(*pull, cfg, err, sizeof(err));
	assert_non_null(rc);
	assert_int_equal(nng_listener_create(&l, *pull, "tcp://127.0.0.1:0"), 0);
	assert_int_equal(nng_listener_start(l, 0), 0);
	assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	assert_int_equal(reportconns_find_listener(rc, (uint16_t)port), 0);
	snprintf(url, urllen, "tcp://127.0.0.1:%d", port);
	return rc;
}

static void test_reportconns_budget(void **state)
{
	struct reportconns_config cfg = {
		.max = 3, .silent_ns = 3600 * NS_PER_SEC, .pause_at = 0, .counters = &counters,
	};
	nng_socket pull, push[PUSHERS];
	struct reportconns *rc;
	char url[64];
	nng_msg *msg;

	(void)state;
	rc = listening(&pull, &cfg, url, sizeof(url));
	assert_int_equal(atomic_load(&counters.report_conns_max), 3);

	/* Five agents, three slots: two make room (the fifth stays out as
	 * it redials, always evicting one of the others). */
	for (int i = 0; i < PUSHERS; i++) {
		assert_int_equal(nng_push0_open(&push[i]), 0);
		assert_int_equal(nng_dial(push[i], url, NULL, NNG_FLAG_NONBLOCK), 0);
	}
	/* Polled, not slept on: a loaded machine dials late. */
	assert_true(holds(rc, 3));
	for (int i = 0; i < 500 && atomic_load(&counters.report_conns_closed_busiest) < 2; i++)
		nng_msleep(10);
	assert_true(atomic_load(&counters.report_conns_closed_busiest) >= 2);
	assert_true(atomic_load(&counters.report_conns) <= 3);

	/* What is not a report leaves a connection as silent as it was; a
	 * report makes it the last to go of its address's. */
	assert_int_equal(nng_socket_set_ms(pull, NNG_OPT_RECVTIMEO, 5000), 0);
	for (int i = 0; i < PUSHERS; i++)
		nng_send(push[i], "garbage", 7, NNG_FLAG_NONBLOCK);
	assert_int_equal(nng_recvmsg(pull, &msg, 0), 0);
	reportconns_delivered(rc, nng_msg_get_pipe(msg), -EBADMSG);
	reportconns_delivered(rc, nng_msg_get_pipe(msg), 0);
	nng_msg_free(msg);
	assert_int_equal(reportconns_count(rc), 3);

	/* A pipe whose message is still queued is removed only once it is
	 * taken (the ingest thread always takes them). */
	for (int i = 0; i < PUSHERS; i++)
		nng_close(push[i]);
	assert_int_equal(nng_socket_set_ms(pull, NNG_OPT_RECVTIMEO, 200), 0);
	while (nng_recvmsg(pull, &msg, 0) == 0)
		nng_msg_free(msg);
	if (!holds(rc, 0))
		fail_msg("still %zu connections", reportconns_count(rc));
	nng_close(pull);
	reportconns_stop(rc);
	reportconns_stop(NULL);
}

/* Descriptors short (pause_at open: 1, stdout, always is): the listening
 * socket stops taking connections, and says so once. */
static void test_reportconns_pause(void **state)
{
	struct reportconns_config cfg = {
		.max = 8, .silent_ns = 3600 * NS_PER_SEC, .pause_at = 1, .counters = &counters,
	};
	unsigned long before = atomic_load(&counters.report_accept_pauses);
	nng_socket pull, push;
	struct reportconns *rc;
	char err[256], url[64];

	(void)state;
	rc = listening(&pull, &cfg, url, sizeof(url));
	for (int i = 0; i < 200 && atomic_load(&counters.report_accept_pauses) == before; i++)
		nng_msleep(10);
	assert_int_equal(atomic_load(&counters.report_accept_pauses), before + 1);
	/* Paused: a dialer's SYNs are dropped, no connection is made. */
	assert_int_equal(nng_push0_open(&push), 0);
	assert_int_equal(nng_dial(push, url, NULL, NNG_FLAG_NONBLOCK), 0);
	nng_msleep(300);
	assert_int_equal(reportconns_count(rc), 0);
	assert_int_equal(atomic_load(&counters.report_accept_pauses), before + 1);
	nng_close(push);
	nng_close(pull);
	reportconns_stop(rc);
	/* A port nothing listens on: no pause possible, said and survived. */
	assert_int_equal(nng_pull0_open(&pull), 0);
	rc = reportconns_start(pull, &cfg, err, sizeof(err));
	assert_non_null(rc);
	assert_int_equal(reportconns_find_listener(rc, 1), -ENOENT);
	assert_int_equal(reportconns_find_listener(rc, 0), -ENOENT);
	nng_close(pull);
	reportconns_stop(rc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reportconns_budget),
		cmocka_unit_test(test_reportconns_pause),
	};
	return cmocka_run_group_tests_name("reportconns", tests, NULL, NULL);
}
