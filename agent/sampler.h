/* The interfaces an agent follows, each with its sliding window.
 *
 * sampler_tick() reads every interface's counters with one netlink dump and
 * feeds the windows; sampler_fill() turns the windows into the interface part
 * of a report. Interfaces are named by the operator and followed by ifindex:
 * one that is missing is looked up again by name on the next tick, and one
 * whose ifindex disappears is a gap (the next reading re-primes), so a
 * re-created device never shows up as a spike.
 *
 * The sampler borrows nl (the caller closes it after sampler_free()) and
 * node (for log lines). Not thread-safe. */
#ifndef NETSCHED_SAMPLER_H
#define NETSCHED_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "nl.h"
#include "report.h"
#include "window.h"

struct sampler_iface {
	char name[REPORT_MAX_IFNAME_LEN + 1];
	uint32_t ifindex;	/* 0 while the interface is missing */
	uint64_t link_speed_bps; /* 0 = unknown */
	struct counters now;	/* this tick's reading */
	bool seen;		/* whether this tick's dump had it */
	struct window win;
};

struct sampler {
	struct nl *nl;
	const char *node;
	uint64_t interval_ns;
	uint64_t window_ns;
	size_t n;
	struct sampler_iface ifs[REPORT_MAX_INTERFACES];
	uint64_t dump_failures;
	int last_dump_err;
};

/* Sets up n interfaces with a window of window_ns in steps of interval_ns.
 * Interfaces that do not exist yet are logged and looked for on every tick.
 * link_speeds[i] is interface i's speed in bits per second or 0 (unknown).
 * 0 or -ENOMEM / -EINVAL. */
int sampler_init(struct sampler *s, struct nl *nl, const char *node,
		 const char (*names)[REPORT_MAX_IFNAME_LEN + 1], const uint64_t *link_speeds,
		 size_t n, uint64_t interval_ns, uint64_t window_ns);
/* Accepts a zeroed or half-built sampler. */
void sampler_free(struct sampler *s);

/* One reading of every interface at now_ns (monotonic). Returns 0, or the
 * netlink error (every window then records a gap). */
int sampler_tick(struct sampler *s, uint64_t now_ns);

/* Fills r->ifaces and r->n_ifaces with the last window_ns before now_ns. */
void sampler_fill(const struct sampler *s, uint64_t now_ns, struct report *r);

#endif
