/* The rebalancer's moves in the extender's answers (scorer/serve/extender.c
 * with scorer/pods/moves.c):
 *  - prioritize: a pod of the moved workload scores 0 on the node held for
 *    it; a pod of another workload scores that node as before and sees the
 *    destination's reservation; the moved workload's own pods do not see
 *    their own reservation;
 *  - filter: the held node is left out for the workload's pods, with the
 *    hold's reason in FailedNodes, while another node passes; never when
 *    it is the only node that passes (the fit rule leaving out the others)
 *    or the only node asked about; another workload keeps it; an expired
 *    hold holds nothing. */
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
#include "common/json.h"
#include "scorer/pods/moves.h"
#include "scorer/scorer.h"
#include "scorer/serve/extender.h"
#include "scorer/serve/reply.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define LINK_BPS 1000000000ULL		/* 125,000,000 B/s */

/* a idle, b at 40% in, c at 60% in; a move of shop/Deployment/web from
 * a to b reserving 30 MB/s in, held 300 s. */
static struct scorer *scorer_with_move(uint64_t b_rx, uint64_t c_rx)
{
	struct scorer *s = fake_scorer_new(8, START_NS, STALE_NS);
	struct report a = fake_report("a", 0, 0, LINK_BPS);
	struct report b = fake_report("b", b_rx, 0, LINK_BPS);
	struct report c = fake_report("c", c_rx, 0, LINK_BPS);
	struct movereq rq = { .ns = "shop", .pod = "web-abc12-x", .uid = "moved",
				    .workload = "shop/Deployment/web", .from = "a", .to = "b",
				    .rx_bytes_per_second = 30000000, .hold_s = 300 };

	assert_non_null(s);
	s->fit_filter = true;
	s->view.moves = moves_create(8);
	assert_non_null(s->view.moves);
	assert_int_equal(table_apply(s->view.table, &a, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &b, fake_now), TABLE_APPLIED);
	assert_int_equal(table_apply(s->view.table, &c, fake_now), TABLE_APPLIED);
	assert_int_equal(moves_put(s->view.moves, &rq, fake_now), 0);
	return s;
}

static void scorer_free(struct scorer *s)
{
	moves_destroy(s->view.moves);
	fake_scorer_free(s);
}

/* A request for pod uid of Deployment deploy in shop (NULL: a bare pod)
 * declaring ingress (NULL: nothing), over names (a JSON list's inside). */
static size_t body_of(char *body, size_t cap, const char *uid, const char *deploy,
		      const char *ingress, const char *names)
{
	char owner[256] = "", ann[128] = "";
	int len;

	if (deploy)
		snprintf(owner, sizeof(owner), ",\"labels\":{\"pod-template-hash\":\"abc12\"},"
			 "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"%s-abc12\","
			 "\"uid\":\"rs\",\"controller\":true}]", deploy);
	if (ingress)
		snprintf(ann, sizeof(ann), ",\"annotations\":{\"kubernetes.io/ingress-bandwidth\":"
			 "\"%s\"}", ingress);
	len = snprintf(body, cap, "{\"Pod\":{\"metadata\":{\"name\":\"%s\",\"namespace\":\"shop\","
		       "\"uid\":\"%s\"%s%s}},\"NodeNames\":[%s]}", uid, uid, owner, ann, names);
	assert_true(len > 0 && (size_t)len < cap);
	return (size_t)len;
}

/* Prioritize's scores for a, b, c (a node left out: 0). */
static void scores(struct scorer *s, const char *uid, const char *deploy, int out[3])
{
	char body[1024], err[128];
	size_t len = body_of(body, sizeof(body), uid, deploy, NULL, "\"a\",\"b\",\"c\"");
	struct json j = { 0 };
	struct reply r;

	ext_prioritize(s, body, len, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_parse(&j, r.body, r.len, 4096, err, sizeof(err)), 0);
	out[0] = out[1] = out[2] = 0;
	for (int m = 0, o = 1; m < j.t[0].size; m++, o = json_skip(&j, o)) {
		size_t hl;
		const char *host = json_text(&j, json_member(&j, o, "Host", false), &hl);
		const char *sc = json_text(&j, json_member(&j, o, "Score", false), &hl);

		out[host[0] - 'a'] = atoi(sc);
	}
	json_free(&j);
	free(r.body);
}

static void test_prioritize_hold(void **state)
{
	struct scorer *s = scorer_with_move(50000000, 75000000);
	int web[3], other[3], before[3];

	(void)state;
	scores(s, "w1", "web", web);
	scores(s, "o1", "db", other);
	/* Held: the idle node scores 0 for web alone. */
	assert_int_equal(web[0], 0);
	assert_int_equal(other[0], 10);
	/* web does not see its own reservation on b; db does. */
	assert_true(other[1] < web[1]);
	/* The hold ended: a is a home for web again, and the reservation
	 * is gone for db. */
	fake_now += 300 * NS_PER_SEC;
	/* Fresh reports: the old ones are stale by now. */
	{
		struct report a = fake_report("a", 0, 0, LINK_BPS);
		struct report b = fake_report("b", 50000000, 0, LINK_BPS);
		struct report c = fake_report("c", 75000000, 0, LINK_BPS);

		table_apply(s->view.table, &a, fake_now);
		table_apply(s->view.table, &b, fake_now);
		table_apply(s->view.table, &c, fake_now);
	}
	scores(s, "w2", "web", before);
	assert_int_equal(before[0], 10);
	assert_int_equal(before[1], web[1]);
	scores(s, "o2", "db", before);
	assert_true(before[1] > other[1]);
	scorer_free(s);
}

/* Filter's kept nodes as a bit set (a 1, b 2, c 4); the reason given to
 * a into why (may be NULL). */
static unsigned filter(struct scorer *s, const char *uid, const char *deploy, const char *ingress,
		       const char *names, char *why, size_t cap)
{
	char body[1024], err[128];
	size_t len = body_of(body, sizeof(body), uid, deploy, ingress, names), nl;
	struct json j = { 0 };
	struct reply r;
	unsigned kept = 0;
	int list, failed, a;

	ext_filter(s, body, len, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_parse(&j, r.body, r.len, 4096, err, sizeof(err)), 0);
	list = json_member(&j, 0, "NodeNames", false);
	for (int m = 0; m < j.t[list].size; m++)
		kept |= 1u << (json_text(&j, json_element(&j, list, m), &nl)[0] - 'a');
	failed = json_member(&j, 0, "FailedNodes", false);
	a = json_member(&j, failed, "a", false);
	if (why)
		snprintf(why, cap, "%s", "");
	if (why && a >= 0) {
		const char *t = json_text(&j, a, &nl);

		snprintf(why, cap, "%.*s", (int)nl, t);
	}
	json_free(&j);
	free(r.body);
	return kept;
}

static void test_filter_hold(void **state)
{
	struct scorer *s = scorer_with_move(50000000, 75000000);
	char why[256];

	(void)state;
	/* web, declaring 80 Mb/s (10 MB/s): b and c have room, a is held. */
	assert_int_equal(filter(s, "w1", "web", "80M", "\"a\",\"b\",\"c\"", why, sizeof(why)), 6u);
	assert_string_equal(why, "netsched: a is being relieved of web: held for 300 s by the "
				 "rebalancer");
	/* web of no known demand: the fit rule is off, the hold is not. */
	assert_int_equal(filter(s, "w2", "web", NULL, "\"a\",\"b\",\"c\"", why, sizeof(why)), 6u);
	/* Another workload keeps a. */
	assert_int_equal(filter(s, "o1", "db", "80M", "\"a\",\"b\",\"c\"", why, sizeof(why)), 7u);
	assert_string_equal(why, "");
	/* a alone asked about: kept. */
	assert_int_equal(filter(s, "w3", "web", "80M", "\"a\"", why, sizeof(why)), 1u);
	/* The hold ends: a kept. */
	fake_now += 301 * NS_PER_SEC;
	{
		struct report a = fake_report("a", 0, 0, LINK_BPS);
		struct report b = fake_report("b", 50000000, 0, LINK_BPS);
		struct report c = fake_report("c", 75000000, 0, LINK_BPS);

		table_apply(s->view.table, &a, fake_now);
		table_apply(s->view.table, &b, fake_now);
		table_apply(s->view.table, &c, fake_now);
	}
	assert_int_equal(filter(s, "w4", "web", "80M", "\"a\",\"b\",\"c\"", why, sizeof(why)), 7u);
	scorer_free(s);
}

static void test_filter_only_fitting_node(void **state)
{
	/* b at 110 MB/s, c at 120 of 125: a web pod of 200 Mb/s (25 MB/s)
	 * fits a alone. The fit rule leaves b and c out; the hold must not
	 * leave a out too. */
	struct scorer *s = scorer_with_move(110000000, 120000000);
	char why[256];

	(void)state;
	assert_int_equal(filter(s, "w1", "web", "200M", "\"a\",\"b\",\"c\"", why, sizeof(why)), 1u);
	assert_string_equal(why, "");
	/* A pod that fits b too: a is left out again. */
	assert_int_equal(filter(s, "w2", "web", "40M", "\"a\",\"b\",\"c\"", why, sizeof(why)) & 1u, 0u);
	scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prioritize_hold),
		cmocka_unit_test(test_filter_hold),
		cmocka_unit_test(test_filter_only_fitting_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
