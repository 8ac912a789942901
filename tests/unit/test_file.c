/* Small files read whole (common/file.h): what every config, key,
 * certificate, CA, token and kubeconfig file goes through. Anything but a
 * regular file is refused at once with what it is (a FIFO without a writer
 * hung start-up and --check-config; a device never ends), a file over the
 * limit and a missing one name the path; a link to a regular file (a
 * mounted Secret's) is read. An alarm ends the test if anything blocks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/file.h"
#include "file_tree.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/netsched-file.XXXXXX");
	assert_non_null(mkdtemp(root));
	/* A blocking open or read fails the test instead of hanging it. */
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

struct file_row {
	const char *name;
	const char *path;	/* "@x": root/x */
	size_t max;
	int rc;
	const char *error;	/* part of the message, after the path */
};

static const struct file_row file_rows[] = {
	{ "a regular file", "@plain", 64, 0, NULL },
	{ "a link to one (a mounted Secret)", "@link", 64, 0, NULL },
	{ "exactly the limit", "@plain", 6, 0, NULL },
	{ "one byte over the limit", "@plain", 5, -E2BIG, "larger than 5 bytes" },
	{ "missing", "@missing", 64, -ENOENT, "No such file or directory" },
	{ "a FIFO without a writer", "@fifo", 64, -EINVAL, "a FIFO, not a regular file" },
	{ "a link to a FIFO", "@fifo-link", 64, -EINVAL, "a FIFO, not a regular file" },
	{ "/dev/zero, which never ends", "/dev/zero", 64, -EINVAL,
	  "a character device, not a regular file" },
	{ "/dev/null", "/dev/null", 64, -EINVAL, "a character device, not a regular file" },
	{ "a directory", "@dir", 64, -EINVAL, "a directory, not a regular file" },
	{ "a socket", "@sock", 64, -ENXIO, "No such device or address" },
};

static void build_tree(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128], to[128];
	int fd;

	file_tree_put(root, "plain", "hello\n");
	snprintf(path, sizeof(path), "%s/link", root);
	assert_int_equal(symlink("plain", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", root);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(to, sizeof(to), "%s/fifo-link", root);
	assert_int_equal(symlink(path, to), 0);
	snprintf(path, sizeof(path), "%s/dir", root);
	assert_int_equal(mkdir(path, 0700), 0);
	/* A bound socket file: open() itself refuses it (ENXIO). */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", root);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

static void test_file_rows(void **state)
{
	(void)state;
	build_tree();
	for (size_t r = 0; r < sizeof(file_rows) / sizeof(file_rows[0]); r++) {
		const struct file_row *row = &file_rows[r];
		char path[128], err[256] = "", *data = NULL;
		size_t len = 0;
		int rc;

		if (row->path[0] == '@')
			snprintf(path, sizeof(path), "%s/%s", root, row->path + 1);
		else
			snprintf(path, sizeof(path), "%s", row->path);
		rc = file_read_small(path, row->max, &data, &len, NULL, err, sizeof(err));
		if (rc != row->rc)
			fail_msg("%s: rc %d (%s), want %d", row->name, rc, err, row->rc);
		if (rc == 0) {
			if (len != 6 || strcmp(data, "hello\n"))
				fail_msg("%s: read %zu bytes", row->name, len);
			free(data);
		} else if (strncmp(err, path, strlen(path)) || !strstr(err, row->error)) {
			fail_msg("%s: error \"%s\" does not name %s and say \"%s\"", row->name, err, path,
				 row->error);
		}
		/* The check --check-config makes agrees, on every row. */
		rc = file_check_readable(path, row->max, err, sizeof(err));
		if (rc != row->rc)
			fail_msg("%s: file_check_readable gave %d, want %d", row->name, rc, row->rc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_rows),
	};
	return cmocka_run_group_tests_name("file", tests, setup, teardown);
}
