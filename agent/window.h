/* The sliding window of one interface: a ring of per-sample counter deltas.
 *
 * Counters are cumulative; the window turns consecutive readings into deltas
 * and keeps the most recent ones. Three rules keep it honest:
 *  - the first reading (and the first after a reset or gap) only primes:
 *    there is nothing to subtract it from, so no delta is recorded;
 *  - a counter that goes backwards is a reset (device re-created, driver
 *    reload, ifindex change): re-prime, never a huge unsigned "delta";
 *  - a missed or late sample is a gap: no delta and no covered time, so an
 *    outage neither reads as zero traffic nor stretches a rate.
 * A delta implying more than max_bytes_per_second (when known) is dropped as
 * absurd and the window re-primes from the new reading.
 *
 * Times are monotonic nanoseconds supplied by the caller (tests drive them).
 * The window owns its slot array and a scratch array of twice as many
 * rates (rx and tx, for the percentiles); window_free() releases both. Not thread-safe: even
 * window_stats() writes the scratch array. */
#ifndef NETSCHED_WINDOW_H
#define NETSCHED_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "ifreading.h"
#include "traffic.h"

/* One sample interval. A gap is a slot without data, so it still ages out. */
struct window_slot {
	uint64_t end_ns;
	uint64_t dur_ns;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	/* Saturation signals: packets the host or the NIC had to drop. */
	uint64_t rx_dropped;
	uint64_t rx_missed;
	uint64_t tx_dropped;
	bool valid;
};

struct window {
	struct window_slot *slots;
	uint64_t *scratch;	/* 2 x cap: rx rates, then tx rates, reordered by the percentile */
	uint32_t cap;
	uint32_t head;		/* next slot to write */
	uint32_t count;		/* slots in use, <= cap */
	bool primed;
	uint64_t prev_ns;
	struct ifreading prev;
	/* Lifetime counts, for logs and metrics. */
	uint64_t resets;
	uint64_t gaps;
	uint64_t absurd;
};

enum window_event {
	WINDOW_PRIMED,	/* first reading: nothing recorded yet */
	WINDOW_DELTA,	/* a delta was recorded */
	WINDOW_RESET,	/* a counter went backwards: re-primed */
	WINDOW_GAP,	/* too long since the last reading: re-primed */
	WINDOW_ABSURD,	/* delta above the limit: dropped, re-primed */
};

/* What the window holds over a span ending now. */
struct window_stats {
	/* The figures a report carries (traffic.h), except the link speed,
	 * which the window does not know (0). The covered time is rounded to
	 * the millisecond as the report carries it, and the averages are the
	 * byte counts over it, so the agent's figures are the scorer's. p95
	 * is the WINDOW_PERCENTILE-th percentile of the one-sample rates
	 * (nearest rank): what the link carries during the busy part of a
	 * bursty window, which the average hides; recent covers the samples
	 * that ended within recent_ns before now: a step shows there at once,
	 * in the average only after a whole window. */
	struct traffic traffic;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t covered_ns;	/* time the recorded deltas cover */
	uint32_t samples;	/* deltas present */
	uint32_t slots;		/* deltas and gaps in the span */
	uint64_t recent_covered_ns;
};

#define WINDOW_PERCENTILE 95

/* cap is the number of sample intervals kept (>= 1). 0 or -ENOMEM. */
int window_init(struct window *w, uint32_t cap);
/* Accepts a zeroed or already freed window. */
void window_free(struct window *w);

/* Feeds one reading taken at now_ns. A reading more than max_gap_ns after the
 * previous one is a gap; any counter lower than before is a reset.
 * max_bytes_per_second 0 means no limit. */
enum window_event window_add(struct window *w, uint64_t now_ns, const struct ifreading *c,
			     uint64_t max_gap_ns, uint64_t max_bytes_per_second);

/* A reading that could not be taken (interface gone, read failed). */
void window_gap(struct window *w, uint64_t now_ns);

/* Forgets the previous reading (e.g. the ifindex changed), keeping the deltas. */
void window_reprime(struct window *w);

/* Forgets every delta and the previous reading, keeping the lifetime
 * counts: what was measured belongs to someone else (a pod whose
 * interface now serves other addresses). */
void window_clear(struct window *w);

/* Sums the slots that ended within span_ns before now_ns; the recent rate
 * covers those that ended within recent_ns (at least the newest sample, so
 * a recent_ns shorter than the sample interval still means something). */
void window_stats(const struct window *w, uint64_t now_ns, uint64_t span_ns, uint64_t recent_ns,
		  struct window_stats *out);

/* window_stats() without the peaks and percentiles (0): the byte counts,
 * covered time, averages and recent rates alone, in a tenth of the time
 * (no selection over the samples), for the many pods of a node. */
void window_totals(const struct window *w, uint64_t now_ns, uint64_t span_ns, uint64_t recent_ns,
		   struct window_stats *out);

#endif
