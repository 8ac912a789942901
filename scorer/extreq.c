#include "extreq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "json.h"
#include "kubepod.h"
#include "nodename.h"

/* The request being read: its JSON document and where messages go. */
struct ctx {
	struct json d;
	char *err;
	size_t errlen;
};

#define fail(c, rc, ...) errmsg((c)->err, (c)->errlen, (rc), __VA_ARGS__)

/* path[idx]suffix names the token in messages, e.g. NodeNames[3]. */
static int take_name(struct ctx *c, int i, const char *path, int idx, const char *suffix,
		     struct extreq_node *out)
{
	size_t len = 0;
	const char *s = json_text(&c->d, i, &len);
	char why[200];
	int rc;

	if (json_type(&c->d, i) != JSMN_STRING)
		return fail(c, -EINVAL, "%s[%d]%s is %s, expected a string", path, idx, suffix,
			    json_kind(&c->d, i));
	rc = nodename_check(s, len, why, sizeof(why));
	if (rc)
		return fail(c, rc, "%s[%d]%s is %s; the name starts at byte %zu", path, idx,
			    suffix, why, (size_t)(s - c->d.js));
	out->name = s;
	out->name_len = len;
	return 0;
}

static int alloc_nodes(struct ctx *c, int n, const struct extreq_limits *limits,
		       struct extreq_node **out)
{
	if ((size_t)n > limits->max_nodes)
		return fail(c, -E2BIG, "request has %d nodes, limit %zu", n, limits->max_nodes);
	*out = calloc(n ? (size_t)n : 1, sizeof(**out));
	if (!*out)
		return fail(c, -ENOMEM, "out of memory for %d nodes", n);
	return 0;
}

/* "NodeNames": ["a", "b"] */
static int read_names(struct ctx *c, int arr, const struct extreq_limits *limits, struct extreq *rq)
{
	struct extreq_node *nodes;
	int n, rc;

	if (json_type(&c->d, arr) != JSMN_ARRAY)
		return fail(c, -EINVAL, "NodeNames is %s, expected an array or null", json_kind(&c->d, arr));
	n = c->d.t[arr].size;
	rc = alloc_nodes(c, n, limits, &nodes);
	if (rc)
		return rc;
	/* Every element must be a string: take_name() refuses the first one
	 * that is not, and json_element() finds every one up to it. */
	for (int m = 0; m < n; m++) {
		rc = take_name(c, json_element(&c->d, arr, m), "NodeNames", m, "", &nodes[m]);
		if (rc) {
			free(nodes);
			return rc;
		}
	}
	rq->mode = EXTREQ_NAMES;
	rq->n = (size_t)n;
	rq->nodes = nodes;
	return 0;
}

/* "Nodes": {"metadata": {}, "items": [{"metadata": {"name": "a", ...}, ...}]} */
static int read_items(struct ctx *c, int list, const struct extreq_limits *limits,
		      struct extreq *rq)
{
	struct extreq_node *nodes;
	int items, n = 0, rc, k;

	if (json_type(&c->d, list) != JSMN_OBJECT)
		return fail(c, -EINVAL, "Nodes is %s, expected an object or null", json_kind(&c->d, list));
	/* Go decodes a missing or null items as an empty list. */
	items = json_member(&c->d, list, "items", true);
	if (items >= 0 && !json_is_null(&c->d, items)) {
		if (json_type(&c->d, items) != JSMN_ARRAY)
			return fail(c, -EINVAL, "Nodes.items is %s, expected an array", json_kind(&c->d, items));
		n = c->d.t[items].size;
	}
	rc = alloc_nodes(c, n, limits, &nodes);
	if (rc)
		return rc;
	k = items + 1;
	for (int m = 0; m < n; m++, k = json_skip(&c->d, k)) {
		int md, name;

		rc = -EINVAL;
		if (json_type(&c->d, k) != JSMN_OBJECT) {
			fail(c, rc, "Nodes.items[%d] is %s, expected an object", m, json_kind(&c->d, k));
			goto out_free_nodes;
		}
		md = json_member(&c->d, k, "metadata", true);
		if (json_type(&c->d, md) != JSMN_OBJECT) {
			fail(c, rc, "Nodes.items[%d].metadata is %s, expected an object", m,
			     md < 0 ? "missing" : json_kind(&c->d, md));
			goto out_free_nodes;
		}
		name = json_member(&c->d, md, "name", true);
		if (name < 0) {
			fail(c, rc, "Nodes.items[%d].metadata.name is missing", m);
			goto out_free_nodes;
		}
		rc = take_name(c, name, "Nodes.items", m, ".metadata.name", &nodes[m]);
		if (rc)
			goto out_free_nodes;
		nodes[m].raw = json_text(&c->d, k, &nodes[m].raw_len);
	}
	rq->mode = EXTREQ_FULL;
	rq->n = (size_t)n;
	rq->nodes = nodes;
	return 0;

out_free_nodes:
	free(nodes);
	return rc;
}

/* A string member of obj, if present and not null; fold: match the key as
 * Go's decoder matches struct fields (case-insensitively), else exactly
 * (map keys such as annotations). */
static int read_string(struct ctx *c, int obj, const char *path, const char *key, bool fold,
		       struct extreq_str *out)
{
	int v = json_member(&c->d, obj, key, fold);

	if (v < 0 || json_is_null(&c->d, v))
		return 0;
	if (json_type(&c->d, v) != JSMN_STRING)
		return fail(c, -EINVAL, "%s[\"%s\"] is %s, expected a string", path, key,
			    json_kind(&c->d, v));
	out->s = json_text(&c->d, v, &out->len);
	return 0;
}

/* Pod.metadata: the name and namespace (for logs) and, of the annotations,
 * only the bandwidth requests; any level may be missing or null. */
static int read_pod(struct ctx *c, int pod, struct extreq *rq)
{
	int md, ann;

	if (pod < 0 || json_is_null(&c->d, pod))
		return 0;
	if (json_type(&c->d, pod) != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod is %s, expected an object or null", json_kind(&c->d, pod));
	md = json_member(&c->d, pod, "metadata", true);
	if (md < 0 || json_is_null(&c->d, md))
		return 0;
	if (json_type(&c->d, md) != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod.metadata is %s, expected an object", json_kind(&c->d, md));
	if (read_string(c, md, "Pod.metadata", "name", true, &rq->pod_name) ||
	    read_string(c, md, "Pod.metadata", "namespace", true, &rq->pod_namespace) ||
	    kubepod_read_uid(&c->d, md, "Pod.metadata", true, &rq->pod_uid, c->err, c->errlen))
		return -EINVAL;
	ann = json_member(&c->d, md, "annotations", true);
	if (ann < 0 || json_is_null(&c->d, ann))
		return 0;
	if (json_type(&c->d, ann) != JSMN_OBJECT)
		return fail(c, -EINVAL, "Pod.metadata.annotations is %s, expected an object",
			    json_kind(&c->d, ann));
	if (read_string(c, ann, "Pod.metadata.annotations", "kubernetes.io/ingress-bandwidth",
			false, &rq->ingress_bandwidth) ||
	    read_string(c, ann, "Pod.metadata.annotations", "kubernetes.io/egress-bandwidth",
			false, &rq->egress_bandwidth))
		return -EINVAL;
	return 0;
}

int extreq_parse(const char *body, size_t len, const struct extreq_limits *limits,
		 struct extreq *rq, char *err, size_t errlen)
{
	struct ctx c = { .err = err, .errlen = errlen };
	struct extreq r = { 0 };
	int rc, pod, nodes, names;
	bool has_nodes, has_names;
	char why[200];

	rc = json_parse_budget(&c.d, body, len, limits->max_json_tokens, limits->budget, why,
			       sizeof(why));
	if (rc)
		return fail(&c, rc, "%s%s", rc == -E2BIG ? "request has " : "", why);
	if (json_type(&c.d, 0) != JSMN_OBJECT) {
		rc = fail(&c, -EINVAL, "expected a JSON object at the top level, got %s",
			  json_kind(&c.d, 0));
		goto out_free_json;
	}

	pod = json_member(&c.d, 0, "Pod", true);
	nodes = json_member(&c.d, 0, "Nodes", true);
	names = json_member(&c.d, 0, "NodeNames", true);
	has_nodes = nodes >= 0 && !json_is_null(&c.d, nodes);
	has_names = names >= 0 && !json_is_null(&c.d, names);
	/* The scheduler sets exactly one; guessing which one it reads back
	 * could drop every node, so refuse instead. */
	if (has_nodes && has_names) {
		rc = fail(&c, -EINVAL, "both Nodes and NodeNames are set; expected one of them null");
		goto out_free_json;
	}
	if (!has_nodes && !has_names) {
		rc = fail(&c, -EINVAL, "neither Nodes nor NodeNames is set; expected an ExtenderArgs object");
		goto out_free_json;
	}
	rc = read_pod(&c, pod, &r);
	if (rc)
		goto out_free_json;
	rc = has_names ? read_names(&c, names, limits, &r) : read_items(&c, nodes, limits, &r);
	if (rc)
		goto out_free_json;
	*rq = r;

out_free_json:
	json_free(&c.d);
	return rc;
}

void extreq_free(struct extreq *rq)
{
	free(rq->nodes);
	rq->nodes = NULL;
	rq->n = 0;
}
