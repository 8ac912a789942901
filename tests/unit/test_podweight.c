/* What a pod in flight weighs (scorer/pods/podweight.c) and what that does to
 * a burst through prioritize (scorer/serve/extender.c):
 *  - the order: declared, else learned, else the fallback (the measured
 *    average, or --inflight-estimate), and what the filter holds;
 *  - the doubt unknown pods bring: a share of the free link, compounding;
 *  - the burst: six nodes at 90, 90, 40, 20, 20 and 5 percent of
 *    their link, the shipped --policy pressure, ten pods that declare
 *    nothing prioritized one after another, at 100 Mb/s, 1 Gb/s and
 *    10 Gb/s: cold (nothing learned, nothing running) at most three on a
 *    node and none on the 90% ones; a learned heavy workload never pushes
 *    a node over its link while another has room; a learned light one
 *    packs; thirty pods one second apart, each confirmed by the watch,
 *    never make a quiet node look as busy as a 90% one.
 * The "scheduler" is fake_scheduler.h's. */
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
#include "scorer/pods/podweight.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "scorer/nodes/view.h"
#include "scorer/pods/workload.h"
#include "tests/unit/fake_scheduler.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define NODES 6

static const char *const names[NODES] = { "busy-1", "busy-2", "mid", "low-1", "low-2", "idle" };
static const unsigned busy_pct[NODES] = { 90, 90, 40, 20, 20, 5 };

/* ------------------------------------------------------- the weight order */

static struct workload *learned_model(const char *deploy, uint64_t rx, uint64_t tx)
{
	struct workload_config wc = { .max_workloads = 8, .half_life_ns = 600 * NS_PER_SEC };
	struct workload *w = workload_create(&wc);
	struct workload_key k = { "shop", "Deployment", "" };
	int32_t id;

	assert_non_null(w);
	snprintf(k.name, sizeof(k.name), "%s", deploy);
	id = workload_ref(w, &k, START_NS);
	assert_true(id >= 0);
	workload_sample(w, id, 1, rx, tx, START_NS);
	workload_tick(w, START_NS);
	return w;
}

struct order_case {
	const char *name;
	uint64_t ingress_bps, egress_bps;	/* declared */
	bool replica;				/* of the learned Deployment "web" */
	uint64_t estimate;			/* --inflight-estimate, bytes/s */
	bool learned_filter;
	uint64_t rx, tx, reserve_rx, reserve_tx;
	bool unknown_rx, unknown_tx;
	enum podweight_source rx_from, tx_from;
	uint64_t filter_in, filter_out;		/* what the filter holds it to, b/s */
};

/* "web" has learned 1000 B/s in, 200 out; nothing is measured. */
static const struct order_case order_cases[] = {
	{ "declared both ways: the annotations", 80000, 16000, true, 0, false,
	  10000, 2000, 10000, 2000, false, false, PODWEIGHT_DECLARED, PODWEIGHT_DECLARED,
	  80000, 16000 },
	{ "declared in, learned out", 80000, 0, true, 0, false,
	  10000, 200, 10000, 0, false, false, PODWEIGHT_DECLARED, PODWEIGHT_LEARNED, 80000, 0 },
	{ "learned: its workload's demand, held only with --learned-filter", 0, 0, true, 0, false,
	  1000, 200, 0, 0, false, false, PODWEIGHT_LEARNED, PODWEIGHT_LEARNED, 0, 0 },
	{ "learned, --learned-filter: held", 0, 0, true, 0, true,
	  1000, 200, 1000, 200, false, false, PODWEIGHT_LEARNED, PODWEIGHT_LEARNED, 8000, 1600 },
	{ "declared beats learned, also in the filter", 4000, 0, true, 0, true,
	  500, 200, 500, 200, false, false, PODWEIGHT_DECLARED, PODWEIGHT_LEARNED, 4000, 1600 },
	{ "nothing known: the fallback, in doubt", 0, 0, false, 0, true,
	  0, 0, 0, 0, true, true, PODWEIGHT_FALLBACK, PODWEIGHT_FALLBACK, 0, 0 },
	{ "nothing known, an operator's estimate", 0, 0, false, 3000, false,
	  3000, 3000, 0, 0, true, true, PODWEIGHT_FALLBACK, PODWEIGHT_FALLBACK, 0, 0 },
	{ "declared out, unknown in", 0, 24000, false, 0, false,
	  0, 3000, 0, 3000, true, false, PODWEIGHT_FALLBACK, PODWEIGHT_DECLARED, 0, 24000 },
};

static void test_podweight_order(void **state)
{
	struct workload *w = learned_model("web", 1000, 200);
	struct kubepod_owner rs = { .kind = { "ReplicaSet", 10 }, .name = { "web-abc12", 9 },
				    .template_hash = { "abc12", 5 } };
	struct kubepod_owner other = { .kind = { "ReplicaSet", 10 }, .name = { "api-abc12", 9 },
				       .template_hash = { "abc12", 5 } };
	struct kubepod_str ns = { "shop", 4 }, name = { "p", 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(order_cases) / sizeof(order_cases[0]); i++) {
		const struct order_case *c = &order_cases[i];
		struct podweight pw = { .cfg = { 10, c->estimate, c->learned_filter }, .workloads = w };
		struct podweight_pod pod = { c->ingress_bps, c->egress_bps, &ns, &name,
					     c->replica ? &rs : &other, "shop/p" };
		enum podweight_source rf, tf;
		struct inflight_pod out;
		struct filter_pod fp;

		podweight_of(&pw, &pod, &out, &rf, &tf);
		podweight_filter(&pw, &pod, &fp);
		if (out.rx_bytes_per_second != c->rx || out.tx_bytes_per_second != c->tx ||
		    out.reserve_rx_bytes_per_second != c->reserve_rx ||
		    out.reserve_tx_bytes_per_second != c->reserve_tx ||
		    out.unknown_rx != c->unknown_rx || out.unknown_tx != c->unknown_tx ||
		    rf != c->rx_from || tf != c->tx_from)
			fail_msg("%s: weighs %llu/%llu, holds %llu/%llu, unknown %d/%d, from %s/%s",
				 c->name, (unsigned long long)out.rx_bytes_per_second,
				 (unsigned long long)out.tx_bytes_per_second,
				 (unsigned long long)out.reserve_rx_bytes_per_second,
				 (unsigned long long)out.reserve_tx_bytes_per_second, out.unknown_rx,
				 out.unknown_tx, podweight_source_name(rf), podweight_source_name(tf));
		if (fp.ingress_bps != c->filter_in || fp.egress_bps != c->filter_out ||
		    fp.learned_ingress != (c->learned_filter && rf == PODWEIGHT_LEARNED) ||
		    fp.learned_egress != (c->learned_filter && tf == PODWEIGHT_LEARNED))
			fail_msg("%s: filter holds %llu/%llu (learned %d/%d)", c->name,
				 (unsigned long long)fp.ingress_bps, (unsigned long long)fp.egress_bps,
				 fp.learned_ingress, fp.learned_egress);
	}
	/* What the weight rests on, for /v1/nodes: a guess in any direction
	 * makes it guessed, else a learned one learned. */
	{
		struct podweight pw = { .cfg = { 10, 0, false }, .workloads = w };
		struct podweight_pod both = { 8000, 8000, &ns, &name, &rs, NULL };
		struct podweight_pod half = { 8000, 0, &ns, &name, &rs, NULL };
		struct podweight_pod none = { 8000, 0, &ns, &name, &other, NULL };
		struct inflight_pod out;

		podweight_of(&pw, &both, &out, NULL, NULL);
		assert_int_equal(out.basis, INFLIGHT_DECLARED);
		podweight_of(&pw, &half, &out, NULL, NULL);
		assert_int_equal(out.basis, INFLIGHT_LEARNED);
		podweight_of(&pw, &none, &out, NULL, NULL);
		assert_int_equal(out.basis, INFLIGHT_GUESSED);
		assert_string_equal(inflight_basis_name(INFLIGHT_GUESSED), "guessed");
	}
	/* Without any source, only declared figures weigh. */
	{
		struct podweight_pod pod = { 8000, 0, NULL, NULL, NULL, NULL };
		struct inflight_pod out;

		podweight_of(NULL, &pod, &out, NULL, NULL);
		assert_int_equal(out.rx_bytes_per_second, 1000);
		assert_true(out.unknown_tx);
	}
	workload_destroy(w);
}

/* -------------------------------------------------------------- the doubt */

struct doubt_case {
	const char *name;
	unsigned pct;
	uint64_t link, used;
	uint32_t milli;
	uint64_t want;
};

static const struct doubt_case doubt_cases[] = {
	{ "one pod: a tenth of what is free", 10, 1000000, 200000, 1000, 80000 },
	{ "two: compounding, 19 percent", 10, 1000000, 200000, 2000, 152000 },
	{ "half a pod (fading)", 10, 1000000, 0, 500, 51316 },
	{ "twenty-one pods leave a tenth", 10, 1000000, 0, 21000, 890581 },
	{ "no pods", 10, 1000000, 0, 0, 0 },
	{ "unknown link", 10, 0, 0, 1000, 0 },
	{ "full already", 10, 1000000, 1000000, 1000, 0 },
	{ "over the link", 10, 1000000, 2000000, 1000, 0 },
	{ "doubt off", 0, 1000000, 0, 5000, 0 },
	{ "all of it", 100, 1000000, 250000, 1000, 750000 },
	{ "no overflow", 10, UINT64_MAX, 0, 1000, UINT64_MAX / 10 - 1024 },
};

static void test_podweight_doubt(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(doubt_cases) / sizeof(doubt_cases[0]); i++) {
		const struct doubt_case *c = &doubt_cases[i];
		uint64_t got = podweight_doubt(c->pct, c->link, c->used, c->milli);
		uint64_t tol = c->want / 100000 + 2; /* doubles */

		if (got + tol < c->want || got > c->want + tol)
			fail_msg("%s: %llu, want %llu", c->name, (unsigned long long)got,
				 (unsigned long long)c->want);
	}
}

/* ------------------------------------------------------------- the bursts */

static unsigned placed[NODES];

/* Every node reports again: the graded background, fresh. */
static void report_all(struct scorer *s, uint64_t link_bps)
{
	for (size_t i = 0; i < NODES; i++) {
		struct report r = fake_report(names[i], link_bps / 8 * busy_pct[i] / 100, 0, link_bps);

		assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	}
}

static struct scorer *cluster(uint64_t link_bps)
{
	struct scorer *s = fake_scorer_new(16, START_NS, STALE_NS);
	struct inflight_config ic = { .max_pods = 256, .max_nodes = 16,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };

	assert_non_null(s);
	s->view.policy = POLICY_PRESSURE;	/* as shipped in deploy/ */
	s->view.inflight = inflight_create(&ic);
	assert_non_null(s->view.inflight);
	s->view.weights.cfg.doubt_pct = 10;	/* --inflight-penalty's default */
	report_all(s, link_bps);
	view_reference_refresh(&s->view, fake_now);
	memset(placed, 0, sizeof(placed));
	return s;
}

static void cluster_free(struct scorer *s)
{
	inflight_destroy(s->view.inflight);
	workload_destroy(s->view.weights.workloads);
	fake_scorer_free(s);
}

/* Prioritize for pod uid, a replica of Deployment deploy (NULL: a bare
 * pod), over every node: the node the scheduler takes. */
static int prioritize(struct scorer *s, const char *uid, const char *deploy, int scores[NODES])
{
	char body[1024], owner[256] = "";
	struct reply out;
	size_t len;

	if (deploy)
		snprintf(owner, sizeof(owner), ",\"labels\":{\"pod-template-hash\":\"abc12\"},"
			 "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"%s-abc12\","
			 "\"uid\":\"rs\",\"controller\":true}]", deploy);
	len = (size_t)snprintf(body, sizeof(body), "{\"Pod\":{\"metadata\":{\"name\":\"%s\","
			       "\"namespace\":\"shop\",\"uid\":\"%s\"%s}},\"NodeNames\":[\"busy-1\","
			       "\"busy-2\",\"mid\",\"low-1\",\"low-2\",\"idle\"]}", uid, uid, owner);
	assert_true(len < sizeof(body));
	ext_prioritize(s, body, len, &out);
	return fake_scheduler_pick(&out, names, NODES, placed, scores);
}

/* Ten pods one after another, a few ms apart. A burst outruns the watch:
 * with lag < 0 nothing is confirmed (ties stay counted on every tied
 * node), else the watch confirms each pod lag pods after it was placed
 * (a binding and its event take a few pods' time). */
static void burst(struct scorer *s, const char *deploy, int lag, unsigned on[NODES])
{
	char uid[10][32];
	int went[10];

	memset(on, 0, NODES * sizeof(*on));
	for (int p = 0; p < 10; p++) {
		snprintf(uid[p], sizeof(uid[p]), "%s-%d", deploy ? deploy : "bare", p);
		went[p] = prioritize(s, uid[p], deploy, NULL);
		on[went[p]]++;
		fake_now += 3 * NS_PER_MS;
		if (lag >= 0 && p - lag >= 0) {
			struct inflight_entry *e;
			struct inflight_pod pod = { 0 };
			long n = inflight_list(s->view.inflight, &e);
			int c = p - lag;

			/* It weighs what it was assumed with. */
			for (long k = 0; k < n; k++)
				if (!strcmp(e[k].node, names[went[c]]) && strstr(e[k].label, uid[c])) {
					pod.rx_bytes_per_second = e[k].load.rx_bytes_per_second;
					pod.unknown_rx = e[k].load.unknown_rx_milli > 0;
				}
			free(e);
			assert_int_equal(inflight_bound(s->view.inflight, uid[c], strlen(uid[c]),
							names[went[c]], strlen(names[went[c]]), &pod,
							fake_now, fake_now), 0);
		}
	}
}

static const uint64_t links[] = { 100000000, 1000000000, 10000000000ULL };

static const char *speed(uint64_t link)
{
	return link == links[0] ? "100 Mb/s" : link == links[1] ? "1 Gb/s" : "10 Gb/s";
}

/* Cold: nothing learned, nothing running. At every link speed, at most
 * three pods a node and none on the 90% nodes. Without in-flight
 * counting, all ten go to the 5% node. */
static void test_podweight_burst_cold(void **state)
{
	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		struct scorer *s = cluster(links[l]);
		struct inflight *in;
		unsigned on[NODES];

		for (int lag = -1; lag <= 2; lag += 3) {
			inflight_tick(s->view.inflight, fake_now + 1000 * NS_PER_SEC, true); /* all gone */
			memset(placed, 0, sizeof(placed));
			burst(s, NULL, lag, on);
			printf("cold burst, %s, %s: %u %u %u %u %u %u\n", speed(links[l]),
			       lag < 0 ? "never confirmed" : "confirmed 2 pods later", on[0], on[1],
			       on[2], on[3], on[4], on[5]);
			for (int i = 0; i < NODES; i++)
				if (on[i] > 3 || (busy_pct[i] == 90 && on[i]))
					fail_msg("%s: %u pods on %s", speed(links[l]), on[i], names[i]);
		}
		in = s->view.inflight;
		s->view.inflight = NULL;
		memset(placed, 0, sizeof(placed));
		burst(s, NULL, -1, on);
		assert_int_equal(on[5], 10);
		s->view.inflight = in;
		cluster_free(s);
	}
}

/* Learned: "big" moves a fifth of a link per pod, "small" a hundredth.
 * Ten big ones never push a node over its link while another has room
 * for one; ten small ones pack (eight or more on the quietest node):
 * learned demand brings no doubt. */
static void test_podweight_burst_learned(void **state)
{
	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		uint64_t link = links[l] / 8;
		struct scorer *s = cluster(links[l]);
		unsigned on[NODES];
		uint64_t load[NODES];
		bool room = false, over = false;

		s->view.weights.workloads = learned_model("big", link / 5, 0);
		burst(s, "big", 2, on);
		printf("learned heavy burst, %s: %u %u %u %u %u %u\n", speed(links[l]), on[0], on[1],
		       on[2], on[3], on[4], on[5]);
		for (int i = 0; i < NODES; i++) {
			load[i] = link * busy_pct[i] / 100 + on[i] * (link / 5);
			over |= load[i] > link;
			room |= load[i] + link / 5 <= link;
		}
		if (over && room)
			fail_msg("%s: a node over its link while another has room", speed(links[l]));
		cluster_free(s);
		s = cluster(links[l]);
		s->view.weights.workloads = learned_model("small", link / 100, 0);
		burst(s, "small", 2, on);
		printf("learned light burst, %s: %u %u %u %u %u %u\n", speed(links[l]), on[0], on[1],
		       on[2], on[3], on[4], on[5]);
		assert_true(on[5] >= 8);
		cluster_free(s);
	}
}

/* Thirty pods one second apart that never move a byte, each confirmed by
 * the watch where it went (so no tie is counted twice): quiet nodes never
 * look as busy as the 90% ones, and no pod goes there. */
static void test_podweight_thirty_quiet(void **state)
{
	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		struct scorer *s = cluster(links[l]);
		unsigned on[NODES] = { 0 };
		int scores[NODES];
		char uid[32];

		for (int p = 0; p < 30; p++) {
			struct inflight_pod pod = { 0, 0, 0, 0, true, true, NULL, INFLIGHT_GUESSED };
			int best;

			snprintf(uid, sizeof(uid), "quiet-%d", p);
			best = prioritize(s, uid, NULL, scores);
			on[best]++;
			assert_int_equal(inflight_bound(s->view.inflight, uid, strlen(uid), names[best],
							strlen(names[best]), &pod, fake_now, fake_now), 0);
			fake_now += NS_PER_SEC;
			report_all(s, links[l]);
			inflight_tick(s->view.inflight, fake_now, true);
		}
		prioritize(s, "last", NULL, scores);
		printf("thirty quiet pods, %s: %u %u %u %u %u %u; scores then %d %d %d %d %d %d\n",
		       speed(links[l]), on[0], on[1], on[2], on[3], on[4], on[5], scores[0], scores[1],
		       scores[2], scores[3], scores[4], scores[5]);
		assert_int_equal(on[0] + on[1], 0);
		for (int i = 2; i < NODES; i++)
			assert_true(scores[i] > scores[0]);
		cluster_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podweight_order),
		cmocka_unit_test(test_podweight_doubt),
		cmocka_unit_test(test_podweight_burst_cold),
		cmocka_unit_test(test_podweight_burst_learned),
		cmocka_unit_test(test_podweight_thirty_quiet),
	};
	return cmocka_run_group_tests_name("podweight", tests, NULL, NULL);
}
