#include "sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "units.h"

/* Only what a report carries: each file costs a pread per sample. */
static const char *const files[SYSFS_N_FILES] = {
	"rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped", "rx_missed_errors",
};

void sysfs_stats_init(struct sysfs_stats *st)
{
	for (int i = 0; i < SYSFS_N_FILES; i++)
		st->fd[i] = -1;
}

void sysfs_stats_close(struct sysfs_stats *st)
{
	for (int i = 0; i < SYSFS_N_FILES; i++) {
		if (st->fd[i] >= 0)
			close(st->fd[i]);
		st->fd[i] = -1;
	}
}

int sysfs_stats_open(struct sysfs_stats *st, const char *root, const char *ifname)
{
	char path[256];
	int rc;

	sysfs_stats_init(st);
	for (int i = 0; i < SYSFS_N_FILES; i++) {
		rc = snprintf(path, sizeof(path), "%s/%s/statistics/%s", root, ifname, files[i]);
		if (rc < 0 || (size_t)rc >= sizeof(path)) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		st->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (st->fd[i] < 0) {
			rc = errno == ENOENT ? -ENODEV : -errno;
			goto fail;
		}
	}
	return 0;
fail:
	sysfs_stats_close(st);
	return rc;
}

/* A counter file holds a decimal number and a newline. */
static int read_u64(int fd, uint64_t *out)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	if (n == 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return units_parse_u64(buf, UINT64_MAX, out) ? -EIO : 0;
}

int sysfs_stats_read(struct sysfs_stats *st, struct ifreading *c)
{
	uint64_t v[SYSFS_N_FILES];
	int rc;

	for (int i = 0; i < SYSFS_N_FILES; i++) {
		if (st->fd[i] < 0)
			return -EBADF;
		rc = read_u64(st->fd[i], &v[i]);
		if (rc)
			return rc;
	}
	*c = (struct ifreading){
		.rx_bytes = v[0],
		.tx_bytes = v[1],
		.rx_dropped = v[2],
		.tx_dropped = v[3],
		.rx_missed_errors = v[4],
	};
	return 0;
}

/* Reads a small file of root/ifname/what into buf. */
static int read_attr(const char *root, const char *ifname, const char *what, char *buf,
		     size_t cap)
{
	char path[256];
	ssize_t n;
	int fd, rc;

	rc = snprintf(path, sizeof(path), "%s/%s/%s", root, ifname, what);
	if (rc < 0 || (size_t)rc >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	buf[n] = '\0';
	return 0;
}

static bool exists(const char *root, const char *ifname, const char *what)
{
	char path[256];
	struct stat sb;
	int rc = snprintf(path, sizeof(path), "%s/%s/%s", root, ifname, what);

	return rc > 0 && (size_t)rc < sizeof(path) && lstat(path, &sb) == 0;
}

static void link_kind(const char *root, struct ifselect_link *l)
{
	char uevent[512];
	const char *p;

	if (read_attr(root, l->name, "uevent", uevent, sizeof(uevent)) == 0 &&
	    (p = strstr(uevent, "DEVTYPE=")) != NULL) {
		p += 8;
		snprintf(l->kind, sizeof(l->kind), "%.*s", (int)strcspn(p, "\n"), p);
		return;
	}
	/* No DEVTYPE: hardware has a device behind it, veth and friends do not. */
	if (!exists(root, l->name, "device"))
		snprintf(l->kind, sizeof(l->kind), "virtual");
}

/* Marks the links a default route leaves through, from /proc/net/route
 * ("Iface Destination ... Mask" in hex) and /proc/net/ipv6_route (dest,
 * prefix length, ..., device last). */
static void mark_routes(const char *path, bool v6, struct ifselect_link *links, size_t n)
{
	char line[512], dev[IFSELECT_NAME_MAX], dst[40], plen[8], mask[16];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		bool dflt;

		if (v6) {
			char *last = strrchr(line, ' ');

			if (sscanf(line, "%39s %7s", dst, plen) != 2 || !last)
				continue;
			snprintf(dev, sizeof(dev), "%.*s", (int)strcspn(last + 1, "\n"), last + 1);
			dflt = !strcmp(dst, "00000000000000000000000000000000") &&
			       !strcmp(plen, "00") && strcmp(dev, "lo");
		} else {
			if (sscanf(line, "%15s %39s %*s %*s %*s %*s %*s %15s", dev, dst, mask) != 3)
				continue;
			dflt = !strcmp(dst, "00000000") && !strcmp(mask, "00000000");
		}
		for (size_t i = 0; dflt && i < n; i++)
			if (!strcmp(links[i].name, dev))
				links[i].default_route = true;
	}
	fclose(f);
}

int sysfs_links(const char *root, const char *route4, const char *route6,
		struct ifselect_link *links, size_t cap, size_t *n)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char buf[32];
	size_t k = 0;
	bool overflow = false;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		struct ifselect_link l = { 0 };
		uint64_t v;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(l.name))
			continue;
		strcpy(l.name, e->d_name);
		if (read_attr(root, l.name, "ifindex", buf, sizeof(buf)))
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (units_parse_u64(buf, UINT32_MAX, &v) || v == 0)
			continue;
		l.ifindex = (uint32_t)v;
		/* ARPHRD_LOOPBACK is 772. */
		l.loopback = read_attr(root, l.name, "type", buf, sizeof(buf)) == 0 &&
			     strtol(buf, NULL, 10) == 772;
		link_kind(root, &l);
		l.bond_slave = exists(root, l.name, "bonding_slave");
		if (k == cap) {
			overflow = true;
			continue;
		}
		links[k++] = l;
	}
	closedir(d);
	mark_routes(route4, false, links, k);
	mark_routes(route6, true, links, k);
	*n = k;
	return overflow ? -E2BIG : 0;
}
