/* GET /v1/pressure's JSON into a snapshot (pressure.h). */
#include "pressure.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/units.h"

/* About 20 tokens a node and 16 a pod: 16,384 nodes and a few thousand hot
 * pods fit with room. */
#define PRESSURE_MAX_TOKENS (1u << 20)

static int read_u64(const struct json *doc, int obj, const char *key, bool need, uint64_t *out,
		    const char *where, char *err, size_t errlen)
{
	int i = json_member(doc, obj, key, false);
	char num[32];
	const char *t;
	size_t len;

	if (i < 0) {
		if (!need) {
			*out = 0;
			return 0;
		}
		snprintf(err, errlen, "%s: %s is missing", where, key);
		return -EINVAL;
	}
	t = json_text(doc, i, &len);
	if (json_type(doc, i) != JSMN_PRIMITIVE || !t || len == 0 || len >= sizeof(num) ||
	    t[0] < '0' || t[0] > '9') {
		snprintf(err, errlen, "%s: %s is %s, not a whole number of bytes per second", where,
			 key, json_kind(doc, i));
		return -EINVAL;
	}
	memcpy(num, t, len);
	num[len] = '\0';
	if (units_parse_u64(num, UINT64_MAX, out)) {
		snprintf(err, errlen, "%s: %s is not a whole number below 2^64", where, key);
		return -EINVAL;
	}
	return 0;
}

static int read_str(const struct json *doc, int obj, const char *key, bool need, char *out,
		    size_t cap, const char *where, char *err, size_t errlen)
{
	int i = json_member(doc, obj, key, false);
	size_t len = 0;
	int rc;

	out[0] = '\0';
	if (i < 0 && !need)
		return 0;
	if (i < 0 || json_type(doc, i) != JSMN_STRING) {
		snprintf(err, errlen, "%s: %s is %s, not a string", where, key, json_kind(doc, i));
		return -EINVAL;
	}
	rc = json_string(doc, i, out, cap - 1, &len);
	if (rc) {
		snprintf(err, errlen, "%s: %s is longer than %zu bytes", where, key, cap - 1);
		out[0] = '\0';
		return -EINVAL;
	}
	out[len] = '\0';
	if (memchr(out, '\0', len)) {
		snprintf(err, errlen, "%s: %s holds a NUL byte", where, key);
		out[0] = '\0';
		return -EINVAL;
	}
	return 0;
}

static int read_pod(const struct json *doc, int obj, struct decide_pod *p, const char *node,
		    size_t k, char *err, size_t errlen)
{
	char where[DECIDE_NODE_MAX + 32];
	int rc;

	snprintf(where, sizeof(where), "node %s pod %zu", node, k);
	if (json_type(doc, obj) != JSMN_OBJECT) {
		snprintf(err, errlen, "%s is %s, not an object", where, json_kind(doc, obj));
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	if ((rc = read_str(doc, obj, "namespace", false, p->namespace, sizeof(p->namespace), where,
			   err, errlen)) ||
	    (rc = read_str(doc, obj, "name", false, p->name, sizeof(p->name), where, err, errlen)) ||
	    (rc = read_str(doc, obj, "uid", false, p->uid, sizeof(p->uid), where, err, errlen)) ||
	    (rc = read_str(doc, obj, "workload", false, p->workload, sizeof(p->workload), where,
			   err, errlen)) ||
	    (rc = read_u64(doc, obj, "rxBytesPerSecond", true, &p->rx, where, err, errlen)) ||
	    (rc = read_u64(doc, obj, "txBytesPerSecond", true, &p->tx, where, err, errlen)))
		return rc;
	return 0;
}

static int read_node(const struct json *doc, int obj, struct decide_node *n, size_t k, char *err,
		     size_t errlen)
{
	char where[DECIDE_NODE_MAX + 16];
	int f, pods, rc;

	snprintf(where, sizeof(where), "nodes[%zu]", k);
	if (json_type(doc, obj) != JSMN_OBJECT) {
		snprintf(err, errlen, "%s is %s, not an object", where, json_kind(doc, obj));
		return -EINVAL;
	}
	if ((rc = read_str(doc, obj, "name", true, n->name, sizeof(n->name), where, err, errlen)))
		return rc;
	if (!n->name[0]) {
		snprintf(err, errlen, "%s: name is empty", where);
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "node %s", n->name);
	f = json_member(doc, obj, "fresh", false);
	if (!json_text_is(doc, f, "true") && !json_text_is(doc, f, "false")) {
		snprintf(err, errlen, "%s: fresh is %s, not true or false", where, json_kind(doc, f));
		return -EINVAL;
	}
	n->fresh = json_text_is(doc, f, "true");
	if ((rc = read_u64(doc, obj, "reports", true, &n->reports, where, err, errlen)) ||
	    (rc = read_u64(doc, obj, "linkBytesPerSecond", true, &n->link, where, err, errlen)) ||
	    (rc = read_u64(doc, obj, "rxBytesPerSecond", true, &n->rate[DECIDE_RX], where, err,
			   errlen)) ||
	    (rc = read_u64(doc, obj, "txBytesPerSecond", true, &n->rate[DECIDE_TX], where, err,
			   errlen)) ||
	    (rc = read_u64(doc, obj, "inflightRxBytesPerSecond", false, &n->inflight[DECIDE_RX],
			   where, err, errlen)) ||
	    (rc = read_u64(doc, obj, "inflightTxBytesPerSecond", false, &n->inflight[DECIDE_TX],
			   where, err, errlen)))
		return rc;
	pods = json_member(doc, obj, "pods", false);
	if (pods < 0 || json_is_null(doc, pods))
		return 0;
	if (json_type(doc, pods) != JSMN_ARRAY) {
		snprintf(err, errlen, "%s: pods is %s, not an array", where, json_kind(doc, pods));
		return -EINVAL;
	}
	if (doc->t[pods].size > (int)DECIDE_PODS_PER_NODE) {
		snprintf(err, errlen, "%s: %d pods, more than the %u the contract allows", where,
			 doc->t[pods].size, DECIDE_PODS_PER_NODE);
		return -E2BIG;
	}
	if (doc->t[pods].size == 0)
		return 0;
	n->pods = calloc((size_t)doc->t[pods].size, sizeof(*n->pods));
	if (!n->pods) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int e = 0, i = pods + 1; e < doc->t[pods].size; e++, i = json_skip(doc, i)) {
		rc = read_pod(doc, i, &n->pods[e], n->name, (size_t)e, err, errlen);
		if (rc)
			return rc;
		n->n_pods++;
	}
	return 0;
}

int pressure_parse(const char *js, size_t len, struct decide_snapshot *s, char *err, size_t errlen)
{
	struct json doc = { 0 };
	int nodes, rc;
	uint64_t now = s->now_s;

	memset(s, 0, sizeof(*s));
	s->now_s = now;
	if (len > PRESSURE_BODY_MAX) {
		snprintf(err, errlen, "a reply of %zu bytes, more than the %u read", len,
			 PRESSURE_BODY_MAX);
		return -E2BIG;
	}
	rc = json_parse(&doc, js, len, PRESSURE_MAX_TOKENS, err, errlen);
	if (rc)
		return rc;
	nodes = json_member(&doc, 0, "nodes", false);
	if (json_type(&doc, 0) != JSMN_OBJECT || json_type(&doc, nodes) != JSMN_ARRAY) {
		snprintf(err, errlen, "not a pressure reply: nodes is %s, not an array",
			 json_kind(&doc, nodes));
		rc = -EINVAL;
		goto cleanup;
	}
	if (doc.t[nodes].size > (int)DECIDE_NODES_MAX) {
		snprintf(err, errlen, "%d nodes, more than the %u read", doc.t[nodes].size,
			 DECIDE_NODES_MAX);
		rc = -E2BIG;
		goto cleanup;
	}
	if (doc.t[nodes].size > 0) {
		s->nodes = calloc((size_t)doc.t[nodes].size, sizeof(*s->nodes));
		if (!s->nodes) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto cleanup;
		}
	}
	for (int e = 0, i = nodes + 1; e < doc.t[nodes].size; e++, i = json_skip(&doc, i)) {
		s->n_nodes++;
		rc = read_node(&doc, i, &s->nodes[e], (size_t)e, err, errlen);
		if (rc)
			goto cleanup;
	}
	rc = decide_snapshot_sort(s);
	if (rc)
		snprintf(err, errlen, "two nodes share a name");
cleanup:
	json_free(&doc);
	if (rc) {
		decide_snapshot_free(s);
		s->now_s = now;
	}
	return rc;
}
