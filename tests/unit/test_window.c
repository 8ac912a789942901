/* The sliding window: the first sample, deltas, counter resets, gaps (missed
 * and late samples), absurd samples, ageing out and huge counters. Each row
 * feeds readings at given times and checks every event and the final sums. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/window.h"

#define MS 1000000ULL
#define MAXSTEPS 8
#define MISS UINT64_MAX	/* a step whose reading could not be taken */
#define BIG (UINT64_MAX - 1000)

struct step {
	uint64_t t_ms;
	uint64_t rx;
	uint64_t tx;
	int want;	/* enum window_event, or -1 for a MISS step */
};

struct window_row {
	const char *name;
	uint32_t cap;			/* slots */
	uint64_t limit;			/* bytes per second, 0 = none */
	struct step steps[MAXSTEPS];
	size_t n;
	uint64_t now_ms, span_ms;	/* the stats query */
	uint64_t rx, tx, covered_ms;
	uint32_t samples, slots;
	uint64_t rx_peak;
};

static const struct window_row rows[] = {
	{ "first sample only primes", 4, 0,
	  { { 0, 5000, 7000, WINDOW_PRIMED } }, 1,
	  0, 4000, 0, 0, 0, 0, 0, 0 },
	{ "steady deltas sum, peak is the largest one-second rate", 4, 0,
	  { { 0, 100, 10, WINDOW_PRIMED }, { 1000, 1100, 20, WINDOW_DELTA },
	    { 2000, 4100, 30, WINDOW_DELTA }, { 3000, 4600, 40, WINDOW_DELTA } }, 4,
	  3000, 4000, 4500, 30, 3000, 3, 3, 3000 },
	{ "counter going backwards is a reset, never a spike", 8, 0,
	  { { 0, 1000, 1000, WINDOW_PRIMED }, { 1000, 2000, 2000, WINDOW_DELTA },
	    { 2000, 50, 2500, WINDOW_RESET }, { 3000, 150, 2600, WINDOW_DELTA } }, 4,
	  3000, 8000, 1100, 1100, 2000, 2, 2, 1000 },
	{ "only tx going backwards is a reset too", 8, 0,
	  { { 0, 1000, 1000, WINDOW_PRIMED }, { 1000, 2000, 10, WINDOW_RESET },
	    { 2000, 2500, 20, WINDOW_DELTA } }, 3,
	  2000, 8000, 500, 10, 1000, 1, 1, 500 },
	{ "a missed sample is a gap: not zero, not covered time", 8, 0,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 1000, 0, WINDOW_DELTA }, { 2000, MISS, 0, -1 },
	    { 3000, 9000, 0, WINDOW_PRIMED }, { 4000, 10000, 0, WINDOW_DELTA } }, 5,
	  4000, 8000, 2000, 0, 2000, 2, 3, 1000 },
	{ "a late sample is a gap: its bytes have no reliable time", 8, 0,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 1000, 0, WINDOW_DELTA },
	    { 9000, 900000, 0, WINDOW_GAP }, { 10000, 901000, 0, WINDOW_DELTA } }, 4,
	  10000, 20000, 2000, 0, 2000, 2, 3, 1000 },
	{ "absurd sample above the limit is dropped and re-primes", 8, 1000,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 500, 0, WINDOW_DELTA },
	    { 2000, 500000, 0, WINDOW_ABSURD }, { 3000, 500900, 0, WINDOW_DELTA } }, 4,
	  3000, 8000, 1400, 0, 2000, 2, 3, 900 },
	{ "old slots age out of the span", 8, 0,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 7000, 0, WINDOW_DELTA },
	    { 2000, 7100, 0, WINDOW_DELTA }, { 3000, 7200, 0, WINDOW_DELTA } }, 4,
	  3000, 2000, 200, 0, 2000, 2, 2, 100 },
	{ "the ring overwrites the oldest slot", 2, 0,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 7000, 0, WINDOW_DELTA },
	    { 2000, 7100, 0, WINDOW_DELTA }, { 3000, 7200, 0, WINDOW_DELTA } }, 4,
	  3000, 100000, 200, 0, 2000, 2, 2, 100 },
	{ "counters near 2^64 do not overflow", 4, 0,
	  { { 0, BIG, BIG, WINDOW_PRIMED }, { 1000, BIG + 500, BIG + 1000, WINDOW_DELTA } }, 2,
	  1000, 4000, 500, 1000, 1000, 1, 1, 500 },
	{ "idle interface: zero bytes but covered time", 4, 0,
	  { { 0, 42, 42, WINDOW_PRIMED }, { 1000, 42, 42, WINDOW_DELTA },
	    { 2000, 42, 42, WINDOW_DELTA } }, 3,
	  2000, 4000, 0, 0, 2000, 2, 2, 0 },
	{ "a query before a slot's time ignores it", 4, 0,
	  { { 0, 0, 0, WINDOW_PRIMED }, { 1000, 100, 0, WINDOW_DELTA },
	    { 2000, 300, 0, WINDOW_DELTA } }, 3,
	  1500, 4000, 100, 0, 1000, 1, 1, 100 },
};

static void test_window_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct window_row *row = &rows[r];
		struct window w;
		struct window_stats st;

		assert_int_equal(window_init(&w, row->cap), 0);
		for (size_t i = 0; i < row->n; i++) {
			const struct step *s = &row->steps[i];

			if (s->rx == MISS) {
				window_gap(&w, s->t_ms * MS);
				continue;
			}
			struct ifreading c = { .rx_bytes = s->rx, .tx_bytes = s->tx };
			int ev = (int)window_add(&w, s->t_ms * MS, &c, 2000 * MS, row->limit);
			if (ev != s->want)
				fail_msg("%s: step %zu gave event %d, want %d", row->name, i, ev,
					 s->want);
		}
		window_stats(&w, row->now_ms * MS, row->span_ms * MS, row->span_ms * MS, &st);
		if (st.rx_bytes != row->rx || st.tx_bytes != row->tx ||
		    st.covered_ns != row->covered_ms * MS || st.samples != row->samples ||
		    st.slots != row->slots || st.traffic.rx.peak != row->rx_peak)
			fail_msg("%s: got rx %llu tx %llu covered %llu ms samples %u slots %u peak "
				 "%llu; want rx %llu tx %llu covered %llu ms samples %u slots %u "
				 "peak %llu",
				 row->name, (unsigned long long)st.rx_bytes,
				 (unsigned long long)st.tx_bytes,
				 (unsigned long long)(st.covered_ns / MS), st.samples, st.slots,
				 (unsigned long long)st.traffic.rx.peak,
				 (unsigned long long)row->rx, (unsigned long long)row->tx,
				 (unsigned long long)row->covered_ms, row->samples, row->slots,
				 (unsigned long long)row->rx_peak);
		/* The pods' cheaper sums: the same but for peaks and percentiles. */
		{
			struct window_stats tot;

			window_totals(&w, row->now_ms * MS, row->span_ms * MS, row->span_ms * MS,
				      &tot);
			if (tot.rx_bytes != st.rx_bytes || tot.tx_bytes != st.tx_bytes ||
			    tot.covered_ns != st.covered_ns || tot.samples != st.samples ||
			    tot.slots != st.slots || tot.traffic.rx.average != st.traffic.rx.average ||
			    tot.traffic.tx.recent != st.traffic.tx.recent ||
			    tot.traffic.covered_ms != st.traffic.covered_ms ||
			    tot.traffic.rx.peak || tot.traffic.rx.p95 || tot.traffic.tx.p95)
				fail_msg("%s: window_totals() differs from window_stats()", row->name);
		}
		window_free(&w);
	}
}

/* Cleared: nothing left, and the next reading only primes; the lifetime
 * counts stay. */
static void test_window_clear(void **state)
{
	struct window w;
	struct window_stats st;
	struct ifreading c = { .rx_bytes = 100 };

	(void)state;
	assert_int_equal(window_init(&w, 4), 0);
	window_add(&w, 1000 * MS, &c, 2000 * MS, 0);
	c.rx_bytes = 50; /* backwards: a reset */
	window_add(&w, 2000 * MS, &c, 2000 * MS, 0);
	c.rx_bytes = 5000;
	assert_int_equal(window_add(&w, 3000 * MS, &c, 2000 * MS, 0), WINDOW_DELTA);
	window_clear(&w);
	window_totals(&w, 3000 * MS, 10000 * MS, 1000 * MS, &st);
	assert_int_equal(st.rx_bytes, 0);
	assert_int_equal(st.slots, 0);
	c.rx_bytes = 9000;
	assert_int_equal(window_add(&w, 4000 * MS, &c, 2000 * MS, 0), WINDOW_PRIMED);
	assert_int_equal(w.resets, 1);
	window_free(&w);
}

static enum window_event add(struct window *w, uint64_t t_ms, uint64_t rx, uint64_t tx)
{
	struct ifreading c = { .rx_bytes = rx, .tx_bytes = tx };

	return window_add(w, t_ms * MS, &c, 2000 * MS, 0);
}

static void test_window_counts_events(void **state)
{
	struct window w;

	(void)state;
	assert_int_equal(window_init(&w, 4), 0);
	add(&w, 0, 100, 100);
	add(&w, 1000, 50, 100);		/* reset */
	window_gap(&w, 2000 * MS);
	add(&w, 3000, 60, 100);		/* primes after the gap */
	add(&w, 9000, 70, 100);		/* late: gap */
	assert_int_equal(w.resets, 1);
	assert_int_equal(w.gaps, 2);
	assert_int_equal(w.absurd, 0);
	window_reprime(&w);
	assert_int_equal(add(&w, 10000, 0, 0), WINDOW_PRIMED);
	window_free(&w);
	window_free(&w); /* a freed window may be freed again */
}

/* Drops ride along with the bytes; a drop counter going back is a reset too. */
static void test_window_drops(void **state)
{
	struct ifreading c = { .rx_bytes = 10, .rx_dropped = 5, .rx_missed_errors = 1, .tx_dropped = 2 };
	struct window_stats st;
	struct window w;

	(void)state;
	assert_int_equal(window_init(&w, 8), 0);
	assert_int_equal(window_add(&w, 0, &c, 2000 * MS, 0), WINDOW_PRIMED);
	c.rx_bytes += 1000, c.rx_dropped += 7, c.rx_missed_errors += 3, c.tx_dropped += 1;
	assert_int_equal(window_add(&w, 1000 * MS, &c, 2000 * MS, 0), WINDOW_DELTA);
	c.rx_dropped = 0; /* driver reset its drop counter alone */
	assert_int_equal(window_add(&w, 2000 * MS, &c, 2000 * MS, 0), WINDOW_RESET);
	window_stats(&w, 2000 * MS, 10000 * MS, 1000 * MS, &st);
	assert_int_equal(st.traffic.rx_dropped, 7);
	assert_int_equal(st.traffic.rx_missed, 3);
	assert_int_equal(st.traffic.tx_dropped, 1);
	assert_int_equal(st.rx_bytes, 1000);
	window_free(&w);
}

/* Burst statistics: one-second samples of the given rx bytes (tx carries
 * twice as much), then the p95 of the one-sample rates and the recent rate. */
#define BURST_MAX 24
struct burst_row {
	const char *name;
	uint64_t per_second[BURST_MAX];
	size_t n;		/* samples */
	uint64_t recent_ms;
	uint64_t p95, recent, peak;
};

static const struct burst_row burst_rows[] = {
	{ "steady: p95 and recent are the average",
	  { 500, 500, 500, 500, 500, 500, 500, 500, 500, 500,
	    500, 500, 500, 500, 500, 500, 500, 500, 500, 500 }, 20, 2000, 500, 500, 500 },
	{ "on/off bursts: p95 is the burst rate, the average half of it",
	  { 1000, 0, 1000, 0, 1000, 0, 1000, 0, 1000, 0,
	    1000, 0, 1000, 0, 1000, 0, 1000, 0, 1000, 0 }, 20, 2000, 1000, 500, 1000 },
	{ "a step in the last two samples: recent has it all, p95 already too",
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 900, 900 }, 20, 2000,
	  900, 900, 900 },
	{ "a step in the last sample: recent at once, p95 not yet",
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 900 }, 20, 2000,
	  0, 450, 900 },
	{ "one spike in twenty: the peak sees it, p95 does not",
	  { 10, 10, 10, 10, 10, 5000, 10, 10, 10, 10,
	    10, 10, 10, 10, 10, 10, 10, 10, 10, 10 }, 20, 2000, 10, 10, 5000 },
	{ "recent shorter than a sample is the newest sample",
	  { 100, 100, 100, 700 }, 4, 1, 700, 700, 700 },
	{ "nearest rank: 2 samples, p95 is the larger",
	  { 300, 100 }, 2, 5000, 300, 200, 300 },
	{ "no sample: all zero", { 0 }, 0, 2000, 0, 0, 0 },
};

static void test_window_burst(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(burst_rows) / sizeof(burst_rows[0]); r++) {
		const struct burst_row *row = &burst_rows[r];
		struct ifreading c = { 0 };
		struct window_stats st;
		struct window w;

		assert_int_equal(window_init(&w, BURST_MAX + 1), 0);
		window_add(&w, 0, &c, 2000 * MS, 0);
		for (size_t i = 0; i < row->n; i++) {
			c.rx_bytes += row->per_second[i];
			c.tx_bytes += 2 * row->per_second[i];
			assert_int_equal(window_add(&w, (i + 1) * 1000 * MS, &c, 2000 * MS, 0),
					 WINDOW_DELTA);
		}
		window_stats(&w, row->n * 1000 * MS, (BURST_MAX + 1) * 1000 * MS,
			     row->recent_ms * MS, &st);
		if (st.traffic.rx.p95 != row->p95 ||
		    st.traffic.rx.recent != row->recent ||
		    st.traffic.rx.peak != row->peak ||
		    st.traffic.tx.p95 != 2 * row->p95 ||
		    st.traffic.tx.recent != 2 * row->recent)
			fail_msg("%s: got p95 %llu recent %llu peak %llu (tx p95 %llu recent %llu); "
				 "want p95 %llu recent %llu peak %llu", row->name,
				 (unsigned long long)st.traffic.rx.p95,
				 (unsigned long long)st.traffic.rx.recent,
				 (unsigned long long)st.traffic.rx.peak,
				 (unsigned long long)st.traffic.tx.p95,
				 (unsigned long long)st.traffic.tx.recent,
				 (unsigned long long)row->p95, (unsigned long long)row->recent,
				 (unsigned long long)row->peak);
		window_free(&w);
	}
}

/* Gaps take no part in the percentile and the recent rate skips them. */
static void test_window_burst_gap(void **state)
{
	struct ifreading c = { 0 };
	struct window_stats st;
	struct window w;

	(void)state;
	assert_int_equal(window_init(&w, 8), 0);
	window_add(&w, 0, &c, 2000 * MS, 0);
	c.rx_bytes = 800;
	window_add(&w, 1000 * MS, &c, 2000 * MS, 0);
	window_gap(&w, 2000 * MS);
	window_stats(&w, 2000 * MS, 8000 * MS, 500 * MS, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.traffic.rx.p95, 800);
	assert_int_equal(st.traffic.rx.recent, 800);
	window_free(&w);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The p95 against a sorted reference, over windows of 1 to 300 samples
 * whose rates repeat a lot, rise, fall or are random: the selection must
 * give exactly the nearest-rank value every time. */
static void test_window_p95_matches_sorting(void **state)
{
	static uint64_t rates[301], sorted[301];
	uint64_t seed = 88172645463325252ULL;

	(void)state;
	for (uint32_t round = 0; round < 600; round++) {
		uint32_t n = 1 + round % 300, shape = round % 4;
		struct ifreading c = { 0 };
		struct window_stats st;
		struct window w;
		uint64_t want;

		assert_int_equal(window_init(&w, n + 1), 0);
		window_add(&w, 0, &c, 2000 * MS, 0);
		for (uint32_t i = 0; i < n; i++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			rates[i] = shape == 0 ? seed % 4 : shape == 1 ? i : shape == 2 ? n - i : seed;
			rates[i] %= 1ULL << 40;
			c.rx_bytes += rates[i];
			window_add(&w, (i + 1) * 1000 * MS, &c, 2000 * MS, 0);
		}
		memcpy(sorted, rates, n * sizeof(*rates));
		qsort(sorted, n, sizeof(*sorted), by_value);
		want = sorted[(n * 95 + 99) / 100 - 1];
		window_stats(&w, n * 1000 * MS, (n + 1) * 1000 * MS, 1000 * MS, &st);
		if (st.traffic.rx.p95 != want)
			fail_msg("round %u: %u samples, shape %u: p95 %llu, want %llu", round, n, shape,
				 (unsigned long long)st.traffic.rx.p95,
				 (unsigned long long)want);
		window_free(&w);
	}
}

static void test_window_init_rejects_zero(void **state)
{
	struct window w;

	(void)state;
	assert_int_equal(window_init(&w, 0), -EINVAL);
	window_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_rows),
		cmocka_unit_test(test_window_counts_events),
		cmocka_unit_test(test_window_clear),
		cmocka_unit_test(test_window_drops),
		cmocka_unit_test(test_window_burst),
		cmocka_unit_test(test_window_burst_gap),
		cmocka_unit_test(test_window_p95_matches_sorting),
		cmocka_unit_test(test_window_init_rejects_zero),
	};
	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
