/* What the scorer knows of one node right now, and from where: the agent's
 * latest report while it is fresh; else the Prometheus fallback's value
 * while that is fresh; else nothing (a neutral score, never filtered).
 * Agent data always wins: it is seconds old, the fallback's is not.
 * prioritize, filter and /v1/nodes all ask here, so they never disagree. */
#ifndef NETSCHED_VIEW_H
#define NETSCHED_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "report.h"
#include "scorer.h"

enum view_source {
	VIEW_NONE,
	VIEW_AGENT,
	VIEW_PROMETHEUS,
};

struct view_node {
	enum view_source source;
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
	uint64_t link_bytes_per_second;	/* 0 = unknown (always, from Prometheus) */
	uint64_t age_ns;		/* since the report or the fallback refresh;
					   since the last report when none is fresh */
	bool known;			/* the table has ever heard of it */
	char label[REPORT_MAX_IFNAME_LEN + 12]; /* interface(s), for reasons */
};

void view_get(struct scorer *s, const char *name, size_t len, uint64_t now_ns,
	      struct view_node *out);

/* The policy's input for a view: no data unless some source is fresh. */
void view_policy_input(const struct scorer *s, const struct view_node *v, struct policy_node *out);

/* "agent" | "prometheus" | "none" */
const char *view_source_name(enum view_source src);

#endif
