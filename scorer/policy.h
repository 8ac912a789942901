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
};

enum policy_direction {
	POLICY_DIR_RX,
	POLICY_DIR_TX,
	POLICY_DIR_BOTH,	/* rx + tx */
	POLICY_DIR_MAX,		/* the busier of the two */
};

struct policy_node {
	bool has_data;			/* in: false = no fresh data, scores neutral */
	uint64_t rate;			/* in: bytes per second in the chosen direction */
	uint64_t link_bytes_per_second;	/* in: 0 = unknown */
	int score;			/* out */
};

/* Scores every node in place. n may be 0. Never divides by zero, never
 * overflows, and always leaves score in [0, POLICY_MAX_SCORE]. */
void policy_score(enum policy_kind kind, struct policy_node *nodes, size_t n);

uint64_t policy_rate(enum policy_direction dir, uint64_t rx_bytes_per_second,
		     uint64_t tx_bytes_per_second);

/* "relative" | "utilization"; "rx" | "tx" | "both" | "max". 0 or -EINVAL. */
int policy_parse_kind(const char *s, enum policy_kind *out);
int policy_parse_direction(const char *s, enum policy_direction *out);
const char *policy_kind_name(enum policy_kind kind);
const char *policy_direction_name(enum policy_direction dir);

#endif
