/* The interfaces an agent measures, each with its sliding window.
 *
 * sampler_tick() reads every measured interface's counters (one netlink
 * dump, or the kept-open sysfs files) and feeds the windows; sampler_fill()
 * turns the windows into the interface part of a report.
 *
 * Which interfaces: the ifselect spec is matched against the kernel's links
 * at start, on every rtnetlink link notification (hot-plug, rename, delete),
 * every SAMPLER_RESCAN_NOTIFIED_NS in case one was missed (every
 * SAMPLER_RESCAN_NS when there is no netlink to notify), and at once when a
 * measured interface goes missing. Interfaces are followed by ifindex: a rename keeps the window
 * (the report carries the new name); a device that disappears leaves a gap,
 * and one that comes back under the same name takes its window back and
 * re-primes, so a re-created device never shows up as a spike. An interface
 * gone for a whole window is dropped.
 *
 * Pods' interfaces (pods.h) are found by the same rescans and read every
 * --pod-interval in the same work: that tick reads every link with one
 * RTM_GETSTATS dump, whatever the share of measured links.
 *
 * The sampler borrows nl (may be NULL: sysfs only) and the strings in its
 * config (node, sysfs paths); the caller closes nl after sampler_free().
 * Not thread-safe. */
#ifndef NETSCHED_SAMPLER_H
#define NETSCHED_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ifreading.h"
#include "ifselect.h"
#include "linkspeed.h"
#include "log.h"
#include "nl.h"
#include "pods.h"
#include "report.h"
#include "sysfs.h"
#include "window.h"

/* Rescan period without link notifications (sysfs only), and with them. */
#define SAMPLER_RESCAN_NS (5ULL * 1000000000ULL)
#define SAMPLER_RESCAN_NOTIFIED_NS (60ULL * 1000000000ULL)
/* Links considered per rescan; a host with more is logged, not crashed. */
#define SAMPLER_MAX_LINKS 4096

enum sampler_source {
	SAMPLER_NETLINK,
	SAMPLER_SYSFS,
};

struct sampler_config {
	const char *node;			/* for log lines */
	struct ifselect_spec spec;
	enum sampler_source source;
	uint64_t interval_ns;
	uint64_t window_ns;
	uint64_t recent_ns;			/* span of the recent rate (the report interval) */
	const struct linkspeed_override *speeds; /* --link-speed, n_speeds entries */
	size_t n_speeds;
	const char *sysfs_root;			/* "/sys/class/net" */
	const char *route4, *route6;		/* procfs route tables (sysfs discovery) */
	bool sysfs_speed;			/* whether sysfs shows the measured namespace */
	/* Pods' interfaces (pods.h): measured when pods.spec selects any and
	 * the source is netlink. Its node, window and exclude list are the
	 * sampler's. */
	struct pods_config pods;
};

struct sampler_iface {
	bool used;
	char name[REPORT_MAX_IFNAME_LEN + 1];
	uint32_t ifindex;		/* 0 while gone */
	uint64_t gone_since_ns;
	uint64_t link_speed_bps;	/* 0 = unknown */
	unsigned bits;			/* counter width the kernel gave: 64 or 32 */
	struct ifreading raw;		/* this tick's reading, as the kernel gave it */
	struct ifreading wide;		/* widened to 64 bits (32-bit kernels) */
	bool have_raw;
	bool seen;			/* whether this tick read it */
	struct sysfs_stats sysfs;
	struct window win;
	struct log_limit events_log;	/* resets, gaps, dropped samples */
	uint32_t failed_in_row;		/* newest samples whose read failed (report: failed_samples) */
	uint64_t failed;		/* samples whose read failed, ever */
};

struct sampler {
	struct sampler_config cfg;
	struct nl *nl;
	size_t n;			/* slots in use or once used */
	struct sampler_iface ifs[REPORT_MAX_INTERFACES];
	struct ifselect_link links[SAMPLER_MAX_LINKS]; /* scratch for rescans */
	size_t n_links;			/* links the last rescan saw */
	uint64_t next_rescan_ns;
	bool rescan_now;
	bool warned_full;
	uint64_t read_failures;
	uint32_t failed_in_row;		/* ticks in a row whose read failed */
	int last_read_err;
	struct log_limit read_log, rescan_log;
	bool pods_on;
	struct pods pods;
};

/* 0, -EINVAL or -ENOMEM. The first rescan runs on the first tick. Pods
 * are measured when cfg->pods selects any and the source is netlink (with
 * sysfs they are not, and the caller says so). */
int sampler_init(struct sampler *s, struct nl *nl, const struct sampler_config *cfg);
/* Accepts a zeroed or half-built sampler. */
void sampler_free(struct sampler *s);

/* One reading of every measured interface at now_ns (monotonic). Returns
 * 0, or the read error (after nl.h's tries): the windows then record a
 * gap, and each interface counts the sample failed until one is read
 * again, which its report says (report_iface.failed_samples): a gap is
 * never 0 bytes. */
int sampler_tick(struct sampler *s, uint64_t now_ns);

/* Fills r->ifaces and r->n_ifaces with the last window before now_ns, and
 * the pods' figures of their last reading (pods_fill()). */
void sampler_fill(struct sampler *s, uint64_t now_ns, struct report *r);

/* How many interfaces are measured now. */
size_t sampler_count(const struct sampler *s);

/* The pods' counts for /metrics; false when pods are not measured. */
bool sampler_pods_health(const struct sampler *s, struct pods_health *h);

/* A 32-bit counter reading raw widened against the previous widened value
 * wide (whose low half is the previous raw value): one wrap at most. */
uint64_t sampler_widen32(uint64_t wide, uint64_t raw);

/* One interface's event counts since the agent started, for /metrics. */
struct sampler_health {
	char name[REPORT_MAX_IFNAME_LEN + 1];
	uint64_t resets, gaps, absurd;
	uint64_t failed;		/* samples whose read failed */
	uint64_t failed_in_row;		/* of the newest, in a row (0: read) */
};

/* The netlink source's counts (nl_health()); false without netlink. */
bool sampler_nl_health(const struct sampler *s, struct nl_health *h);

/* Fills out with every interface measured now or earlier (a gone one keeps
 * its counts), at most cap; returns how many. */
size_t sampler_health(const struct sampler *s, struct sampler_health *out, size_t cap);

#endif
