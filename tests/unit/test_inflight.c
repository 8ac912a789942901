/* In-flight pods (scorer/pods/inflight.c): assume, confirm, move, drop, expire,
 * fade, ties, the caps, and a random sequence checked against a model of
 * the per-node sums. Time is passed in by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/pods/inflight.h"

#define T0 (1000ULL * NS_PER_SEC)
#define HOLD (10ULL * NS_PER_SEC)
#define FADE (4ULL * NS_PER_SEC)
#define EXPIRE (3ULL * NS_PER_SEC)
/* What podweight.h would give: a fallback weight per undeclared
 * direction (EST + PEN, two parts only so the sums read), or what a pod
 * declares (PEN added to its figure, as a weight may differ from what it
 * reserves). */
#define EST 1000u
#define PEN 100u

static struct inflight_config config(size_t max_pods, size_t max_nodes)
{
	struct inflight_config c = {
		.max_pods = max_pods,
		.max_nodes = max_nodes,
		.hold_ns = HOLD,
		.fade_ns = FADE,
		.expire_ns = EXPIRE,
	};
	return c;
}

static int setup(void **state)
{
	struct inflight_config c = config(64, 64);

	*state = inflight_create(&c);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	inflight_destroy(*state);
	return 0;
}

static const struct inflight_pod plain = { EST + PEN, EST + PEN, 0, 0, true, true,
					   "default/plain", INFLIGHT_GUESSED };

static int assume1(struct inflight *in, const char *uid, const struct inflight_pod *pod,
		   const char *node, uint64_t now)
{
	struct inflight_name n = { node, strlen(node), 0 };

	return inflight_assume(in, uid, strlen(uid), pod, &n, 1, now);
}

static int bound(struct inflight *in, const char *uid, const char *node, uint64_t at,
		 uint64_t now)
{
	return inflight_bound(in, uid, strlen(uid), node, strlen(node), &plain, at, now);
}

static struct inflight_load load(struct inflight *in, const char *node)
{
	struct inflight_load l;

	inflight_get(in, node, strlen(node), NULL, 0, &l);
	return l;
}

static struct inflight_stats stats(struct inflight *in)
{
	struct inflight_stats st;

	inflight_stats(in, &st);
	return st;
}

/* An assumption counts on its node at once, with the estimate plus the
 * penalty per direction; other nodes see nothing. */
static void test_inflight_assume(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;

	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_true(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(l.rx_bytes_per_second, EST + PEN);
	assert_int_equal(l.tx_bytes_per_second, EST + PEN);
	assert_int_equal(l.reserved_rx_bytes_per_second, 0);
	assert_int_equal(l.milli_pods, 1000);
	assert_int_equal(l.unknown_rx_milli, 1000);
	assert_int_equal(l.unknown_tx_milli, 1000);
	assert_false(inflight_get(in, "b", 1, NULL, 0, &l));
	assert_int_equal(assume1(in, "uid-2", &plain, "a", T0 + 1), 0);
	assert_int_equal(load(in, "a").milli_pods, 2000);
	assert_int_equal(load(in, "a").rx_bytes_per_second, 2 * (EST + PEN));
	assert_int_equal(stats(in).assumed, 2);
	assert_int_equal(stats(in).pods, 2);
	assert_int_equal(stats(in).nodes, 1);
}

/* A declared direction weighs and reserves what podweight.h gave it; the
 * other keeps its fallback weight, reserves nothing and counts as
 * unknown. */
static void test_inflight_declared(void **state)
{
	struct inflight *in = *state;
	/* 10 kB/s in, declared; out unknown. */
	struct inflight_pod asks = { 10000 + PEN, EST + PEN, 10000, 0, false, true, "default/asks",
				     INFLIGHT_GUESSED };
	struct inflight_load l;

	assert_int_equal(assume1(in, "uid-1", &asks, "a", T0), 0);
	l = load(in, "a");
	assert_int_equal(l.rx_bytes_per_second, 10000 + PEN);
	assert_int_equal(l.tx_bytes_per_second, EST + PEN);
	assert_int_equal(l.reserved_rx_bytes_per_second, 10000);
	assert_int_equal(l.reserved_tx_bytes_per_second, 0);
	/* Known in, a guess out: only out counts in the node's doubt. */
	assert_int_equal(l.unknown_rx_milli, 0);
	assert_int_equal(l.unknown_tx_milli, 1000);
}

/* The watch confirms the assumption: same node, counted once, bound. A
 * repeated event changes nothing. */
static void test_inflight_confirm(void **state)
{
	struct inflight *in = *state;
	struct inflight_entry *e;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_int_equal(bound(in, "uid-1", "a", T0 + 5, T0 + 10), 0);
	assert_int_equal(bound(in, "uid-1", "a", T0 + 5, T0 + 20), 0);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(stats(in).confirmed, 1);
	assert_int_equal(stats(in).moved, 0);
	assert_int_equal(inflight_list(in, &e), 1);
	assert_string_equal(e[0].node, "a");
	assert_string_equal(e[0].label, "default/plain");
	assert_true(e[0].bound);
	free(e);
	/* Assumed again once bound (a stale retry): ignored. */
	assert_int_equal(assume1(in, "uid-1", &plain, "b", T0 + 30), -EALREADY);
	assert_int_equal(load(in, "b").milli_pods, 0);
}

/* Bound elsewhere: the weight moves, the old node is free again. */
static void test_inflight_move(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_int_equal(bound(in, "uid-1", "b", T0 + 5, T0 + 10), 0);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(load(in, "b").milli_pods, 1000);
	assert_int_equal(stats(in).moved, 1);
	assert_int_equal(stats(in).confirmed, 0);
	assert_int_equal(stats(in).nodes, 1);
}

/* A pod we never assumed (another scheduler): counted if recent, ignored
 * when bound so long ago that its traffic is measured. */
static void test_inflight_observed(void **state)
{
	struct inflight *in = *state;
	uint64_t now = T0 + 100 * NS_PER_SEC;

	assert_int_equal(bound(in, "recent", "a", now - NS_PER_SEC, now), 0);
	assert_int_equal(bound(in, "old", "a", now - HOLD - FADE, now), 0);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(stats(in).observed, 1);
	assert_int_equal(stats(in).pods, 1);
}

/* Deleted: gone at once; an unknown uid is ignored. */
static void test_inflight_drop(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	inflight_drop(in, "uid-1", 5);
	inflight_drop(in, "nobody", 6);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(stats(in).dropped, 1);
	assert_int_equal(stats(in).pods, 0);
	assert_int_equal(stats(in).nodes, 0);
}

/* While a watch is in sync, an assumption it never confirms expires after
 * EXPIRE; a confirmed one stays. Without a watch nothing expires early:
 * the assumption counts as bound where assumed and fades. */
static void test_inflight_expire(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;

	inflight_set_confirming(in, true);
	assert_int_equal(assume1(in, "never", &plain, "a", T0), 0);
	assert_int_equal(assume1(in, "bound", &plain, "b", T0), 0);
	assert_int_equal(bound(in, "bound", "b", T0 + 1, T0 + 1), 0);
	inflight_tick(in, T0 + EXPIRE - 1, true);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	inflight_tick(in, T0 + EXPIRE, true);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(load(in, "b").milli_pods, 1000);
	assert_int_equal(stats(in).expired, 1);

	inflight_set_confirming(in, false);
	assert_int_equal(assume1(in, "nowatch", &plain, "c", T0 + EXPIRE), 0);
	inflight_tick(in, T0 + EXPIRE + HOLD - 1, true);
	assert_int_equal(load(in, "c").milli_pods, 1000);
	assert_int_equal(stats(in).expired, 1);
}

/* Many pods expiring in one tick, spread among the ones that stay: each
 * expired one is gone from its node and every other still counts, once
 * (the tick visits the live pods, not every slot, and freeing one moves
 * another in the list it walks). Then the freed slots serve new pods. */
static void test_inflight_expire_many(void **state)
{
	struct inflight *in = *state;
	char uid[16], node[16];
	struct inflight_entry *e;
	size_t stay = 0;
	long n;

	inflight_set_confirming(in, true);
	for (unsigned i = 0; i < 60; i++) {
		snprintf(uid, sizeof(uid), "u%u", i);
		snprintf(node, sizeof(node), "n%u", i);
		assert_int_equal(assume1(in, uid, &plain, node, T0), 0);
		if (i % 3 == 1) {
			assert_int_equal(bound(in, uid, node, T0 + 1, T0 + 1), 0);
			stay++;
		}
	}
	inflight_tick(in, T0 + EXPIRE, true);
	assert_int_equal(stats(in).expired, 60 - stay);
	assert_int_equal(stats(in).pods, stay);
	for (unsigned i = 0; i < 60; i++) {
		snprintf(node, sizeof(node), "n%u", i);
		assert_int_equal(load(in, node).milli_pods, i % 3 == 1 ? 1000 : 0);
	}
	n = inflight_list(in, &e);
	assert_int_equal(n, (long)stay);
	free(e);

	for (unsigned i = 60; i < 100; i++) {
		snprintf(uid, sizeof(uid), "u%u", i);
		assert_int_equal(assume1(in, uid, &plain, "fresh", T0 + EXPIRE), 0);
	}
	assert_int_equal(load(in, "fresh").milli_pods, 40 * 1000);
	for (unsigned i = 0; i < 100; i++) {
		snprintf(uid, sizeof(uid), "u%u", i);
		inflight_drop(in, uid, strlen(uid));
	}
	assert_int_equal(stats(in).pods, 0);
	inflight_tick(in, T0 + 2 * EXPIRE, true);
	assert_int_equal(stats(in).pods, 0);
}

/* Full weight for HOLD after binding, then linearly down over FADE, then
 * forgotten (faded). Ticks between INFLIGHT_TICK_NS are no-ops unless
 * forced. */
static void test_inflight_fade(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;
	uint64_t b = T0 + NS_PER_SEC;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_int_equal(bound(in, "uid-1", "a", b, b), 0);
	inflight_tick(in, b + HOLD - 1, true);
	assert_int_equal(load(in, "a").rx_bytes_per_second, EST + PEN);
	inflight_tick(in, b + HOLD + FADE / 4, true);
	l = load(in, "a");
	assert_int_equal(l.rx_bytes_per_second, (EST + PEN) * 3 / 4);
	assert_int_equal(l.milli_pods, 750);
	/* Its doubt fades with it. */
	assert_int_equal(l.unknown_rx_milli, 750);
	inflight_tick(in, b + HOLD + FADE / 2, true);
	assert_int_equal(load(in, "a").milli_pods, 500);
	/* Not due yet: nothing changes. */
	inflight_tick(in, b + HOLD + FADE / 2 + INFLIGHT_TICK_NS - 1, false);
	assert_int_equal(load(in, "a").milli_pods, 500);
	inflight_tick(in, b + HOLD + FADE / 2 + INFLIGHT_TICK_NS, false);
	assert_true(load(in, "a").milli_pods < 500);
	inflight_tick(in, b + HOLD + FADE, true);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(stats(in).faded, 1);
	assert_int_equal(stats(in).pods, 0);
	assert_int_equal(stats(in).nodes, 0);
}

/* The join tells how long a node's agent measured a pod's own traffic of
 * its window: the pod's weight gives way in proportion, never more than
 * the hold and fade leave, never back. WIN is the node's window. */
#define WIN 10000u
#define W (EST + PEN)

struct measure_case {
	const char *name;
	unsigned ties;			/* prioritize named "a" (and "b", ... when > 1) */
	const char *bound;		/* the watch's node; NULL: not heard yet */
	const char *measured_on;	/* the node whose agent measured it */
	uint64_t measured_ms[2];	/* successive readings; 0: none */
	uint64_t at;			/* since the assumption */
	const char *on;			/* the node then looked at */
	uint64_t rx;			/* what the pod adds there */
	uint32_t milli;
	uint64_t measured;		/* stats().measured */
};

static const struct measure_case measure_cases[] = {
	{ "half a window: half the weight", 1, "a", "a", { WIN / 2, 0 }, 1, "a", W / 2, 500, 0 },
	{ "a whole window: none", 1, "a", "a", { WIN, 0 }, 1, "a", 0, 0, 1 },
	{ "more than the window: none", 1, "a", "a", { 3 * WIN, 0 }, 1, "a", 0, 0, 1 },
	{ "a quarter, assumed and not bound yet", 1, NULL, "a", { WIN / 4, 0 }, 1, "a",
	  W * 3 / 4, 750, 0 },
	{ "measured on another node than it is on: unchanged", 1, "a", "b", { WIN, 0 }, 1, "a",
	  W, 1000, 0 },
	{ "bound elsewhere than assumed, measured where assumed: unchanged", 1, "b", "a",
	  { WIN, 0 }, 1, "b", W, 1000, 0 },
	{ "tied on two nodes, not bound yet: unchanged (half on each)", 2, NULL, "a", { WIN, 0 },
	  1, "a", W / 2, 500, 0 },
	{ "unmeasured (no pod counters): unchanged", 1, "a", "a", { 0, 0 }, 1, "a", W, 1000, 0 },
	{ "never back: a shorter reading after a longer one", 1, "a", "a", { WIN / 2, WIN / 4 }, 1,
	  "a", W / 2, 500, 0 },
	{ "further: a longer reading after a shorter one", 1, "a", "a", { WIN / 4, WIN * 3 / 4 }, 1,
	  "a", W / 4, 250, 0 },
	{ "never more than the fade leaves", 1, "a", "a", { WIN / 4, 0 }, HOLD + FADE / 2, "a",
	  W / 2, 500, 0 },
	{ "measured below the fade: the measurement", 1, "a", "a", { WIN * 3 / 4, 0 },
	  HOLD + FADE / 2, "a", W / 4, 250, 0 },
};

static void test_inflight_measured(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(measure_cases) / sizeof(measure_cases[0]); c++) {
		const struct measure_case *mc = &measure_cases[c];
		struct inflight_config cfg = config(8, 8);
		struct inflight *in = inflight_create(&cfg);
		struct inflight_name tied[2] = { { "a", 1, 0 }, { "b", 1, 0 } };
		struct inflight_measure m = { "uid-1", 5, 0 };
		struct inflight_entry *e;
		struct inflight_load l;
		long n;

		print_message("case: %s\n", mc->name);
		assert_non_null(in);
		assert_int_equal(inflight_assume(in, "uid-1", 5, &plain, tied, mc->ties, T0), 0);
		if (mc->bound)
			assert_int_equal(bound(in, "uid-1", mc->bound, T0, T0), 0);
		for (size_t k = 0; k < 2 && (k == 0 || mc->measured_ms[k]); k++) {
			m.measured_ms = mc->measured_ms[k];
			inflight_measured(in, mc->measured_on, 1, WIN, &m, 1, T0 + k);
		}
		inflight_tick(in, T0 + mc->at, true);
		inflight_get(in, mc->on, 1, NULL, 0, &l);
		assert_int_equal(l.rx_bytes_per_second, mc->rx);
		assert_int_equal(l.tx_bytes_per_second, mc->rx);
		assert_int_equal(l.milli_pods, mc->milli);
		/* The doubt of a guessed demand is whole on each tied node. */
		assert_int_equal(l.unknown_rx_milli, mc->milli * mc->ties);
		assert_int_equal(stats(in).measured, mc->measured);
		/* Measured whole, it weighs nothing yet stays: a later event of
		 * the watch finds it rather than observing it anew. */
		assert_int_equal(stats(in).pods, 1);
		if (mc->bound) {
			assert_int_equal(bound(in, "uid-1", mc->bound, T0, T0 + mc->at + 1), 0);
			assert_int_equal(load(in, mc->on).milli_pods, mc->milli);
		}
		n = inflight_list(in, &e);
		assert_true(n >= 1);
		for (long k = 0; k < n; k++)
			if (strcmp(e[k].node, mc->on) == 0)
				assert_int_equal(e[k].load.milli_pods, mc->milli);
		free(e);
		inflight_destroy(in);
	}
}

/* Moved after being measured: what the old node measured is not the new
 * node's; a re-assumption starts over; /v1/nodes' figures. */
static void test_inflight_measured_moves(void **state)
{
	struct inflight *in = *state;
	struct inflight_measure m = { "uid-1", 5, WIN / 2 };
	struct inflight_entry *e;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_int_equal(inflight_measured(in, "a", 1, WIN, &m, 1, T0 + 1), 1);
	/* The same reading again: nothing further. */
	assert_int_equal(inflight_measured(in, "a", 1, WIN, &m, 1, T0 + 2), 0);
	assert_int_equal(inflight_list(in, &e), 1);
	assert_int_equal(e[0].measured_ms, WIN / 2);
	assert_int_equal(e[0].window_ms, WIN);
	assert_int_equal(e[0].load.milli_pods, 500);
	free(e);
	assert_int_equal(assume1(in, "uid-1", &plain, "b", T0 + 3), 0);
	assert_int_equal(load(in, "b").milli_pods, 1000);
	assert_int_equal(inflight_measured(in, "b", 1, WIN, &m, 1, T0 + 4), 1);
	assert_int_equal(bound(in, "uid-1", "a", T0 + 5, T0 + 5), 0);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(inflight_list(in, &e), 1);
	assert_int_equal(e[0].measured_ms, 0);
	assert_int_equal(e[0].window_ms, 0);
	free(e);
	/* Bad input changes nothing: an unknown uid, a window of 0, an
	 * empty or oversized name. */
	m.uid = "nobody";
	m.uid_len = 6;
	assert_int_equal(inflight_measured(in, "a", 1, WIN, &m, 1, T0 + 6), 0);
	m.uid = "uid-1";
	m.uid_len = 5;
	assert_int_equal(inflight_measured(in, "a", 1, 0, &m, 1, T0 + 6), 0);
	assert_int_equal(inflight_measured(in, "", 0, WIN, &m, 1, T0 + 6), 0);
	m.uid_len = POD_UID_MAX + 1;
	assert_int_equal(inflight_measured(in, "a", 1, WIN, &m, 1, T0 + 6), 0);
	assert_int_equal(inflight_measured(NULL, "a", 1, WIN, &m, 1, T0 + 6), 0);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(inflight_horizon_ns(in), HOLD + FADE);
	assert_int_equal(inflight_horizon_ns(NULL), 0);
}

/* Ties: the weight split evenly among the tied nodes, the reservation and
 * the doubt of a guessed direction whole on each; confirmation collapses
 * it onto the real node, and a pod bound to a node outside the tie counts
 * as moved. */
static void test_inflight_ties(void **state)
{
	struct inflight *in = *state;
	struct inflight_pod asks = { 1000 + PEN, EST + PEN, 1000, 0, false, true, "default/tied",
				     INFLIGHT_GUESSED };
	struct inflight_name tied[] = { { "a", 1, 0 }, { "b", 1, 0 }, { "c", 1, 0 }, { "d", 1, 0 } };
	struct inflight_load l;

	assert_int_equal(inflight_assume(in, "uid-1", 5, &asks, tied, 4, T0), 0);
	for (size_t i = 0; i < 4; i++) {
		l = load(in, tied[i].s);
		assert_int_equal(l.milli_pods, 250);
		assert_int_equal(l.rx_bytes_per_second, (1000 + PEN) / 4);
		assert_int_equal(l.tx_bytes_per_second, (EST + PEN) / 4);
		assert_int_equal(l.reserved_rx_bytes_per_second, 1000);
		assert_int_equal(l.unknown_rx_milli, 0);
		assert_int_equal(l.unknown_tx_milli, 1000);
	}
	assert_int_equal(bound(in, "uid-1", "c", T0 + 1, T0 + 1), 0);
	assert_int_equal(stats(in).confirmed, 1);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(load(in, "c").milli_pods, 1000);
	assert_int_equal(stats(in).nodes, 1);

	assert_int_equal(inflight_assume(in, "uid-2", 5, &plain, tied, 2, T0), 0);
	assert_int_equal(bound(in, "uid-2", "d", T0 + 1, T0 + 1), 0);
	assert_int_equal(stats(in).moved, 1);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_false(inflight_get(in, "b", 1, NULL, 0, &l));
	assert_int_equal(load(in, "d").milli_pods, 1000);
}

/* More tied nodes than INFLIGHT_TIE_MAX: the first ones in the
 * scheduler's order; the same name twice counts once. */
static void test_inflight_many_ties(void **state)
{
	struct inflight *in = *state;
	struct inflight_name tied[INFLIGHT_TIE_MAX + 4];
	char names[INFLIGHT_TIE_MAX + 4][8];
	struct inflight_load l;

	for (size_t i = 0; i < INFLIGHT_TIE_MAX + 4; i++) {
		snprintf(names[i], sizeof(names[i]), "n%zu", i);
		tied[i].s = names[i];
		tied[i].len = strlen(names[i]);
	}
	assert_int_equal(inflight_assume(in, "uid-1", 5, &plain, tied, INFLIGHT_TIE_MAX + 4, T0), 0);
	assert_int_equal(load(in, "n0").milli_pods, 1000 / INFLIGHT_TIE_MAX);
	assert_int_equal(load(in, names[INFLIGHT_TIE_MAX - 1]).milli_pods, 1000 / INFLIGHT_TIE_MAX);
	assert_false(inflight_get(in, names[INFLIGHT_TIE_MAX], strlen(names[INFLIGHT_TIE_MAX]), NULL, 0, &l));
	tied[1] = tied[0];
	assert_int_equal(inflight_assume(in, "uid-2", 5, &plain, tied, 2, T0), 0);
	assert_int_equal(load(in, "n0").milli_pods, 1000 + 1000 / INFLIGHT_TIE_MAX);
}

/* A pod assumed again (the scheduler retried it) moves to the new
 * prediction without counting twice. */
static void test_inflight_reassume(void **state)
{
	struct inflight *in = *state;
	struct inflight_load l;

	assert_int_equal(assume1(in, "uid-1", &plain, "a", T0), 0);
	assert_int_equal(assume1(in, "uid-1", &plain, "b", T0 + NS_PER_SEC), 0);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(load(in, "b").milli_pods, 1000);
	assert_int_equal(stats(in).pods, 1);
	assert_int_equal(stats(in).assumed, 2);
}

/* A node's load for a retried pod leaves out that pod's own share, on
 * every node it is counted on and only there; other pods' shares stay. */
static void test_inflight_except(void **state)
{
	struct inflight *in = *state;
	struct inflight_name ab[] = { { "a", 1, 0 }, { "b", 1, 0 } };
	struct inflight_load l;

	assert_int_equal(inflight_assume(in, "uid-1", 5, &plain, ab, 2, T0), 0);
	assert_int_equal(assume1(in, "uid-2", &plain, "a", T0), 0);
	assert_true(inflight_get(in, "a", 1, "uid-1", 5, &l));
	assert_int_equal(l.milli_pods, 1000);
	assert_int_equal(l.rx_bytes_per_second, EST + PEN);
	inflight_get(in, "b", 1, "uid-1", 5, &l);
	assert_int_equal(l.milli_pods, 0);
	assert_int_equal(l.rx_bytes_per_second, 0);
	/* Counted elsewhere, unknown, or no UID: the whole load. */
	inflight_get(in, "b", 1, "uid-2", 5, &l);
	assert_int_equal(l.milli_pods, 500);
	inflight_get(in, "a", 1, "uid-9", 5, &l);
	assert_int_equal(l.milli_pods, 1500);
	inflight_get(in, "a", 1, "", 0, &l);
	assert_int_equal(l.milli_pods, 1500);
	/* Nothing changed: the exception is per question. */
	assert_int_equal(load(in, "a").milli_pods, 1500);
	assert_int_equal(load(in, "b").milli_pods, 500);
}

/* The caps: when the pod or node slots are full, the oldest unconfirmed
 * assumption gives way (displaced) to a newer assumption or a bound pod; a
 * bound pod never gives way to either. Only when every slot holds a bound
 * pod is a new one refused, counted, and changes nothing; room comes back
 * when pods leave. */
static void test_inflight_caps(void **state)
{
	struct inflight_config c = config(3, 2);
	struct inflight *in = inflight_create(&c);
	struct inflight_name two[] = { { "a", 1, 0 }, { "z", 1, 0 } };
	struct inflight_load l;

	(void)state;
	assert_non_null(in);
	assert_int_equal(assume1(in, "p1", &plain, "a", T0), 0);
	assert_int_equal(assume1(in, "p2", &plain, "b", T0 + 1), 0);
	/* A third node: the oldest assumption (p1, on a) makes room. */
	assert_int_equal(assume1(in, "p3", &plain, "c", T0 + 2), 0);
	assert_false(inflight_get(in, "a", 1, NULL, 0, &l));
	assert_int_equal(load(in, "c").milli_pods, 1000);
	assert_int_equal(stats(in).displaced, 1);
	/* p2 is confirmed: from now on it stays. p3 gives way for a. */
	assert_int_equal(bound(in, "p2", "b", T0 + 3, T0 + 3), 0);
	assert_int_equal(assume1(in, "p4", &plain, "a", T0 + 4), 0);
	assert_false(inflight_get(in, "c", 1, NULL, 0, &l));
	assert_int_equal(load(in, "b").milli_pods, 1000);
	/* The pod slots: p5 (observed, bound) takes the free one; p6 pushes
	 * out p4, the one assumption left; p7 (bound) pushes out p6. */
	assert_int_equal(bound(in, "p5", "b", T0 + 5, T0 + 5), 0);
	assert_int_equal(assume1(in, "p6", &plain, "a", T0 + 6), 0);
	assert_int_equal(bound(in, "p7", "a", T0 + 7, T0 + 7), 0);
	assert_int_equal(stats(in).displaced, 4);
	assert_int_equal(stats(in).pods, 3);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(load(in, "b").milli_pods, 2000);
	/* Every slot bound: refused, as an assumption and as a bound pod. */
	assert_int_equal(assume1(in, "p8", &plain, "a", T0 + 8), -ENOSPC);
	assert_int_equal(bound(in, "p8", "a", T0 + 8, T0 + 8), -ENOSPC);
	assert_int_equal(stats(in).cap_hits, 2);
	/* A pod slot free, the node slots bound: a new node is refused, the
	 * pod slot given back; a tie with a node that does not fit is
	 * refused as a whole. */
	inflight_drop(in, "p2", 2);
	assert_int_equal(assume1(in, "p9", &plain, "c", T0 + 9), -ENOSPC);
	assert_false(inflight_get(in, "c", 1, NULL, 0, &l));
	assert_int_equal(inflight_assume(in, "p9", 2, &plain, two, 2, T0 + 9), -ENOSPC);
	assert_int_equal(load(in, "a").milli_pods, 1000);
	assert_int_equal(stats(in).cap_hits, 4);
	assert_int_equal(stats(in).pods, 2);
	assert_int_equal(assume1(in, "p9", &plain, "a", T0 + 9), 0);
	assert_int_equal(stats(in).displaced, 4);
	inflight_destroy(in);
}

/* One requester floods made-up pods, each declaring 400G on 8 made-up
 * tied nodes, three times the pod slots (today: 1,264 requests filled the
 * node slots, 10,050 the pod slots, and real pods were then not counted).
 * The pods the watch saw bound before stay counted; a real assumption and a
 * real binding after the flood are counted; nothing is refused. At two
 * sizes: a small cluster and the defaults. */
static void flood(size_t max_pods, size_t max_nodes)
{
	struct inflight_config c = config(max_pods, max_nodes);
	struct inflight *in = inflight_create(&c);
	/* 400G declared each way: weight and reserve. */
	struct inflight_pod made_up = { 50000000000ULL, 50000000000ULL, 50000000000ULL,
					50000000000ULL, false, false, "x/made-up", INFLIGHT_DECLARED };
	char uid[32], names[INFLIGHT_TIE_MAX][32];
	uint64_t now = T0;

	assert_non_null(in);
	inflight_set_confirming(in, true);
	for (unsigned i = 0; i < 10; i++) {
		snprintf(uid, sizeof(uid), "real-%u", i);
		snprintf(names[0], sizeof(names[0]), "r%u", i);
		assert_int_equal(bound(in, uid, names[0], now, now), 0);
	}
	for (size_t p = 0; p < 3 * max_pods; p++) {
		struct inflight_name tied[INFLIGHT_TIE_MAX];

		for (unsigned k = 0; k < INFLIGHT_TIE_MAX; k++) {
			snprintf(names[k], sizeof(names[k]), "fake-%zu-%u", p, k);
			tied[k] = (struct inflight_name){ names[k], strlen(names[k]), 0 };
		}
		snprintf(uid, sizeof(uid), "fake-%zu", p);
		if (inflight_assume(in, uid, strlen(uid), &made_up, tied, INFLIGHT_TIE_MAX, now))
			fail_msg("%zu/%zu: made-up pod %zu refused", max_pods, max_nodes, p);
		now += NS_PER_MS;
	}
	for (unsigned i = 0; i < 10; i++) {
		snprintf(names[0], sizeof(names[0]), "r%u", i);
		if (load(in, names[0]).milli_pods != 1000)
			fail_msg("%zu/%zu: bound pod on %s no longer counted", max_pods, max_nodes,
				 names[0]);
	}
	assert_int_equal(assume1(in, "real-assumed", &plain, "r0", now), 0);
	assert_int_equal(bound(in, "real-late", "r1", now, now), 0);
	assert_int_equal(load(in, "r0").milli_pods, 2000);
	assert_int_equal(load(in, "r1").milli_pods, 2000);
	assert_int_equal(stats(in).cap_hits, 0);
	assert_true(stats(in).pods <= max_pods && stats(in).nodes <= max_nodes);
	assert_true(stats(in).displaced >= 2 * max_pods);
	inflight_destroy(in);
}

static void test_inflight_flood(void **state)
{
	(void)state;
	flood(64, 32);
	flood(10000, 10000);
}

/* A declared rate (weight and reserve) counts at most the widest known link
 * of the nodes it is assumed on: 400G on a 1 Gb/s node weighs that node's
 * link, and fades from there; with no link known it counts whole. A pod
 * the watch saw bound is taken as declared. */
static void test_inflight_link_cap(void **state)
{
	struct inflight *in = *state;
	/* 400G declared in: weight and reserve; out a guess. */
	struct inflight_pod huge = { 50000000000ULL, EST + PEN, 50000000000ULL, 0, false, true,
				     "x/huge", INFLIGHT_GUESSED };
	struct inflight_name one = { "a", 1, 125000000 };	/* 1 Gb/s */
	struct inflight_name mixed[] = { { "b", 1, 12500000 }, { "c", 1, 125000000 } };
	struct inflight_name unknown = { "d", 1, 0 };
	struct inflight_load l;

	assert_int_equal(inflight_assume(in, "u1", 2, &huge, &one, 1, T0), 0);
	l = load(in, "a");
	assert_int_equal(l.reserved_rx_bytes_per_second, 125000000);
	assert_int_equal(l.rx_bytes_per_second, 125000000);
	assert_int_equal(l.reserved_tx_bytes_per_second, 0);
	/* Half way through the fade: half the link, not 200G. */
	inflight_tick(in, T0 + HOLD + FADE / 2, true);
	assert_int_equal(load(in, "a").reserved_rx_bytes_per_second, 125000000 / 2);
	assert_int_equal(inflight_assume(in, "u2", 2, &huge, mixed, 2, T0 + HOLD + FADE / 2), 0);
	assert_int_equal(load(in, "b").reserved_rx_bytes_per_second, 125000000);
	assert_int_equal(inflight_assume(in, "u3", 2, &huge, &unknown, 1, T0), 0);
	assert_int_equal(load(in, "d").reserved_rx_bytes_per_second, 400000000000ULL / 8);
	assert_int_equal(inflight_bound(in, "u4", 2, "e", 1, &huge, T0 + HOLD + FADE / 2,
					T0 + HOLD + FADE / 2), 0);
	assert_int_equal(load(in, "e").reserved_rx_bytes_per_second, 400000000000ULL / 8);
}

/* Bad arguments change nothing. */
static void test_inflight_bad_input(void **state)
{
	struct inflight *in = *state;
	char uid[POD_UID_MAX + 2], node[NODENAME_MAX_LEN + 2];
	struct inflight_name n = { "a", 1, 0 };
	struct inflight_config zero = config(0, 1);

	memset(uid, 'u', sizeof(uid));
	memset(node, 'n', sizeof(node));
	assert_int_equal(inflight_assume(in, uid, POD_UID_MAX + 1, &plain, &n, 1, T0), -EINVAL);
	assert_int_equal(inflight_assume(in, "", 0, &plain, &n, 1, T0), -EINVAL);
	assert_int_equal(inflight_assume(in, "u", 1, &plain, &n, 0, T0), -EINVAL);
	n.len = NODENAME_MAX_LEN + 1;
	n.s = node;
	assert_int_equal(inflight_assume(in, "u", 1, &plain, &n, 1, T0), -EINVAL);
	assert_int_equal(inflight_bound(in, "u", 1, node, NODENAME_MAX_LEN + 1, &plain, T0, T0),
			 -EINVAL);
	assert_int_equal(inflight_bound(in, "u", 1, "", 0, &plain, T0, T0), -EINVAL);
	assert_int_equal(inflight_assume(in, uid, POD_UID_MAX, &plain, &n, 1, T0), -EINVAL);
	assert_int_equal(stats(in).pods, 0);
	assert_int_equal(stats(in).assumed, 0);
	assert_null(inflight_create(&zero));
	/* A label with control bytes is made printable. */
	struct inflight_pod odd = { 0, 0, 0, 0, false, false, "ns/a\nb", INFLIGHT_DECLARED };
	struct inflight_entry *e;

	assert_int_equal(assume1(in, "u", &odd, "a", T0), 0);
	assert_int_equal(inflight_list(in, &e), 1);
	assert_string_equal(e[0].label, "ns/a?b");
	free(e);
}

/* A random sequence of every operation; after each, every node's sums
 * equal a model's recomputation from the pods alive, and nothing leaks
 * (the node count returns to zero once every pod is gone). */
#define MODEL_PODS 24
#define MODEL_NODES 6
struct model_pod {
	bool alive, bound;
	unsigned nodes[INFLIGHT_TIE_MAX];
	unsigned n;
	uint64_t t0;
};

static void test_inflight_model(void **state)
{
	struct inflight *in = *state;
	struct model_pod m[MODEL_PODS] = { 0 };
	char names[MODEL_NODES][4], uid[16];
	uint64_t now = T0;
	unsigned compared = 0;

	(void)state;
	srand(7);
	for (unsigned i = 0; i < MODEL_NODES; i++)
		snprintf(names[i], sizeof(names[i]), "n%u", i);
	for (unsigned step = 0; step < 4000; step++) {
		unsigned p = (unsigned)rand() % MODEL_PODS, op = (unsigned)rand() % 5;
		unsigned node = (unsigned)rand() % MODEL_NODES;
		struct model_pod *mp = &m[p];

		now += (uint64_t)(rand() % 100) * NS_PER_MS;
		snprintf(uid, sizeof(uid), "pod-%u", p);
		if (op <= 1 && !(mp->alive && mp->bound)) {
			struct inflight_name tied[3] = { { NULL, 0, 0 } };
			unsigned k = 1 + (unsigned)rand() % 3;

			for (unsigned j = 0; j < k; j++) {
				tied[j].s = names[(node + j) % MODEL_NODES];
				tied[j].len = strlen(tied[j].s);
				mp->nodes[j] = (node + j) % MODEL_NODES;
			}
			assert_int_equal(inflight_assume(in, uid, strlen(uid), &plain, tied, k, now), 0);
			*mp = (struct model_pod){ true, false, { 0 }, k, now };
			for (unsigned j = 0; j < k; j++)
				mp->nodes[j] = (node + j) % MODEL_NODES;
		} else if (op == 2) {
			assert_int_equal(bound(in, uid, names[node], now, now), 0);
			if (!(mp->alive && mp->bound && mp->nodes[0] == node))
				*mp = (struct model_pod){ true, true, { node }, 1, now };
		} else if (op == 3) {
			inflight_drop(in, uid, strlen(uid));
			mp->alive = false;
		} else {
			inflight_tick(in, now, true);
			for (unsigned i = 0; i < MODEL_PODS; i++)
				if (m[i].alive && now - m[i].t0 >= HOLD + FADE)
					m[i].alive = false;
		}
		/* Only compare at full weight: forced ticks age everyone. */
		for (unsigned nd = 0; nd < MODEL_NODES; nd++) {
			uint64_t want = 0, got = load(in, names[nd]).milli_pods;
			bool fading = false;

			for (unsigned i = 0; i < MODEL_PODS; i++) {
				if (!m[i].alive)
					continue;
				fading |= now - m[i].t0 >= HOLD;
				for (unsigned j = 0; j < m[i].n; j++)
					if (m[i].nodes[j] == nd)
						want += 1000 / m[i].n; /* split among ties */
			}
			compared += !fading;
			if (!fading && got != want)
				fail_msg("step %u: node %s counts %llu milli-pods, model %llu", step,
					 names[nd], (unsigned long long)got, (unsigned long long)want);
		}
	}
	/* The comparison really ran, not only the fading steps. */
	assert_true(compared > 4000 * MODEL_NODES / 2);
	for (unsigned i = 0; i < MODEL_PODS; i++) {
		snprintf(uid, sizeof(uid), "pod-%u", i);
		inflight_drop(in, uid, strlen(uid));
	}
	assert_int_equal(stats(in).pods, 0);
	assert_int_equal(stats(in).nodes, 0);
	for (unsigned nd = 0; nd < MODEL_NODES; nd++)
		assert_int_equal(load(in, names[nd]).milli_pods, 0);
}

/* ------------------------------------------- pods that never run (issue 39) */

#define UNSTARTED (25ULL * NS_PER_SEC)
#define LINK_100M 12500000ULL		/* 100 Mb/s */
#define LINK_10G 1250000000ULL		/* 10 Gb/s */

static int setup_unstarted(void **state)
{
	struct inflight_config c = config(64, 64);

	/* The shipped hold and fade, so "stops counting" is not the fade's. */
	c.hold_ns = 70 * NS_PER_SEC;
	c.fade_ns = 60 * NS_PER_SEC;
	c.unstarted_ns = UNSTARTED;
	*state = inflight_create(&c);
	return *state ? 0 : -1;
}

/* A pod declaring ingress bps, as podweight.h gives it. */
static struct inflight_pod declaring(uint64_t bps)
{
	return (struct inflight_pod){ bps / 8, 0, bps / 8, 0, false, false, "t/hog",
				      INFLIGHT_DECLARED };
}

/* The watch: uid bound to node (link bytes a second; 0 unknown) at at,
 * started or not. */
static int watched(struct inflight *in, const char *uid, const struct inflight_pod *pod,
		   const char *node, uint64_t link, bool started, uint64_t at, uint64_t now)
{
	struct inflight_binding b = { uid, strlen(uid), { node, strlen(node), link }, at, started,
				      started ? NULL : "ImagePullBackOff" };

	return inflight_bound_run(in, &b, pod, now);
}

/* A tenant's pod the scheduler placed through us, declaring 10G on a
 * 100M node, bound, never running (a bad image): capped at the node's
 * link while it weighs (the watch's path included), and weighing nothing
 * from 25 s after binding, long before its 70 s hold; it weighs again
 * when it starts. */
static void test_inflight_never_runs(void **state)
{
	struct inflight *in = *state;
	struct inflight_pod hog = declaring(10000000000ULL);
	struct inflight_name n1 = { "n1", 2, LINK_100M };

	assert_int_equal(inflight_assume(in, "hog", 3, &hog, &n1, 1, T0), 0);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	assert_int_equal(watched(in, "hog", &hog, "n1", LINK_100M, false, T0, T0 + NS_PER_SEC), 0);
	inflight_tick(in, T0 + NS_PER_SEC, true);
	assert_int_equal(load(in, "n1").rx_bytes_per_second, LINK_100M);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	inflight_tick(in, T0 + UNSTARTED - NS_PER_SEC, true);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	inflight_tick(in, T0 + UNSTARTED, true);
	assert_int_equal(load(in, "n1").rx_bytes_per_second, 0);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, 0);
	assert_int_equal(load(in, "n1").milli_pods, 0);
	assert_int_equal(stats(in).unstarted, 1);
	assert_int_equal(stats(in).pods, 1);
	/* Its image pulled at last: it weighs what its hold leaves. */
	assert_int_equal(watched(in, "hog", &hog, "n1", LINK_100M, true, T0, T0 + 40 * NS_PER_SEC),
			 0);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	/* And stops again (a crash loop): at once, 25 s are long past. */
	assert_int_equal(watched(in, "hog", &hog, "n1", LINK_100M, false, T0, T0 + 50 * NS_PER_SEC),
			 0);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, 0);
	assert_int_equal(stats(in).unstarted, 1);
}

/* A pod we never assumed (made with spec.nodeName, or placed through the
 * other replica), not running, declaring 400G: at most its node's link, or
 * on a node of unknown link the cluster's fastest known link (was 50,000
 * MB/s on a 1,250 MB/s link), and nothing once 25 s passed unstarted.
 * Once it runs it weighs again, within the same caps. */
static void test_inflight_bound_not_started(void **state)
{
	struct inflight *in = *state;
	struct inflight_pod big = declaring(400000000000ULL);

	inflight_set_link_ceiling(in, LINK_10G);
	assert_int_equal(watched(in, "p1", &big, "n1", LINK_100M, false, T0, T0), 0);
	assert_int_equal(watched(in, "p2", &big, "n2", 0, false, T0, T0), 0);
	inflight_tick(in, T0 + NS_PER_SEC, true);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	assert_int_equal(load(in, "n2").reserved_rx_bytes_per_second, LINK_10G);
	assert_int_equal(stats(in).observed, 2);
	assert_int_equal(stats(in).unstarted, 0);
	inflight_tick(in, T0 + UNSTARTED, true);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, 0);
	assert_int_equal(load(in, "n1").rx_bytes_per_second, 0);
	assert_int_equal(load(in, "n2").reserved_rx_bytes_per_second, 0);
	assert_int_equal(stats(in).unstarted, 2);
	assert_int_equal(watched(in, "p1", &big, "n1", LINK_100M, true, T0, T0 + 26 * NS_PER_SEC), 0);
	assert_int_equal(watched(in, "p2", &big, "n2", 0, true, T0, T0 + 26 * NS_PER_SEC), 0);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, LINK_100M);
	assert_int_equal(load(in, "n1").rx_bytes_per_second, LINK_100M);
	assert_int_equal(load(in, "n2").reserved_rx_bytes_per_second, LINK_10G);
}

/* A pod that starts within 25 s keeps its whole hold; a prediction whose
 * nodes' links are all unknown counts at most the fastest known link. */
static void test_inflight_starts_in_time(void **state)
{
	struct inflight *in = *state;
	struct inflight_pod pod = declaring(80000000ULL), big = declaring(400000000000ULL);
	struct inflight_name n1 = { "n1", 2, LINK_100M }, u[2] = { { "u1", 2, 0 }, { "u2", 2, 0 } };

	assert_int_equal(inflight_assume(in, "ok", 2, &pod, &n1, 1, T0), 0);
	assert_int_equal(watched(in, "ok", &pod, "n1", LINK_100M, false, T0, T0), 0);
	assert_int_equal(watched(in, "ok", &pod, "n1", LINK_100M, true, T0, T0 + 20 * NS_PER_SEC), 0);
	inflight_tick(in, T0 + 60 * NS_PER_SEC, true);
	assert_int_equal(load(in, "n1").reserved_rx_bytes_per_second, 10000000);
	assert_int_equal(stats(in).unstarted, 0);
	inflight_set_link_ceiling(in, LINK_10G);
	assert_int_equal(inflight_assume(in, "big", 3, &big, u, 2, T0), 0);
	assert_true(load(in, "u1").reserved_rx_bytes_per_second <= LINK_10G);
	assert_true(load(in, "u2").rx_bytes_per_second <= LINK_10G);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inflight_assume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_declared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_confirm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_move, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_observed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_expire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_expire_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_fade, setup, teardown),
		cmocka_unit_test(test_inflight_measured),
		cmocka_unit_test_setup_teardown(test_inflight_measured_moves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_ties, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_many_ties, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_reassume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_except, setup, teardown),
		cmocka_unit_test(test_inflight_caps),
		cmocka_unit_test(test_inflight_flood),
		cmocka_unit_test_setup_teardown(test_inflight_link_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_model, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_never_runs, setup_unstarted, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_bound_not_started, setup_unstarted,
						teardown),
		cmocka_unit_test_setup_teardown(test_inflight_starts_in_time, setup_unstarted, teardown),
	};
	return cmocka_run_group_tests_name("inflight", tests, NULL, NULL);
}
