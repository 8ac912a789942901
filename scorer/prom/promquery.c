#include "prom/promquery.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "nodename.h"

/* A reply is 7 tokens per series ({"metric":{...},"value":[t,"v"]}) plus
 * its labels; bound the tokens by the body instead of guessing. */
#define PROMQUERY_MAX_TOKENS (4u * 1024u * 1024u)

static const char *const preset_names[] = {
	[PROMQUERY_KUBE_PROMETHEUS] = "kube-prometheus",
	[PROMQUERY_GO_PLUGIN] = "go-plugin",
	[PROMQUERY_NODE_UNAME] = "node-uname",
	[PROMQUERY_CUSTOM] = "custom",
};

int promquery_parse_preset(const char *s, enum promquery_preset *out)
{
	for (size_t i = 0; i < sizeof(preset_names) / sizeof(preset_names[0]); i++)
		if (strcmp(s, preset_names[i]) == 0) {
			*out = (enum promquery_preset)i;
			return 0;
		}
	return -EINVAL;
}

bool promquery_safe(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == '"' || s[i] == '\\' || s[i] == 0x7f)
			return false;
	return true;
}

const char *promquery_node_label(const struct promquery_config *cfg)
{
	switch (cfg->preset) {
	case PROMQUERY_GO_PLUGIN:
		return "kubernetes_node";
	case PROMQUERY_NODE_UNAME:
		return "nodename";
	case PROMQUERY_CUSTOM:
		return cfg->node_label;
	case PROMQUERY_KUBE_PROMETHEUS:
	default:
		return "instance";
	}
}

/* Appends template with $metric, $device and $range replaced. */
static int expand(const char *tmpl, const struct promquery_config *cfg, const char *metric,
		  char *out, size_t cap, size_t *len)
{
	for (const char *p = tmpl; *p; p++) {
		const char *sub = NULL;
		size_t skip = 0;

		if (strncmp(p, "$metric", 7) == 0)
			sub = metric, skip = 7;
		else if (strncmp(p, "$device", 7) == 0)
			sub = cfg->device, skip = 7;
		else if (strncmp(p, "$range", 6) == 0)
			sub = cfg->range, skip = 6;
		if (sub) {
			size_t k = strlen(sub);

			if (*len + k >= cap)
				return -E2BIG;
			memcpy(out + *len, sub, k);
			*len += k;
			p += skip - 1;
		} else {
			if (*len + 1 >= cap)
				return -E2BIG;
			out[(*len)++] = *p;
		}
	}
	out[*len] = '\0';
	return 0;
}

int promquery_build(const struct promquery_config *cfg, char *out, size_t cap, char *why,
		    size_t whylen)
{
	static const char *const metrics[2] = { "node_network_receive_bytes_total",
						"node_network_transmit_bytes_total" };
	static const char *const dirs[2] = { "rx", "tx" };
	const char *fn = cfg->irate ? "irate" : "rate";
	char tmpl[PROMQUERY_MAX_LEN / 2];
	size_t len = 0;
	int rc;

	if (!promquery_safe(cfg->device, PROMQUERY_DEVICE_MAX - 1) ||
	    !promquery_safe(cfg->range, sizeof(cfg->range) - 1) ||
	    !promquery_safe(promquery_node_label(cfg), PROMQUERY_LABEL_MAX - 1)) {
		snprintf(why, whylen, "device, range and node label must be 1-%d bytes without "
			 "quotes, backslashes or control characters", PROMQUERY_DEVICE_MAX - 1);
		return -EINVAL;
	}
	switch (cfg->preset) {
	case PROMQUERY_KUBE_PROMETHEUS:
	case PROMQUERY_GO_PLUGIN:
		snprintf(tmpl, sizeof(tmpl), "sum by (%s) (%s($metric{device=~\"$device\"}[$range]))",
			 promquery_node_label(cfg), fn);
		break;
	case PROMQUERY_NODE_UNAME:
		snprintf(tmpl, sizeof(tmpl),
			 "sum by (nodename) (%s($metric{device=~\"$device\"}[$range]) * on (instance) "
			 "group_left (nodename) node_uname_info)", fn);
		break;
	case PROMQUERY_CUSTOM:
	default:
		if (!strstr(cfg->custom, "$metric")) {
			snprintf(why, whylen, "a custom query must contain $metric (it is run for "
				 "the receive and the transmit counter)");
			return -EINVAL;
		}
		if (strstr(cfg->custom, "sum_over_time")) {
			snprintf(why, whylen, "sum_over_time of a counter ranks nodes by traffic "
				 "since boot; use rate() or irate()");
			return -EINVAL;
		}
		snprintf(tmpl, sizeof(tmpl), "%s", cfg->custom);
		break;
	}
	/* One query, two series per node: label_replace tags each direction. */
	for (int d = 0; d < 2; d++) {
		rc = snprintf(out + len, cap - len, "%slabel_replace(", d ? " or " : "");
		if (rc < 0 || (size_t)rc >= cap - len)
			goto too_long;
		len += (size_t)rc;
		if (expand(tmpl, cfg, metrics[d], out, cap, &len))
			goto too_long;
		rc = snprintf(out + len, cap - len, ", \"netsched_dir\", \"%s\", \"\", \"\")", dirs[d]);
		if (rc < 0 || (size_t)rc >= cap - len)
			goto too_long;
		len += (size_t)rc;
	}
	return 0;
too_long:
	snprintf(why, whylen, "the query would be longer than %zu bytes", cap - 1);
	return -E2BIG;
}

/* A sample value: Prometheus sends it as a string ("123.4", "NaN", "+Inf"). */
static bool value_ok(const struct json *d, int i, uint64_t *out)
{
	char buf[64], *end;
	size_t n = 0;
	const char *s = json_text(d, i, &n);
	double v;

	if (json_type(d, i) != JSMN_STRING || n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > (double)TRAFFIC_MAX_BYTES_PER_SECOND)
		return false;
	*out = (uint64_t)(v + 0.5);
	return true;
}

/* A node name (nodename.h), which never needs an escape. */
static bool node_ok(const struct json *d, int i, char *out)
{
	size_t n = 0;
	const char *s = json_text(d, i, &n);

	if (json_type(d, i) != JSMN_STRING || !nodename_valid(s, n))
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static int by_node(const void *a, const void *b)
{
	return strcmp(((const struct promquery_value *)a)->node,
		      ((const struct promquery_value *)b)->node);
}

/* The error Prometheus gave, quoted for the log (printable ASCII only). */
static void quote_error(const struct json *d, int obj, char *out, size_t cap)
{
	int e = json_member(d, obj, "error", false);
	size_t len = 0;
	const char *s = json_text(d, e, &len);

	log_printable(s, json_type(d, e) == JSMN_STRING ? len : 0, out, cap);
}

int promquery_parse(const char *body, size_t len, const char *node_label, size_t max_nodes,
		    struct promquery_result *out, char *err, size_t errlen)
{
	return promquery_parse_budget(body, len, node_label, max_nodes, NULL, out, err, errlen);
}

int promquery_parse_budget(const char *body, size_t len, const char *node_label,
			   size_t max_nodes, struct membudget *budget,
			   struct promquery_result *out, char *err, size_t errlen)
{
	struct json doc = { 0 };
	struct promquery_value *vals = NULL;
	struct promquery_result r = { 0 };
	int rc, data, res, status, type;
	char why[160];

	rc = json_parse_budget(&doc, body, len, PROMQUERY_MAX_TOKENS, budget, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (rc == -E2BIG || rc == -EBUSY) {
		snprintf(err, errlen, "reply of %zu bytes: %s", len, why);
		return rc;
	}
	if (rc || json_type(&doc, 0) != JSMN_OBJECT) {
		snprintf(err, errlen, "not a JSON object (%zu bytes)%s%s", len, rc ? ": " : "",
			 rc ? why : "");
		rc = -EBADMSG;
		goto out;
	}
	status = json_member(&doc, 0, "status", false);
	if (!json_is_string(&doc, status, "success")) {
		quote_error(&doc, 0, why, sizeof(why));
		snprintf(err, errlen, "query failed: status is not \"success\"%s%s",
			 why[0] ? ": " : "", why);
		rc = -EBADMSG;
		goto out;
	}
	data = json_member(&doc, 0, "data", false);
	type = json_member(&doc, data, "resultType", false);
	res = json_member(&doc, data, "result", false);
	if (!json_is_string(&doc, type, "vector") || json_type(&doc, res) != JSMN_ARRAY) {
		snprintf(err, errlen, "expected data.resultType \"vector\" with a result array");
		rc = -EBADMSG;
		goto out;
	}
	/* One entry per series first (a node has up to two), then sort and
	 * merge each node's rx and tx: n log n, however many nodes. */
	vals = calloc(2 * max_nodes + 1, sizeof(*vals));
	if (!vals) {
		rc = -ENOMEM;
		goto out;
	}
	for (int k = res + 1, m = 0; m < doc.t[res].size; m++, k = json_skip(&doc, k)) {
		int metric = json_member(&doc, k, "metric", false);
		int value = json_member(&doc, k, "value", false);
		int node = json_member(&doc, metric, node_label, false);
		int dir = json_member(&doc, metric, "netsched_dir", false);
		struct promquery_value *v = &vals[r.n];
		uint64_t rate;
		bool rx;

		if (r.n == 2 * max_nodes) {
			snprintf(err, errlen, "more than %zu series in the reply (%zu nodes)",
				 2 * max_nodes, max_nodes);
			rc = -E2BIG;
			goto out;
		}
		memset(v, 0, sizeof(*v));
		if (!node_ok(&doc, node, v->node) || json_type(&doc, value) != JSMN_ARRAY ||
		    doc.t[value].size != 2 || !value_ok(&doc, json_skip(&doc, value + 1), &rate) ||
		    (!(rx = json_is_string(&doc, dir, "rx")) && !json_is_string(&doc, dir, "tx"))) {
			r.dropped++;
			continue;
		}
		if (rx) {
			v->rx_bytes_per_second = rate;
			v->has_rx = true;
		} else {
			v->tx_bytes_per_second = rate;
			v->has_tx = true;
		}
		r.n++;
	}
	qsort(vals, r.n, sizeof(*vals), by_node);
	{
		size_t w = 0;

		for (size_t i = 0; i < r.n; i++) {
			if (w && strcmp(vals[w - 1].node, vals[i].node) == 0) {
				struct promquery_value *d = &vals[w - 1];

				if (vals[i].has_rx) {
					d->rx_bytes_per_second = vals[i].rx_bytes_per_second;
					d->has_rx = true;
				}
				if (vals[i].has_tx) {
					d->tx_bytes_per_second = vals[i].tx_bytes_per_second;
					d->has_tx = true;
				}
				continue;
			}
			vals[w++] = vals[i];
		}
		r.n = w;
	}
	if (r.n > max_nodes) {
		snprintf(err, errlen, "%zu nodes in the reply, limit %zu", r.n, max_nodes);
		rc = -E2BIG;
		goto out;
	}
	r.values = vals;
	vals = NULL;
	*out = r;
	rc = 0;
out:
	free(vals);
	json_free(&doc);
	return rc;
}

void promquery_result_free(struct promquery_result *r)
{
	free(r->values);
	r->values = NULL;
	r->n = 0;
}
