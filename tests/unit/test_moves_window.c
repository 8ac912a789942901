/* Why a move needs no code to keep a relieved node from refilling at once
 * (scorer/pods/moves.h, "hold"): once the evicted pod's traffic stops, the
 * agent's sliding window (agent/window.c) still holds it. A node at 100
 * MB/s, 40 of them the evicted pod's, over a 30 s window of 1 s samples:
 *  - the average (what the relative and utilization policies score) keeps
 *    (30 - k) / 30 of the pod's rate k seconds after it stopped, down to
 *    nothing when the window has turned over;
 *  - the p95 keeps the whole of it until 95% of the samples are after the
 *    eviction (28 s of 30), so the pressure policy, max(average, recent)
 *    and half the way up to the p95, counts most of it for that long;
 *  - recent drops at once: a policy on recent alone would not hold it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/window.h"
#include "scorer/rules/policy.h"

#define MS 1000000ULL
#define S (1000 * MS)
#define W 30u			/* the window, seconds and samples */
#define BG 60000000ULL		/* the node's other traffic, B/s */
#define POD 40000000ULL		/* the evicted pod's */

static void test_window_holds_evicted_rate(void **state)
{
	struct window w;
	struct ifreading r = { 0 };
	struct window_stats st;
	uint64_t t = 0;

	(void)state;
	assert_int_equal(window_init(&w, W), 0);
	/* A minute at 100 MB/s, the pod's traffic included. */
	for (unsigned i = 0; i <= 60; i++, t += S) {
		window_add(&w, t, &r, 2 * S, 0);
		r.rx_bytes += BG + POD;
	}
	t -= S;
	r.rx_bytes -= BG + POD;
	window_stats(&w, t, W * S, S, &st);
	assert_int_equal(st.traffic.rx.average, BG + POD);
	/* Evicted at t: from here on 60 MB/s. */
	for (unsigned k = 1; k <= W; k++) {
		uint64_t pressure;

		r.rx_bytes += BG;
		window_add(&w, t + k * S, &r, 2 * S, 0);
		window_stats(&w, t + k * S, W * S, S, &st);
		assert_int_equal(st.traffic.rx.recent, BG);
		assert_int_equal(st.traffic.rx.average, BG + POD * (W - k) / W);
		/* p95, nearest rank: the 29th of 30 one-second rates. */
		assert_int_equal(st.traffic.rx.p95, k < 29 ? BG + POD : BG);
		pressure = policy_pressure(st.traffic.rx.average, st.traffic.rx.recent,
					   st.traffic.rx.p95);
		if (k <= 10)	/* a third of the window on: 93 MB/s of the 100 */
			assert_true(pressure >= BG + POD * 83 / 100);
	}
	/* The window has turned over: nothing of the pod is left. */
	assert_int_equal(st.traffic.rx.average, BG);
	window_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_holds_evicted_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
