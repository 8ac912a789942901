/* Hysteresis for the maxUtilization filter rule: once over, a node stays
 * filtered until it is clearly below again. Pure functions, no I/O.
 *
 * A node whose utilization goes above the limit is "over" from that report
 * on. It stays over until a report shows it at or below (limit - margin)
 * percent of its link AND it has been over for at least the hold time, so
 * a node hovering around the limit does not flip between schedulable and
 * not on every report. A margin as large as the limit means it must go
 * idle. The state is one bool and one time per node (kept in the node
 * table); the caller feeds it every report. */
#ifndef NETSCHED_HYSTERESIS_H
#define NETSCHED_HYSTERESIS_H

#include <stdbool.h>
#include <stdint.h>

#include "filter.h"

struct hysteresis_state {
	bool over;
	uint64_t since_ns;	/* when it went over (monotonic) */
};

enum hysteresis_event {
	HYSTERESIS_SAME,	/* state unchanged */
	HYSTERESIS_CROSSED,	/* went over the limit */
	HYSTERESIS_RELEASED,	/* clearly below again, after the hold */
};

/* One report: rate is what the rule judges (filter_rate()), link the node's
 * link speed, both bytes per second. The rule off or an unknown link clears
 * the state (nothing to judge, so never held). */
enum hysteresis_event hysteresis_step(const struct filter_config *cfg, struct hysteresis_state *st,
				      uint64_t rate, uint64_t link, uint64_t now_ns);

/* The percentage under which a node that is over is released. */
unsigned hysteresis_release_pct(const struct filter_config *cfg);

#endif
