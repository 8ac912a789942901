/* Scores from bandwidth: the relative and utilization formulas, their edge
 * cases (all idle, one node, none, huge rates), and direction selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scorer/rules/policy.h"

#define MAXN 4
#define NODATA UINT64_MAX /* marks a node without data in the tables below */

struct policy_row {
	const char *name;
	enum policy_kind kind;
	size_t n;
	uint64_t rate[MAXN];
	uint64_t link[MAXN];
	int want[MAXN];
};

static const struct policy_row rows[] = {
	{ "no nodes", POLICY_RELATIVE, 0, { 0 }, { 0 }, { 0 } },
	{ "one idle node", POLICY_RELATIVE, 1, { 0 }, { 0 }, { 10 } },
	{ "one busy node scores 0 (the plugin's behaviour)", POLICY_RELATIVE, 1, { 1000 }, { 0 }, { 0 } },
	{ "all zero: every node Max, no division by zero", POLICY_RELATIVE, 3, { 0, 0, 0 }, { 0 }, { 10, 10, 10 } },
	{ "linear between 0 and max", POLICY_RELATIVE, 4, { 0, 250, 500, 1000 }, { 0 }, { 10, 8, 5, 0 } },
	{ "integer truncation like the Go plugin", POLICY_RELATIVE, 2, { 999, 1000 }, { 0 }, { 1, 0 } },
	{ "huge rates do not overflow", POLICY_RELATIVE, 3,
	  { UINT64_MAX - 1, UINT64_MAX / 2, 0 }, { 0 }, { 0, 5, 10 } },
	{ "no data is neutral and not the max", POLICY_RELATIVE, 3,
	  { NODATA, 100, 0 }, { 0 }, { POLICY_NEUTRAL_SCORE, 0, 10 } },
	{ "only nodes without data", POLICY_RELATIVE, 2, { NODATA, NODATA }, { 0 },
	  { POLICY_NEUTRAL_SCORE, POLICY_NEUTRAL_SCORE } },
	{ "utilization: idle, half, full, over", POLICY_UTILIZATION, 4,
	  { 0, 500, 1000, 5000 }, { 1000, 1000, 1000, 1000 }, { 10, 5, 0, 0 } },
	{ "utilization rounds half up", POLICY_UTILIZATION, 2, { 150, 149 }, { 1000, 1000 }, { 8, 9 } },
	{ "utilization: busiest node at 1 KB/s of 10 Gb/s still scores 10", POLICY_UTILIZATION, 2,
	  { 1000, 0 }, { 1250000000, 1250000000 }, { 10, 10 } },
	{ "utilization: unknown speed falls back to relative among those", POLICY_UTILIZATION, 4,
	  { 100, 50, 900, NODATA }, { 0, 0, 1000, 1000 }, { 0, 5, 1, POLICY_NEUTRAL_SCORE } },
	{ "utilization: huge values", POLICY_UTILIZATION, 2,
	  { UINT64_MAX - 1, 1 }, { UINT64_MAX, UINT64_MAX }, { 0, 10 } },
};

static void test_policy_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct policy_row *row = &rows[r];
		struct policy_node nodes[MAXN] = { { 0 } };

		for (size_t i = 0; i < row->n; i++) {
			nodes[i].has_data = row->rate[i] != NODATA;
			nodes[i].rate = row->rate[i] == NODATA ? 0 : row->rate[i];
			nodes[i].link_bytes_per_second = row->link[i];
			nodes[i].score = -1;
		}
		policy_score(row->kind, nodes, row->n);
		for (size_t i = 0; i < row->n; i++) {
			if (nodes[i].score != row->want[i])
				fail_msg("%s: node %zu scored %d, want %d", row->name, i,
					 nodes[i].score, row->want[i]);
			assert_in_range(nodes[i].score, 0, POLICY_MAX_SCORE);
		}
	}
}

/* The pressure policy, one node per row against a 1000 B/s link unless the
 * row says 0 (unknown): average, recent, p95 and dropping in; pressure and
 * score out. The worked examples in the README are rows here. */
struct pressure_row {
	const char *name;
	uint64_t rate, recent, p95;
	bool dropping;
	uint64_t link;
	uint64_t pressure;
	int score;
};

static const struct pressure_row pressure_rows[] = {
	{ "idle", 0, 0, 0, 0, 1000, 0, 10 },
	{ "steady half", 500, 500, 510, 0, 1000, 505, 5 },
	{ "bursts at line rate, same average: lower", 500, 500, 1000, 0, 1000, 750, 2 },
	{ "bursts seen while the recent sample is idle", 500, 0, 1000, 0, 1000, 750, 2 },
	{ "a step to 90% in the last report: recent counts at once", 30, 900, 0, 0, 1000, 900, 1 },
	{ "went quiet: the window's average still counts", 600, 0, 800, 0, 1000, 700, 3 },
	{ "an older agent (no recent, no p95): the average", 400, 0, 0, 0, 1000, 400, 6 },
	{ "dropping: bottom, however idle", 0, 0, 0, true, 1000, 0, 0 },
	{ "dropping with an unknown link: bottom too", 10, 10, 10, true, 0, 10, 0 },
	{ "over the link (two interfaces summed)", 900, 2500, 3000, 0, 1000, 2750, 0 },
	{ "huge values do not overflow", UINT64_MAX - 1, 0, UINT64_MAX, 0, UINT64_MAX,
	  UINT64_MAX - 1, 0 },
};

static void test_policy_pressure_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(pressure_rows) / sizeof(pressure_rows[0]); r++) {
		const struct pressure_row *row = &pressure_rows[r];
		struct policy_node p = { .has_data = true, .rate = row->rate, .recent = row->recent,
					 .p95 = row->p95, .dropping = row->dropping,
					 .link_bytes_per_second = row->link, .score = -1 };

		policy_score(POLICY_PRESSURE, &p, 1);
		if (p.score != row->score || p.pressure != row->pressure)
			fail_msg("%s: pressure %llu score %d, want %llu and %d", row->name,
				 (unsigned long long)p.pressure, p.score,
				 (unsigned long long)row->pressure, row->score);
	}
}

/* Ranking: the bursty node below the steady one, the dropping one at the
 * bottom, nodes without data neutral; unknown links rank by pressure
 * among themselves. Other policies ignore the new inputs. */
static void test_policy_pressure_ranks(void **state)
{
	struct policy_node n[5] = {
		{ .has_data = true, .rate = 500, .recent = 500, .p95 = 520, .link_bytes_per_second = 1000 },
		{ .has_data = true, .rate = 500, .recent = 500, .p95 = 1000, .link_bytes_per_second = 1000 },
		{ .has_data = true, .rate = 100, .recent = 100, .p95 = 100, .dropping = true,
		  .link_bytes_per_second = 1000 },
		{ .has_data = false, .dropping = true },
		{ .has_data = true, .rate = 0, .link_bytes_per_second = 1000 },
	};
	struct policy_node u[2] = {
		{ .has_data = true, .rate = 100, .p95 = 300 },	/* pressure 200 */
		{ .has_data = true, .rate = 50, .recent = 100 },	/* pressure 100 */
	};

	(void)state;
	policy_score(POLICY_PRESSURE, n, 5);
	assert_true(n[1].score < n[0].score);
	assert_int_equal(n[2].score, 0);
	assert_int_equal(n[3].score, POLICY_NEUTRAL_SCORE);
	assert_int_equal(n[4].score, 10);
	policy_score(POLICY_PRESSURE, u, 2);
	assert_int_equal(u[0].score, 0);
	assert_int_equal(u[1].score, 5);
	policy_score(POLICY_UTILIZATION, n, 5);
	assert_int_equal(n[0].score, n[1].score);
	assert_int_equal(n[2].score, 9);
}

/* --drop-threshold: drops per second of the window against the limit. A
 * trickle a NIC counts at rest stays under the default; an overflowing
 * queue does not. 0 = any drop, POLICY_DROPS_IGNORED = never. */
struct dropping_row {
	const char *name;
	uint64_t drops, window_ms, max_per_second;
	bool dropping;
};

static const struct dropping_row dropping_rows[] = {
	{ "no drops", 0, 60000, 0, false },
	{ "threshold 0: one drop counts", 1, 60000, 0, true },
	{ "a trickle: 120 in 60 s is 2/s", 120, 60000, 10 /* the default */, false },
	{ "exactly at the threshold: not over", 600, 60000, 10, false },
	{ "just over the threshold", 601, 60000, 10, true },
	{ "an overflowing queue: 25 in a 4 s window", 100, 4000, 10, true },
	{ "no window known: counted over one second", 11, 0, 10, true },
	{ "no window known, under", 10, 0, 10, false },
	{ "off: drops never count", UINT64_MAX, 1, POLICY_DROPS_IGNORED, false },
	{ "huge counts do not overflow", UINT64_MAX, 1000, UINT64_MAX - 1, true },
	{ "huge windows do not overflow", 1, UINT64_MAX, 0, true },
};

static void test_policy_dropping(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(dropping_rows) / sizeof(dropping_rows[0]); r++) {
		const struct dropping_row *row = &dropping_rows[r];

		if (policy_dropping(row->drops, row->window_ms, row->max_per_second) != row->dropping)
			fail_msg("%s: dropping %d, want %d", row->name, !row->dropping, row->dropping);
	}
}

static void test_policy_rate_directions(void **state)
{
	(void)state;
	assert_int_equal(policy_rate(POLICY_DIR_RX, 7, 3), 7);
	assert_int_equal(policy_rate(POLICY_DIR_TX, 7, 3), 3);
	assert_int_equal(policy_rate(POLICY_DIR_BOTH, 7, 3), 10);
	assert_int_equal(policy_rate(POLICY_DIR_MAX, 7, 30), 30);
	assert_true(policy_rate(POLICY_DIR_BOTH, UINT64_MAX, 5) == UINT64_MAX);
}

static void test_policy_parse(void **state)
{
	enum policy_kind k = POLICY_RELATIVE;
	enum policy_direction d = POLICY_DIR_RX;

	(void)state;
	assert_int_equal(policy_parse_kind("utilization", &k), 0);
	assert_int_equal(k, POLICY_UTILIZATION);
	assert_int_not_equal(policy_parse_kind("Relative", &k), 0);
	assert_int_equal(k, POLICY_UTILIZATION); /* untouched on error */
	assert_int_equal(policy_parse_direction("max", &d), 0);
	assert_int_equal(d, POLICY_DIR_MAX);
	assert_int_not_equal(policy_parse_direction("", &d), 0);
	assert_string_equal(policy_kind_name(POLICY_RELATIVE), "relative");
	assert_int_equal(policy_parse_kind("pressure", &k), 0);
	assert_int_equal(k, POLICY_PRESSURE);
	assert_string_equal(policy_kind_name(POLICY_PRESSURE), "pressure");
	assert_string_equal(policy_direction_name(POLICY_DIR_BOTH), "both");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_rows),
		cmocka_unit_test(test_policy_pressure_rows),
		cmocka_unit_test(test_policy_pressure_ranks),
		cmocka_unit_test(test_policy_dropping),
		cmocka_unit_test(test_policy_rate_directions),
		cmocka_unit_test(test_policy_parse),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
