/* Which nodes exist and where their data comes from (scorer/nodes/view.c), on a
 * scorer with a fake clock and its Prometheus fallback pointed at a real
 * HTTP server (fake_prometheus.h): fresh agent data wins over the
 * fallback, the fallback serves silent and agentless nodes while its data
 * is young enough, and nothing else; the node list every endpoint shows is
 * the table's and the fallback's nodes once each, sorted; the counts by
 * source that /metrics prints add up to that list. */
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
#include "common/log.h"
#include "scorer/pods/inflight.h"
#include "scorer/prom/prom.h"
#include "scorer/scorer.h"
#include "scorer/nodes/view.h"
#include "tests/unit/fake_prometheus.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define STALE_NS (6ULL * NS_PER_SEC)
#define PROM_MAX_AGE_MS 20000u

struct fixture {
	struct scorer *s;
	struct fake_prometheus *fp;
};

/* The table: "both" fresh, "silent" and "quiet" 10 s old. The fallback:
 * "both", "silent" and "agentless". */
static int setup(void **state)
{
	static const char *const nodes[] = { "both", "silent", "agentless" };
	static const double rx[] = { 999, 2000, 3000 }, tx[] = { 1, 20, 30 };
	struct fixture *f = calloc(1, sizeof(*f));
	struct prom_config cfg = { .refresh_ms = 3600 * 1000, .timeout_ms = 5000,
				   .connect_timeout_ms = 5000, .max_age_ms = PROM_MAX_AGE_MS,
				   .max_nodes = 16 };
	char err[256];

	if (!f)
		return -1;
	*state = f;
	f->s = fake_scorer_new(16, START_NS, STALE_NS);
	f->fp = fake_prometheus_start();
	if (!f->s || !f->fp)
		return -1;
	fake_prometheus_vector(f->fp, nodes, rx, tx, 3);
	snprintf(cfg.url, sizeof(cfg.url), "%s", f->fp->url);
	snprintf(cfg.query.device, sizeof(cfg.query.device), "eth0");
	snprintf(cfg.query.range, sizeof(cfg.query.range), "1m");
	f->s->view.prom = prom_start(&cfg, &f->s->counters, f->s->now_ns, err, sizeof(err));
	if (!f->s->view.prom) {
		fprintf(stderr, "prom_start: %s\n", err);
		return -1;
	}
	if (!fake_prometheus_wait(&f->s->counters.prom_refreshes, 1))
		return -1;
	if (fake_feed(f->s, "both", 100, START_NS) != TABLE_APPLIED ||
	    fake_feed(f->s, "silent", 200, START_NS - 10 * NS_PER_SEC) != TABLE_APPLIED ||
	    fake_feed(f->s, "quiet", 300, START_NS - 10 * NS_PER_SEC) != TABLE_APPLIED)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	if (f->s)
		prom_stop(f->s->view.prom);
	fake_prometheus_stop(f->fp);
	fake_scorer_free(f->s);
	free(f);
	return 0;
}

struct get_row {
	const char *name;
	const char *node;
	uint64_t later_ns;	/* past START_NS */
	enum view_source source;
	bool known;
	uint64_t rx, tx;
	uint64_t age_ns;
	const char *label;
};

static const struct get_row get_rows[] = {
	{ "fresh agent data wins", "both", 0, VIEW_AGENT, true, 100, 0, 0, "eth0" },
	{ "silent agent: the fallback", "silent", 0, VIEW_PROMETHEUS, true, 2000, 20, 0, "prometheus" },
	{ "no agent ever: the fallback", "agentless", 0, VIEW_PROMETHEUS, false, 3000, 30, 0, "prometheus" },
	{ "silent, not in the fallback", "quiet", 0, VIEW_NONE, true, 0, 0, 10 * NS_PER_SEC, "" },
	{ "unknown everywhere", "nobody", 0, VIEW_NONE, false, 0, 0, 0, "" },
	{ "agent data just fresh", "both", STALE_NS, VIEW_AGENT, true, 100, 0, STALE_NS, "eth0" },
	{ "agent stale, fallback still young", "both", STALE_NS + 1, VIEW_PROMETHEUS, true, 999, 1,
	  STALE_NS + 1, "prometheus" },
	{ "fallback too old: nothing", "agentless", PROM_MAX_AGE_MS * NS_PER_MS + 1, VIEW_NONE,
	  false, 0, 0, 0, "" },
	{ "fallback too old, agent silent", "silent", PROM_MAX_AGE_MS * NS_PER_MS + 1, VIEW_NONE,
	  true, 0, 0, 10 * NS_PER_SEC + PROM_MAX_AGE_MS * NS_PER_MS + 1, "" },
};

static void test_view_get(void **state)
{
	struct fixture *f = *state;

	for (size_t r = 0; r < sizeof(get_rows) / sizeof(get_rows[0]); r++) {
		const struct get_row *row = &get_rows[r];
		struct policy_node pn;
		struct view_node v;

		view_get(&f->s->view, row->node, strlen(row->node), NULL, 0, START_NS + row->later_ns, &v);
		if (v.source != row->source || v.known != row->known ||
		    v.traffic.rx.average != row->rx || v.traffic.tx.average != row->tx ||
		    v.age_ns != row->age_ns || strcmp(v.label, row->label))
			fail_msg("%s: %s from %s (known %d): rx %llu tx %llu age %llu label \"%s\"; want "
				 "%s (known %d): rx %llu tx %llu age %llu label \"%s\"", row->name,
				 row->node, view_source_name(v.source), v.known,
				 (unsigned long long)v.traffic.rx.average,
				 (unsigned long long)v.traffic.tx.average, (unsigned long long)v.age_ns,
				 v.label, view_source_name(row->source), row->known,
				 (unsigned long long)row->rx, (unsigned long long)row->tx,
				 (unsigned long long)row->age_ns, row->label);
		/* The policy sees data exactly when some source serves it. */
		view_policy_input(&f->s->view, &v, &pn);
		assert_int_equal(pn.has_data, row->source != VIEW_NONE);
		assert_int_equal(pn.rate, row->rx); /* the fake scorer ranks by rx */
	}
}

static void test_view_list(void **state)
{
	static const struct {
		const char *name;
		enum view_source source;
	} want[] = {
		{ "agentless", VIEW_PROMETHEUS },
		{ "both", VIEW_AGENT },
		{ "quiet", VIEW_NONE },
		{ "silent", VIEW_PROMETHEUS },
	};
	struct fixture *f = *state;
	struct view_entry *rows = NULL;
	long n = view_list(&f->s->view, START_NS, &rows);

	assert_int_equal(n, 4);
	for (long i = 0; i < n; i++) {
		if (strcmp(rows[i].name, want[i].name) || rows[i].v.source != want[i].source)
			fail_msg("entry %ld: %s from %s, want %s from %s", i, rows[i].name,
				 view_source_name(rows[i].v.source), want[i].name,
				 view_source_name(want[i].source));
	}
	free(rows);
}

struct count_row {
	const char *name;
	uint64_t later_ns;
	size_t agent, prometheus, none, stale;
};

static const struct count_row count_rows[] = {
	{ "now", 0, 1, 2, 1, 2 },
	{ "every agent stale", STALE_NS + 1, 0, 3, 1, 3 },
	{ "the fallback too old", PROM_MAX_AGE_MS * NS_PER_MS + 1, 0, 0, 3, 3 },
};

/* What /metrics prints: every listed node counted once, by its source. */
static void test_view_count(void **state)
{
	struct fixture *f = *state;

	for (size_t r = 0; r < sizeof(count_rows) / sizeof(count_rows[0]); r++) {
		const struct count_row *row = &count_rows[r];
		struct view_counts c;

		assert_int_equal(view_count(&f->s->view, START_NS + row->later_ns, &c), 0);
		assert_int_equal(view_count_agents(&f->s->view, START_NS + row->later_ns), c.agent);
		if (c.agent != row->agent || c.prometheus != row->prometheus || c.none != row->none ||
		    c.stale != row->stale)
			fail_msg("%s: agent %zu prometheus %zu none %zu stale %zu; want %zu %zu %zu %zu",
				 row->name, c.agent, c.prometheus, c.none, c.stale, row->agent,
				 row->prometheus, row->none, row->stale);
	}
}

/* Without a fallback only the table counts. */
static void test_view_without_prometheus(void **state)
{
	struct fixture *f = *state;
	struct prom *p = f->s->view.prom;
	struct view_counts c;
	struct view_node v;

	f->s->view.prom = NULL;
	view_get(&f->s->view, "silent", 6, NULL, 0, START_NS, &v);
	assert_int_equal(v.source, VIEW_NONE);
	assert_int_equal(view_count(&f->s->view, START_NS, &c), 0);
	assert_int_equal(c.agent, 1);
	assert_int_equal(c.prometheus, 0);
	assert_int_equal(c.none, 2);
	f->s->view.prom = p;
	assert_string_equal(view_source_name(VIEW_AGENT), "agent");
	assert_string_equal(view_source_name(VIEW_PROMETHEUS), "prometheus");
	assert_string_equal(view_source_name(VIEW_NONE), "none");
}


/* A report that says its NIC could not be read (issue 39): its figures
 * are as old as their newest reading, so a node whose agent's samples
 * keep failing goes neutral (no data), never idle at 0, however fresh its
 * reports; a few failed samples within --stale-after keep it served, aged
 * by them; none read in the window at all is no data. An older agent
 * (no failed samples) is as before. */
static void test_view_unreadable_nic(void **state)
{
	static const struct {
		const char *name;
		uint32_t failed, samples, interval_ms;
		enum view_source source;
		uint64_t age_ns;
	} rows[] = {
		{ "read: as before", 0, 10, 1000, VIEW_AGENT, 0 },
		{ "3 failed of 1 s: 3 s old, served", 3, 7, 1000, VIEW_AGENT, 3 * NS_PER_SEC },
		{ "30 failed of 200 ms: 6 s, just fresh", 30, 10, 200, VIEW_AGENT, STALE_NS },
		{ "31 failed of 200 ms: stale, neutral", 31, 10, 200, VIEW_NONE, STALE_NS + 200 * NS_PER_MS },
		{ "nothing read in the window: no data", 1, 0, 1000, VIEW_NONE, 0 },
		{ "no interval said: 1 s a sample", 7, 3, 0, VIEW_NONE, 7 * NS_PER_SEC },
	};
	struct scorer *s = fake_scorer_new(16, START_NS, STALE_NS);

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct report r = fake_report("blind", 5000000, 0, 0);
		struct policy_node pn;
		struct view_node v;

		r.sample_interval_ms = rows[i].interval_ms;
		r.ifaces[0].samples = rows[i].samples;
		r.ifaces[0].failed_samples = rows[i].failed;
		if (!rows[i].samples)
			report_iface_count(&r.ifaces[0], 0, 0, 0);
		assert_int_equal(table_apply(s->view.table, &r, START_NS), TABLE_APPLIED);
		view_get(&s->view, "blind", 5, NULL, 0, START_NS, &v);
		view_policy_input(&s->view, &v, &pn);
		if (v.source != rows[i].source || v.age_ns != rows[i].age_ns || !v.known)
			fail_msg("%s: %s, age %llu ns; want %s, age %llu ns", rows[i].name,
				 view_source_name(v.source), (unsigned long long)v.age_ns,
				 view_source_name(rows[i].source), (unsigned long long)rows[i].age_ns);
		assert_int_equal(pn.has_data, rows[i].source == VIEW_AGENT);
		if (rows[i].source == VIEW_AGENT && rows[i].samples)
			assert_int_equal(pn.rate, 5000000);
		assert_int_equal(view_count_agents(&s->view, START_NS), rows[i].source == VIEW_AGENT);
	}
	fake_scorer_free(s);
}

/* A request's nodes are looked up a chunk at a time (view_get_many()):
 * each name's view is exactly the one view_get() gives it alone, whichever
 * source serves it, the in-flight pods included but the asking pod's own
 * share left out, fresh and with the agent data stale. */
static void test_view_get_many(void **state)
{
	static const char *const names[] = { "both", "silent", "agentless", "quiet", "nobody" };
	static const struct inflight_name own_on[] = { { "both", 4, 0 }, { "agentless", 9, 0 } };
	static const struct inflight_name other_on[] = { { "both", 4, 0 }, { "quiet", 5, 0 },
							 { "nobody", 6, 0 } };
	const struct inflight_config ic = { .max_pods = 8, .max_nodes = 8, .hold_ns = STALE_NS,
					    .fade_ns = STALE_NS, .expire_ns = STALE_NS };
	const struct inflight_pod pod = { 1000, 0, 1000, 0, false, false, NULL, INFLIGHT_DECLARED };
	const uint64_t at[] = { START_NS, START_NS + STALE_NS + 1 };
	struct fixture *f = *state;
	struct namekey keys[VIEW_BATCH];
	struct view_node many[VIEW_BATCH], one;

	f->s->view.inflight = inflight_create(&ic);
	assert_non_null(f->s->view.inflight);
	assert_int_equal(inflight_assume(f->s->view.inflight, "own", 3, &pod, own_on, 2, START_NS), 0);
	assert_int_equal(inflight_assume(f->s->view.inflight, "other", 5, &pod, other_on, 3, START_NS), 0);
	for (size_t i = 0; i < VIEW_BATCH; i++)
		keys[i] = namekey_of(names[i % 5], strlen(names[i % 5]));
	for (size_t t = 0; t < sizeof(at) / sizeof(at[0]); t++) {
		view_get_many(&f->s->view, keys, VIEW_BATCH, "own", 3, at[t], many);
		for (size_t i = 0; i < VIEW_BATCH; i++) {
			view_get(&f->s->view, keys[i].s, keys[i].len, "own", 3, at[t], &one);
			if (memcmp(&one, &many[i], sizeof(one)))
				fail_msg("at +%llu ns, #%zu (%s): the batch's view is not view_get()'s: "
					 "%s/%s, %u/%u in-flight milli-pods",
					 (unsigned long long)(at[t] - START_NS), i, keys[i].s,
					 view_source_name(many[i].source), view_source_name(one.source),
					 many[i].inflight.milli_pods, one.inflight.milli_pods);
		}
		/* Its own share is left out, another pod's is not. */
		/* (tied pods: split among their nodes) */
		assert_int_equal(many[0].inflight.milli_pods, 333);	/* both: other's */
		assert_int_equal(many[2].inflight.milli_pods, 0);	/* agentless: own only */
		assert_int_equal(many[4].inflight.milli_pods, 333);	/* nobody: other's */
	}
	view_get_many(&f->s->view, keys, 1, NULL, 0, START_NS, many);
	assert_int_equal(many[0].inflight.milli_pods, 500 + 333);
	inflight_destroy(f->s->view.inflight);
	f->s->view.inflight = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_get),
		cmocka_unit_test(test_view_list),
		cmocka_unit_test(test_view_count),
		cmocka_unit_test(test_view_without_prometheus),
		cmocka_unit_test(test_view_get_many),
		cmocka_unit_test(test_view_unreadable_nic),
	};

	log_init("test_view");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("view", tests, setup, teardown);
}
