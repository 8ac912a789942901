/* The agent's /metrics page in the Prometheus text format, rendered from a
 * snapshot: what the sampling loop last published (agent/httpd.h keeps it)
 * and the process's own figures. No clock, no I/O and no lock here, so a
 * unit test renders any snapshot and reads the page back. */
#ifndef NETSCHED_AGENT_METRICS_H
#define NETSCHED_AGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "sampler.h"
#include "sender.h"

struct buf;

/* The latest report, the sampler's per-interface counts and the sender's
 * per-scorer counts, copied (no pointer into the loop's state). */
struct agent_metrics_snapshot {
	bool have_report;
	struct report report;
	size_t n_ifaces;
	struct sampler_health ifaces[REPORT_MAX_INTERFACES];
	size_t n_peers;
	struct sender_peer peers[SENDER_MAX_PEERS];
	bool have_pods;			/* the sampler measures pods */
	struct pods_health pods;
	bool have_nl;			/* the sampler reads netlink */
	struct nl_health nl;
};

/* The process and its HTTP server. */
struct agent_metrics_process {
	double cpu_seconds;
	uint64_t resident_bytes;
	uint64_t log_lines_dropped;
	uint64_t http_deadline_closes;	/* httpguard.h */
	uint64_t http_reclaimed_idle, http_reclaimed_busiest;
};

/* Copies what /metrics shows from the loop's state. sm and snd may be NULL. */
void agent_metrics_snapshot_fill(struct agent_metrics_snapshot *out, const struct report *r,
				 const struct sampler *sm, struct sender *snd);

/* Reads the process's CPU time (getrusage), resident memory
 * (/proc/self/statm) and dropped log lines; the HTTP counts are left as
 * they are. */
void agent_metrics_process_read(struct agent_metrics_process *p);

/* Appends the page to b (check buf_failed() after). */
void agent_metrics_render(const struct agent_metrics_snapshot *snap,
			  const struct agent_metrics_process *p, struct buf *b);

#endif
