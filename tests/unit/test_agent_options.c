/* The agent's settings: defaults, every option's value and refusal, every
 * check between options, the bounds of the lists, the node name's sources,
 * the usage text, and a YAML file under the flags. */
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

#include "agent/options.h"

static int parse(struct agent_options *o, char *err, size_t len, ...)
{
	char *argv[24] = { "netsched-agent" };
	int argc = 1;
	va_list ap;

	va_start(ap, len);
	for (char *a; argc < 23 && (a = va_arg(ap, char *)); )
		argv[argc++] = a;
	va_end(ap);
	err[0] = '\0';
	assert_int_equal(agent_options_defaults(o, err, len), 0);
	return agent_options_parse(o, argc, argv, err, len);
}

static void test_agent_options_defaults(void **state)
{
	struct agent_options o;
	char err[512];

	(void)state;
	setenv("NODE_NAME", "node-env", 1);
	assert_int_equal(parse(&o, err, sizeof(err), "--scorer", "tcp://127.0.0.1:7470", NULL), 0);
	assert_string_equal(o.node, "node-env");
	assert_int_equal(o.sample_interval_ms, 1000);
	assert_int_equal(o.window_ms, 60000);
	assert_int_equal(o.report_interval_ms, 2000);
	assert_true(o.interfaces.is_auto);
	assert_int_equal(o.n_scorers, 1);
	/* A flag wins over the environment. */
	assert_int_equal(parse(&o, err, sizeof(err), "--node", "node-7", "--once", NULL), 0);
	assert_string_equal(o.node, "node-7");
	/* A bad $NODE_NAME is named as such. */
	setenv("NODE_NAME", "Bad_Name", 1);
	assert_int_equal(parse(&o, err, sizeof(err), "--once", NULL), -EINVAL);
	assert_non_null(strstr(err, "$NODE_NAME"));
	/* Unset: the host name, lowercased as the kubelet does, is a node name. */
	unsetenv("NODE_NAME");
	assert_int_equal(parse(&o, err, sizeof(err), "--once", NULL), 0);
	assert_true(o.node[0] != '\0');
	for (const char *c = o.node; *c; c++)
		assert_false(*c >= 'A' && *c <= 'Z');
}

struct row {
	const char *args[7];
	const char *why;	/* NULL: accepted */
};

static const struct row rows[] = {
	{ { "--node", "n", "--once" }, NULL },
	{ { "--node", "n" }, "--scorer: at least one is required" },
	{ { "--node", "Node-1", "--once" }, "not a DNS subdomain" },
	{ { "--node", "a/b", "--once" }, "byte 1 is '/'" },
	{ { "--node", "n", "--scorer", "http://x:1" }, "expected tcp://HOST:PORT" },
	{ { "--node", "n", "--scorer", "tls+tcp://x:1" }, "needs --scorer-ca" },
	{ { "--node", "n", "--once", "--window", "500ms" }, "shorter than --sample-interval" },
	{ { "--node", "n", "--once", "--report-interval", "100ms" }, "shorter than --sample-interval" },
	{ { "--node", "n", "--once", "--sample-interval", "10ms" }, "expected a duration from 100ms" },
	{ { "--node", "n", "--once", "--source", "magic" }, "source" },
	{ { "--node", "n", "--once", "--link-speed", "eth0" }, "link-speed" },
	{ { "--node", "n", "--once", "--metrics", "localhost:1" }, "metrics" },
	{ { "--node", "n", "--once", "--bogus" }, "bogus" },
	{ { "--node", "n", "--once", "--netns", "" }, "--netns : empty" },
	{ { "--node", "n", "--once", "--link-speed", "eth0=0" }, "speed must be 1 to" },
	{ { "--node", "n", "--once", "--link-speed", "eth0=2000T" }, "speed must be 1 to" },
	{ { "--node", "n", "--once", "--log-level", "loud" }, "expected error, warn, info or debug" },
	{ { "--node", "n", "--once", "--window", "3600s", "--sample-interval", "500ms" },
	  "7200 samples of 500ms, limit 3600" },
};

static void test_agent_options_rows(void **state)
{
	(void)state;
	setenv("NODE_NAME", "node-env", 1);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct agent_options o;
		char *argv[8] = { "netsched-agent" };
		char err[512] = "";
		int argc = 1, rc;

		for (size_t k = 0; k < 7 && rows[i].args[k]; k++)
			argv[argc++] = (char *)rows[i].args[k];
		assert_int_equal(agent_options_defaults(&o, err, sizeof(err)), 0);
		rc = agent_options_parse(&o, argc, argv, err, sizeof(err));
		if (!rows[i].why && rc)
			fail_msg("row %zu: refused: %s", i, err);
		if (rows[i].why && (rc != -EINVAL || !strstr(err, rows[i].why)))
			fail_msg("row %zu: rc %d, \"%s\" does not say \"%s\"", i, rc, err, rows[i].why);
	}
}

/* Every option lands where it should; a repeated --link-speed for one
 * interface replaces the first; the lists have their bounds. */
static void test_agent_options_values(void **state)
{
	char err[512], arg[64], *argv[80] = { "netsched-agent" }, *text = NULL;
	struct agent_options o;
	size_t size = 0;
	FILE *f;
	int argc;

	(void)state;
	if (parse(&o, err, sizeof(err), "--node", "n", "--once", "--interfaces",
			       "auto,eth1", "--exclude-interfaces", "veth*", "--source", "sysfs",
			       "--netns", "node-3", "--link-speed", "eth0=10G", "--link-speed",
			       "eth0=25G", "--link-speed", "eth1=1G", NULL))
		fail_msg("refused: %s", err);
	assert_true(o.interfaces.is_auto);
	assert_int_equal(o.interfaces.n_include, 1);
	assert_string_equal(o.interfaces.include[0], "eth1");
	assert_int_equal(o.interfaces.n_exclude, 1);
	assert_int_equal(o.source, SAMPLER_SYSFS);
	assert_true(o.source_set);
	assert_string_equal(o.netns, "node-3");
	assert_int_equal(o.n_link_speeds, 2);
	assert_string_equal(o.link_speeds[0].ifname, "eth0");
	assert_int_equal(o.link_speeds[0].bps, 25000000000ULL);
	assert_int_equal(parse(&o, err, sizeof(err), "--node", "n", "--once", "--key-file", "/k",
			       "--scorer-ca", "/ca", "--log-level", "debug", "--check-config",
			       "--help", NULL), 0);
	assert_string_equal(o.key_file, "/k");
	assert_string_equal(o.scorer_ca, "/ca");
	assert_int_equal(o.log_level, LOG_LVL_DEBUG);
	assert_true(o.check_config && o.help);
	assert_int_equal(parse(&o, err, sizeof(err), "--node", "n", "--once", "--source", "netlink",
			       NULL), 0);
	assert_int_equal(o.source, SAMPLER_NETLINK);

	/* One scorer more than the most. */
	assert_int_equal(agent_options_defaults(&o, err, sizeof(err)), 0);
	argc = 1;
	for (int i = 0; i <= SENDER_MAX_SCORERS; i++) {
		argv[argc++] = "--scorer";
		argv[argc++] = "tcp://127.0.0.1:7470";
	}
	assert_int_equal(agent_options_parse(&o, argc, argv, err, sizeof(err)), -EINVAL);
	snprintf(arg, sizeof(arg), "more than %d scorers", SENDER_MAX_SCORERS);
	assert_non_null(strstr(err, arg));
	/* One link speed more than a report holds interfaces. */
	{
		static char speeds[REPORT_MAX_INTERFACES + 1][24];

		assert_int_equal(agent_options_defaults(&o, err, sizeof(err)), 0);
		argc = 1;
		argv[argc++] = "--once";
		for (unsigned i = 0; i <= REPORT_MAX_INTERFACES; i++) {
			snprintf(speeds[i], sizeof(speeds[i]), "eth%u=10G", i);
			argv[argc++] = "--link-speed";
			argv[argc++] = speeds[i];
		}
		assert_int_equal(agent_options_parse(&o, argc, argv, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "more than 32 link speeds"));
	}
	/* --help's text names every option. */
	f = open_memstream(&text, &size);
	assert_non_null(f);
	agent_options_usage(f);
	fclose(f);
	for (const char *name = "--interfaces\0--link-speed\0--netns\0--scorer-ca\0--key-file\0";
	     *name; name += strlen(name) + 1)
		if (!strstr(text, name))
			fail_msg("usage lacks %s:\n%s", name, text);
	free(text);
}

static void test_agent_options_file(void **state)
{
	char path[] = "/tmp/netsched-agent-options.XXXXXX", err[512];
	struct agent_options o;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("node: node-file\nscorer:\n  - tcp://127.0.0.1:7470\n  - tcp://127.0.0.2:7470\n"
	      "window: 30s\n", f);
	fclose(f);
	assert_int_equal(parse(&o, err, sizeof(err), "--config", path, "--window", "20s", NULL), 0);
	assert_string_equal(o.node, "node-file");
	assert_int_equal(o.n_scorers, 2);
	assert_int_equal(o.window_ms, 20000);	/* the flag wins */
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_options_defaults),
		cmocka_unit_test(test_agent_options_rows),
		cmocka_unit_test(test_agent_options_values),
		cmocka_unit_test(test_agent_options_file),
	};
	return cmocka_run_group_tests_name("agent options", tests, NULL, NULL);
}
