/* The agent's sender: which scorer URLs it takes (and the reasons it gives
 * for the rest), a sender over literal addresses that counts what each
 * peer took, and real NNG pull sockets on loopback standing in for scorer
 * replicas: every replica gets the reports while a dead one only counts
 * failures, a restarted scorer gets them again once the sender redials, and
 * a name stands for the addresses it resolves to. Waits poll against
 * generous deadlines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/supplemental/util/platform.h>

#include "agent/sender.h"
#include "stderr_capture.h"

#define WAIT_ROUNDS 3000	/* of 10 ms: 30 s, generous for a loaded machine */

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

/* A pull socket, a scorer's, listening on url ("tcp://127.0.0.1:0" picks a
 * free port); the port it got. */
static int pull_listen(nng_socket *pull, const char *url)
{
	nng_listener l;
	int port = 0;

	assert_int_equal(nng_pull0_open(pull), 0);
	assert_int_equal(nng_listener_create(&l, *pull, url), 0);
	assert_int_equal(nng_listener_start(l, 0), 0);
	assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	return port;
}

/* Whether a report is waiting at pull; if so it is taken and must be one
 * the sender sent (it starts with "report "). */
static bool took(nng_socket pull)
{
	char *msg = NULL;
	size_t len = 0;

	if (nng_recv(pull, &msg, &len, NNG_FLAG_ALLOC | NNG_FLAG_NONBLOCK))
		return false;
	assert_true(len > 7 && !memcmp(msg, "report ", 7));
	nng_free(msg, len);
	return true;
}

/* Sends numbered reports until every one of pulls[0..n) has taken one. */
static void send_until_taken(struct sender *s, nng_socket *pulls, size_t n)
{
	bool got[4] = { false };
	size_t have = 0;

	assert_true(n <= 4);
	for (int i = 0; i < WAIT_ROUNDS && have < n; i++) {
		char report[32];
		int len = snprintf(report, sizeof(report), "report %d", i);

		sender_send(s, report, (size_t)len);
		nng_msleep(10);
		for (size_t k = 0; k < n; k++)
			if (!got[k] && took(pulls[k])) {
				got[k] = true;
				have++;
			}
	}
	if (have < n)
		fail_msg("%zu of %zu scorers got a report", have, n);
}

/* Two live replicas and a dead one: both live ones get reports, the dead
 * one's reports are counted as failed, and it delays nobody. */
static void test_sender_replicas(void **state)
{
	nng_socket pulls[2];
	char u0[64], u1[64], dead[64];
	const char *urls[] = { u0, u1, dead };
	struct sender_peer peers[4];
	nng_socket probe;
	struct sender *s;
	char err[256];

	(void)state;
	snprintf(u0, sizeof(u0), "tcp://127.0.0.1:%d", pull_listen(&pulls[0], "tcp://127.0.0.1:0"));
	snprintf(u1, sizeof(u1), "tcp://127.0.0.1:%d", pull_listen(&pulls[1], "tcp://127.0.0.1:0"));
	/* A port just freed: nobody listens there. */
	snprintf(dead, sizeof(dead), "tcp://127.0.0.1:%d", pull_listen(&probe, "tcp://127.0.0.1:0"));
	nng_close(probe);
	s = sender_create(urls, 3, NULL, err, sizeof(err));
	assert_non_null(s);
	send_until_taken(s, pulls, 2);
	sender_send(s, "report again", 12);	/* the dead one's queue is full now */
	assert_int_equal(sender_peers(s, peers, 4), 3);
	assert_string_equal(peers[2].url, dead);
	assert_true(peers[0].sent >= 1 && peers[1].sent >= 1);
	/* Its one queued report, never taken: one per socket, and a socket
	 * anew after every SENDER_STUCK_SENDS refused in a row. */
	assert_int_equal(peers[2].sent, 1 + peers[2].redials);
	assert_true(peers[2].failed >= 1);
	sender_destroy(s);
	nng_close(pulls[0]);
	nng_close(pulls[1]);
}

/* A scorer that restarts on the same port gets reports again: the sender
 * redials in the background, says once that reports are not sent and
 * once that they flow again. */
static void test_sender_reconnects(void **state)
{
	char url[64], listen[64];
	const char *urls[] = { url };
	struct sender_peer peer;
	nng_socket pull;
	struct sender *s;
	const char *log;
	char err[256];
	int port;

	(void)state;
	port = pull_listen(&pull, "tcp://127.0.0.1:0");
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	s = sender_create(urls, 1, NULL, err, sizeof(err));
	assert_non_null(s);
	stderr_captured();
	send_until_taken(s, &pull, 1);

	nng_close(pull);	/* the scorer goes away */
	for (int i = 0; i < WAIT_ROUNDS; i++) {
		sender_peers(s, &peer, 1);
		if (peer.failed)
			break;
		sender_send(s, "report gone", 11);
		nng_msleep(10);
	}
	assert_true(peer.failed >= 1);
	log = stderr_captured();
	assert_non_null(strstr(log, "report not sent"));
	assert_non_null(strstr(log, url));

	snprintf(listen, sizeof(listen), "tcp://127.0.0.1:%d", port);
	pull_listen(&pull, listen);	/* back, on the same port */
	send_until_taken(s, &pull, 1);
	for (int i = 0; i < WAIT_ROUNDS && !strstr(stderr_captured(), "reports flowing again");
	     i++) {
		if (i == WAIT_ROUNDS - 1)
			fail_msg("never said that reports flow again");
		sender_send(s, "report back", 11);
		nng_msleep(10);
	}
	sender_destroy(s);
	nng_close(pull);
}

/* A scorer gone without closing its connection: a port whose backlog takes
 * the TCP connection but nothing ever answers NNG's handshake, as a peer
 * whose host vanished never does. After SENDER_STUCK_SENDS reports in a row
 * refused the socket is opened anew (said once, counted each time), and
 * when a scorer answers there again the reports are taken and the count
 * of refusals starts over. */
static void test_sender_redials_a_wedged_scorer(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	char url[64], listen_url[64];
	const char *urls[] = { url };
	struct sender_peer peer;
	nng_socket pull;
	struct sender *s;
	char err[256];
	const char *log, *first;
	int fd;

	(void)state;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);	/* never accepted, never answered */
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &salen), 0);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%u", ntohs(sa.sin_port));
	s = sender_create(urls, 1, NULL, err, sizeof(err));
	assert_non_null(s);
	stderr_captured();
	/* The first report waits in the socket's queue; the next are refused. */
	for (unsigned i = 0; i < 1 + SENDER_STUCK_SENDS - 1; i++)
		sender_send(s, "report wedged", 13);
	sender_peers(s, &peer, 1);
	assert_int_equal(peer.redials, 0);
	sender_send(s, "report wedged", 13);
	sender_peers(s, &peer, 1);
	assert_int_equal(peer.redials, 1);
	assert_int_equal(peer.failed, SENDER_STUCK_SENDS);
	assert_string_equal(peer.url, url);
	/* The new socket queues one and refuses SENDER_STUCK_SENDS more. */
	for (unsigned i = 0; i < 1 + SENDER_STUCK_SENDS; i++)
		sender_send(s, "report wedged", 13);
	sender_peers(s, &peer, 1);
	assert_int_equal(peer.redials, 2);
	assert_int_equal(peer.sent, 2);
	log = stderr_captured();
	first = strstr(log, "not taken: opening the connection anew");
	assert_non_null(first);
	assert_null(strstr(first + 1, "not taken: opening the connection anew"));
	assert_non_null(strstr(log, url));

	/* A scorer answers on that port again: reports are taken. */
	close(fd);
	snprintf(listen_url, sizeof(listen_url), "tcp://127.0.0.1:%u", ntohs(sa.sin_port));
	pull_listen(&pull, listen_url);
	send_until_taken(s, &pull, 1);
	sender_peers(s, &peer, 1);
	assert_true(peer.redials >= 2);
	sender_destroy(s);
	nng_close(pull);
}

/* A name stands for the addresses it resolves to, each dialled as an
 * address (its URL says so); an address listed again under the name is one
 * peer, not two, so that scorer gets each report once. A name that does
 * not resolve is no error: it is retried, and said. */
static void test_sender_by_name(void **state)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	char byname[64], literal[64], lost[64];
	const char *urls[] = { byname, literal };
	const char *none[] = { lost };
	struct sender_peer peers[SENDER_MAX_PEERS];
	nng_socket pull;
	struct sender *s;
	size_t n = 0;
	char err[256];
	int port;

	(void)state;
	/* Only where localhost is 127.0.0.1 (and nothing else) here. */
	if (getaddrinfo("localhost", NULL, &hints, &res))
		skip();
	hints.ai_family = AF_UNSPEC;
	freeaddrinfo(res);
	assert_int_equal(getaddrinfo("localhost", NULL, &hints, &res), 0);
	for (struct addrinfo *a = res; a; a = a->ai_next)
		n += a->ai_family == AF_INET6;
	freeaddrinfo(res);
	port = pull_listen(&pull, "tcp://127.0.0.1:0");
	snprintf(byname, sizeof(byname), "tcp://localhost:%d", port);
	snprintf(literal, sizeof(literal), "tcp://127.0.0.1:%d", port);
	s = sender_create(urls, 2, NULL, err, sizeof(err));
	assert_non_null(s);
	for (int i = 0; i < WAIT_ROUNDS && sender_peers(s, peers, SENDER_MAX_PEERS) == 0; i++)
		nng_msleep(10);
	if (n == 0) {	/* localhost is 127.0.0.1 alone: one peer */
		assert_int_equal(sender_peers(s, peers, SENDER_MAX_PEERS), 1);
		assert_string_equal(peers[0].url, literal);
	}
	for (size_t i = 0; i < sender_peers(s, peers, SENDER_MAX_PEERS); i++)
		assert_null(strstr(peers[i].url, "localhost"));
	send_until_taken(s, &pull, 1);
	sender_destroy(s);
	nng_close(pull);

	stderr_captured();
	snprintf(lost, sizeof(lost), "tcp://no-such-scorer.invalid:%d", port);
	s = sender_create(none, 1, NULL, err, sizeof(err));
	assert_non_null(s);
	/* The resolver's thread says it. */
	if (!stderr_capture_wait("cannot resolve no-such-scorer.invalid", WAIT_ROUNDS * 10))
		fail_msg("never said the name does not resolve");
	assert_int_equal(sender_peers(s, peers, SENDER_MAX_PEERS), 0);
	assert_int_equal(sender_send(s, "report lost", 11), 0);
	sender_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sender_check_url),
		cmocka_unit_test(test_sender_create),
		cmocka_unit_test(test_sender_replicas),
		cmocka_unit_test(test_sender_reconnects),
		cmocka_unit_test(test_sender_redials_a_wedged_scorer),
		cmocka_unit_test(test_sender_by_name),
	};
	return cmocka_run_group_tests_name("sender", tests, stderr_capture_start,
					   stderr_capture_stop);
}
