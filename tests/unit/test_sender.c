/* The agent's sender: which scorer URLs it takes (and the reasons it gives
 * for the rest), and a sender over literal addresses that counts what each
 * peer took. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/sender.h"

struct row {
	const char *url;
	int rc;
	const char *why;
};

static const struct row rows[] = {
	{ "tcp://127.0.0.1:7470", 0, NULL },
	{ "tcp://[::1]:7470", 0, NULL },
	{ "tcp://netsched-scorer.kube-system.svc:7470", 0, NULL },
	{ "tls+tcp://scorer.example:7470", 0, NULL },
	{ "ipc:///run/netsched.sock", 0, NULL },
	{ "http://127.0.0.1:7470", -EINVAL, "expected tcp://HOST:PORT" },
	{ "tcp://127.0.0.1", -EINVAL, "scorer tcp://127.0.0.1" },
	{ "tcp://:7470", -EINVAL, "scorer tcp://:7470" },
	{ "tcp://127.0.0.1:0", -EINVAL, "scorer tcp://127.0.0.1:0" },
	{ "tcp://127.0.0.1:99999", -EINVAL, "scorer tcp://127.0.0.1:99999" },
	{ "", -EINVAL, "expected tcp://HOST:PORT" },
};

static void test_sender_check_url(void **state)
{
	char err[512], longurl[SENDER_URL_MAX + 16];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = sender_check_url(rows[i].url, err, sizeof(err));
		if (rc != rows[i].rc)
			fail_msg("%s: rc %d, want %d (%s)", rows[i].url, rc, rows[i].rc, err);
		if (rows[i].why && !strstr(err, rows[i].why))
			fail_msg("%s: \"%s\" does not say \"%s\"", rows[i].url, err, rows[i].why);
	}
	memset(longurl, 'a', sizeof(longurl) - 1);
	memcpy(longurl, "tcp://", 6);
	longurl[sizeof(longurl) - 1] = '\0';
	assert_int_equal(sender_check_url(longurl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "URL longer than"));
}

static void test_sender_create(void **state)
{
	const char *one[] = { "tcp://127.0.0.1:9", "tcp://127.0.0.2:9" };
	const char *tls[] = { "tls+tcp://scorer.example:7470" };
	const char *bad[] = { "tcp://127.0.0.1:9", "udp://x:1" };
	const char *many[SENDER_MAX_SCORERS + 1];
	struct sender_peer peers[4];
	struct sender *s;
	char err[512];

	(void)state;
	assert_null(sender_create(tls, 1, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "needs --scorer-ca"));
	assert_null(sender_create(bad, 2, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "udp://x:1"));
	for (size_t i = 0; i < SENDER_MAX_SCORERS + 1; i++)
		many[i] = one[0];
	assert_null(sender_create(many, SENDER_MAX_SCORERS + 1, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "expected 1 to 16"));
	assert_null(sender_create(one, 0, NULL, err, sizeof(err)));

	/* Literal addresses: one peer each, no resolver. Nobody listens: each
	 * peer queues one report, the next is refused and counted, and
	 * nothing blocks. */
	s = sender_create(one, 2, NULL, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(sender_peers(s, peers, 4), 2);
	assert_string_equal(peers[0].url, "tcp://127.0.0.1:9");
	assert_string_equal(peers[1].url, "tcp://127.0.0.2:9");
	assert_int_equal(sender_send(s, "x", 1), 2);
	assert_int_equal(sender_send(s, "y", 1), 0);
	assert_int_equal(sender_peers(s, peers, 4), 2);
	assert_int_equal(peers[0].sent, 1);
	assert_int_equal(peers[1].sent, 1);
	assert_int_equal(peers[0].failed, 1);
	assert_int_equal(peers[1].failed, 1);
	sender_destroy(s);
	sender_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sender_check_url),
		cmocka_unit_test(test_sender_create),
	};
	return cmocka_run_group_tests_name("sender", tests, NULL, NULL);
}
