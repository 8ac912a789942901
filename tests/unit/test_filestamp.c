/* Noticing a replaced file, and the one reload policy on a key file: a
 * changed file is read again, a broken version keeps the keys in use and is
 * not read again until the file changes once more. */
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

#include "common/filestamp.h"
#include "common/keyfile.h"

#define K1 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
#define K2 "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"

static char dir[] = "/tmp/netsched-test-stamp.XXXXXX";
static char live[64], next[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* A Secret update: the new version is written aside and renamed over. */
static void replace(const char *text)
{
	put(next, text);
	assert_int_equal(rename(next, live), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(live, sizeof(live), "%s/key", dir);
	snprintf(next, sizeof(next), "%s/key.new", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(live);
	unlink(next);
	rmdir(dir);
	return 0;
}

static void test_file_stamp(void **state)
{
	struct file_stamp st;

	(void)state;
	put(live, "one");
	assert_int_equal(file_stamp_take(live, &st), 0);
	assert_false(file_stamp_changed(live, &st));
	replace("two");
	assert_true(file_stamp_changed(live, &st));
	assert_int_equal(file_stamp_take(live, &st), 0);
	assert_false(file_stamp_changed(live, &st));
	/* Gone for a moment: unchanged, keep what we have. */
	assert_int_equal(unlink(live), 0);
	assert_false(file_stamp_changed(live, &st));
	assert_int_equal(file_stamp_take(live, &st), -ENOENT);
}

static void test_keyfile_reload_policy(void **state)
{
	struct keyfile kf;
	uint32_t first;
	char err[256];

	(void)state;
	put(live, K1);
	assert_int_equal(keyfile_load(live, &kf, err, sizeof(err)), 0);
	first = kf.keys[0].id;
	assert_int_equal(keyfile_reload(live, &kf, err, sizeof(err)), 0);

	/* A broken version: reported once, the key in use stays. */
	replace("not a key\n");
	assert_true(keyfile_reload(live, &kf, err, sizeof(err)) < 0);
	assert_int_equal(kf.n, 1);
	assert_int_equal(kf.keys[0].id, first);
	assert_int_equal(keyfile_reload(live, &kf, err, sizeof(err)), 0);

	/* The next version loads. */
	replace(K2 K1);
	assert_int_equal(keyfile_reload(live, &kf, err, sizeof(err)), 1);
	assert_int_equal(kf.n, 2);
	assert_int_not_equal(kf.keys[0].id, first);
	assert_int_equal(keyfile_reload(live, &kf, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_stamp),
		cmocka_unit_test(test_keyfile_reload_policy),
	};
	return cmocka_run_group_tests_name("filestamp", tests, setup, teardown);
}
