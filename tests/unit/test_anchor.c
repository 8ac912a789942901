/* Agent clocks behind ours (scorer/reports/anchor.h), on times given by hand: the
 * first report of an instance is held; its next one applies when the
 * agent's clock moved as ours did, whatever the offset between them; a
 * held report sent again, an older one, or two captured reports sent back
 * to back are not a live agent; instances and nodes are judged apart; and
 * the store is bounded, the oldest giving way. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/reports/anchor.h"

#define S NS_PER_SEC
/* The agent's clock: 200 s behind ours, which reads 1,000,000 s. */
#define AGENT_MS(t_ns) (1000000ULL * 1000 - 200000 + (t_ns) / NS_PER_MS)

struct step {
	const char *name;
	const char *node;
	uint64_t instance, seq;
	uint64_t end_ms;	/* the agent's window end */
	uint64_t at_ns;		/* when it arrives here */
	enum anchor_verdict want;
};

static const struct step steps[] = {
	{ "first report of an instance", "n1", 7, 10, AGENT_MS(0), 0, ANCHOR_HELD },
	{ "the same report again", "n1", 7, 10, AGENT_MS(0), 1 * S, ANCHOR_REPLAYED },
	{ "its next one, 2 s on both clocks", "n1", 7, 11, AGENT_MS(2 * S), 2 * S, ANCHOR_LIVE },
	/* Live once: the table orders it from here; a new anchor otherwise. */
	{ "another node, same instance id", "n2", 7, 11, AGENT_MS(2 * S), 2 * S, ANCHOR_HELD },
	{ "two captured reports back to back", "n2", 7, 12, AGENT_MS(4 * S), 2 * S, ANCHOR_HELD },
	{ "... and an older one after", "n2", 7, 11, AGENT_MS(2 * S), 3 * S, ANCHOR_REPLAYED },
	{ "the next at the agent's pace", "n2", 7, 13, AGENT_MS(6 * S), 4 * S, ANCHOR_LIVE },
	{ "a window that did not move", "n3", 9, 1, AGENT_MS(10 * S), 10 * S, ANCHOR_HELD },
	{ "... a higher sequence, same end", "n3", 9, 2, AGENT_MS(10 * S), 12 * S, ANCHOR_HELD },
	{ "... then 2 s on, 0.9 s late", "n3", 9, 3, AGENT_MS(12 * S), 14900000000ULL, ANCHOR_LIVE },
	{ "a window 5 s ahead of our 2 s", "n4", 9, 1, AGENT_MS(20 * S), 20 * S, ANCHOR_HELD },
	{ "... 1.1 s off is too far", "n4", 9, 2, AGENT_MS(27 * S), 23900000000ULL, ANCHOR_HELD },
	{ "... re-anchored, then right", "n4", 9, 3, AGENT_MS(29 * S), 25900000000ULL, ANCHOR_LIVE },
	{ "an instance of another agent", "n1", 8, 1, AGENT_MS(30 * S), 30 * S, ANCHOR_HELD },
};

static void test_anchor_steps(void **state)
{
	struct anchors *a = anchors_create(16);

	(void)state;
	assert_non_null(a);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		enum anchor_verdict v = anchors_judge(a, st->node, strlen(st->node), st->instance,
						      st->seq, st->end_ms, st->at_ns);

		if (v != st->want)
			fail_msg("%s: verdict %d, want %d", st->name, v, st->want);
	}
	anchors_destroy(a);
	anchors_destroy(NULL);
	assert_null(anchors_create(0));
}

/* More instances than room: the oldest anchors give way, so the store
 * never grows; the newest still confirm. */
static void test_anchor_bounded(void **state)
{
	struct anchors *a = anchors_create(64);
	char node[32];
	unsigned live = 0;

	(void)state;
	assert_non_null(a);
	for (unsigned i = 0; i < 10000; i++) {
		snprintf(node, sizeof(node), "node-%u", i);
		assert_int_equal(anchors_judge(a, node, strlen(node), 1, 1, 1000, (uint64_t)i * 1000),
				 ANCHOR_HELD);
	}
	/* The last few are still held: their next report confirms them. */
	for (unsigned i = 9990; i < 10000; i++) {
		snprintf(node, sizeof(node), "node-%u", i);
		live += anchors_judge(a, node, strlen(node), 1, 2, 1000 + 2000,
				      (uint64_t)i * 1000 + 2 * S) == ANCHOR_LIVE;
	}
	assert_int_equal(live, 10);
	/* The first is long gone: its next report is a new anchor. */
	assert_int_equal(anchors_judge(a, "node-0", 6, 1, 2, 3000, 2 * S), ANCHOR_HELD);
	anchors_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anchor_steps),
		cmocka_unit_test(test_anchor_bounded),
	};
	return cmocka_run_group_tests_name("anchor", tests, NULL, NULL);
}
