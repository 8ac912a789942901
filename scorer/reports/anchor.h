/* Agent clocks behind ours: signed reports whose window ends before this
 * scorer started.
 *
 * Such a report is either captured before a restart and sent again (a
 * replay: no table of ours saw it, so only its time tells), or fresh from
 * an agent whose clock is behind the scorer's. Refusing them all refused a
 * live agent 200 s behind for 200 s after every scorer start. So the first
 * one of an agent instance (by node and instance id) is held, not applied:
 * its anchor. The instance's next report is judged by the agent's own
 * clock against that anchor: a higher sequence number, a window that ends
 * later by as much time as passed here between their arrivals (within
 * ANCHOR_SLACK_MS), shows a live agent whose clock runs; it is applied, and
 * from then on the node table orders the instance's reports. A copy of the
 * held report, or an older one, is a replay. Anything else anchors afresh.
 *
 * What it cannot tell: a series of reports captured in the few minutes
 * before a restart (the skew bound, ingest.h), replayed at their original
 * pace, passes as a live agent behind us. It holds the node only while the
 * real instance is silent: that instance's own next report ends later and
 * wins (table.h), and a newer instance's ends later still.
 *
 * Bounded: at most a fixed number of anchors (the node table's size);
 * when the slots near a new one are taken the oldest gives way. Only
 * ingest uses it, one report at a time (ingest.h): no lock. */
#ifndef NETSCHED_ANCHOR_H
#define NETSCHED_ANCHOR_H

#include <stddef.h>
#include <stdint.h>

/* Two reports of one instance: their windows' ends may differ from the
 * time between their arrivals by this much (queueing, a late sample). */
#define ANCHOR_SLACK_MS 1000u

enum anchor_verdict {
	ANCHOR_HELD,		/* first of its instance, or not yet consistent: not applied */
	ANCHOR_LIVE,		/* consistent with the held one: apply it */
	ANCHOR_REPLAYED,	/* the held report again, or an older one */
};

struct anchors;

/* Room for max anchors (> 0); NULL when out of memory. */
struct anchors *anchors_create(size_t max);
/* Accepts NULL. */
void anchors_destroy(struct anchors *a);

/* Judges report seq of instance on node (len bytes), whose window ends at
 * end_unix_ms (the agent's clock), arriving at now_mono_ns (ours). */
enum anchor_verdict anchors_judge(struct anchors *a, const char *node, size_t len,
				  uint64_t instance, uint64_t seq, uint64_t end_unix_ms,
				  uint64_t now_mono_ns);

#endif
