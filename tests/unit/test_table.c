/* The node table: apply, duplicates, agent restarts, replays, capacity,
 * summaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scorer/nodes/table.h"

#define END0 1800000000000ULL /* 2027-01-15, in ms */

static struct report make_report(const char *node, uint64_t instance, uint64_t seq,
				 uint64_t rx_bytes, uint64_t covered_ms)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "%s", node);
	r.instance_id = instance;
	r.seq = seq;
	/* An agent's windows advance with its sequence, a second apart. */
	r.window_end_unix_ms = END0 + seq * 1000;
	r.window_start_unix_ms = r.window_end_unix_ms - covered_ms;
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "eth0");
	report_iface_count(&r.ifaces[0], rx_bytes, rx_bytes / 2, covered_ms);
	return r;
}

static void test_table_apply_and_get(void **state)
{
	struct table *t = table_create(4);
	struct report r = make_report("node-a", 1, 1, 10000, 2000);
	struct table_node n;

	(void)state;
	assert_non_null(t);
	assert_false(table_get(t, "node-a", 6, &n));
	assert_int_equal(table_apply(t, &r, 111), TABLE_APPLIED);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_string_equal(n.name, "node-a");
	assert_int_equal(n.traffic.rx.average, 5000);
	assert_int_equal(n.traffic.tx.average, 2500);
	assert_int_equal(n.arrival_mono_ns, 111);
	assert_int_equal(n.traffic.link_bytes_per_second, 0);
	/* Lookups use the length, not a terminator, and never match a prefix. */
	assert_true(table_get(t, "node-ab", 6, &n));
	assert_false(table_get(t, "node", 4, &n));
	assert_false(table_get(t, "node-a\0x", 8, &n));
	table_destroy(t);
}

static void test_table_sequence_rules(void **state)
{
	struct table *t = table_create(4);
	struct report r;
	struct table_node n;

	(void)state;
	r = make_report("node-a", 1, 5, 1000, 1000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	r = make_report("node-a", 1, 5, 9000, 1000);
	assert_int_equal(table_apply(t, &r, 2), TABLE_DUPLICATE);
	r = make_report("node-a", 1, 4, 9000, 1000);
	assert_int_equal(table_apply(t, &r, 3), TABLE_DUPLICATE);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_int_equal(n.traffic.rx.average, 1000); /* unchanged by the duplicates */
	assert_int_equal(n.arrival_mono_ns, 1);
	assert_int_equal(n.window_end_unix_ms, END0 + 5000);
	/* A newer sequence number within the same millisecond is newer. */
	r = make_report("node-a", 1, 6, 2000, 1000);
	r.window_end_unix_ms = END0 + 5000;
	assert_int_equal(table_apply(t, &r, 3), TABLE_APPLIED);
	/* A restarted agent has a new instance id and starts counting again,
	 * with a window that ends later. */
	r = make_report("node-a", 2, 1, 3000, 1000);
	r.window_end_unix_ms = END0 + 6000;
	assert_int_equal(table_apply(t, &r, 4), TABLE_APPLIED);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_int_equal(n.traffic.rx.average, 3000);
	/* ...and another instance's report within the same millisecond is
	 * not newer. */
	r = make_report("node-a", 3, 9, 4000, 1000);
	r.window_end_unix_ms = END0 + 6000;
	assert_int_equal(table_apply(t, &r, 5), TABLE_OUTDATED);
	assert_int_equal(n.instance_id, 2);
	table_destroy(t);
}

/* Issue 14, item 10: an earlier agent instance's report replayed after the
 * agent restarted, and a forged sequence number under the victim's instance
 * id. The old table took the first (any other instance id was "newer") and
 * let the second hold the node until its agent restarted. */
static void test_table_replay_order(void **state)
{
	struct table *t = table_create(4);
	struct report old, r;
	struct table_node n;

	(void)state;
	/* Instance 1 reports 9000 B/s; the attacker keeps that report. */
	old = make_report("node-a", 1, 40, 9000, 1000);
	assert_int_equal(table_apply(t, &old, 1), TABLE_APPLIED);
	/* The agent restarts as instance 2: 1000 B/s. */
	r = make_report("node-a", 2, 1, 1000, 1000);
	r.window_end_unix_ms = old.window_end_unix_ms + 5000;
	assert_int_equal(table_apply(t, &r, 2), TABLE_APPLIED);
	/* The captured report of instance 1 comes back: outdated. */
	assert_int_equal(table_apply(t, &old, 3), TABLE_OUTDATED);
	old.seq = UINT64_MAX; /* (unsigned, it could be changed at will) */
	assert_int_equal(table_apply(t, &old, 3), TABLE_OUTDATED);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_int_equal(n.traffic.rx.average, 1000);
	assert_int_equal(n.instance_id, 2);

	/* Unsigned: instance 2's id with sequence 2^64 - 1 and a window just
	 * after the real one. It is taken (it is newer)... */
	r = make_report("node-a", 2, UINT64_MAX, 50000, 1000);
	r.window_end_unix_ms = old.window_end_unix_ms + 5500;
	assert_int_equal(table_apply(t, &r, 4), TABLE_APPLIED);
	/* ...but the agent's next report (sequence 2, a later window) replaces
	 * it: the forged sequence number holds nothing. */
	r = make_report("node-a", 2, 2, 1000, 1000);
	r.window_end_unix_ms = old.window_end_unix_ms + 6000;
	assert_int_equal(table_apply(t, &r, 5), TABLE_APPLIED);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_int_equal(n.traffic.rx.average, 1000);
	assert_int_equal(n.seq, 2);
	table_destroy(t);
}

/* An agent whose clock stepped back: its windows end before its latest
 * one. Refused while the node is fresh; once it is older than the resync
 * bound, the same instance's next sequence number is taken again. Other
 * instances and old sequence numbers still are not. */
static void test_table_clock_step_back(void **state)
{
	struct table *t = table_create(4);
	struct report r, other;
	struct table_node n;

	(void)state;
	table_resync_after(t, 1000);
	r = make_report("node-a", 1, 10, 1000, 1000);
	assert_int_equal(table_apply(t, &r, 100), TABLE_APPLIED);
	r = make_report("node-a", 1, 11, 2000, 1000);
	r.window_end_unix_ms = END0; /* an hour behind */
	assert_int_equal(table_apply(t, &r, 600), TABLE_OUTDATED);
	other = make_report("node-a", 9, 1, 7000, 1000);
	other.window_end_unix_ms = END0;
	assert_int_equal(table_apply(t, &other, 1200), TABLE_OUTDATED);
	r.seq = 10;
	assert_int_equal(table_apply(t, &r, 1200), TABLE_DUPLICATE);
	r.seq = 12;
	assert_int_equal(table_apply(t, &r, 1200), TABLE_APPLIED);
	assert_true(table_get(t, "node-a", 6, &n));
	assert_int_equal(n.traffic.rx.average, 2000);
	assert_int_equal(n.window_end_unix_ms, END0);
	/* From there on, windows order again. */
	r.seq = 13;
	r.window_end_unix_ms = END0 + 1000;
	assert_int_equal(table_apply(t, &r, 1300), TABLE_APPLIED);
	table_destroy(t);
}

/* table_each()'s visitor: the names it saw, concatenated. */
static void saw(const struct table_node *n, void *ctx)
{
	strcat(ctx, n->name);
	strcat(ctx, " ");
}

static void test_table_full(void **state)
{
	struct table *t = table_create(2);
	struct report r;
	struct table_node all[4];
	char seen[64] = "";

	(void)state;
	r = make_report("a", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	r = make_report("b", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	r = make_report("c", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_FULL);
	/* Known nodes still update when full. */
	r = make_report("a", 1, 2, 0, 1000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	assert_int_equal(table_count(t), 2);
	assert_int_equal(table_snapshot(t, all, 4), 2);
	assert_int_equal(table_snapshot(t, all, 1), 1);
	/* Every node once, and only those. */
	table_each(t, saw, seen);
	assert_true(!strcmp(seen, "a b ") || !strcmp(seen, "b a "));
	table_destroy(t);
}

static void test_table_link_speed(void **state)
{
	struct table *t = table_create(8);
	struct report r = make_report("n", 1, 1, 0, 1000);
	struct table_node n;

	(void)state;
	r.n_ifaces = 2;
	snprintf(r.ifaces[1].name, sizeof(r.ifaces[1].name), "eth1");
	r.ifaces[0].traffic.link_bytes_per_second = 125000000;
	r.ifaces[1].traffic.link_bytes_per_second = 125000000;
	report_iface_count(&r.ifaces[1], 4000, 0, 2000);
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	assert_true(table_get(t, "n", 1, &n));
	assert_int_equal(n.traffic.link_bytes_per_second, 250000000);
	assert_int_equal(n.traffic.rx.average, 2000);
	assert_int_equal(n.traffic.covered_ms, 2000);
	/* One interface of unknown speed makes the node's speed unknown. */
	r.seq = 2;
	r.window_end_unix_ms += 1000;
	r.ifaces[1].traffic.link_bytes_per_second = 0;
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	assert_true(table_get(t, "n", 1, &n));
	assert_int_equal(n.traffic.link_bytes_per_second, 0);
	table_destroy(t);
}

/* Recent rates and p95s add up over interfaces like the averages; drop
 * counts saturate instead of wrapping; a new report replaces them all. */
static void test_table_burst_and_drops(void **state)
{
	struct table *t = table_create(8);
	struct report r = make_report("n", 1, 1, 0, 1000);
	struct table_node n;

	(void)state;
	r.n_ifaces = 2;
	snprintf(r.ifaces[1].name, sizeof(r.ifaces[1].name), "eth1");
	report_iface_count(&r.ifaces[1], 0, 0, 1000);
	for (int i = 0; i < 2; i++) {
		struct traffic *tr = &r.ifaces[i].traffic;

		tr->rx.recent = 100 + (uint64_t)i;
		tr->tx.recent = 10;
		tr->rx.p95 = 300;
		tr->tx.p95 = 30 + (uint64_t)i;
		tr->rx_dropped = UINT64_MAX - 1;
		tr->rx_missed = 2;
		tr->tx_dropped = (uint64_t)i;
	}
	assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	assert_true(table_get(t, "n", 1, &n));
	assert_int_equal(n.traffic.rx.recent, 201);
	assert_int_equal(n.traffic.tx.recent, 20);
	assert_int_equal(n.traffic.rx.p95, 600);
	assert_int_equal(n.traffic.tx.p95, 61);
	assert_true(n.traffic.rx_dropped == UINT64_MAX);
	assert_int_equal(n.traffic.rx_missed, 4);
	assert_int_equal(n.traffic.tx_dropped, 1);
	r = make_report("n", 1, 2, 0, 1000);
	assert_int_equal(table_apply(t, &r, 2), TABLE_APPLIED);
	assert_true(table_get(t, "n", 1, &n));
	assert_int_equal(n.traffic.rx.recent + n.traffic.rx.p95 + n.traffic.rx_dropped +
				 n.traffic.rx_missed + n.traffic.tx_dropped, 0);
	table_destroy(t);
}

static void test_table_many_nodes(void **state)
{
	enum { N = 5000 };
	struct table *t = table_create(N);
	struct table_node n;
	char name[32];

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "node-%u", i);
		struct report r = make_report(name, 1, 1, (uint64_t)i * 1000, 1000);
		assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	}
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "node-%u", i);
		assert_true(table_get(t, name, strlen(name), &n));
		assert_int_equal(n.traffic.rx.average, (uint64_t)i * 1000);
	}
	assert_int_equal(table_count(t), N);
	assert_null(table_create(0));
	table_destroy(NULL);
	table_destroy(t);
}

/* table_get_each()'s fn: the node found is the one asked for. */
static void same_name(size_t i, const struct table_node *node, void *ctx)
{
	const struct namekey *keys = ctx;

	if (strlen(node->name) != keys[i].len || memcmp(node->name, keys[i].s, keys[i].len))
		fail_msg("asked for %.*s (#%zu), got %s", (int)keys[i].len, keys[i].s, i, node->name);
}

/* Which of keys[] table_get_each() reported, as a bit each, and that it
 * did in order. */
struct seen {
	const struct namekey *keys;
	unsigned mask;
	size_t last;
};

static void mark_seen(size_t i, const struct table_node *node, void *ctx)
{
	struct seen *s = ctx;

	same_name(i, node, (void *)s->keys);
	if (s->mask && i <= s->last)
		fail_msg("#%zu reported after #%zu", i, s->last);
	s->mask |= 1u << i;
	s->last = i;
}

/* A batch of names answers as table_get() does name by name: known ones
 * reported with their own node, unknown ones, a prefix, a longer name, an
 * empty or oversized one not at all. */
static void test_table_get_each(void **state)
{
	static char huge[NODENAME_MAX_LEN + 2];
	const char *names[] = { "node-b", "nobody", "node-a", "node", "node-a\0x", "", huge, "node-c" };
	size_t lens[] = { 6, 6, 6, 4, 8, 0, sizeof(huge) - 1, 6 };
	struct namekey keys[8];
	struct table *t = table_create(8);
	struct seen seen = { keys, 0, 0 };

	(void)state;
	assert_non_null(t);
	memset(huge, 'a', sizeof(huge) - 1);
	for (const char *const *n = (const char *const[]){ "node-a", "node-b", "node-c", NULL }; *n; n++) {
		struct report r = make_report(*n, 1, 1, 1000, 1000);

		assert_int_equal(table_apply(t, &r, 1), TABLE_APPLIED);
	}
	for (size_t i = 0; i < 8; i++)
		keys[i] = namekey_of(names[i], lens[i]);
	assert_int_equal(table_get_each(t, keys, 8, mark_seen, &seen), 3);
	assert_int_equal(seen.mask, (1u << 0) | (1u << 2) | (1u << 7));
	table_destroy(t);
}

/* A full table evicts only stale nodes, the stalest first. */
static void test_table_evicts_stalest(void **state)
{
	struct table *t = table_create(3);
	struct table_node n;
	struct report r;

	(void)state;
	assert_non_null(t);
	table_evict_after(t, 100);
	r = make_report("a", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 10), TABLE_APPLIED);
	r = make_report("b", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 20), TABLE_APPLIED);
	r = make_report("c", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 30), TABLE_APPLIED);
	r = make_report("d", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 50), TABLE_FULL);	/* nothing stale yet */
	assert_int_equal(table_apply(t, &r, 100), TABLE_FULL);	/* skipped scan, still none */
	r = make_report("a", 1, 2, 0, 1000);
	assert_int_equal(table_apply(t, &r, 115), TABLE_APPLIED);	/* a refreshed */
	r = make_report("d", 1, 1, 0, 1000);
	assert_int_equal(table_apply(t, &r, 125), TABLE_EVICTED);	/* b is stalest */
	assert_false(table_get(t, "b", 1, &n));
	assert_true(table_get(t, "a", 1, &n) && table_get(t, "c", 1, &n) && table_get(t, "d", 1, &n));
	assert_int_equal(table_count(t), 3);
	assert_int_equal(table_evictions(t), 1);
	table_destroy(t);
}

/* Random inserts and evictions against a plain reference model: every name
 * the model holds must be found, and no other (checks backward-shift
 * deletion on real probe chains). */
#define MODEL_CAP 48
#define MODEL_NAMES 160

static void test_table_eviction_model(void **state)
{
	struct table *t = table_create(MODEL_CAP);
	uint64_t arrival[MODEL_NAMES] = { 0 };
	bool held[MODEL_NAMES] = { false };
	uint64_t seq[MODEL_NAMES] = { 0 };
	uint32_t rng = 12345;
	size_t count = 0;

	(void)state;
	assert_non_null(t);
	table_evict_after(t, 500);
	for (uint64_t now = 1000; now < 1000 + 20000; now += 3) {
		struct report r;
		enum table_result res;
		char name[16];
		unsigned k;

		rng = rng * 1103515245u + 12345u;
		k = (rng >> 8) % MODEL_NAMES;
		snprintf(name, sizeof(name), "node-%u", k);
		r = make_report(name, 1, ++seq[k], 100, 1000);
		res = table_apply(t, &r, now);
		if (held[k]) {
			assert_int_equal(res, TABLE_APPLIED);
		} else if (count < MODEL_CAP) {
			assert_int_equal(res, TABLE_APPLIED);
			held[k] = true;
			count++;
		} else {
			/* The model's stalest held node. */
			unsigned victim = MODEL_NAMES;

			for (unsigned i = 0; i < MODEL_NAMES; i++)
				if (held[i] && (victim == MODEL_NAMES || arrival[i] < arrival[victim]))
					victim = i;
			if (now - arrival[victim] > 500) {
				assert_int_equal(res, TABLE_EVICTED);
				held[victim] = false;
				held[k] = true;
			} else {
				assert_int_equal(res, TABLE_FULL);
			}
		}
		if (held[k])
			arrival[k] = now;
		for (unsigned i = 0; i < MODEL_NAMES; i++) {
			struct table_node n;
			struct namekey key;
			bool found;

			snprintf(name, sizeof(name), "node-%u", i);
			key = namekey_of(name, strlen(name));
			/* Announced lookups of hashed names (the extender's)
			 * answer the same, entries moved by evictions and all. */
			if (i % 2) {
				table_prefetch(t, &key);
				found = table_get_each(t, &key, 1, same_name, &key) == 1;
			} else {
				found = table_get(t, name, strlen(name), &n);
			}
			if (found != held[i])
				fail_msg("at %llu: node-%u %s the table, model says %s",
					 (unsigned long long)now, i, held[i] ? "missing from" : "in",
					 held[i] ? "held" : "evicted");
		}
	}
	assert_int_equal(table_count(t), count);
	assert_true(table_evictions(t) > 100); /* the run really evicted */
	table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_apply_and_get),
		cmocka_unit_test(test_table_sequence_rules),
		cmocka_unit_test(test_table_replay_order),
		cmocka_unit_test(test_table_clock_step_back),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_table_link_speed),
		cmocka_unit_test(test_table_burst_and_drops),
		cmocka_unit_test(test_table_many_nodes),
		cmocka_unit_test(test_table_get_each),
		cmocka_unit_test(test_table_evicts_stalest),
		cmocka_unit_test(test_table_eviction_model),
	};
	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
