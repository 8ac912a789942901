#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int netns_enter(const char *name_or_path, int *saved, char *err, size_t errlen)
{
	char path[256];
	int self = -1, target = -1, rc;

	if (strchr(name_or_path, '/'))
		rc = snprintf(path, sizeof(path), "%s", name_or_path);
	else
		rc = snprintf(path, sizeof(path), "/run/netns/%s", name_or_path);
	if (rc < 0 || (size_t)rc >= sizeof(path)) {
		snprintf(err, errlen, "netns %.40s...: path longer than %zu bytes", name_or_path,
			 sizeof(path) - 1);
		return -ENAMETOOLONG;
	}
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		rc = -errno;
		snprintf(err, errlen, "netns: /proc/self/ns/net: %s", strerror(errno));
		goto fail;
	}
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		rc = -errno;
		snprintf(err, errlen, "netns %s: %s", path, strerror(errno));
		goto fail;
	}
	if (setns(target, CLONE_NEWNET)) {
		rc = -errno;
		snprintf(err, errlen, "netns %s: setns: %s%s", path, strerror(errno),
			 errno == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		goto fail;
	}
	close(target);
	*saved = self;
	return 0;
fail:
	if (target >= 0)
		close(target);
	if (self >= 0)
		close(self);
	return rc;
}

int netns_leave(int saved)
{
	int rc = setns(saved, CLONE_NEWNET) ? -errno : 0;

	close(saved);
	return rc;
}

int netns_remount_sysfs(char *err, size_t errlen)
{
	if (unshare(CLONE_NEWNS)) {
		snprintf(err, errlen, "unshare(CLONE_NEWNS): %s", strerror(errno));
		return -errno;
	}
	/* Keep our mounts from propagating back to the host. */
	if (mount("", "/", NULL, MS_SLAVE | MS_REC, NULL)) {
		snprintf(err, errlen, "making / a slave mount: %s", strerror(errno));
		return -errno;
	}
	if (umount2("/sys", MNT_DETACH) && errno != EINVAL) {
		snprintf(err, errlen, "umount /sys: %s", strerror(errno));
		return -errno;
	}
	if (mount("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		snprintf(err, errlen, "mount sysfs on /sys: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
