/* Entering a network namespace (agent/netns.c), in namespaces the test
 * makes (root: setns needs CAP_SYS_ADMIN; skipped otherwise): the thread
 * enters a child process's namespace by path and comes back; a fresh sysfs
 * shows that namespace's links; a missing name, a path too long and a file
 * that is no network namespace are refused with the path and the cause. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/netns.h"

static ino_t ns_inode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/* A child in a network namespace of its own, waiting until killed. */
static pid_t holder(void)
{
	int ready[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(1);
		(void)!write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_netns_enter_leave(void **state)
{
	ino_t home = ns_inode("/proc/thread-self/ns/net");
	char path[64], err[256];
	pid_t pid;
	int saved = -1;

	(void)state;
	if (geteuid() != 0)
		skip();
	pid = holder();
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	assert_int_equal(netns_enter(path, &saved, err, sizeof(err)), 0);
	assert_true(saved >= 0);
	assert_int_equal(ns_inode("/proc/thread-self/ns/net"), ns_inode(path));
	assert_true(ns_inode("/proc/thread-self/ns/net") != home);
	assert_int_equal(netns_leave(saved), 0);
	assert_int_equal(ns_inode("/proc/thread-self/ns/net"), home);
	reap(pid);
}

/* In a child: enter the holder's namespace, remount sysfs, list the links
 * /sys/class/net shows. Exits 0 when it shows just lo. */
static void test_netns_remount_sysfs(void **state)
{
	char path[64], err[256];
	pid_t pid, child;
	int status;

	(void)state;
	if (geteuid() != 0)
		skip();
	pid = holder();
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fflush(NULL); /* the child exits through exit(): its coverage counts */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int saved, n = 0, lo = 0;
		struct dirent *e;
		DIR *d;

		if (netns_enter(path, &saved, err, sizeof(err)) ||
		    netns_remount_sysfs(err, sizeof(err)))
			exit(10);
		d = opendir("/sys/class/net");
		if (!d)
			exit(11);
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			n++;
			lo += !strcmp(e->d_name, "lo");
		}
		closedir(d);
		exit(n == 1 && lo == 1 ? 0 : 12);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	reap(pid);
}

struct refused {
	const char *name;
	const char *arg;	/* NULL: a name longer than any path */
	int rc;
	const char *err;
};

static const struct refused refused[] = {
	{ "a name not under /run/netns", "netsched-test-no-such-netns", -ENOENT,
	  "netns /run/netns/netsched-test-no-such-netns: No such file or directory" },
	{ "a path that is not there", "/nonexistent/ns", -ENOENT, "netns /nonexistent/ns: No such" },
	{ "a path too long", NULL, -ENAMETOOLONG, "path longer than 255 bytes" },
	{ "a mount namespace, not a network one", "/proc/self/ns/mnt", -EINVAL, "setns" },
};

static void test_netns_refused(void **state)
{
	ino_t home = ns_inode("/proc/thread-self/ns/net");
	char longname[400], err[256];
	int saved = -7;

	(void)state;
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct refused *c = &refused[i];
		int rc;

		if (c->rc == -EINVAL && geteuid() != 0)
			continue; /* refused for the privilege first */
		err[0] = '\0';
		rc = netns_enter(c->arg ? c->arg : longname, &saved, err, sizeof(err));
		if (rc != c->rc || !strstr(err, c->err))
			fail_msg("%s: %d '%s', want %d '%s'", c->name, rc, err, c->rc, c->err);
		assert_int_equal(saved, -7); /* untouched */
		assert_int_equal(ns_inode("/proc/thread-self/ns/net"), home);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_enter_leave),
		cmocka_unit_test(test_netns_remount_sysfs),
		cmocka_unit_test(test_netns_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
