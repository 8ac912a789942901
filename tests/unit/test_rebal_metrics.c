/* The rebalancer's /metrics page (rebalancer/metrics.c): every series the
 * dashboard and the alert rules read, with its HELP and TYPE, its value
 * from the counters; refusals by every reason but a move (a dry run's
 * would-be move is one of them), the Eviction API's 429s counted with the
 * PodDisruptionBudget reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "rebalancer/decide.h"
#include "rebalancer/metrics.h"

static void has(const char *page, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(page, want))
		fail_msg("no line \"%s\" in:\n%s", line, page);
}

static void test_render(void **state)
{
	static struct rebal_metrics m;
	struct buf b;
	char page[8192];
	size_t series = 0;

	(void)state;
	atomic_store(&m.leader, true);
	atomic_store(&m.dry_run, false);
	atomic_store(&m.cycles, 12);
	atomic_store(&m.scorer_errors, 2);
	atomic_store(&m.apiserver_errors, 3);
	atomic_store(&m.evictions, 4);
	atomic_store(&m.outcomes[DECIDE_MOVE], 4);
	atomic_store(&m.outcomes[DECIDE_DRY_RUN], 5);
	atomic_store(&m.outcomes[DECIDE_PDB], 1);
	atomic_store(&m.pdb_refusals, 6);
	atomic_store(&m.outcomes[DECIDE_COOLDOWN], 7);
	atomic_store(&m.hot_nodes, 2);
	atomic_store(&m.last_cycle_unix, 1800000000);

	buf_init(&b, sizeof(page) - 2);
	rebal_metrics_render(&m, &b);
	assert_false(b.failed);
	page[0] = '\n';	/* so the first line is found as the others */
	memcpy(page + 1, b.data, b.len);
	page[b.len + 1] = '\0';
	buf_free(&b);

	has(page, "netsched_rebalancer_is_leader 1");
	has(page, "netsched_rebalancer_dry_run 0");
	has(page, "netsched_rebalancer_cycles_total 12");
	has(page, "netsched_rebalancer_errors_total{peer=\"scorer\"} 2");
	has(page, "netsched_rebalancer_errors_total{peer=\"apiserver\"} 3");
	has(page, "netsched_rebalancer_moves_total 4");
	has(page, "netsched_rebalancer_refusals_total{reason=\"dry_run\"} 5");
	has(page, "netsched_rebalancer_refusals_total{reason=\"cooldown\"} 7");
	has(page, "netsched_rebalancer_refusals_total{reason=\"not_debounced\"} 0");
	has(page, "netsched_rebalancer_hot_nodes 2");
	has(page, "netsched_rebalancer_last_cycle_timestamp_seconds 1800000000");
	/* A move is not a refusal; a PDB's recent refusal and a 429 are one. */
	assert_null(strstr(page, "reason=\"move\""));
	{
		char pdb[128];

		snprintf(pdb, sizeof(pdb), "netsched_rebalancer_refusals_total{reason=\"%s\"} 7",
			 decide_reason_name(DECIDE_PDB));
		has(page, pdb);
	}
	/* Every reason but a move has its row, and each series its HELP and TYPE. */
	for (const char *p = page; (p = strstr(p, "\nnetsched_rebalancer_refusals_total{")); p++)
		series++;
	assert_int_equal(series, DECIDE_REASON_COUNT - 1);
	for (const char *p = page; (p = strstr(p, "\n# TYPE ")); p++) {
		char name[96], help[128];

		assert_int_equal(sscanf(p, "\n# TYPE %95s", name), 1);
		snprintf(help, sizeof(help), "\n# HELP %s ", name);
		assert_non_null(strstr(page, help));
	}

	atomic_store(&m.leader, false);
	atomic_store(&m.dry_run, true);
	buf_init(&b, sizeof(page));
	rebal_metrics_render(&m, &b);
	assert_non_null(memmem(b.data, b.len, "netsched_rebalancer_is_leader 0\n", 32));
	assert_non_null(memmem(b.data, b.len, "netsched_rebalancer_dry_run 1\n", 30));
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
	};
	return cmocka_run_group_tests_name("rebal_metrics", tests, NULL, NULL);
}
