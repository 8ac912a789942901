/* The scorer's /metrics written from tables, as the agent's
 * (agent/metrics.c) and the traffic figures (proto/traffic.h) are: a row
 * is a family (its name, type and help) and its series, one per value of
 * its label, each naming where its value sits in a snapshot struct.
 * metrics.c and podstatus.c fill a snapshot of what they read, then print
 * its table. */
#ifndef NETSCHED_METRICROWS_H
#define NETSCHED_METRICROWS_H

#include <stddef.h>

struct buf;

#define METRICROWS_PREFIX "netsched_scorer_"
/* Series of one family, at most. */
#define METRICROWS_MAX_SERIES 16u

/* How a family's values are stored in its snapshot, and printed. */
enum metricrows_kind {
	METRICROWS_ATOMIC,	/* atomic_ulong (registry.h) */
	METRICROWS_U64,		/* uint64_t */
	METRICROWS_SIZE,	/* size_t */
	METRICROWS_BOOL,	/* bool, as 0 or 1 */
	METRICROWS_NS_SECONDS,	/* uint64_t nanoseconds, as seconds to the ms */
};

struct metricfamily {
	const char *name;	/* after METRICROWS_PREFIX */
	const char *type;	/* "counter" or "gauge" */
	const char *help;
	/* Its label's name, and the label's values separated by a space, one
	 * series each, in the order of at[]; label NULL: one series, no
	 * label, at at[0]. */
	const char *label;
	const char *values;
	enum metricrows_kind kind;
	size_t at[METRICROWS_MAX_SERIES];	/* offsetof() the snapshot's fields */
};

/* Families f[0..n) of the snapshot at base into b, in order. */
void metricrows_put(struct buf *b, const struct metricfamily *f, size_t n, const void *base);

#define METRICROWS_N(rows) (sizeof(rows) / sizeof((rows)[0]))

#endif
