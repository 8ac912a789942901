/* In-flight pods through the extender verbs (scorer/serve/extender.c with
 * scorer/pods/inflight.c): a burst of pods through prioritize spreads instead of
 * piling onto the quietest node; declared bandwidth reserves room in the
 * filter, so ten pods asking 30M do not all pass a node with 50M free; a
 * retried pod is not judged against its own assumption; /v1/nodes and
 * /metrics show it all. The "scheduler" is fake_scheduler.h's: the best
 * score, then among ties the node with the fewest pods, then the first. */
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
#include "scorer/serve/extender.h"
#include "scorer/pods/inflight.h"
#include "common/json.h"
#include "scorer/serve/metrics.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "scorer/serve/status.h"
#include "scorer/nodes/view.h"
#include "tests/unit/fake_scheduler.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define MBIT (1000000ULL / 8)	/* bytes per second */
#define NODES 4

static const char *const names[NODES] = { "a", "b", "c", "d" };

/* estimate: the fallback weight (bytes per second; 0: the measured
 * average, none here); doubt_pct: --inflight-penalty. */
static struct scorer *scorer_with(uint64_t estimate, unsigned doubt_pct, uint64_t link_bps,
				  const uint64_t rx[NODES])
{
	struct scorer *s = fake_scorer_new(16, START_NS, STALE_NS);
	struct inflight_config ic = {
		.max_pods = 64,
		.max_nodes = 16,
		.hold_ns = 60 * NS_PER_SEC,
		.fade_ns = 60 * NS_PER_SEC,
		.expire_ns = 30 * NS_PER_SEC,
	};

	assert_non_null(s);
	s->view.inflight = inflight_create(&ic);
	assert_non_null(s->view.inflight);
	s->filter.bandwidth = true;
	s->view.weights.cfg.estimate_bytes_per_second = estimate;
	s->view.weights.cfg.doubt_pct = doubt_pct;
	for (size_t i = 0; i < NODES; i++) {
		struct report r = fake_report(names[i], rx[i], 0, link_bps);

		assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	}
	view_reference_refresh(&s->view, fake_now);
	return s;
}

static void scorer_free(struct scorer *s)
{
	inflight_destroy(s->view.inflight);
	fake_scorer_free(s);
}

/* A names-mode request for pod "default/<uid>" asking ingress (NULL: no
 * annotation) about nodes[0..n). */
static size_t request(char *buf, size_t cap, const char *uid, const char *ingress,
		      const char *const *nodes, size_t n)
{
	size_t k = 0;

	k += (size_t)snprintf(buf + k, cap - k,
			      "{\"Pod\":{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
			      "\"uid\":\"%s\"", uid, uid);
	if (ingress)
		k += (size_t)snprintf(buf + k, cap - k, ",\"annotations\":{\"kubernetes.io/"
				      "ingress-bandwidth\":\"%s\"}", ingress);
	k += (size_t)snprintf(buf + k, cap - k, "}},\"NodeNames\":[");
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s\"%s\"", i ? "," : "", nodes[i]);
	k += (size_t)snprintf(buf + k, cap - k, "]}");
	assert_true(k < cap);
	return k;
}

static int node_index(const char *p, size_t len)
{
	for (int i = 0; i < NODES; i++)
		if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0)
			return i;
	fail_msg("unknown node %.*s in a reply", (int)len, p);
	return -1;
}

/* What podweight.h makes of a pod declaring 30M in (3.75 MB/s). */
static const struct inflight_pod declared_30m = { 3750000, 0, 3750000, 0, false, true, NULL,
						     INFLIGHT_GUESSED };

static unsigned placed[NODES];	/* pods per node so far, for the tie-break */

/* Prioritize: the index of the node the scheduler takes (see the top). */
static int prioritize(struct scorer *s, const char *uid, const char *ingress,
		      const char *const *nodes, size_t n)
{
	char body[1024];
	size_t len = request(body, sizeof(body), uid, ingress, nodes, n);
	struct reply out;

	unsigned sub[NODES];
	int pick;

	/* The scheduler chooses among the nodes it asked about. */
	assert_true(n <= NODES);
	for (size_t i = 0; i < n; i++)
		sub[i] = placed[node_index(nodes[i], strlen(nodes[i]))];
	ext_prioritize(s, body, len, &out);
	pick = fake_scheduler_pick(&out, nodes, n, sub, NULL);
	pick = node_index(nodes[pick], strlen(nodes[pick]));
	placed[pick]++;
	return pick;
}

/* Filter: which of nodes[0..n) pass, as a bit mask by node index. */
static unsigned filter(struct scorer *s, const char *uid, const char *ingress,
		       const char *const *nodes, size_t n)
{
	char body[1024], err[128];
	size_t len = request(body, sizeof(body), uid, ingress, nodes, n), nl;
	struct reply out;
	struct json j = { 0 };
	unsigned kept = 0;
	int list;

	ext_filter(s, body, len, &out);
	assert_int_equal(out.status, 200);
	assert_int_equal(json_parse(&j, out.body, out.len, 4096, err, sizeof(err)), 0);
	list = json_member(&j, 0, "NodeNames", false);
	assert_int_equal(json_type(&j, list), JSMN_ARRAY);
	for (int m = 0; m < j.t[list].size; m++) {
		const char *name = json_text(&j, json_element(&j, list, m), &nl);

		kept |= 1u << node_index(name, nl);
	}
	json_free(&j);
	free(out.body);
	return kept;
}

/* A burst of ten pods, one strictly quietest node, the relative policy on
 * 100 Mb/s links: without in-flight counting all ten go there; with it
 * (only the doubt: these pods declare nothing, nothing is learned or
 * measured, and each takes 10% of what its node's link has free) no node
 * gets more than three. (test_podweight.c has the burst at three
 * link speeds under the shipped policy.) */
static void test_inflight_burst_spreads(void **state)
{
	static const uint64_t rx[NODES] = { 0, 10 * MBIT, 20 * MBIT, 40 * MBIT };
	unsigned on[NODES] = { 0 }, without[NODES] = { 0 };
	struct scorer *s = scorer_with(0, 10, 100000000, rx);
	char uid[32];

	(void)state;
	memset(placed, 0, sizeof(placed));
	for (int p = 0; p < 10; p++) {
		snprintf(uid, sizeof(uid), "burst-%d", p);
		on[prioritize(s, uid, NULL, names, NODES)]++;
		fake_now += 2 * NS_PER_MS;
	}
	printf("burst of 10 with in-flight counting: a %u, b %u, c %u, d %u\n", on[0], on[1],
	       on[2], on[3]);
	for (int i = 0; i < NODES; i++)
		assert_true(on[i] <= 3);
	inflight_destroy(s->view.inflight);
	s->view.inflight = NULL;
	memset(placed, 0, sizeof(placed));
	for (int p = 0; p < 10; p++) {
		snprintf(uid, sizeof(uid), "plain-%d", p);
		without[prioritize(s, uid, NULL, names, NODES)]++;
	}
	assert_int_equal(without[0], 10);
	fake_scorer_free(s);
}

/* Ten pods asking 30M, 100M links: a has 50M free, b and c 40M, d 5M.
 * Each pod goes through filter then prioritize; the watch confirms where
 * it went. One pod lands on each of a, b, c; none on d; seven fit
 * nowhere. Without the reservation, all ten would pass a. */
static void test_inflight_reservation(void **state)
{
	static const uint64_t rx[NODES] = { 50 * MBIT, 60 * MBIT, 60 * MBIT, 95 * MBIT };
	struct scorer *s = scorer_with(0, 0, 100000000, rx);
	unsigned on[NODES] = { 0 }, nowhere = 0;
	char uid[32];

	(void)state;
	memset(placed, 0, sizeof(placed));
	assert_int_equal(filter(s, "first", "30M", names, NODES), 0x7);
	for (int p = 0; p < 10; p++) {
		const char *kept_names[NODES];
		unsigned kept;
		size_t n = 0;
		int best;

		snprintf(uid, sizeof(uid), "asks-%d", p);
		kept = filter(s, uid, "30M", names, NODES);
		for (int i = 0; i < NODES; i++)
			if (kept & (1u << i))
				kept_names[n++] = names[i];
		if (!n) {
			nowhere++;
			continue;
		}
		best = prioritize(s, uid, "30M", kept_names, n);
		/* The same pod retried: its own reservation does not fail it. */
		assert_int_equal(filter(s, uid, "30M", names, NODES) & (1u << best), 1u << best);
		on[best]++;
		assert_int_equal(inflight_bound(s->view.inflight, uid, strlen(uid), names[best], 1,
						&declared_30m, fake_now,
						fake_now), 0);
		fake_now += 2 * NS_PER_MS;
	}
	printf("ten pods asking 30M: a %u, b %u, c %u, d %u, nowhere %u\n", on[0], on[1], on[2],
	       on[3], nowhere);
	assert_int_equal(on[0], 1);
	assert_int_equal(on[1], 1);
	assert_int_equal(on[2], 1);
	assert_int_equal(on[3], 0);
	assert_int_equal(nowhere, 7);
	scorer_free(s);
}

/* Tied best nodes and no watch: each tied node reserves the whole declared
 * bandwidth, so even unconfirmed, no node passes more pods than fit. */
static void test_inflight_reservation_tied(void **state)
{
	static const uint64_t rx[NODES] = { 60 * MBIT, 60 * MBIT, 95 * MBIT, 95 * MBIT };
	struct scorer *s = scorer_with(0, 0, 100000000, rx);
	char uid[32];
	int best;

	(void)state;
	assert_int_equal(filter(s, "t-0", "30M", names, NODES), 0x3);
	best = prioritize(s, "t-0", "30M", names, 2);
	assert_int_equal(best, 0);
	/* a and b tied: both hold 30M for it until the watch says which. */
	for (int p = 1; p < 4; p++) {
		snprintf(uid, sizeof(uid), "t-%d", p);
		assert_int_equal(filter(s, uid, "30M", names, NODES), 0);
	}
	assert_int_equal(inflight_bound(s->view.inflight, "t-0", 3, "b", 1,
					&declared_30m, fake_now,
					fake_now), 0);
	assert_int_equal(filter(s, "t-4", "30M", names, NODES), 0x1);
	scorer_free(s);
}

/* One node passes the filter: kube-scheduler binds the pod there without
 * calling prioritize, so the filter counts it: the next pod asking 30M
 * finds the 50M node full. */
static void test_inflight_lone_node(void **state)
{
	static const uint64_t rx[NODES] = { 50 * MBIT, 95 * MBIT, 95 * MBIT, 95 * MBIT };
	struct scorer *s = scorer_with(0, 0, 100000000, rx);

	(void)state;
	assert_int_equal(filter(s, "lone-1", "30M", names, NODES), 0x1);
	assert_int_equal(filter(s, "lone-1", "30M", names, NODES), 0x1); /* retried: still fits */
	assert_int_equal(filter(s, "lone-2", "30M", names, NODES), 0);
	scorer_free(s);
}

/* One prioritize with a made-up pod declaring 400G on a chosen node (c),
 * 1 Gb/s links: the node is full at once, as for a real pod asking its
 * whole link; but the declaration counts only the node's link, so it fades
 * like a real pod's: half way through the fade c scores 5 and passes a pod
 * asking 100M (400G made it score 0 and fail the filter for the whole
 * fade, 125-130 s in all). */
static void test_inflight_made_up_pod(void **state)
{
	static const uint64_t rx[NODES] = { 0, 0, 0, 0 };
	static const char *const only_c[] = { "c" };
	struct scorer *s = scorer_with(0, 0, 1000000000, rx);
	unsigned kept;

	(void)state;
	s->view.policy = POLICY_UTILIZATION;
	memset(placed, 0, sizeof(placed));
	assert_int_equal(prioritize(s, "made-up", "400G", only_c, 1), 2);
	kept = filter(s, "real-1", "100M", names, NODES);
	assert_int_equal(kept, 0xb); /* a, b, d: c is full */
	fake_now += 60 * NS_PER_SEC + 30 * NS_PER_SEC;	/* hold, then half the fade */
	inflight_tick(s->view.inflight, fake_now, true);
	for (size_t i = 0; i < NODES; i++) {	/* the agents kept reporting */
		struct report r = fake_report(names[i], 0, 0, 1000000000);

		assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	}
	kept = filter(s, "real-2", "100M", names, NODES);
	assert_int_equal(kept, 0xf);
	{
		char body[1024];
		size_t len = request(body, sizeof(body), "real-3", NULL, names, NODES);
		struct reply out;

		ext_prioritize(s, body, len, &out);
		assert_int_equal(out.status, 200);
		assert_non_null(strstr(out.body, "{\"Host\":\"c\",\"Score\":5}"));
		free(out.body);
	}
	scorer_free(s);
}

/* /v1/nodes shows each node's in-flight pods and weight, and how much of
 * one its agent measured; /metrics counts the assumptions. */
static void test_inflight_visible(void **state)
{
	static const uint64_t rx[NODES] = { 0, 10 * MBIT, 20 * MBIT, 40 * MBIT };
	struct scorer *s = scorer_with(20 * MBIT, 0, 0, rx);
	struct reply out;

	(void)state;
	assert_int_equal(prioritize(s, "vis-1", NULL, names, NODES), 0);
	status_nodes(s, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(strstr(out.body, "{\"name\":\"a\",\"source\":\"agent\""));
	assert_non_null(strstr(out.body, "\"inflight\":{\"pods\":1.000,\"rxBytesPerSecond\":2500000,"
				      "\"txBytesPerSecond\":2500000,\"reservedRxBytesPerSecond\":0,"
				      "\"reservedTxBytesPerSecond\":0,\"unknownPods\":1.000,"
				      "\"doubtRxBytesPerSecond\":0,\"doubtTxBytesPerSecond\":0,"
				      "\"list\":[{\"pod\":\"default/vis-1\",\"weighs\":\"guessed\","
				      "\"bound\":false,\"share\":1.000}]}"));
	assert_non_null(strstr(out.body, "\"inflight\":{\"pods\":0.000,\"rxBytesPerSecond\":0,"
				      "\"txBytesPerSecond\":0,\"reservedRxBytesPerSecond\":0,"
				      "\"reservedTxBytesPerSecond\":0,\"unknownPods\":0.000,"
				      "\"doubtRxBytesPerSecond\":0,\"doubtTxBytesPerSecond\":0,"
				      "\"list\":[]}"));
	free(out.body);
	assert_int_equal(inflight_bound(s->view.inflight, "vis-1", 5, "b", 1,
					&(struct inflight_pod){ 0 }, fake_now, fake_now), 0);
	metrics_render(s, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_total{event=\"assumed\"} 1\n"));
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_total{event=\"moved\"} 1\n"));
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_total{event=\"confirmed\"} 0\n"));
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_pods 1\n"));
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_cap_hits_total 0\n"));
	free(out.body);
	/* Its agent measured it for a quarter of the window: it shows, and
	 * weighs three quarters; measured whole, it is counted. */
	assert_int_equal(inflight_measured(s->view.inflight, "b", 1, 10000,
					   &(struct inflight_measure){ "vis-1", 5, 2500 }, 1, fake_now),
			 1);
	inflight_tick(s->view.inflight, fake_now, true);
	status_nodes(s, &out);
	assert_non_null(strstr(out.body, "\"list\":[{\"pod\":\"default/vis-1\",\"weighs\":\"guessed\","
				      "\"bound\":true,\"share\":0.750,\"measuredMs\":2500,"
				      "\"windowMs\":10000}]"));
	free(out.body);
	assert_int_equal(inflight_measured(s->view.inflight, "b", 1, 10000,
					   &(struct inflight_measure){ "vis-1", 5, 10000 }, 1, fake_now),
			 1);
	metrics_render(s, &out);
	assert_non_null(strstr(out.body, "netsched_scorer_inflight_total{event=\"measured\"} 1\n"));
	free(out.body);
	scorer_free(s);
}

/* The scheduler's JSON encoder may escape what the apiserver's did not:
 * the UID prioritize assumed under, escaped, is the one the watch confirms,
 * not an unknown pod observed beside a never-confirmed assumption. */
static void test_inflight_escaped_uid(void **state)
{
	static const uint64_t rx[NODES] = { 0, 10 * MBIT, 20 * MBIT, 40 * MBIT };
	struct scorer *s = scorer_with(0, 10, 0, rx);
	struct inflight_stats st;
	int best;

	(void)state;
	best = prioritize(s, "esc\\u002d1", NULL, names, NODES);
	assert_int_equal(inflight_bound(s->view.inflight, "esc-1", 5, names[best], 1,
					&(struct inflight_pod){ 0 }, fake_now, fake_now), 0);
	inflight_stats(s->view.inflight, &st);
	assert_int_equal(st.assumed, 1);
	assert_int_equal(st.confirmed, 1);
	assert_int_equal(st.observed, 0);
	assert_int_equal(st.pods, 1);
	/* Retried under the same escaped UID: judged without its own share. */
	assert_int_equal(prioritize(s, "esc\\u002d1", NULL, names, NODES), best);
	scorer_free(s);
}

/* A request without a pod UID (hand-made) is answered and not counted. */
static void test_inflight_no_uid(void **state)
{
	static const uint64_t rx[NODES] = { 0, 10 * MBIT, 20 * MBIT, 40 * MBIT };
	struct scorer *s = scorer_with(0, 10, 0, rx);
	const char body[] = "{\"Pod\":{\"metadata\":{\"name\":\"x\"}},\"NodeNames\":[\"a\",\"b\"]}";
	struct inflight_stats st;
	struct reply out;

	(void)state;
	ext_prioritize(s, body, sizeof(body) - 1, &out);
	assert_int_equal(out.status, 200);
	free(out.body);
	inflight_stats(s->view.inflight, &st);
	assert_int_equal(st.assumed, 0);
	assert_int_equal(st.pods, 0);
	scorer_free(s);
}

/* A request of more names than one chunk of lookups (view.h's
 * VIEW_BATCH), with in-flight pods on the nodes either side of each chunk
 * boundary: every node is scored as a lookup of its own would score it,
 * and filtered by its own reservations, the asking pod's share left out. */
#define CHUNKS_N (2 * VIEW_BATCH + 9)

static void test_inflight_chunks(void **state)
{
	const size_t b = VIEW_BATCH, own_on[] = { b - 1, b }, other_on[] = { b, 2 * b - 1, 2 * b,
									     CHUNKS_N - 1 };
	const struct inflight_config ic = { .max_pods = 8, .max_nodes = CHUNKS_N,
					    .hold_ns = 60 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
					    .expire_ns = 30 * NS_PER_SEC };
	static char names_buf[CHUNKS_N][8];
	static struct policy_node want[CHUNKS_N];
	const char *many[CHUNKS_N];
	struct inflight_name on[4];
	struct scorer *s = fake_scorer_new(CHUNKS_N, START_NS, STALE_NS);
	size_t cap = 256 + CHUNKS_N * 12, len, nl;
	char *body = malloc(cap), err[128];
	struct json j = { 0 };
	struct reply out;
	int list;

	(void)state;
	assert_non_null(s);
	assert_non_null(body);
	s->view.inflight = inflight_create(&ic);
	assert_non_null(s->view.inflight);
	s->filter.bandwidth = true;
	/* 100M links; the nodes with pods in flight at 50M, so a pod's 30M
	 * reservation leaves less than another 30M; the rest below 40M; every
	 * 13th never reported (no data: never filtered). */
	for (size_t i = 0; i < CHUNKS_N; i++) {
		snprintf(names_buf[i], sizeof(names_buf[i]), "n-%03zu", i);
		many[i] = names_buf[i];
	}
	for (size_t i = 0; i < CHUNKS_N; i++) {
		bool busy = i == b - 1 || i == b || i == 2 * b - 1 || i == 2 * b || i == CHUNKS_N - 1;
		struct report r = fake_report(many[i], busy ? 50 * MBIT : (i * 7 % 40) * MBIT, 0,
					      100000000);

		if (i % 13 != 5)
			assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	}
	for (size_t k = 0; k < 2; k++)
		on[k] = (struct inflight_name){ many[own_on[k]], strlen(many[own_on[k]]), 0 };
	assert_int_equal(inflight_assume(s->view.inflight, "own", 3, &declared_30m, on, 2, fake_now), 0);
	for (size_t k = 0; k < 4; k++)
		on[k] = (struct inflight_name){ many[other_on[k]], strlen(many[other_on[k]]), 0 };
	assert_int_equal(inflight_assume(s->view.inflight, "other", 5, &declared_30m, on, 4, fake_now), 0);

	len = request(body, cap, "own", "30M", many, CHUNKS_N);
	ext_filter(s, body, len, &out);
	assert_int_equal(out.status, 200);
	assert_int_equal(json_parse(&j, out.body, out.len, 4 * CHUNKS_N, err, sizeof(err)), 0);
	list = json_member(&j, 0, "NodeNames", false);
	assert_int_equal(j.t[list].size, CHUNKS_N - 4);
	for (int m = 0, i = 0; m < j.t[list].size; m++, i++) {
		const char *name = json_text(&j, json_element(&j, list, m), &nl);

		/* Left out: other's nodes; its own (b - 1) kept. */
		while ((size_t)i == b || (size_t)i == 2 * b - 1 || (size_t)i == 2 * b)
			i++;
		if (nl != strlen(many[i]) || memcmp(name, many[i], nl))
			fail_msg("filter kept %.*s where %s was expected", (int)nl, name, many[i]);
	}
	json_free(&j);
	free(out.body);

	/* Prioritize: what each node's own lookup scores (before the call
	 * records the pod anew). */
	for (size_t i = 0; i < CHUNKS_N; i++) {
		struct view_node v;

		view_get(&s->view, many[i], strlen(many[i]), "own", 3, fake_now, &v);
		view_policy_input(&s->view, &v, &want[i]);
	}
	policy_score(s->view.policy, want, CHUNKS_N);
	ext_prioritize(s, body, len, &out);
	assert_int_equal(out.status, 200);
	assert_int_equal(json_parse(&j, out.body, out.len, 8 * CHUNKS_N, err, sizeof(err)), 0);
	assert_int_equal(j.t[0].size, CHUNKS_N);
	for (size_t i = 0, el = 1; i < CHUNKS_N; i++, el = (size_t)json_skip(&j, (int)el)) {
		const char *host = json_text(&j, json_member(&j, (int)el, "Host", false), &nl);
		int score = atoi(json_text(&j, json_member(&j, (int)el, "Score", false), &nl));

		assert_memory_equal(host, many[i], strlen(many[i]));
		if (score != want[i].score)
			fail_msg("%s scored %d in the request, %d looked up alone", many[i], score,
				 want[i].score);
	}
	json_free(&j);
	free(out.body);
	free(body);
	scorer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight_burst_spreads),
		cmocka_unit_test(test_inflight_reservation),
		cmocka_unit_test(test_inflight_reservation_tied),
		cmocka_unit_test(test_inflight_lone_node),
		cmocka_unit_test(test_inflight_made_up_pod),
		cmocka_unit_test(test_inflight_visible),
		cmocka_unit_test(test_inflight_escaped_uid),
		cmocka_unit_test(test_inflight_no_uid),
		cmocka_unit_test(test_inflight_chunks),
	};
	return cmocka_run_group_tests_name("extender_inflight", tests, NULL, NULL);
}
