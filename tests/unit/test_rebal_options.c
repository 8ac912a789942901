/* The rebalancer's settings (rebalancer/options.c): the defaults are the
 * decision's and dry run; flags and a YAML file set the decision's fields;
 * every bad value is refused with the option's name, as a row. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rebalancer/options.h"

static int parse(struct rebal_options *o, char *err, size_t len, ...)
{
	char *argv[24] = { "netsched-rebalancer" };
	int argc = 1;
	va_list ap;

	va_start(ap, len);
	for (char *a; argc < 23 && (a = va_arg(ap, char *)); )
		argv[argc++] = a;
	va_end(ap);
	assert_int_equal(rebal_options_defaults(o, err, len), 0);
	return rebal_options_parse(o, argc, argv, err, len);
}

static void test_rebal_options_defaults(void **state)
{
	static struct rebal_options o;
	struct decide_config want;
	char err[256];

	(void)state;
	setenv("POD_NAME", "rebal-7f9c-x", 1);
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	decide_config_defaults(&want);
	assert_true(o.decide.dry_run);
	assert_true(o.decide.hot == want.hot && o.decide.margin == want.margin);
	assert_int_equal(o.decide.debounce, want.debounce);
	assert_int_equal(o.decide.min_age_s, want.min_age_s);
	assert_int_equal(o.decide.cooldown_s, want.cooldown_s);
	assert_int_equal(o.decide.node_cooldown_s, want.node_cooldown_s);
	assert_int_equal(o.decide.pdb_backoff_s, want.pdb_backoff_s);
	assert_int_equal(o.decide.protect_priority, want.protect_priority);
	assert_int_equal(o.decide.max_per_cycle, want.max_per_cycle);
	assert_int_equal(o.decide.max_per_hour, want.max_per_hour);
	assert_int_equal(o.decide.max_per_node, want.max_per_node);
	assert_int_equal(o.decide.max_per_namespace, want.max_per_namespace);
	assert_int_equal(o.decide.max_per_workload, want.max_per_workload);
	assert_int_equal(o.decide.n_exclude, 1);
	assert_string_equal(o.decide.exclude[0], "kube-system");
	assert_int_equal(o.n_scorer, 1);
	assert_string_equal(o.scorer[0], "http://127.0.0.1:8470");
	assert_int_equal(o.interval_ms, 10000);
	assert_int_equal(o.hold_ms, 300000);
	assert_true(o.leader_elect);
	assert_string_equal(o.lease_name, "netsched-rebalancer");
	assert_string_equal(o.lease_namespace, "netsched");
	assert_int_equal(o.lease_duration_ms, 15000);
	assert_string_equal(o.identity, "rebal-7f9c-x");
	assert_string_equal(o.metrics_addr, "0.0.0.0");
	assert_int_equal(o.metrics_port, 8472);
	assert_true(o.nudge.on);
	assert_true(o.nudge.step == 0.05);
	assert_int_equal(o.nudge.min_interval_s, 10);
	assert_int_equal(o.nudge.max_nodes, 3);
	unsetenv("POD_NAME");
}

static void test_rebal_options_flags_and_file(void **state)
{
	static struct rebal_options o;
	char err[256], path[] = "/tmp/netsched-rebal-options-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("dry-run: false\nhot: \"0.85\"\ndebounce: 5\nnamespaces: a,b\n"
	      "scorer: https://s1:8470/,https://s2:8470\nmax-moves-per-node: 1\n", f);
	fclose(f);
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, "--hot", "0.95",
			       "--min-age", "0", "--identity", "r1", "--metrics-listen", "off",
			       "--exclude-namespaces", "x,y,z", "--nudge", "off", "--nudge-step",
			       "0.2", "--nudge-interval", "1s", "--nudge-max-nodes", "16", NULL), 0);
	unlink(path);
	assert_false(o.decide.dry_run);
	assert_true(o.decide.hot == 0.95);	/* the flag wins over the file */
	assert_int_equal(o.decide.debounce, 5);
	assert_int_equal(o.decide.min_age_s, 0);
	assert_int_equal(o.decide.max_per_node, 1);
	assert_int_equal(o.decide.n_include, 2);
	assert_string_equal(o.decide.include[1], "b");
	assert_int_equal(o.decide.n_exclude, 3);
	assert_string_equal(o.decide.exclude[2], "z");
	assert_int_equal(o.n_scorer, 2);
	assert_string_equal(o.scorer[0], "https://s1:8470");
	assert_string_equal(o.scorer[1], "https://s2:8470");
	assert_string_equal(o.identity, "r1");
	assert_string_equal(o.metrics_addr, "");
	assert_false(o.nudge.on);
	assert_true(o.nudge.step == 0.2);
	assert_int_equal(o.nudge.min_interval_s, 1);
	assert_int_equal(o.nudge.max_nodes, 16);
}

static void test_rebal_options_bad(void **state)
{
	static const struct { const char *flag, *value, *want; } rows[] = {
		{ "--hot", "0.01", "--hot" },
		{ "--hot", "90%", "expected a fraction of the link" },
		{ "--margin", "0.95", "margin 0.950 must be >= 0 and below the hot threshold 0.900" },
		{ "--dry-run", "maybe", "expected true or false" },
		{ "--debounce", "0", "--debounce" },
		{ "--scorer", "tcp://x:1", "expected http(s)://HOST:PORT" },
		{ "--scorer", "http://a,", "a trailing comma" },
		{ "--scorer", "http://a,http://b,http://c,http://d,http://e", "more than 4 scorers" },
		{ "--protect-priority", "3000000000", "expected a pod priority" },
		{ "--interval", "10ms", "--interval" },
		{ "--max-moves-per-hour", "5000", "--max-moves-per-hour" },
		{ "--metrics-listen", "nowhere", "expected ADDR:PORT or off" },
		{ "--identity", "a\"b", "expected a name" },
		{ "--scorer-cert", "/x.crt", "a client certificate needs both --scorer-cert and --scorer-key" },
		{ "--lease-name", "", "must not be empty" },
		{ "--nudge", "maybe", "--nudge" },
		{ "--nudge-step", "0", "--nudge-step" },
		{ "--nudge-step", "1.5", "--nudge-step" },
		{ "--nudge-interval", "500ms", "--nudge-interval" },
		{ "--nudge-max-nodes", "0", "--nudge-max-nodes" },
		{ "--nudge-max-nodes", "17", "--nudge-max-nodes" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		static struct rebal_options o;
		char err[256] = "";

		if (parse(&o, err, sizeof(err), rows[i].flag, rows[i].value, NULL) != -EINVAL ||
		    !strstr(err, rows[i].want))
			fail_msg("%s %s: error '%s', want '%s'", rows[i].flag, rows[i].value, err,
				 rows[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rebal_options_defaults),
		cmocka_unit_test(test_rebal_options_flags_and_file),
		cmocka_unit_test(test_rebal_options_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
