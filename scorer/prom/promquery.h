/* The Prometheus fallback's PromQL and its reply, with no I/O: the query
 * that asks for every node's rx and tx rate at once, and a strict parser of
 * the instant-query reply. Kept apart from the HTTP client so both are
 * tested and fuzzed on bytes alone.
 *
 * Never sum_over_time over a counter (that ranks nodes by traffic since
 * boot): always rate() or irate() over a range, which the operator sets to
 * at least four scrape intervals. */
#ifndef NETSCHED_PROMQUERY_H
#define NETSCHED_PROMQUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodename.h"
#include "traffic.h"

struct membudget;

#define PROMQUERY_MAX_LEN 4096
#define PROMQUERY_DEVICE_MAX 128
#define PROMQUERY_LABEL_MAX 64

enum promquery_preset {
	PROMQUERY_KUBE_PROMETHEUS,	/* the node_exporter target's `instance` is the node name */
	PROMQUERY_GO_PLUGIN,		/* a `kubernetes_node` label, as the Go plugin expects */
	PROMQUERY_NODE_UNAME,		/* join on node_uname_info's `nodename` */
	PROMQUERY_CUSTOM,		/* the operator's template */
};

struct promquery_config {
	enum promquery_preset preset;
	char device[PROMQUERY_DEVICE_MAX];	/* a regex over node_exporter's `device` */
	char range[16];				/* a PromQL duration: "1m", "5m" */
	bool irate;				/* irate() instead of rate() */
	/* PROMQUERY_CUSTOM: a PromQL expression for one direction in which
	 * $metric, $device and $range are replaced, aggregated by node_label. */
	char custom[PROMQUERY_MAX_LEN / 2];
	char node_label[PROMQUERY_LABEL_MAX];
};

/* "kube-prometheus" | "go-plugin" | "node-uname" | "custom". 0 or -EINVAL. */
int promquery_parse_preset(const char *s, enum promquery_preset *out);
/* Whether s is safe inside a PromQL string (no quote, backslash or control
 * byte) and within len bounds; for device regexes and labels. */
bool promquery_safe(const char *s, size_t max);

/* Writes the one instant query that yields, per node, a series labelled
 * netsched_dir="rx" and one labelled "tx". 0, or -EINVAL/-E2BIG with why. */
int promquery_build(const struct promquery_config *cfg, char *out, size_t cap, char *why,
		    size_t whylen);
/* The label that carries the node name in the reply. */
const char *promquery_node_label(const struct promquery_config *cfg);

struct promquery_value {
	char node[NODENAME_MAX_LEN + 1];
	uint64_t rx_bytes_per_second;
	uint64_t tx_bytes_per_second;
	bool has_rx, has_tx;
};

struct promquery_result {
	struct promquery_value *values;	/* sorted by node; owned */
	size_t n;
	size_t dropped;			/* NaN, Inf, negative, absurd or unnamed */
};

/* Parses an instant-query reply. Only {"status":"success"} with a vector
 * result is accepted; at most max_nodes nodes. 0 and *out filled (free with
 * promquery_result_free), or -EBADMSG (not JSON, not a vector, an error
 * status: err says which and quotes Prometheus's own error), -E2BIG, or
 * -ENOMEM. Values that are not finite, negative or above
 * TRAFFIC_MAX_BYTES_PER_SECOND (traffic.h) are dropped and counted, never
 * used. */
int promquery_parse(const char *body, size_t len, const char *node_label, size_t max_nodes,
		    struct promquery_result *out, char *err, size_t errlen);
/* promquery_parse(), the token array's memory taken from budget while it
 * parses (json_parse_budget(); NULL: none): -EBUSY when it has no room,
 * err saying how much was asked. */
int promquery_parse_budget(const char *body, size_t len, const char *node_label,
			   size_t max_nodes, struct membudget *budget,
			   struct promquery_result *out, char *err, size_t errlen);
void promquery_result_free(struct promquery_result *r);

#endif
