/* Placing by fit (scorer/rules/fit.c and the extender's fit rule):
 *  - rows: a pod judged in each direction it moves; a receiver is not kept
 *    off a node busy sending, nor a sender off one busy receiving; a pod of
 *    no known demand by the busier side; scores that keep their order past
 *    saturation; links of unknown speed; no data; drops; no overflow;
 *  - fit_fits(): the filter's per-direction test;
 *  - bursts through the extender and the fake scheduler at 100 Mb/s and
 *    10 Gb/s (every rate a share of the link): senders next to nodes busy
 *    sending; receivers and senders mixed on nodes busy one way each; a
 *    learned Deployment scaled up next to graded nodes (the fit rule keeps
 *    every replica off a node it would overflow while another has room,
 *    and keeps every node when none has); each checked to fail under the
 *    Go plugin's single direction, so the rows prove what fit adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/nodes/view.h"
#include "common/json.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/workload.h"
#include "scorer/rules/fit.h"
#include "scorer/scorer.h"
#include "scorer/serve/extender.h"
#include "scorer/serve/reply.h"
#include "tests/unit/fake_scheduler.h"
#include "tests/unit/fake_scorer.h"

/* ------------------------------------------------------------------ rows */

#define MAXN 4
#define NODATA UINT64_MAX
#define L 1000u /* the rows' link, bytes per second */

struct fit_row {
	const char *name;
	enum policy_kind kind;
	struct fit_demand pod;
	size_t n;
	uint64_t rx[MAXN], tx[MAXN];	/* levels (average); NODATA: no data */
	uint64_t link[MAXN];
	int want[MAXN];
};

static const struct fit_row rows[] = {
	{ "a receiver goes where rx is free, whatever tx carries", POLICY_UTILIZATION, { 200, 0 }, 2,
	  { 100, 900 }, { 950, 50 }, { L, L }, { 7, 0 } },
	{ "a sender goes where tx is free, whatever rx carries", POLICY_UTILIZATION, { 0, 200 }, 2,
	  { 100, 900 }, { 950, 50 }, { L, L }, { 0, 8 } },
	{ "a pod moving both ways alike: its busier side", POLICY_UTILIZATION, { 100, 100 }, 3,
	  { 100, 800, 400 }, { 800, 100, 400 }, { L, L, L }, { 1, 1, 5 } },
	{ "mostly a receiver: tx counts by its share", POLICY_UTILIZATION, { 200, 20 }, 2,
	  { 100, 300 }, { 950, 0 }, { L, L }, { 7, 5 } },
	{ "no known demand: the busier side of each node", POLICY_UTILIZATION, { 0, 0 }, 3,
	  { 0, 600, 0 }, { 0, 0, 300 }, { L, L, L }, { 10, 4, 7 } },
	{ "past saturation: over by 5% and by 60% do not tie", POLICY_UTILIZATION, { 200, 0 }, 3,
	  { 850, 1400, 0 }, { 0, 0, 0 }, { L, L, L }, { 3, 0, 9 } },
	{ "every node over: ranked among themselves, the least over 10", POLICY_UTILIZATION,
	  { 200, 0 }, 3, { 850, 1400, 1100 }, { 0, 0, 0 }, { L, L, L }, { 10, 5, 8 } },
	{ "every node over, far apart: 0 a link further over", POLICY_UTILIZATION, { 200, 0 }, 3,
	  { 850, 3000, 1350 }, { 0, 0, 0 }, { L, L, L }, { 10, 0, 5 } },
	{ "every node over alike: all 10", POLICY_UTILIZATION, { 200, 0 }, 2, { 900, 900 },
	  { 0, 0 }, { L, L }, { 10, 10 } },
	{ "all fit: the utilization formula on the cost", POLICY_UTILIZATION, { 100, 0 }, 4,
	  { 0, 400, 900, 500 }, { 0 }, { L, L, L, L }, { 9, 5, 0, 4 } },
	{ "the stretch stops at twice the link", POLICY_UTILIZATION, { 0, 0 }, 3,
	  { 0, 2000, 50000 }, { 0 }, { L, L, L }, { 10, 0, 0 } },
	{ "unknown link: the widest known one", POLICY_UTILIZATION, { 100, 0 }, 3,
	  { 400, 400, NODATA }, { 0, 0, 0 }, { 0, 2 * L, 0 }, { 8, 8, POLICY_NEUTRAL_SCORE } },
	{ "no link known: against the busiest, as the relative policy", POLICY_UTILIZATION,
	  { 0, 0 }, 3, { 0, 500, 1000 }, { 0 }, { 0, 0, 0 }, { 10, 5, 0 } },
	{ "relative: links ignored, the busiest scores 0", POLICY_RELATIVE, { 0, 0 }, 2,
	  { 100, 200 }, { 0 }, { L, L }, { 5, 0 } },
	{ "all idle, nothing known: every node 10", POLICY_RELATIVE, { 0, 0 }, 2, { 0, 0 }, { 0 },
	  { 0, 0 }, { 10, 10 } },
	{ "no data: neutral", POLICY_PRESSURE, { 100, 100 }, 2, { NODATA, 0 }, { 0 }, { L, L },
	  { POLICY_NEUTRAL_SCORE, 9 } },
	{ "huge values never overflow", POLICY_UTILIZATION, { UINT64_MAX, UINT64_MAX }, 2,
	  { UINT64_MAX - 1, 0 }, { UINT64_MAX - 1, 0 }, { UINT64_MAX, 1 }, { 5, 0 } },
	{ "huge values next to a node that fits", POLICY_UTILIZATION, { 1, 1 }, 2,
	  { UINT64_MAX - 1, 0 }, { UINT64_MAX - 1, 0 }, { UINT64_MAX, 1000 }, { 0, 10 } },
};

static void test_fit_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct fit_row *row = &rows[r];
		struct policy_node nodes[MAXN] = { { 0 } };

		for (size_t i = 0; i < row->n; i++) {
			nodes[i].has_data = row->rx[i] != NODATA;
			nodes[i].rx.rate = row->rx[i] == NODATA ? 0 : row->rx[i];
			nodes[i].tx.rate = row->tx[i];
			nodes[i].link_bytes_per_second = row->link[i];
			nodes[i].score = -1;
		}
		fit_score(row->kind, &row->pod, nodes, row->n);
		for (size_t i = 0; i < row->n; i++) {
			if (nodes[i].score != row->want[i])
				fail_msg("%s: node %zu scored %d (cost %u/1000), want %d", row->name, i,
					 nodes[i].score, nodes[i].cost_milli, row->want[i]);
			assert_in_range(nodes[i].score, 0, POLICY_MAX_SCORE);
		}
	}
}

/* The pressure policy's level per direction, and a dropping node. */
static void test_fit_pressure(void **state)
{
	struct policy_node n[2] = {
		{ .has_data = true, .rx = { 100, 500, 0 }, .link_bytes_per_second = L },
		{ .has_data = true, .rx = { 100, 100, 100 }, .dropping = true,
		  .link_bytes_per_second = L },
	};
	struct fit_demand pod = { 100, 0 };

	(void)state;
	fit_score(POLICY_PRESSURE, &pod, n, 2);
	assert_int_equal(n[0].pressure, 500); /* the recent step counts */
	assert_int_equal(n[0].cost_milli, 600);
	assert_int_equal(n[0].score, 4);
	assert_int_equal(n[1].score, 0);
	/* The dispatcher: fit only under POLICY_DIR_FIT. */
	n[0].rate = 900;
	fit_score_by(POLICY_UTILIZATION, POLICY_DIR_RX, &pod, n, 1);
	assert_int_equal(n[0].score, 1);
	fit_score_by(POLICY_UTILIZATION, POLICY_DIR_FIT, NULL, n, 1);
	assert_int_equal(n[0].score, 9);
}

static void test_fit_fits(void **state)
{
	struct fit_demand pod = { 300, 100 };
	const char *which = NULL;

	(void)state;
	assert_true(fit_fits(&pod, true, true, 700, 900, L, &which));
	assert_false(fit_fits(&pod, true, true, 701, 0, L, &which));
	assert_string_equal(which, "rx");
	assert_false(fit_fits(&pod, true, true, 0, 901, L, &which));
	assert_string_equal(which, "tx");
	/* A direction not known with confidence is not held against a node. */
	assert_true(fit_fits(&pod, false, true, 5000, 0, L, NULL));
	assert_true(fit_fits(&pod, true, false, 0, 5000, L, NULL));
	/* Unknown link: nothing to judge by. */
	assert_true(fit_fits(&pod, true, true, UINT64_MAX, UINT64_MAX, 0, NULL));
	assert_false(fit_fits(&pod, true, true, UINT64_MAX, 0, L, NULL));
}

/* --------------------------------------------------- through the extender */

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define NODES 6

static const char *const names[NODES] = { "n1", "n2", "n3", "n4", "n5", "n6" };
static unsigned placed[NODES];

/* Each node's load, percent of its link, per direction. */
struct grade {
	unsigned rx[NODES], tx[NODES];
};

static void report_all(struct scorer *s, const struct grade *g, uint64_t link_bps)
{
	for (size_t i = 0; i < NODES; i++) {
		struct report r = fake_report(names[i], link_bps / 8 * g->rx[i] / 100,
					      link_bps / 8 * g->tx[i] / 100, link_bps);

		assert_int_equal(table_apply(s->view.table, &r, fake_now), TABLE_APPLIED);
	}
}

/* A scorer as deploy/ ships it (pressure, fit, the fit rule, the doubt),
 * on a graded cluster; the workload "web" learned at rx/tx percent of the
 * link when learned is true. */
static struct scorer *cluster(const struct grade *g, uint64_t link_bps, enum policy_direction dir,
			      bool learned, unsigned rx_pct, unsigned tx_pct)
{
	struct scorer *s = fake_scorer_new(16, START_NS, STALE_NS);
	struct inflight_config ic = { .max_pods = 256, .max_nodes = 16,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };

	assert_non_null(s);
	s->view.policy = POLICY_PRESSURE;
	s->view.direction = dir;
	s->fit_filter = true;
	s->filter.bandwidth = true;
	s->compact_scores = true;
	s->view.inflight = inflight_create(&ic);
	assert_non_null(s->view.inflight);
	s->view.weights.cfg.doubt_pct = 10;
	if (learned) {
		struct workload_config wc = { .max_workloads = 8, .half_life_ns = 600 * NS_PER_SEC };
		struct workload_key k = { "shop", "Deployment", "web" };
		int32_t id;

		s->view.weights.workloads = workload_create(&wc);
		assert_non_null(s->view.weights.workloads);
		id = workload_ref(s->view.weights.workloads, &k, fake_now);
		assert_true(id >= 0);
		workload_sample(s->view.weights.workloads, id, 1, link_bps / 8 * rx_pct / 100,
				link_bps / 8 * tx_pct / 100, fake_now);
		workload_tick(s->view.weights.workloads, fake_now);
	}
	report_all(s, g, link_bps);
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

/* A request body for pod uid (a replica of Deployment "web" when
 * replica), over every node, declaring annotations (may be ""). */
static size_t body_of(char *body, size_t cap, const char *uid, bool replica, const char *annotations)
{
	char owner[256] = "";
	int len;

	if (replica)
		snprintf(owner, sizeof(owner), ",\"labels\":{\"pod-template-hash\":\"abc12\"},"
			 "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web-abc12\","
			 "\"uid\":\"rs\",\"controller\":true}]");
	len = snprintf(body, cap, "{\"Pod\":{\"metadata\":{\"name\":\"%s\",\"namespace\":\"shop\","
		       "\"uid\":\"%s\"%s%s}},\"NodeNames\":[\"n1\",\"n2\",\"n3\",\"n4\",\"n5\","
		       "\"n6\"]}", uid, uid, owner, annotations);
	assert_true(len > 0 && (size_t)len < cap);
	return (size_t)len;
}

/* The nodes filter keeps for the pod, as a bit set. */
static unsigned filter(struct scorer *s, const char *uid, bool replica)
{
	char body[1024], err[128];
	size_t len = body_of(body, sizeof(body), uid, replica, ""), nl;
	struct json j = { 0 };
	struct reply out;
	unsigned kept = 0;
	int list;

	ext_filter(s, body, len, &out);
	assert_int_equal(out.status, 200);
	assert_int_equal(json_parse(&j, out.body, out.len, 4096, err, sizeof(err)), 0);
	list = json_member(&j, 0, "NodeNames", false);
	for (int m = 0; m < j.t[list].size; m++) {
		const char *name = json_text(&j, json_element(&j, list, m), &nl);

		for (int i = 0; i < NODES; i++)
			if (strlen(names[i]) == nl && !memcmp(names[i], name, nl))
				kept |= 1u << i;
	}
	json_free(&j);
	free(out.body);
	return kept;
}

/* Filter then prioritize, as the scheduler asks: the node it takes among
 * those the filter kept (fake_scheduler.h's choice: best score, then the
 * fewest pods so far). */
static int place(struct scorer *s, const char *uid, bool replica, const char *annotations,
		 unsigned *kept_out)
{
	char body[1024];
	size_t len = body_of(body, sizeof(body), uid, replica, annotations);
	unsigned kept = filter(s, uid, replica);
	struct reply out;
	int scores[NODES], best = -1;

	if (kept_out)
		*kept_out = kept;
	assert_true(kept != 0);
	ext_prioritize(s, body, len, &out);
	/* Only among the nodes the filter kept: fake_scheduler_pick() counted
	 * its own choice among all, which is taken back for ours. */
	placed[fake_scheduler_pick(&out, names, NODES, placed, scores)]--;
	for (int i = 0; i < NODES; i++)
		if ((kept & (1u << i)) &&
		    (best < 0 || scores[i] > scores[best] ||
		     (scores[i] == scores[best] && placed[i] < placed[best])))
			best = i;
	placed[best]++;
	return best;
}

/* n pods of one kind, 3 ms apart, never confirmed (a burst outruns the
 * watch); how many went to each node into on[]. */
static void burst(struct scorer *s, const char *prefix, int n, bool replica, const char *annotations,
		  unsigned on[NODES])
{
	unsigned count[NODES] = { 0 };

	memset(placed, 0, sizeof(placed));
	for (int p = 0; p < n; p++) {
		char uid[32];
		int went;

		snprintf(uid, sizeof(uid), "%s-%d", prefix, p);
		went = place(s, uid, replica, annotations, NULL);
		count[went]++;
		fake_now += 3 * NS_PER_MS;
	}
	memcpy(on, count, sizeof(count));
}

static const uint64_t links[] = { 100000000, 10000000000ULL };

/* Senders (declaring nothing, nothing learned: a cold cluster) next to
 * two nodes busy sending at 95%: fit judges an unknown pod by each node's
 * busier side and keeps them off; the Go plugin's rx direction sees those
 * nodes idle and fills them. */
static void test_fit_egress_burst(void **state)
{
	static const struct grade g = { { 5, 5, 10, 10, 20, 20 }, { 95, 95, 40, 20, 20, 5 } };

	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		for (int dir = 0; dir < 2; dir++) {
			struct scorer *s = cluster(&g, links[l], dir ? POLICY_DIR_RX : POLICY_DIR_FIT,
						   false, 0, 0);
			unsigned on[NODES];

			burst(s, "send", 8, false, "", on);
			print_message("egress burst, %llu b/s links, %s: %u %u %u %u %u %u\n",
				      (unsigned long long)links[l], dir ? "rx" : "fit", on[0], on[1],
				      on[2], on[3], on[4], on[5]);
			if (!dir)
				assert_int_equal(on[0] + on[1], 0);
			else
				assert_true(on[0] + on[1] > 0); /* what fit fixes */
			cluster_free(s);
		}
	}
}

/* Receivers and senders of known demand (declared: ingress for rx,
 * egress for tx, 20% of the link) on nodes busy one way each: receivers
 * to the nodes busy sending, senders to those busy receiving, none where
 * its own side is at 90%. */
static void test_fit_mixed(void **state)
{
	static const struct grade g = { { 90, 90, 90, 5, 5, 5 }, { 5, 5, 5, 90, 90, 90 } };

	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		char rx_ann[160], tx_ann[160];
		struct scorer *s = cluster(&g, links[l], POLICY_DIR_FIT, false, 0, 0);
		unsigned on[NODES];
		uint64_t fifth = links[l] / 5;

		snprintf(rx_ann, sizeof(rx_ann),
			 ",\"annotations\":{\"kubernetes.io/ingress-bandwidth\":\"%llu\"}",
			 (unsigned long long)fifth);
		snprintf(tx_ann, sizeof(tx_ann),
			 ",\"annotations\":{\"kubernetes.io/egress-bandwidth\":\"%llu\"}",
			 (unsigned long long)fifth);
		burst(s, "recv", 5, false, rx_ann, on);
		print_message("receivers, %llu b/s: %u %u %u %u %u %u\n",
			      (unsigned long long)links[l], on[0], on[1], on[2], on[3], on[4], on[5]);
		assert_int_equal(on[0] + on[1] + on[2], 0);
		burst(s, "send", 5, false, tx_ann, on);
		print_message("senders, %llu b/s: %u %u %u %u %u %u\n",
			      (unsigned long long)links[l], on[0], on[1], on[2], on[3], on[4], on[5]);
		assert_int_equal(on[3] + on[4] + on[5], 0);
		cluster_free(s);
	}
}

/* The warm scale-up: "web" learned at 20% rx, +8 replicas at once
 * next to nodes at 90, 70, 50, 30, 10 and 10%: no replica where it would
 * push the node over its link while another node has room (the fit
 * rule), and the filter never leaves the pod nowhere to go. The watch
 * confirms each pod two pods after it was placed (a binding and its event
 * take a few pods' time in a burst); until then a pod tied on several
 * nodes counts a share on each. */
static void test_fit_warm_scale_up(void **state)
{
	static const struct grade g = { { 90, 70, 50, 30, 10, 10 }, { 5, 5, 5, 5, 5, 5 } };

	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		struct scorer *s = cluster(&g, links[l], POLICY_DIR_FIT, true, 20, 1);
		struct inflight_pod web = { links[l] / 8 / 5, links[l] / 8 / 100, 0, 0, false, false,
					    "shop/web", INFLIGHT_LEARNED };
		unsigned load[NODES], on[NODES] = { 0 };
		int went_to[8];

		memcpy(load, g.rx, sizeof(load));
		memset(placed, 0, sizeof(placed));
		for (int p = 0; p < 8; p++) {
			char uid[32];
			unsigned kept;
			bool some_fit = false;
			int went;

			if (p >= 2) {
				snprintf(uid, sizeof(uid), "web-x%d", p - 2);
				assert_int_equal(inflight_bound(s->view.inflight, uid, strlen(uid),
								names[went_to[p - 2]], 2, &web,
								fake_now, fake_now), 0);
			}

			for (int i = 0; i < NODES; i++)
				some_fit |= load[i] + 20 <= 100;
			snprintf(uid, sizeof(uid), "web-x%d", p);
			went = place(s, uid, true, "", &kept);
			for (int i = 0; i < NODES; i++)
				if (some_fit && load[i] + 20 > 100 && (kept & (1u << i)))
					fail_msg("pod %d: %s kept at %u%% with room elsewhere", p,
						 names[i], load[i]);
			if (!some_fit)
				assert_int_equal(kept, (1u << NODES) - 1);
			load[went] += 20;
			on[went]++;
			went_to[p] = went;
			fake_now += 3 * NS_PER_MS;
		}
		print_message("warm scale-up, %llu b/s: %u %u %u %u %u %u\n",
			      (unsigned long long)links[l], on[0], on[1], on[2], on[3], on[4], on[5]);
		assert_int_equal(on[0], 0);
		assert_true(on[1] <= 1);
		cluster_free(s);
	}
}

/* Every node full for the pod: the fit rule keeps them all (the scheduler
 * may still place it), and the scores still rank them, so the compact
 * reply lists the least full. */
static void test_fit_none_fits(void **state)
{
	static const struct grade g = { { 85, 99, 100, 100, 100, 100 }, { 0 } };
	struct scorer *s = cluster(&g, links[0], POLICY_DIR_FIT, true, 20, 0);
	char body[1024];
	size_t len = body_of(body, sizeof(body), "web-late", true, "");
	struct reply out;
	int scores[NODES];

	(void)state;
	assert_int_equal(filter(s, "web-late", true), (1u << NODES) - 1);
	ext_prioritize(s, body, len, &out);
	assert_int_equal(fake_scheduler_pick(&out, names, NODES, placed, scores), 0);
	assert_true(scores[0] > scores[1]);
	assert_true(scores[1] >= scores[2]);
	cluster_free(s);
}

/* The fit rule's reason, as the scheduler shows it in the pod's event:
 * the same text for every node it leaves out, no '%', the direction. */
static void test_fit_reason(void **state)
{
	static const struct grade g = { { 90, 90, 10, 10, 10, 10 }, { 0 } };
	struct scorer *s = cluster(&g, links[0], POLICY_DIR_FIT, true, 20, 0);
	char body[1024];
	size_t len = body_of(body, sizeof(body), "web-r", true, "");
	struct reply out;

	(void)state;
	ext_filter(s, body, len, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(strstr(out.body, "\"n1\":\"netsched: no room on rx for the pod's rx it moves\""));
	assert_non_null(strstr(out.body, "\"n2\":\"netsched: no room on rx for the pod's rx it moves\""));
	assert_null(strstr(out.body, "\"n3\":"));
	assert_null(strchr(out.body, '%'));
	free(out.body);
	cluster_free(s);
}

/* A pod the watch found bound before any link was known to it (the
 * watch's first list, a scorer just started), declaring 400G: the view
 * never counts more in flight on a node than the node's link. */
static void test_fit_inflight_capped_at_link(void **state)
{
	static const struct grade g = { { 10, 10, 10, 10, 10, 10 }, { 0 } };
	struct scorer *s = cluster(&g, links[0], POLICY_DIR_FIT, false, 0, 0);
	struct inflight_pod huge = { 50000000000ULL, 0, 50000000000ULL, 0, false, false, "t/hog",
				     INFLIGHT_DECLARED };
	struct view_node v;

	(void)state;
	assert_int_equal(inflight_bound(s->view.inflight, "hog", 3, "n1", 2, &huge, fake_now,
					fake_now), 0);
	inflight_tick(s->view.inflight, fake_now, true);
	view_get(&s->view, "n1", 2, NULL, 0, fake_now, &v);
	assert_int_equal(v.inflight.reserved_rx_bytes_per_second, links[0] / 8);
	assert_int_equal(v.inflight.rx_bytes_per_second, links[0] / 8);
	cluster_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_rows),
		cmocka_unit_test(test_fit_pressure),
		cmocka_unit_test(test_fit_fits),
		cmocka_unit_test(test_fit_egress_burst),
		cmocka_unit_test(test_fit_mixed),
		cmocka_unit_test(test_fit_warm_scale_up),
		cmocka_unit_test(test_fit_none_fits),
		cmocka_unit_test(test_fit_inflight_capped_at_link),
		cmocka_unit_test(test_fit_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
