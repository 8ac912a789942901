/* What a pod in flight weighs, per direction, until its own traffic shows
 * in its node's counters (inflight.h), in this order:
 *  1. its declared kubernetes.io/ingress-bandwidth (rx) or
 *     egress-bandwidth (tx): the pod says so, and it is also held from the
 *     bandwidth filter;
 *  2. else its workload's learned demand (workload.h): what pods like it
 *     moved; with --learned-filter also held from the bandwidth filter;
 *  3. else a fallback, since nothing is known of it: the cluster's
 *     measured average traffic per running pod (podindex.h; or
 *     --inflight-estimate, an operator's figure, when set), and the pod is
 *     counted as unknown on its node, where it brings doubt: each unknown
 *     pod takes a share (--inflight-penalty, 10%) of what is left free on
 *     that node's link (podweight_doubt()).
 *
 * Why the doubt is a share of the free link, not a rate: a rate that
 * spreads a burst on 100 Mb/s links (10 Mb/s is a tenth of one) is a
 * hundredth of a 10 Gb/s link and moves no integer score, so the burst
 * lands on one node; the share is the same part of the score at every
 * link speed. 10% is one step of the 0..10 score: one unknown pod moves a
 * quiet node by about a step, so the next pod of a burst goes to the next
 * quietest node. And a share of what is free, compounding, never fills a
 * link: k unknown pods leave (1 - share)^k of the free part free, so a
 * quiet node full of pods that move nothing never looks as busy as a node
 * measured at 90% (it takes 21 unknown pods on a node at 5%), while a
 * burst still spreads. Declared and learned pods bring no doubt: their
 * weight is a figure, and light pods of a learned workload pack.
 *
 * Pure but for the reads of the workload model and the pod index, which
 * take their own locks. */
#ifndef NETSCHED_PODWEIGHT_H
#define NETSCHED_PODWEIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/filter.h"
#include "pods/inflight.h"
#include "parse/kubepod.h"

struct workload;
struct workload_key;
struct podindex;

struct podweight_config {
	unsigned doubt_pct;			/* share of the free link per unknown pod; 0: none */
	uint64_t estimate_bytes_per_second;	/* the fallback's weight; 0: the measured average */
	bool learned_filter;			/* the bandwidth filter holds learned demand */
};

/* Where the figures come from; either pointer may be NULL (nothing learned,
 * no average measured). reference_link is what the doubt of a node whose
 * link speed is unknown takes its share of: the fastest known link among
 * nodes with fresh data, else the busiest such node's rate
 * (view_reference_refresh()), bytes per second; 0: none yet. */
struct podweight {
	struct podweight_config cfg;
	struct workload *workloads;
	struct podindex *pods;
	_Atomic uint64_t reference_link;
};

/* A pod as the scheduler or the watch shows it. */
struct podweight_pod {
	uint64_t ingress_bps;			/* declared, bits per second; 0: not */
	uint64_t egress_bps;
	const struct kubepod_str *ns;		/* for its workload (workload_key_of()) */
	const struct kubepod_str *name;
	const struct kubepod_owner *owner;	/* NULL or kind.s NULL: no controller */
	const char *label;			/* for inflight.h */
};

enum podweight_source {
	PODWEIGHT_DECLARED,
	PODWEIGHT_LEARNED,
	PODWEIGHT_FALLBACK,
};

/* What pod weighs in flight. w may be NULL (only declared figures). The
 * source of each direction goes to *rx_from and *tx_from (may be NULL). */
void podweight_of(const struct podweight *w, const struct podweight_pod *pod,
		  struct inflight_pod *out, enum podweight_source *rx_from,
		  enum podweight_source *tx_from);

/* podweight_of() with the pod's workload already worked out by the caller
 * (workload_key_of(); NULL: it has none), not again from pod's names. */
void podweight_of_keyed(const struct podweight *w, const struct podweight_pod *pod,
			const struct workload_key *key, struct inflight_pod *out,
			enum podweight_source *rx_from, enum podweight_source *tx_from);

/* What the bandwidth filter holds pod to: what it declares, and with
 * learned_filter its learned demand where it declares nothing. */
void podweight_filter(const struct podweight *w, const struct podweight_pod *pod,
		      struct filter_pod *out);

/* The doubt that unknown_milli thousandths of unknown pods bring to a node
 * whose link is link and whose used part (measured and weighed) is used,
 * bytes per second: the free part times 1 - (1 - pct/100)^pods. 0 when
 * the link is unknown (nothing to take a share of). */
uint64_t podweight_doubt(unsigned pct, uint64_t link, uint64_t used, uint32_t unknown_milli);

const char *podweight_source_name(enum podweight_source s);

#endif
