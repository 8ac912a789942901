/* The scorer's settings: defaults, flags, a YAML file, and flags over file. */
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

#include "scorer/options.h"
#include "scorer/pods/moves.h"
#include "scorer/scorer.h"

static int parse(struct scorer_options *o, char *err, size_t len, ...)
{
	char *argv[16] = { "netsched-scorer" };
	int argc = 1;
	va_list ap;

	va_start(ap, len);
	for (char *a; argc < 15 && (a = va_arg(ap, char *)); )
		argv[argc++] = a;
	va_end(ap);
	assert_int_equal(scorer_options_defaults(o, err, len), 0);
	return scorer_options_parse(o, argc, argv, err, len);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_options_defaults(void **state)
{
	struct scorer_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_string_equal(o.listen, "tcp://0.0.0.0:7470");
	assert_string_equal(o.http_addr, "0.0.0.0");
	assert_int_equal(o.http_port, 8470);
	assert_int_equal(o.policy, POLICY_RELATIVE);
	assert_int_equal(o.direction, POLICY_DIR_FIT);
	assert_true(o.fit_filter);
	assert_false(o.compact_scores);
	assert_int_equal(o.stale_after_ms, 6000);
	assert_int_equal(o.connections_per_client, 32);
	/* What http.c falls back to for a scorer built without options. */
	assert_int_equal(o.connections_per_client, SCORER_DEFAULT_CONNECTIONS_PER_CLIENT);
	assert_int_equal(o.inflight_max_pods, 10000);
	assert_int_equal(o.inflight_estimate_bps, 0);
	assert_int_equal(o.inflight_penalty_pct, 10);
	assert_int_equal(o.max_pods, 150000);
	assert_int_equal(o.max_workloads, 10000);
	assert_int_equal(o.moves_max, MOVES_DEFAULT_MAX);
	assert_int_equal(o.workload_half_life_ms, 600000);
	assert_false(o.learned_filter);
	assert_int_equal(o.inflight_hold_ms, 70000);
	assert_int_equal(o.inflight_fade_ms, 60000);
	assert_int_equal(o.inflight_expire_ms, 30000);
	assert_int_equal(parse(&o, err, sizeof(err), "--inflight-max-pods", "0", "--inflight-estimate",
			       "50M", "--inflight-hold", "0", NULL), 0);
	assert_int_equal(o.inflight_max_pods, 0);
	assert_int_equal(o.inflight_estimate_bps, 50000000);
	assert_int_equal(o.inflight_hold_ms, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--inflight-penalty", "25%", "--max-workloads",
			       "5", "--workload-half-life", "1m", "--learned-filter", "on",
			       "--max-pods", "600000", "--moves-max", "65536", NULL), 0);
	assert_int_equal(o.moves_max, MOVES_MAX_MAX);
	assert_int_equal(o.inflight_penalty_pct, 25);
	assert_int_equal(o.max_workloads, 5);
	assert_int_equal(o.workload_half_life_ms, 60000);
	assert_true(o.learned_filter);
	assert_int_equal(o.max_pods, 600000);
	assert_int_equal(parse(&o, err, sizeof(err), "--inflight-penalty", "off", NULL), 0);
	assert_int_equal(o.inflight_penalty_pct, 0);
	/* The maxUtilization hysteresis: 10 points and 30 s unless told. */
	assert_int_equal(o.filter.margin_pct, 10);
	assert_int_equal(o.filter.hold_ms, 30000);
	assert_int_equal(parse(&o, err, sizeof(err), "--filter-margin", "0", "--filter-hold", "0",
			       "--policy", "pressure", NULL), 0);
	assert_int_equal(o.filter.margin_pct, 0);
	assert_int_equal(o.filter.hold_ms, 0);
	assert_int_equal(o.policy, POLICY_PRESSURE);
	/* Drops: over 10 packets a second unless told; 0 = any, off = never. */
	assert_int_equal(o.max_drops_per_second, 10);
	assert_int_equal(parse(&o, err, sizeof(err), "--drop-threshold", "0", NULL), 0);
	assert_int_equal(o.max_drops_per_second, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--drop-threshold", "off", NULL), 0);
	assert_true(o.max_drops_per_second == POLICY_DROPS_IGNORED);
}

struct bad_flag {
	const char *flag, *value, *says;
};

static const struct bad_flag bad_flags[] = {
	{ "--policy", "fastest", "--policy fastest: expected relative, utilization or pressure" },
	{ "--direction", "up", "--direction up: expected rx, tx, both or max" },
	{ "--prioritize-reply", "short", "--prioritize-reply short: expected full or compact" },
	{ "--prioritize-reply", "Compact", "--prioritize-reply Compact: expected full or compact" },
	{ "--drop-threshold", "-1", "--drop-threshold -1: expected packets a second from 0 (any drop)" },
	{ "--drop-threshold", "2.5", "--drop-threshold 2.5: expected packets a second" },
	{ "--filter-margin", "101", "--filter-margin 101: expected percentage points of the link from 0 to 100" },
	{ "--filter-margin", "10%", "--filter-margin 10%: expected percentage points" },
	{ "--filter-hold", "30", "--filter-hold 30: expected a duration" },
	{ "--filter-hold", "2d", "--filter-hold 2d: expected a duration" },
	{ "--stale-after", "5", "--stale-after 5: expected a duration" },
	{ "--stale-after", "10ms", "--stale-after 10ms: expected a duration from 100ms" },
	{ "--http", "8470", "--http 8470: expected ADDR:PORT" },
	{ "--health-listen", "localhost:8471", "--health-listen localhost:8471: expected ADDR:PORT" },
	{ "--http", "1.2.3.4:99999", "--http 1.2.3.4:99999: expected ADDR:PORT" },
	{ "--listen", "http://x", "--listen http://x: expected tcp://" },
	{ "--max-nodes", "0", "--max-nodes 0: expected a count from 1" },
	{ "--max-body", "12", "--max-body 12: expected a size from 1Ki" },
	{ "--connections-per-client", "0", "--connections-per-client 0: expected a count from 1 to 256" },
	{ "--connections-per-client", "300", "--connections-per-client 300: expected a count from 1 to 256" },
	{ "--prometheus", "localhost:9090", "--prometheus localhost:9090: expected an http://" },
	{ "--log-level", "loud", "--log-level loud: expected error, warn, info or debug" },
	{ "--inflight-estimate", "10 M", "--inflight-estimate 10 M: expected bits per second" },
	/* A rate vanishes on fast links: the old form is refused, saying so. */
	{ "--inflight-penalty", "10M", "--inflight-penalty 10M: expected a share of the node's free "
	  "link from 0 to 100, such as 10%, or off (a rate such as 10M is no longer taken" },
	{ "--inflight-penalty", "101%", "--inflight-penalty 101%: expected a share" },
	{ "--max-workloads", "0", "--max-workloads 0: expected a count from 1" },
	{ "--max-pods", "0", "--max-pods 0: expected a count from 1" },
	{ "--moves-max", "0", "--moves-max 0: expected a count from 1 to 65536" },
	{ "--moves-max", "65537", "--moves-max 65537: expected a count from 1 to 65536" },
	{ "--workload-half-life", "10ms", "--workload-half-life 10ms: expected a duration from 1000ms" },
	{ "--learned-filter", "maybe", "--learned-filter maybe: expected on" },
	{ "--inflight-hold", "70", "--inflight-hold 70: expected a duration" },
	{ "--inflight-expire", "10ms", "--inflight-expire 10ms: expected a duration from 100ms" },
	{ "--inflight-max-pods", "-1", "--inflight-max-pods -1: expected a count from 0 (off)" },
	{ "--bogus", "x", "--bogus: unknown option" },
};

static void test_options_bad_flags(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		struct scorer_options o;
		char err[256] = "";

		if (parse(&o, err, sizeof(err), bad_flags[i].flag, bad_flags[i].value, NULL) != -EINVAL)
			fail_msg("%s %s accepted", bad_flags[i].flag, bad_flags[i].value);
		if (!strstr(err, bad_flags[i].says))
			fail_msg("%s %s: \"%s\" does not say \"%s\"", bad_flags[i].flag,
				 bad_flags[i].value, err, bad_flags[i].says);
	}
}

static void test_options_file_then_flags(void **state)
{
	char path[] = "/tmp/netsched-scorer-opts-XXXXXX";
	struct scorer_options o;
	char err[256] = "";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "policy: utilization\ndirection: max\nhttp: 127.0.0.1:9000\nprioritize-reply: compact\n"
			 "prometheusAddress: http://prom:9090\nnetworkInterface: eth0\n"
			 "timeRangeInMinutes: 10\n");
	/* The flag wins even though it comes before --config. */
	assert_int_equal(parse(&o, err, sizeof(err), "--direction", "tx", "--config", path, NULL), 0);
	assert_int_equal(o.policy, POLICY_UTILIZATION);
	assert_int_equal(o.direction, POLICY_DIR_TX);
	assert_true(o.compact_scores);
	assert_string_equal(o.http_addr, "127.0.0.1");
	assert_int_equal(o.http_port, 9000);
	assert_string_equal(o.prom.url, "http://prom:9090");
	assert_string_equal(o.prom.query.device, "eth0");
	assert_string_equal(o.prom.query.range, "10m");

	write_file(path, "policy: utilization\nstale-after: forever\n");
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, ":2: stale-after: expected a duration"));
	write_file(path, "check-config: true\n");
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, "check-config: a command-line flag, not allowed in a config file"));
	write_file(path, "colour: blue\n");
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, "colour: unknown option"));
	unlink(path);
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_defaults),
		cmocka_unit_test(test_options_bad_flags),
		cmocka_unit_test(test_options_file_then_flags),
	};
	return cmocka_run_group_tests_name("scorer options", tests, NULL, NULL);
}
