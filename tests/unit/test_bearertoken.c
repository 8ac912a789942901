/* Bearer token files (common/bearertoken.c), the one rule both clients (the
 * pod watch, the Prometheus fallback) apply: trailing whitespace trimmed,
 * every other byte visible ASCII, errors that name the file and never the
 * token, nothing of a refused token left in the caller's buffer. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/bearertoken.h"

static char path[] = "/tmp/netsched-test-bearer.XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void put(const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

struct token_case {
	const char *name;
	const char *file;	/* contents */
	size_t len;		/* 0: strlen(file) */
	int rc;
	const char *token;	/* rc 0: what is sent */
	const char *err;	/* rc != 0: part of the message */
};

static const struct token_case cases[] = {
	{ "plain", "abc.DEF-123_x~+/=", 0, 0, "abc.DEF-123_x~+/=", NULL },
	{ "a trailing newline", "abc\n", 0, 0, "abc", NULL },
	{ "CR LF", "abc\r\n", 0, 0, "abc", NULL },
	{ "trailing spaces, tabs, blank lines", "abc \t\n\n \r\n", 0, 0, "abc", NULL },
	{ "a JWT as the kubelet writes it", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", 0, 0,
	  "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", NULL },
	{ "empty", "", 0, -EINVAL, NULL, "holds no bearer token" },
	{ "only whitespace", " \n\t\r\n", 0, -EINVAL, NULL, "holds no bearer token" },
	/* Prometheus's client used to send the first line of this. */
	{ "a second line", "abc\nX-Injected: 1\n", 0, -EINVAL, NULL, "byte 4 of the bearer token (0x0a)" },
	{ "a space inside", "abc def", 0, -EINVAL, NULL, "byte 4 of the bearer token (0x20)" },
	{ "a leading space", " abc", 0, -EINVAL, NULL, "byte 1 of the bearer token (0x20)" },
	{ "a tab inside", "ab\tc", 0, -EINVAL, NULL, "(0x09) cannot go in an HTTP header" },
	{ "a bare CR inside", "ab\rc", 0, -EINVAL, NULL, "(0x0d)" },
	{ "a NUL byte", "ab\0cd", 5, -EINVAL, NULL, "byte 3 of the bearer token (0x00)" },
	{ "DEL", "ab\x7f", 0, -EINVAL, NULL, "(0x7f)" },
	{ "UTF-8", "t\xc3\xa9st", 0, -EINVAL, NULL, "byte 2 of the bearer token (0xc3)" },
};

static void test_bearertoken_read(void **state)
{
	char token[64], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct token_case *c = &cases[i];
		int rc;

		put(c->file, c->len ? c->len : strlen(c->file));
		memset(token, 'x', sizeof(token));
		err[0] = '\0';
		rc = bearertoken_read(path, token, sizeof(token), err, sizeof(err));
		if (rc != c->rc)
			fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->rc, err);
		if (c->rc == 0) {
			assert_string_equal(token, c->token);
			continue;
		}
		if (!strstr(err, c->err) || !strstr(err, path))
			fail_msg("%s: error '%s' should name the file and say '%s'", c->name, err,
				 c->err);
		/* Nothing of a refused token stays with the caller. */
		for (size_t k = 0; k < sizeof(token); k++)
			if (token[k])
				fail_msg("%s: byte %zu of the output is left after an error", c->name, k);
		if (c->len == 0 && strlen(c->file) > 3 && strstr(err, c->file))
			fail_msg("%s: the error quotes the token: %s", c->name, err);
	}
}

static void test_bearertoken_limits(void **state)
{
	static char big[BEARERTOKEN_FILE_MAX + 2];
	char token[16], err[256], hdr[BEARERTOKEN_HEADER_MAX];

	(void)state;
	/* Longer than the caller's buffer. */
	put("0123456789abcdef", 16);
	assert_int_equal(bearertoken_read(path, token, sizeof(token), err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "16 bytes, more than the 15 allowed"));
	/* A file larger than any token. */
	memset(big, 'a', sizeof(big) - 1);
	put(big, sizeof(big) - 1);
	assert_int_equal(bearertoken_read(path, token, sizeof(token), err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "larger than 16384 bytes"));
	/* The largest token fits the header. */
	put(big, BEARERTOKEN_FILE_MAX - 1);
	assert_int_equal(bearertoken_header_file(path, hdr, sizeof(hdr), err, sizeof(err)), 0);
	assert_int_equal(strlen(hdr), strlen("Authorization: Bearer ") + BEARERTOKEN_FILE_MAX - 1);
	/* No file. */
	assert_int_equal(bearertoken_read("/nonexistent/token", token, sizeof(token), err,
					  sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/token: No such file"));
}

static void test_bearertoken_header(void **state)
{
	char hdr[64], small[24], err[256];

	(void)state;
	assert_int_equal(bearertoken_header("abc", hdr, sizeof(hdr)), 0);
	assert_string_equal(hdr, "Authorization: Bearer abc");
	assert_int_equal(bearertoken_header("abc", small, sizeof(small)), -E2BIG);
	assert_int_equal(small[0], 0);
	put("s3cret\n", 7);
	assert_int_equal(bearertoken_header_file(path, hdr, sizeof(hdr), err, sizeof(err)), 0);
	assert_string_equal(hdr, "Authorization: Bearer s3cret");
	assert_int_equal(bearertoken_header_file(path, small, sizeof(small), err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "a header line here may carry"));
	put("bad token", 9);
	assert_int_equal(bearertoken_header_file(path, hdr, sizeof(hdr), err, sizeof(err)), -EINVAL);
	assert_int_equal(hdr[0], 0);
	assert_true(bearertoken_valid("a", 1));
	assert_false(bearertoken_valid("", 0));
	assert_false(bearertoken_valid("a b", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bearertoken_read),
		cmocka_unit_test(test_bearertoken_limits),
		cmocka_unit_test(test_bearertoken_header),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
