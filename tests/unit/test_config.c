/* YAML config loading: what is accepted, what each handler sees, and that
 * every malformed file names the file, the line and the problem. */
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

#include "common/config.h"

struct seen {
	char log[1024];
};

/* Records "key=value;" and refuses the key "bad". */
static int record(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	if (strcmp(key, "bad") == 0) {
		snprintf(err, errlen, "\"%s\" is not a port", value);
		return -EINVAL;
	}
	snprintf(s->log + n, sizeof(s->log) - n, "%s=%s;", key, value);
	return 0;
}

struct config_row {
	const char *name;
	const char *yaml;
	int rc;
	const char *want; /* the handler log on success, a substring of err on failure */
};

static const struct config_row rows[] = {
	{ "flat mapping", "node: node-7\nwindow: 60s\n", 0, "node=node-7;window=60s;" },
	{ "block list", "scorer:\n  - tcp://a:1\n  - tcp://b:2\n", 0, "scorer=tcp://a:1;scorer=tcp://b:2;" },
	{ "flow list", "scorer: [tcp://a:1, tcp://b:2]\n", 0, "scorer=tcp://a:1;scorer=tcp://b:2;" },
	{ "quoted and comments", "# c\nnode: \"a b\" # trailing\n", 0, "node=a b;" },
	{ "empty file", "", 0, "" },
	{ "comments only", "# nothing\n", 0, "" },
	{ "handler refusal names file, line and key", "node: x\nbad: 99x\n", -EINVAL,
	  "test.yaml:2: bad: \"99x\" is not a port" },
	{ "nested mapping", "node:\n  name: x\n", -EINVAL, "test.yaml:2: node: expected a value" },
	{ "list of mappings", "scorer:\n  - a: 1\n", -EINVAL, "list items must be plain values" },
	{ "top-level list", "- a\n- b\n", -EINVAL, "top level must be a mapping" },
	{ "top-level scalar", "hello\n", -EINVAL, "top level must be a mapping" },
	{ "two documents", "a: 1\n---\nb: 2\n", -EINVAL, "only one YAML document" },
	{ "broken YAML", "a: [1, 2\n", -EINVAL, "not valid YAML" },
	{ "tab indentation", "a:\n\t- 1\n", -EINVAL, "not valid YAML" },
	{ "mapping as key", "? {a: 1}\n: 2\n", -EINVAL, "keys must be plain names" },
	{ "alias", "a: &x 1\nb: *x\n", -EINVAL, "b: expected a value" },
	/* Issue 39: the second value was taken without a word. */
	{ "a key given twice", "node: a\nwindow: 2s\n\n# again\nnode: b\n", -EINVAL,
	  "test.yaml: key 'node' given twice (lines 1 and 5)" },
	{ "a key given twice, once as a list", "scorer: [a]\nscorer:\n  - b\n", -EINVAL,
	  "key 'scorer' given twice (lines 1 and 2)" },
	{ "NUL in a key is not cut short", "\"no\\0de\": x\n", -EINVAL, "key contains a NUL byte" },
};

static void test_config_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct config_row *row = &rows[i];
		struct seen s = { "" };
		char err[256] = "";
		int rc = config_load_buffer("test.yaml", row->yaml, strlen(row->yaml), record, &s,
					    err, sizeof(err));

		if (rc != row->rc)
			fail_msg("%s: rc %d, want %d (err \"%s\")", row->name, rc, row->rc, err);
		if (rc == 0 && strcmp(s.log, row->want) != 0)
			fail_msg("%s: applied \"%s\", want \"%s\"", row->name, s.log, row->want);
		if (rc != 0 && !strstr(err, row->want))
			fail_msg("%s: error \"%s\" does not say \"%s\"", row->name, err, row->want);
	}
}

static void test_config_limits(void **state)
{
	size_t big = CONFIG_MAX_FILE_BYTES + 1, n = 0;
	char *yaml = malloc(big + 64);
	struct seen s = { "" };
	char err[256] = "";

	(void)state;
	assert_non_null(yaml);
	memset(yaml, '#', big);
	assert_int_equal(config_load_buffer("big.yaml", yaml, big, record, &s, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "limit 65536"));

	n = (size_t)snprintf(yaml, 64, "a: ");
	memset(yaml + n, 'v', CONFIG_MAX_VALUE_LEN + 1);
	n += CONFIG_MAX_VALUE_LEN + 1;
	assert_int_equal(config_load_buffer("long.yaml", yaml, n, record, &s, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "long.yaml:1: a: value longer than 4096 bytes"));

	n = 0;
	for (unsigned k = 0; k <= CONFIG_MAX_KEYS; k++)
		n += (size_t)snprintf(yaml + n, big + 64 - n, "k%u: 1\n", k);
	assert_int_equal(config_load_buffer("keys.yaml", yaml, n, record, &s, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 128 keys"));
	free(yaml);
}

static void test_config_file(void **state)
{
	char path[] = "/tmp/netsched-config-XXXXXX";
	struct seen s = { "" };
	char err[256] = "";
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("node: from-file\n", f);
	fclose(f);
	assert_int_equal(config_load(path, record, &s, err, sizeof(err)), 0);
	assert_string_equal(s.log, "node=from-file;");
	unlink(path);
	assert_int_equal(config_load(path, record, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_rows),
		cmocka_unit_test(test_config_limits),
		cmocka_unit_test(test_config_file),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
