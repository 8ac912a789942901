/* One option table for flags and YAML files: values, flags, file-only
 * names, flags over the file wherever --config stands, and one-line errors
 * that name the option. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/cli.h"

struct ctx {
	char name[16];
	uint64_t count;
	bool flag;
	char legacy[16];
};

static int set_name(void *c, const char *v, char *why, size_t len)
{
	return cli_set_string(((struct ctx *)c)->name, sizeof(((struct ctx *)c)->name), v, why, len);
}

static int set_count(void *c, const char *v, char *why, size_t len)
{
	return cli_set_count(&((struct ctx *)c)->count, v, 100, why, len);
}

static int set_flag(void *c, const char *v, char *why, size_t len)
{
	(void)v, (void)why, (void)len;
	((struct ctx *)c)->flag = true;
	return 0;
}

static int set_legacy(void *c, const char *v, char *why, size_t len)
{
	return cli_set_string(((struct ctx *)c)->legacy, sizeof(((struct ctx *)c)->legacy), v, why,
			      len);
}

static const struct cli_opt opts[] = {
	{ .name = "name", .kind = CLI_VALUE, .arg = "NAME", .set = set_name, .help = "a name" },
	{ .name = "count", .kind = CLI_VALUE, .arg = "N", .set = set_count, .help = "a count" },
	{ .name = "flag", .kind = CLI_FLAG, .set = set_flag, .help = "a flag" },
	{ .name = "legacyName", .kind = CLI_FILE_ONLY, .set = set_legacy },
};
#define N (sizeof(opts) / sizeof(opts[0]))

static int run(struct ctx *c, char *err, size_t len, ...)
{
	char *argv[12] = { "prog" };
	int argc = 1;
	va_list ap;

	memset(c, 0, sizeof(*c));
	va_start(ap, len);
	for (char *a; argc < 11 && (a = va_arg(ap, char *)); )
		argv[argc++] = a;
	va_end(ap);
	err[0] = '\0';
	return cli_parse(opts, N, c, argc, argv, err, len);
}

static void test_cli_flags(void **state)
{
	struct ctx c;
	char err[256];

	(void)state;
	assert_int_equal(run(&c, err, sizeof(err), "--name", "a", "--count", "7", "--flag", NULL), 0);
	assert_string_equal(c.name, "a");
	assert_int_equal(c.count, 7);
	assert_true(c.flag);
	assert_int_equal(run(&c, err, sizeof(err), "--count", "101", NULL), -EINVAL);
	assert_non_null(strstr(err, "--count"));
	assert_int_equal(run(&c, err, sizeof(err), "--name", NULL), -EINVAL);
	assert_non_null(strstr(err, "--name"));
	assert_int_equal(run(&c, err, sizeof(err), "--nope", NULL), -EINVAL);
	assert_non_null(strstr(err, "--nope"));
	/* A file-only name is no flag. */
	assert_int_equal(run(&c, err, sizeof(err), "--legacyName", "x", NULL), -EINVAL);
	assert_int_equal(run(&c, err, sizeof(err), "--name", "0123456789abcdefXX", NULL), -EINVAL);
	assert_null(strchr(err, '\n'));
}

static void test_cli_file(void **state)
{
	char path[] = "/tmp/netsched-cli.XXXXXX", err[256];
	struct ctx c;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("name: from-file\ncount: 3\nlegacyName: old\n", f);
	fclose(f);
	/* Flags win, whether they stand before or after --config. */
	assert_int_equal(run(&c, err, sizeof(err), "--count", "9", "--config", path, NULL), 0);
	assert_string_equal(c.name, "from-file");
	assert_int_equal(c.count, 9);
	assert_string_equal(c.legacy, "old");
	/* A flag is not a file key. */
	f = fopen(path, "w");
	fputs("flag: true\n", f);
	fclose(f);
	assert_int_equal(run(&c, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, "flag"));
	unlink(path);
	assert_int_equal(run(&c, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, path));
}

/* Issue 39: a CR/LF in a value passed --check-config and went into logs
 * raw. Any control character, from a flag or a file, is refused with the
 * option named and the value shown without it; a key given twice in a
 * file is refused with both lines; nothing outside sent is echoed raw. */
static void test_cli_control_characters(void **state)
{
	char path[] = "/tmp/netsched-cli.XXXXXX", err[256];
	struct ctx c;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(run(&c, err, sizeof(err), "--name", "a\r\nb", NULL), -EINVAL);
	assert_string_equal(err, "--name a??b: a control character (0x0d) at byte 2: a value is one "
			    "line of printable text");
	assert_string_equal(c.name, "");
	assert_int_equal(run(&c, err, sizeof(err), "--name", "tab\there", NULL), -EINVAL);
	assert_non_null(strstr(err, "(0x09) at byte 4"));
	assert_int_equal(run(&c, err, sizeof(err), "--na\nme", "x", NULL), -EINVAL);
	assert_null(strchr(err, '\n'));
	assert_int_equal(run(&c, err, sizeof(err), "--name", "x", "stray\r\n", NULL), -EINVAL);
	assert_string_equal(err, "stray??: unexpected argument (see --help)");

	f = fdopen(fd, "w");
	fputs("count: 3\nname: \"https://a\\r\\n2026 forged\"\n", f);
	fclose(f);
	assert_int_equal(run(&c, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, ":2: name: a control character (0x0d) at byte 10"));
	f = fopen(path, "w");
	fputs("count: 3\n\"na\\nme\": x\n", f);
	fclose(f);
	assert_int_equal(run(&c, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, ":2: na?me: unknown option"));
	f = fopen(path, "w");
	fputs("count: 3\nname: a\n\ncount: 4\n", f);
	fclose(f);
	assert_int_equal(run(&c, err, sizeof(err), "--config", path, NULL), -EINVAL);
	assert_non_null(strstr(err, ": key 'count' given twice (lines 1 and 4)"));
	unlink(path);
}

/* Typed rows: each states where its value goes, its bounds and its
 * default once; defaults go through the same parsing as a flag. */
struct typed {
	char path[8];
	uint64_t wait_ms;
	uint64_t tries;
	bool on;
	bool flag;
};

#define TAT(f) .offset = offsetof(struct typed, f), .size = sizeof(((struct typed *)0)->f)

static const struct cli_opt typed_opts[] = {
	{ .name = "path", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, TAT(path),
	  .help = "a file", .def = "/etc" },
	{ .name = "wait", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION, TAT(wait_ms),
	  .min = 100, .max = 60000, .help = "a wait", .def = "2s" },
	{ .name = "tries", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT, TAT(tries), .max = 5,
	  .help = "a count", .def = "3" },
	{ .name = "on", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH, TAT(on),
	  .help = "a switch", .def = "on" },
	{ .name = "flag", .kind = CLI_FLAG, .type = CLI_SWITCH, TAT(flag), .help = "a flag" },
};
#define N_TYPED (sizeof(typed_opts) / sizeof(typed_opts[0]))

struct typed_row {
	const char *flag, *value;
	const char *says;	/* NULL: accepted */
};

static const struct typed_row typed_rows[] = {
	{ "--path", "/run", NULL },
	{ "--path", "/var/lib", "--path /var/lib: 8 bytes, limit 7" },
	{ "--wait", "500ms", NULL },
	{ "--wait", "50ms", "--wait 50ms: expected a duration from 100ms to 60s, such as 2s" },
	{ "--tries", "5", NULL },
	{ "--tries", "0", "--tries 0: expected a count from 1 to 5" },
	{ "--on", "off", NULL },
	{ "--on", "false", NULL },
	{ "--on", "maybe", "--on maybe: expected on or off (or true or false)" },
};

static void test_cli_typed(void **state)
{
	struct typed t;
	char err[256] = "";
	char *argv[3] = { "prog", "--flag", NULL };

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(cli_defaults(typed_opts, N_TYPED, &t, err, sizeof(err)), 0);
	assert_string_equal(t.path, "/etc");
	assert_int_equal(t.wait_ms, 2000);
	assert_int_equal(t.tries, 3);
	assert_true(t.on);
	assert_false(t.flag);
	assert_int_equal(cli_parse(typed_opts, N_TYPED, &t, 2, argv, err, sizeof(err)), 0);
	assert_true(t.flag);
	for (size_t i = 0; i < sizeof(typed_rows) / sizeof(typed_rows[0]); i++) {
		const struct typed_row *row = &typed_rows[i];
		char *args[4] = { "prog", (char *)row->flag, (char *)row->value, NULL };
		int rc;

		err[0] = '\0';
		rc = cli_parse(typed_opts, N_TYPED, &t, 3, args, err, sizeof(err));
		if (row->says ? rc != -EINVAL || strcmp(err, row->says) : rc != 0)
			fail_msg("%s %s: rc %d \"%s\", want \"%s\"", row->flag, row->value, rc, err,
				 row->says ? row->says : "");
	}
	assert_false(t.on);
}

/* A default that does not parse is a bug, named before anything runs; and
 * --help shows each default beside what the option does. */
static void test_cli_defaults_and_usage(void **state)
{
	static const struct cli_opt broken[] = {
		{ .name = "tries", .kind = CLI_VALUE, .type = CLI_COUNT, TAT(tries), .max = 5,
		  .help = "a count", .def = "9" },
	};
	struct typed t;
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(cli_defaults(broken, 1, &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--tries: default 9: expected a count from 1 to 5");
	assert_non_null(f);
	cli_usage(f, "prog", typed_opts, N_TYPED);
	fclose(f);
	assert_non_null(strstr(text, "  --wait DUR"));
	assert_non_null(strstr(text, " a wait (2s)\n"));
	assert_non_null(strstr(text, " a flag\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_flags),
		cmocka_unit_test(test_cli_file),
		cmocka_unit_test(test_cli_control_characters),
		cmocka_unit_test(test_cli_typed),
		cmocka_unit_test(test_cli_defaults_and_usage),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
