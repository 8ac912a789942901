/* The rebalancer's /metrics page (metrics.h). */
#include "metrics.h"

void rebal_metrics_render(struct rebal_metrics *m, struct buf *b)
{
	buf_puts(b, "# HELP netsched_rebalancer_is_leader Whether this replica holds the Lease and may act.\n"
		    "# TYPE netsched_rebalancer_is_leader gauge\n");
	buf_printf(b, "netsched_rebalancer_is_leader %d\n", atomic_load(&m->leader) ? 1 : 0);
	buf_puts(b, "# HELP netsched_rebalancer_dry_run Whether moves are only said, not made.\n"
		    "# TYPE netsched_rebalancer_dry_run gauge\n");
	buf_printf(b, "netsched_rebalancer_dry_run %d\n", atomic_load(&m->dry_run) ? 1 : 0);
	buf_puts(b, "# HELP netsched_rebalancer_cycles_total Decision cycles run as the leader.\n"
		    "# TYPE netsched_rebalancer_cycles_total counter\n");
	buf_printf(b, "netsched_rebalancer_cycles_total %lu\n", atomic_load(&m->cycles));
	buf_puts(b, "# HELP netsched_rebalancer_errors_total Cycles or steps that failed, by peer.\n"
		    "# TYPE netsched_rebalancer_errors_total counter\n");
	buf_printf(b, "netsched_rebalancer_errors_total{peer=\"scorer\"} %lu\n",
		   atomic_load(&m->scorer_errors));
	buf_printf(b, "netsched_rebalancer_errors_total{peer=\"apiserver\"} %lu\n",
		   atomic_load(&m->apiserver_errors));
	buf_puts(b, "# HELP netsched_rebalancer_moves_total Pods evicted to relieve a hot node.\n"
		    "# TYPE netsched_rebalancer_moves_total counter\n");
	buf_printf(b, "netsched_rebalancer_moves_total %lu\n", atomic_load(&m->evictions));
	buf_puts(b, "# HELP netsched_rebalancer_refusals_total Hot nodes not relieved, by reason "
		    "(dry_run: a move that would have been made).\n"
		    "# TYPE netsched_rebalancer_refusals_total counter\n");
	for (int r = 0; r < DECIDE_REASON_COUNT; r++) {
		unsigned long v = atomic_load(&m->outcomes[r]);

		if (r == DECIDE_MOVE)
			continue;
		if (r == DECIDE_PDB)
			v += atomic_load(&m->pdb_refusals);
		buf_printf(b, "netsched_rebalancer_refusals_total{reason=\"%s\"} %lu\n",
			   decide_reason_name((enum decide_reason)r), v);
	}
	buf_puts(b, "# HELP netsched_rebalancer_nudges_total Node labels written so the scheduler "
		    "retries pods netsched refused, now that a node has room for them.\n"
		    "# TYPE netsched_rebalancer_nudges_total counter\n");
	buf_printf(b, "netsched_rebalancer_nudges_total %lu\n", atomic_load(&m->nudges));
	buf_puts(b, "# HELP netsched_rebalancer_hot_nodes Nodes over the threshold in the last cycle.\n"
		    "# TYPE netsched_rebalancer_hot_nodes gauge\n");
	buf_printf(b, "netsched_rebalancer_hot_nodes %lu\n", atomic_load(&m->hot_nodes));
	buf_puts(b, "# HELP netsched_rebalancer_last_cycle_timestamp_seconds When the last cycle ended.\n"
		    "# TYPE netsched_rebalancer_last_cycle_timestamp_seconds gauge\n");
	buf_printf(b, "netsched_rebalancer_last_cycle_timestamp_seconds %lu\n",
		   atomic_load(&m->last_cycle_unix));
}
