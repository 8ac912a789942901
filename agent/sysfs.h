/* The sysfs counter source: /sys/class/net/IF/statistics/FILE, with the files
 * kept open and re-read with pread() (~5.5 us for 4 interfaces, against
 * ~70 us when re-opened every time). Used with `--source sysfs`, and
 * automatically when netlink is unavailable.
 *
 * sysfs shows the network namespace it was mounted in; netns.h remounts it
 * when the agent reads another namespace. Counters are 64-bit on every
 * kernel that has them in sysfs. */
#ifndef NETSCHED_SYSFS_H
#define NETSCHED_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "ifreading.h"
#include "ifselect.h"

#define SYSFS_N_FILES 5

struct sysfs_stats {
	int fd[SYSFS_N_FILES];	/* -1 = closed */
};

/* Marks every file closed, so sysfs_stats_close() is always safe. */
void sysfs_stats_init(struct sysfs_stats *st);
/* Opens root/IF/statistics/... 0 or -errno (-ENODEV: no such interface). */
int sysfs_stats_open(struct sysfs_stats *st, const char *root, const char *ifname);
/* Reads every counter. 0, or -errno (e.g. -ENODEV once the device is gone;
 * *c is then untouched). */
int sysfs_stats_read(struct sysfs_stats *st, struct ifreading *c);
void sysfs_stats_close(struct sysfs_stats *st);

/* Every interface under root, for when netlink is unavailable: name,
 * ifindex, kind (from uevent DEVTYPE; "virtual" when there is no device
 * behind it), bond membership, and default routes from procfs (the IPv4 and
 * IPv6 route tables, paths given so tests can point elsewhere).
 * Same return convention as nl_links(). */
int sysfs_links(const char *root, const char *route4, const char *route6,
		struct ifselect_link *links, size_t cap, size_t *n);

#endif
