/* One node's traffic from its interfaces' (each figure by its rule), rates
 * from counts, and the figure table every layer walks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/report.h"
#include "proto/traffic.h"

struct sum_row {
	const char *name;
	struct traffic a, b, want;
};

static const struct sum_row sums[] = {
	{ "rates, p95s and peaks add up (an upper bound of the node's p95 and peak)",
	  { .rx = { 100, 200, 300, 400 }, .tx = { 1, 2, 3, 4 } },
	  { .rx = { 10, 20, 30, 40 }, .tx = { 5, 6, 7, 8 } },
	  { .rx = { 110, 220, 330, 440 }, .tx = { 6, 8, 10, 12 } } },
	{ "drop counts saturate instead of wrapping to small numbers",
	  { .rx_dropped = UINT64_MAX - 1, .rx_missed = 2, .tx_dropped = 0 },
	  { .rx_dropped = 5, .rx_missed = 2, .tx_dropped = 1 },
	  { .rx_dropped = UINT64_MAX, .rx_missed = 4, .tx_dropped = 1 } },
	{ "known links add up",
	  { .link_bytes_per_second = 125000000 }, { .link_bytes_per_second = 1250000000 },
	  { .link_bytes_per_second = 1375000000 } },
	{ "one link of unknown speed makes the node's unknown",
	  { .link_bytes_per_second = 125000000 }, { .link_bytes_per_second = 0 },
	  { .link_bytes_per_second = 0 } },
	{ "the node covers what its longest-covered interface covers",
	  { .covered_ms = 2000 }, { .covered_ms = 60000 }, { .covered_ms = 60000 } },
};

static void test_traffic_add(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		const struct sum_row *row = &sums[i];
		struct traffic t = row->a;

		traffic_add(&t, &row->b);
		for (size_t k = 0; k < traffic_n_figures; k++) {
			const struct traffic_figure *f = &traffic_figures[k];

			if (traffic_get(&t, f) != traffic_get(&row->want, f))
				fail_msg("%s: %s is %llu, want %llu", row->name, f->label,
					 (unsigned long long)traffic_get(&t, f),
					 (unsigned long long)traffic_get(&row->want, f));
		}
	}
}

static void test_traffic_per_second(void **state)
{
	(void)state;
	assert_int_equal(traffic_per_second(10000, 2000), 5000);
	assert_int_equal(traffic_per_second(999, 1000), 999);
	assert_int_equal(traffic_per_second(1, 3), 333);
	assert_int_equal(traffic_per_second(12345, 0), 0);
	/* 2^63 bytes in 1 ms wrapped to 0 B/s in 64 bits: absurd, not idle. */
	assert_true(traffic_per_second(1ULL << 63, 1) == UINT64_MAX);
	assert_true(traffic_per_second(UINT64_MAX, 1000) == UINT64_MAX);
}

/* Every figure of struct traffic has one row, and a row's names are its
 * own: a copied row would show or carry one figure twice. */
static void test_traffic_table(void **state)
{
	size_t covered = 0;

	(void)state;
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const struct traffic_figure *f = &traffic_figures[i];

		assert_non_null(f->label);
		assert_true(f->offset % sizeof(uint64_t) == 0 &&
			    f->offset < sizeof(struct traffic));
		assert_true(f->metric == NULL || f->json != NULL);
		assert_true((f->metric == NULL) == (f->help == NULL));
		if (f->bound == TRAFFIC_SAMPLED)
			assert_true(f->peak < sizeof(struct traffic) && f->peak != f->offset);
		for (size_t k = 0; k < i; k++) {
			const struct traffic_figure *g = &traffic_figures[k];

			if (f->offset == g->offset || !strcmp(f->label, g->label) ||
			    (f->wire && g->wire && !strcmp(f->wire, g->wire)) ||
			    (f->json && g->json && !strcmp(f->json, g->json)) ||
			    (f->metric && g->metric && !strcmp(f->metric, g->metric)))
				fail_msg("rows %s and %s share a field or a name", g->label, f->label);
		}
		covered += sizeof(uint64_t);
	}
	assert_int_equal(covered, sizeof(struct traffic));
}

/* Each figure that travels as it is survives the wire: a row naming a
 * field netsched.proto does not have fails every encode. */
static void test_traffic_on_the_wire(void **state)
{
	struct report in, out;
	uint8_t buf[REPORT_MAX_BYTES];
	size_t len = 0;

	(void)state;
	memset(&in, 0, sizeof(in));
	strcpy(in.node, "node-1");
	in.n_ifaces = 1;
	strcpy(in.ifaces[0].name, "eth0");
	report_iface_count(&in.ifaces[0], 5000, 3000, 1000);
	in.ifaces[0].traffic.rx.peak = in.ifaces[0].traffic.tx.peak = 9000;
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const struct traffic_figure *f = &traffic_figures[i];

		if (f->wire && f->bound != TRAFFIC_RATE)
			traffic_set(&in.ifaces[0].traffic, f, 100 + i);
	}
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len), 0);
	assert_int_equal(report_decode(buf, len, &out, NULL, 0), 0);
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const struct traffic_figure *f = &traffic_figures[i];

		if (traffic_get(&in.ifaces[0].traffic, f) != traffic_get(&out.ifaces[0].traffic, f))
			fail_msg("%s: sent %llu, received %llu", f->label,
				 (unsigned long long)traffic_get(&in.ifaces[0].traffic, f),
				 (unsigned long long)traffic_get(&out.ifaces[0].traffic, f));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_traffic_add),
		cmocka_unit_test(test_traffic_per_second),
		cmocka_unit_test(test_traffic_table),
		cmocka_unit_test(test_traffic_on_the_wire),
	};
	return cmocka_run_group_tests_name("traffic", tests, NULL, NULL);
}
