/* A report's pod figures on the wire (netsched.proto), in its two forms:
 *
 *   the table  Report.pod_table, a PodTable: one message, a column per
 *              figure. Agents since issue 25 send it. libprotobuf-c
 *              unpacks a report of 32 pods in a fifth of the list's time.
 *   the list   Report.pods, pods_rest and pods_seen: a Pod message each.
 *              Agents sent it from issue 23 until the table; scorers
 *              still read it.
 *
 * Only report.c calls these, with the generated types; the rest of the
 * project sees struct report. Reading fills r's pod fields from either
 * form and checks only what the form itself can get wrong (counts that do
 * not add up, addresses of the wrong size, more than a bound); the
 * figures are judged afterwards, the same for both (report_validate()).
 * Errors name r->node, which must be set. A pod's addresses come out
 * IPv4 first, in wire order within each family, from either form, so a
 * report reads the same whichever form carried it. */
#ifndef NETSCHED_PODWIRE_H
#define NETSCHED_PODWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "netsched.pb-c.h"
#include "report.h"

/* A PodTable being packed: the message and the arrays it points into.
 * Owns nothing; lives as long as the packing (on the encoder's stack). */
struct podwire_table {
	Netsched__PodTable m;
	Netsched__Pod rest;
	uint32_t ipv4_count[REPORT_MAX_PODS];
	uint32_t ipv6_count[REPORT_MAX_PODS];
	uint8_t ipv4[REPORT_MAX_PODS * REPORT_MAX_POD_IPS * 4];
	uint8_t ipv6[REPORT_MAX_PODS * REPORT_MAX_POD_IPS * 16];
	uint64_t rx_bytes[REPORT_MAX_PODS];
	uint64_t tx_bytes[REPORT_MAX_PODS];
	uint64_t covered_ms[REPORT_MAX_PODS];
	uint64_t rx_recent[REPORT_MAX_PODS];
	uint64_t tx_recent[REPORT_MAX_PODS];
};

/* Fills w from r's pod figures (r->has_pods, and r within the bounds of
 * report.h: report_validate() passed); w->m is then the table to pack. */
void podwire_put_table(struct podwire_table *w, const struct report *r);

/* Reads t into r's pod fields. 0, or -EBADMSG (columns of different
 * lengths, address bytes that are not their counts' size) or
 * -REPORT_EPODS_OVERSIZE (over REPORT_MAX_PODS pods, over
 * REPORT_MAX_POD_IPS addresses on one), err saying which. */
int podwire_get_table(struct report *r, const Netsched__PodTable *t, char *err, size_t errlen);

/* Reads the list form of rep into r's pod fields; the same returns. */
int podwire_get_list(struct report *r, const Netsched__Report *rep, char *err, size_t errlen);

#endif
