/* POST and GET /v1/moves (scorer/serve/movesroute.c) on a scorer that
 * tracks nodes a and b: a move between them is taken and listed with what
 * is left of its hold; a move of the same pod replaces it; each kind of bad
 * move (not a move, too large, a hold out of range, a node the scorer has
 * no report from, the same node twice, a rate over MOVES_RATE_LINKS links,
 * a full table) gets its status and a message naming the field, node,
 * number or limit, is counted under its reason, and changes nothing; a
 * scorer without a move table says so. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/parse/movereq.h"
#include "scorer/pods/moves.h"
#include "scorer/scorer.h"
#include "scorer/serve/movesroute.h"
#include "scorer/serve/reply.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define LINK_BPS 1000000000ULL		/* 125,000,000 B/s */

static struct scorer *scorer_ab(size_t moves_max)
{
	struct scorer *s = fake_scorer_new(8, START_NS, STALE_NS);
	struct report a = fake_report("a", 0, 0, LINK_BPS);
	struct report b = fake_report("b", 0, 0, LINK_BPS);

	assert_non_null(s);
	if (moves_max) {
		s->view.moves = moves_create(moves_max);
		assert_non_null(s->view.moves);
	}
	assert_int_equal(table_apply(s->view.table, &a, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &b, fake_now), TABLE_APPLIED);
	return s;
}

static void scorer_free(struct scorer *s)
{
	moves_destroy(s->view.moves);
	fake_scorer_free(s);
}

/* A move's body: uid, from, to, rx, hold; the rest fixed. */
static int body(char *out, size_t cap, const char *uid, const char *from, const char *to,
		unsigned long long rx, unsigned hold)
{
	return snprintf(out, cap, "{\"namespace\":\"shop\",\"pod\":\"web-1\",\"uid\":\"%s\","
			"\"workload\":\"shop/Deployment/web\",\"from\":\"%s\",\"to\":\"%s\","
			"\"rxBytesPerSecond\":%llu,\"txBytesPerSecond\":1000,"
			"\"holdSeconds\":%u}", uid, from, to, rx, hold);
}

/* POSTs the move; the reply's status must be want and its body hold
 * says (NULL: not checked). */
static void post(struct scorer *s, const char *b, size_t len, unsigned want, const char *says)
{
	struct reply r = { 0 };

	movesroute_post(s, b, len, &r);
	if (r.status != want || (says && (!r.body || !strstr(r.body, says))))
		fail_msg("%u \"%.*s\", want %u saying \"%s\"", r.status, (int)r.len,
			 r.body ? r.body : "", want, says ? says : "");
	reply_free_body(&r);
}

static void post_move(struct scorer *s, const char *uid, const char *from, const char *to,
		      unsigned long long rx, unsigned hold, unsigned want, const char *says)
{
	char b[1024];
	int len = body(b, sizeof(b), uid, from, to, rx, hold);

	post(s, b, (size_t)len, want, says);
}

/* GET /v1/moves: must be 200 and hold says; how many moves it lists. */
static size_t list(struct scorer *s, const char *says)
{
	struct reply r = { 0 };
	size_t n = 0;

	movesroute_list(s, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(r.body);
	if (says && !strstr(r.body, says))
		fail_msg("\"%.*s\" does not say \"%s\"", (int)r.len, r.body, says);
	for (const char *p = r.body; (p = strstr(p, "\"uid\":")); p++)
		n++;
	reply_free_body(&r);
	return n;
}

static unsigned long refused(struct scorer *s, enum registry_move_refusal why)
{
	return atomic_load(&s->counters.moves_refused[why]);
}

static void test_accept_list_replace(void **state)
{
	struct scorer *s = scorer_ab(4);

	(void)state;
	assert_int_equal(list(s, "{\"moves\":[]}"), 0);
	post_move(s, "u1", "a", "b", 30000000, 300, 200, "{\"accepted\":true,\"holdSeconds\":300}");
	assert_int_equal(atomic_load(&s->counters.moves_accepted), 1);
	assert_int_equal(list(s, "{\"moves\":[{\"namespace\":\"shop\",\"pod\":\"web-1\","
				 "\"uid\":\"u1\",\"workload\":\"shop/Deployment/web\",\"from\":\"a\","
				 "\"to\":\"b\",\"rxBytesPerSecond\":30000000,\"txBytesPerSecond\":1000,"
				 "\"holdSeconds\":300,\"remainingSeconds\":300,\"landed\":false}]}"), 1);
	fake_now += 100 * NS_PER_SEC + 1;	/* what is left is rounded up */
	assert_int_equal(list(s, "\"remainingSeconds\":200,"), 1);

	/* The same pod again, the other way: it replaces the first. */
	post_move(s, "u1", "b", "a", 1000, 60, 200, "\"holdSeconds\":60");
	assert_int_equal(list(s, "\"from\":\"b\",\"to\":\"a\""), 1);
	post_move(s, "u2", "a", "b", 1000, 60, 200, NULL);
	assert_int_equal(list(s, NULL), 2);
	assert_int_equal(atomic_load(&s->counters.moves_accepted), 3);
	assert_int_equal(atomic_load(&s->counters.requests_bad), 0);
	scorer_free(s);
}

static void test_refusals(void **state)
{
	struct scorer *s = scorer_ab(4);
	char big[MOVEREQ_BODY_MAX + 64];

	(void)state;
	post_move(s, "u0", "a", "b", 1000, 60, 200, NULL);

	post(s, "{\"namespace\":", 13, 400, NULL);
	assert_int_equal(refused(s, REGISTRY_MOVE_MALFORMED), 1);

	memset(big, ' ', sizeof(big));
	post(s, big, sizeof(big), 413, NULL);
	assert_int_equal(refused(s, REGISTRY_MOVE_TOO_LARGE), 1);
	movesroute_too_large(s);	/* refused by the server before reading it */
	assert_int_equal(refused(s, REGISTRY_MOVE_TOO_LARGE), 2);

	post_move(s, "u1", "a", "b", 1000, 0, 400, "holdSeconds");
	post_move(s, "u1", "a", "b", 1000, MOVEREQ_HOLD_MAX_S + 1, 400, "holdSeconds");
	assert_int_equal(refused(s, REGISTRY_MOVE_HOLD), 2);

	post_move(s, "u1", "zz", "b", 1000, 60, 400,
		  "unknown node zz (from): the scorer has no report from it");
	post_move(s, "u1", "a", "zz", 1000, 60, 400,
		  "unknown node zz (to): the scorer has no report from it");
	assert_int_equal(refused(s, REGISTRY_MOVE_UNKNOWN_NODE), 2);

	post_move(s, "u1", "a", "a", 1000, 60, 400, "from and to are the same node a");
	assert_int_equal(refused(s, REGISTRY_MOVE_SAME_NODE), 1);

	/* 100 links of 125,000,000 B/s: 12,500,000,000 B/s at most. */
	post_move(s, "u1", "a", "b", 12500000001ULL, 60, 400,
		  "rxBytesPerSecond 12500000001 B/s is over 100 x the link of a and b "
		  "(125000000 B/s)");
	post_move(s, "u1", "a", "b", TRAFFIC_MAX_BYTES_PER_SECOND + 1, 60, 400,
		  "rxBytesPerSecond");
	assert_int_equal(refused(s, REGISTRY_MOVE_ABSURD_RATE), 2);
	post_move(s, "u1", "a", "b", 12500000000ULL, 60, 200, NULL);	/* at the limit */

	/* Nothing refused changed the table: u0 and the last u1. */
	assert_int_equal(list(s, NULL), 2);
	assert_int_equal(atomic_load(&s->counters.moves_accepted), 2);
	assert_int_equal(atomic_load(&s->counters.requests_bad), 9);	/* each refused post */
	scorer_free(s);
}

static void test_full_and_off(void **state)
{
	struct scorer *s = scorer_ab(2);

	(void)state;
	post_move(s, "u1", "a", "b", 1000, 60, 200, NULL);
	post_move(s, "u2", "a", "b", 1000, 60, 200, NULL);
	post_move(s, "u3", "a", "b", 1000, 60, 503,
		  "the move table is full: 2 moves held, its limit (--moves-max)");
	assert_int_equal(refused(s, REGISTRY_MOVE_FULL), 1);
	assert_int_equal(atomic_load(&s->counters.requests_bad), 0);	/* not the caller's fault */
	post_move(s, "u1", "a", "b", 1000, 60, 200, NULL);	/* a pod already held still moves */
	fake_now += 61 * NS_PER_SEC;	/* both expire: room again */
	post_move(s, "u3", "a", "b", 1000, 60, 200, NULL);
	assert_int_equal(list(s, "\"uid\":\"u3\""), 1);
	scorer_free(s);

	s = scorer_ab(0);
	post_move(s, "u1", "a", "b", 1000, 60, 503, "moves are off in this scorer");
	assert_int_equal(list(s, "{\"moves\":[]}"), 0);
	scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_list_replace),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_full_and_off),
	};
	return cmocka_run_group_tests_name("movesroute", tests, NULL, NULL);
}
