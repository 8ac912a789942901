/* A node's or one interface's traffic: the one in-memory form of the
 * figures the agent measures (agent/window.c), the report carries
 * (report.c), the scorer adds up per node (scorer/nodes/table.c), judges and
 * shows (/v1/nodes, /metrics).
 *
 * traffic_figures[] says, per figure, how it travels, adds up over a
 * node's interfaces, is bounded and is shown, and every layer walks it. So
 * adding a figure (a p99, say) is: its field in netsched.proto, its member
 * here, its computation in agent/window.c and its row there (one per
 * direction); the wire, the bounds, a node's sum, /v1/nodes (and /metrics,
 * if the row names a metric) follow. Every figure is a uint64_t with a row
 * (test_traffic.c checks). */
#ifndef NETSCHED_TRAFFIC_H
#define NETSCHED_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

/* 3.2 Tb/s: twice the fastest NIC one could buy in 2026. A rate or a link
 * speed above it is absurd wherever it comes from: a report (on one
 * interface or a node's together), --link-speed or sysfs on the agent, the
 * Prometheus fallback. */
#define TRAFFIC_MAX_BYTES_PER_SECOND (400ULL * 1000 * 1000 * 1000)

/* One direction, bytes per second. recent and p95 are 0 from agents that
 * do not send them; each is at most the peak. */
struct traffic_rates {
	uint64_t average;	/* over the covered time */
	uint64_t recent;	/* since the agent's previous report, at least its newest sample */
	uint64_t p95;		/* 95th percentile (nearest rank) of the one-sample rates */
	uint64_t peak;		/* the highest one-sample rate */
};

struct traffic {
	struct traffic_rates rx, tx;
	/* Packets in the window: dropped by the host's queues, missed by the
	 * NIC (its rx FIFO overflowed). Saturation signals. */
	uint64_t rx_dropped;
	uint64_t rx_missed;
	uint64_t tx_dropped;
	uint64_t link_bytes_per_second;	/* 0 = unknown */
	uint64_t covered_ms;		/* time the figures cover; gaps and resets are not covered */
};

/* How a node's figure follows from its interfaces'. */
enum traffic_sum {
	TRAFFIC_SUM,		/* added up, saturating */
	TRAFFIC_SUM_KNOWN,	/* added up, and unknown (0) when any is unknown */
	TRAFFIC_LONGEST,	/* the largest */
};

/* What a report may hold (report_validate()). */
enum traffic_bound {
	TRAFFIC_ANY,		/* a count: 64 bits */
	TRAFFIC_RATE,		/* a rate: absurd above a limit, or above twice the link */
	TRAFFIC_SAMPLED,	/* a rate of some samples: at most the peak of its direction */
	TRAFFIC_SPECIAL,	/* the link and the covered time: report.c checks them */
};

struct traffic_figure {
	const char *label;	/* "rx p95": for messages */
	size_t offset;		/* of its uint64_t in struct traffic */
	enum traffic_sum sum;
	enum traffic_bound bound;
	size_t peak;		/* TRAFFIC_SAMPLED: offset of the peak bounding it */
	/* Its netsched.proto Interface field, an optional uint64 carried as
	 * is; NULL: report.c carries it its own way (the averages as byte
	 * counts, the link in bits, the covered time). */
	const char *wire;
	const char *json;	/* its key in /v1/nodes; NULL: not shown */
	/* A per-node gauge of the scorer, netsched_scorer_node_<metric>,
	 * and its help; NULL: none. */
	const char *metric;
	const char *help;
};

/* In the order /v1/nodes shows them. */
extern const struct traffic_figure traffic_figures[];
extern const size_t traffic_n_figures;

/* The figure at offset (a traffic_figure's offset or peak). */
static inline uint64_t traffic_at(const struct traffic *t, size_t offset)
{
	return *(const uint64_t *)(const void *)((const char *)t + offset);
}

static inline uint64_t traffic_get(const struct traffic *t, const struct traffic_figure *f)
{
	return traffic_at(t, f->offset);
}

static inline void traffic_set(struct traffic *t, const struct traffic_figure *f, uint64_t v)
{
	*(uint64_t *)(void *)((char *)t + f->offset) = v;
}

/* Adds t (one more interface) into sum, figure by figure (enum
 * traffic_sum). Start sum as the first interface's traffic. */
void traffic_add(struct traffic *sum, const struct traffic *t);

/* count over ms, per second, rounded down; 0 when ms is 0, UINT64_MAX when
 * it does not fit (so an absurd count reads as absurd, never wraps small). */
uint64_t traffic_per_second(uint64_t count, uint64_t ms);

#endif
