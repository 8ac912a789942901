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
	{ "name", CLI_VALUE, set_name, "NAME  a name" },
	{ "count", CLI_VALUE, set_count, "N  a count" },
	{ "flag", CLI_FLAG, set_flag, "  a flag" },
	{ "legacyName", CLI_FILE_ONLY, set_legacy, NULL },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_flags),
		cmocka_unit_test(test_cli_file),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
