/* Turning node bandwidth into extender scores. Pure functions, no I/O.
 *
 * Scores are integers in [0, POLICY_MAX_SCORE] (the extender protocol's
 * MaxExtenderPriority); the scheduler multiplies them by weight * 10. */
#ifndef NETSCHED_POLICY_H
#define NETSCHED_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_MAX_SCORE 10
/* What a node without data scores: neither favoured nor avoided. */
#define POLICY_NEUTRAL_SCORE 5

enum policy_kind {
	POLICY_RELATIVE,	/* score = Max - rate * Max / maxRate (the Go plugin's formula) */
	POLICY_UTILIZATION,	/* score = round(Max * (1 - min(1, rate / linkSpeed))) */
	/* What hurts: the utilization formula on the pressure (below), and 0
	 * for a node dropping packets (policy_dropping()). */
	POLICY_PRESSURE,
};

enum policy_direction {
	POLICY_DIR_RX,
	POLICY_DIR_TX,
	POLICY_DIR_BOTH,	/* rx + tx */
	POLICY_DIR_MAX,		/* the busier of the two */
	/* Each direction against the pod's own demand that way (fit.h); the
	 * other three judge every pod by one figure of the node. */
	POLICY_DIR_FIT,
};

/* One direction's rates, bytes per second; recent and p95 0 when unknown. */
struct policy_rates {
	uint64_t rate;
	uint64_t recent;
	uint64_t p95;
};

/* Rates are bytes per second in the chosen direction. recent and p95 are 0
 * when the source does not have them (Prometheus, older agents): the
 * pressure is then the average. */
struct policy_node {
	bool has_data;			/* in: false = no fresh data, scores neutral */
	uint64_t rate;			/* in: average over the window */
	uint64_t recent;		/* in: since the agent's previous report */
	uint64_t p95;			/* in: 95th percentile of the one-sample rates */
	uint64_t drops;			/* in: packets dropped or missed in the window */
	bool dropping;			/* in: drops over the threshold (pressure: score 0) */
	uint64_t link_bytes_per_second;	/* in: 0 = unknown */
	/* in (fit.h): each direction's rates, pods in flight included */
	struct policy_rates rx, tx;
	uint64_t pressure;		/* out (pressure policy, fit): what was scored */
	uint32_t cost_milli;		/* out (fit): the pod's cost, thousandths of the link */
	int score;			/* out */
};

/* The pressure policy's load: level = max(average, recent), so a step up
 * counts at once; pressure = max(level, (level + p95) / 2), so half of the
 * gap up to the bursts counts too. Never overflows. */
uint64_t policy_pressure(uint64_t rate, uint64_t recent, uint64_t p95);

/* max_per_second for a threshold that is off: drops never count. */
#define POLICY_DROPS_IGNORED UINT64_MAX

/* True when drops packets over window_ms (0: taken as one second) average
 * more than max_per_second: 0 means any drop. Never overflows. */
bool policy_dropping(uint64_t drops, uint64_t window_ms, uint64_t max_per_second);

/* Scores every node in place. n may be 0. Never divides by zero, never
 * overflows, and always leaves score in [0, POLICY_MAX_SCORE]. */
void policy_score(enum policy_kind kind, struct policy_node *nodes, size_t n);

uint64_t policy_rate(enum policy_direction dir, uint64_t rx_bytes_per_second,
		     uint64_t tx_bytes_per_second);

/* "relative" | "utilization" | "pressure"; "rx" | "tx" | "both" | "max" | "fit".
 * 0 or -EINVAL. */
int policy_parse_kind(const char *s, enum policy_kind *out);
int policy_parse_direction(const char *s, enum policy_direction *out);
const char *policy_kind_name(enum policy_kind kind);
const char *policy_direction_name(enum policy_direction dir);

#endif
