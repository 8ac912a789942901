/* The status endpoints, on a scorer with a fake clock: /readyz before and
 * after the warm-up and with fresh data, /v1/nodes with a report that races
 * the reader, /healthz. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "scorer/serve/status.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)

static int setup(void **state)
{
	*state = fake_scorer_new(16, START_NS, 6 * NS_PER_SEC);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	fake_scorer_free(*state);
	return 0;
}

/* node receives rx_per_s bytes per second; the report arrives at arrival. */
static void feed(struct scorer *s, const char *node, uint64_t rx_per_s, uint64_t arrival)
{
	assert_int_equal(fake_feed(s, node, rx_per_s, arrival), TABLE_APPLIED);
}

struct readyz_row {
	const char *name;
	uint64_t after_ns;	/* since start */
	bool feed;		/* a node reported just now */
	unsigned status;
	const char *body;
};

static const struct readyz_row readyz_rows[] = {
	{ "at start, no data", 0, false, 503,
	  "{\"ready\":false,\"freshNodes\":0,\"nodes\":0,\"warmupRemainingSeconds\":6.000}" },
	{ "just before the warm-up ends", 6 * NS_PER_SEC - NS_PER_MS, false, 503,
	  "{\"ready\":false,\"freshNodes\":0,\"nodes\":0,\"warmupRemainingSeconds\":0.001}" },
	{ "warm-up over, still no data", 6 * NS_PER_SEC, false, 200,
	  "{\"ready\":true,\"freshNodes\":0,\"nodes\":0,\"warmupRemainingSeconds\":0.000}" },
	{ "fresh data before the warm-up ends", NS_PER_SEC, true, 200,
	  "{\"ready\":true,\"freshNodes\":1,\"nodes\":1,\"warmupRemainingSeconds\":5.000}" },
};

static void test_status_readyz(void **state)
{
	for (size_t i = 0; i < sizeof(readyz_rows) / sizeof(readyz_rows[0]); i++) {
		const struct readyz_row *row = &readyz_rows[i];
		struct reply r;
		struct scorer *s;

		teardown(state);
		assert_int_equal(setup(state), 0);
		s = *state;
		fake_now = START_NS + row->after_ns;
		if (row->feed)
			feed(s, "n1", 100, fake_now);
		status_readyz(s, &r);
		if (r.status != row->status || !r.body || strcmp(r.body, row->body))
			fail_msg("%s: got %u %s, want %u %s", row->name, r.status, r.body ? r.body : "",
				 row->status, row->body);
		free(r.body);
	}
}

/* One node of /v1/nodes from a fake_feed() report (no burst figures, no
 * drops), under the relative policy on rx. */
static void expect_node(char *buf, size_t len, const char *name, const char *source,
			const char *age, uint64_t rx, int score)
{
	snprintf(buf, len,
		 "{\"name\":\"%s\",\"source\":\"%s\",\"ageSeconds\":%s,\"rxBytesPerSecond\":%llu,"
		 "\"txBytesPerSecond\":0,\"linkBytesPerSecond\":0,\"rxRecentBytesPerSecond\":0,"
		 "\"txRecentBytesPerSecond\":0,\"rxP95BytesPerSecond\":0,\"txP95BytesPerSecond\":0,"
		 "\"rxDropped\":0,\"rxMissed\":0,\"txDropped\":0,\"scoreInputs\":{\"policy\":"
		 "\"relative\",\"direction\":\"rx\",\"averageBytesPerSecond\":%llu,"
		 "\"recentBytesPerSecond\":0,\"p95BytesPerSecond\":0,\"drops\":0,"
		 "\"dropping\":false,\"scoredBytesPerSecond\":%llu},\"score\":%d}",
		 name, source, age, (unsigned long long)rx, (unsigned long long)rx,
		 (unsigned long long)rx, score);
}

/* A report that lands between the reader's clock read and its table read is
 * fresh with age 0, not 18 billion seconds old. */
static void test_status_nodes_race(void **state)
{
	struct scorer *s = *state;
	char want[4096], a[1024], b[1024], c[1024];
	struct reply r;

	feed(s, "busy", 1000, fake_now + NS_PER_MS);
	feed(s, "idle", 0, fake_now - 2 * NS_PER_SEC);
	feed(s, "old", 0, fake_now - 7 * NS_PER_SEC);
	status_nodes(s, &r);
	assert_int_equal(r.status, 200);
	assert_null(r.content_type);
	expect_node(a, sizeof(a), "busy", "agent", "0.000", 1000, 0);
	expect_node(b, sizeof(b), "idle", "agent", "2.000", 0, 10);
	expect_node(c, sizeof(c), "old", "none", "7.000", 0, 5);
	snprintf(want, sizeof(want), "{\"nodes\":[%s,%s,%s]}", a, b, c);
	assert_string_equal(r.body, want);
	free(r.body);
}

/* Under the pressure policy /v1/nodes shows what each score came from:
 * the recent rate, the p95 and the drops next to the average. */
static void test_status_nodes_pressure_inputs(void **state)
{
	struct scorer *s = *state;
	struct report rep = fake_report("bursty", 500, 0, 8000);
	struct reply r;

	s->view.policy = POLICY_PRESSURE;
	s->view.max_drops_per_second = 0; /* any drop */
	s->filter = (struct filter_config){ .max_utilization_pct = 50, .margin_pct = 10,
					    .hold_ms = 30000 };
	table_filter(s->view.table, &s->filter, POLICY_DIR_RX);
	rep.ifaces[0].traffic.rx.peak = 1000;
	rep.ifaces[0].traffic.rx.p95 = 1000;
	rep.ifaces[0].traffic.rx.recent = 600;
	rep.ifaces[0].traffic.tx_dropped = 3;
	assert_int_equal(table_apply(s->view.table, &rep, fake_now), TABLE_APPLIED);
	fake_now += 2500 * NS_PER_MS;
	status_nodes(s, &r);
	assert_int_equal(r.status, 200);
	if (!strstr(r.body, "\"rxRecentBytesPerSecond\":600,\"txRecentBytesPerSecond\":0,"
			    "\"rxP95BytesPerSecond\":1000,\"txP95BytesPerSecond\":0,\"rxDropped\":0,"
			    "\"rxMissed\":0,\"txDropped\":3,\"scoreInputs\":{\"policy\":\"pressure\","
			    "\"direction\":\"rx\",\"averageBytesPerSecond\":500,"
			    "\"recentBytesPerSecond\":600,\"p95BytesPerSecond\":1000,\"drops\":3,"
			    "\"dropping\":true,\"scoredBytesPerSecond\":800},\"filterHeld\":true,\"overSeconds\":2.500,"
			    "\"score\":0"))
		fail_msg("unexpected /v1/nodes: %s", r.body);
	free(r.body);
}

static void test_status_healthz(void **state)
{
	struct scorer *s = *state;
	struct reply r;

	feed(s, "a", 1, fake_now);
	fake_now += 90 * NS_PER_SEC;
	status_healthz(s, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"status\":\"ok\",\"nodes\":1,\"uptimeSeconds\":90}");
	free(r.body);
}




int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status_readyz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_nodes_pressure_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_nodes_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_healthz, setup, teardown),
	};

	log_init("test_status");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
