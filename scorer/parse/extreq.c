#include "parse/extreq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "json.h"
#include "parse/kubepod.h"
#include "nodename.h"
#include "scratch.h"

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
	/* Thousands of names a request: a kept block (scratch.h). */
	*out = scratch_take_zeroed((size_t)n, sizeof(**out));
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
			scratch_give(nodes);
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
	scratch_give(nodes);
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

/* A pod's metadata: the name and namespace (for logs), the UID, with rq
 * non-NULL its controller into rq (absurd ones left out, never failing the
 * request) and, of the annotations, only the bandwidth requests; any level
 * may be missing or null. path names the pod in messages ("Pod"). */
static int read_pod(struct ctx *c, int pod, const char *path, struct extreq_pod *out,
		    struct extreq *rq)
{
	char where[EXTREQ_PATH_MAX + 32];
	int md, ann;

	if (pod < 0 || json_is_null(&c->d, pod))
		return 0;
	if (json_type(&c->d, pod) != JSMN_OBJECT)
		return fail(c, -EINVAL, "%s is %s, expected an object or null", path,
			    json_kind(&c->d, pod));
	md = json_member(&c->d, pod, "metadata", true);
	if (md < 0 || json_is_null(&c->d, md))
		return 0;
	snprintf(where, sizeof(where), "%s.metadata", path);
	if (json_type(&c->d, md) != JSMN_OBJECT)
		return fail(c, -EINVAL, "%s is %s, expected an object", where, json_kind(&c->d, md));
	if (read_string(c, md, where, "name", true, &out->name) ||
	    read_string(c, md, where, "namespace", true, &out->ns) ||
	    kubepod_read_uid(&c->d, md, where, true, &out->uid, c->err, c->errlen))
		return -EINVAL;
	if (rq)
		kubepod_read_owner(&c->d, md, "Pod.metadata", true, &rq->owner, rq->owner_absurd,
				   sizeof(rq->owner_absurd));
	ann = json_member(&c->d, md, "annotations", true);
	if (ann < 0 || json_is_null(&c->d, ann))
		return 0;
	snprintf(where, sizeof(where), "%s.metadata.annotations", path);
	if (json_type(&c->d, ann) != JSMN_OBJECT)
		return fail(c, -EINVAL, "%s is %s, expected an object", where, json_kind(&c->d, ann));
	for (size_t i = 0; i < BWANNOT_KEYS; i++) {
		const struct bwannot_key *k = &bwannot_keys[i];
		const struct bwannot_key **key = k->ingress ? &out->ingress_key : &out->egress_key;
		struct extreq_str *v = k->ingress ? &out->ingress : &out->egress;

		if (*key)
			continue;	/* an earlier key of this direction won */
		if (read_string(c, ann, where, k->key, false, v))
			return -EINVAL;
		if (v->s)
			*key = k;
	}
	return 0;
}

/* The request's own pod, into rq. */
static int read_request_pod(struct ctx *c, int pod, struct extreq *rq)
{
	struct extreq_pod p = { 0 };
	int rc = read_pod(c, pod, "Pod", &p, rq);

	if (rc)
		return rc;
	rq->pod_name = p.name;
	rq->pod_namespace = p.ns;
	rq->pod_uid = p.uid;
	rq->ingress_bandwidth = p.ingress;
	rq->egress_bandwidth = p.egress;
	rq->ingress_key = p.ingress_key;
	rq->egress_key = p.egress_key;
	return 0;
}

/* Of two members, exactly one set (not null); *which gets it. what: the
 * object expected, for the message. */
static int one_of(struct ctx *c, int a, const char *a_name, int b, const char *b_name,
		  const char *what, int *which)
{
	bool has_a = a >= 0 && !json_is_null(&c->d, a), has_b = b >= 0 && !json_is_null(&c->d, b);

	/* The scheduler sets exactly one; guessing which one it reads back
	 * could drop every node, so refuse instead. */
	if (has_a && has_b)
		return fail(c, -EINVAL, "both %s and %s are set; expected one of them null", a_name,
			    b_name);
	if (!has_a && !has_b)
		return fail(c, -EINVAL, "neither %s nor %s is set; expected %s", a_name, b_name, what);
	*which = has_a ? a : b;
	return 0;
}

/* Filter and prioritize read nothing inside a container that opens deeper
 * than Pod.metadata.ownerReferences[i] or Nodes.items[i].metadata (depth 4),
 * so the containers at depth 5 are opaque (json_parse_shallow()): each
 * Node's labels, conditions, images and managed fields, and the pod's
 * container resources, are checked but not tokenized. In a request of 500
 * full Nodes that is most of its 122,000 tokens. */
#define EXTREQ_OPAQUE_DEPTH 5u
_Static_assert(EXTREQ_OPAQUE_DEPTH >= 1 + KUBEPOD_DEPTH, "the request's Pod is at depth 1");

/* The body as one JSON object, its tokens charged to limits->budget;
 * containers at opaque_depth opaque (JSON_MAX_DEPTH: none). 0, or -errno
 * with c->err filled and nothing held. */
static int parse_object(struct ctx *c, const char *body, size_t len,
			const struct extreq_limits *limits, unsigned opaque_depth)
{
	char why[200];
	int rc = json_parse_shallow(&c->d, body, len, limits->max_json_tokens, opaque_depth,
				    limits->budget, why, sizeof(why));

	if (rc)
		return fail(c, rc, "%s%s", rc == -E2BIG ? "request has " : "", why);
	if (json_type(&c->d, 0) != JSMN_OBJECT) {
		rc = fail(c, -EINVAL, "expected a JSON object at the top level, got %s",
			  json_kind(&c->d, 0));
		json_free(&c->d);
	}
	return rc;
}

int extreq_parse(const char *body, size_t len, const struct extreq_limits *limits,
		 struct extreq *rq, char *err, size_t errlen)
{
	struct ctx c = { .err = err, .errlen = errlen };
	struct extreq r = { 0 };
	int rc, pod, nodes, names, list;

	rc = parse_object(&c, body, len, limits, EXTREQ_OPAQUE_DEPTH);
	if (rc)
		return rc;

	pod = json_member(&c.d, 0, "Pod", true);
	nodes = json_member(&c.d, 0, "Nodes", true);
	names = json_member(&c.d, 0, "NodeNames", true);
	rc = one_of(&c, nodes, "Nodes", names, "NodeNames", "an ExtenderArgs object", &list);
	if (rc)
		goto out_free_json;
	rc = read_request_pod(&c, pod, &r);
	if (rc)
		goto out_free_json;
	rc = list == names ? read_names(&c, names, limits, &r) : read_items(&c, nodes, limits, &r);
	if (rc)
		goto out_free_json;
	*rq = r;

out_free_json:
	json_free(&c.d);
	return rc;
}

void extreq_free(struct extreq *rq)
{
	scratch_give(rq->nodes);
	rq->nodes = NULL;
	rq->n = 0;
}

/* ------------------------------------------------------------ preemption */

/* A victims object's NumPDBViolations: a number, or 0 when absent or
 * null (as Go decodes it); kept as its text to send back. */
static int read_pdb(struct ctx *c, int victims, const char *path, struct extreq_str *out)
{
	int v = json_member(&c->d, victims, "NumPDBViolations", true);
	const char *s;
	size_t len;

	out->s = "0";
	out->len = 1;
	if (v < 0 || json_is_null(&c->d, v))
		return 0;
	s = json_text(&c->d, v, &len);
	/* The grammar is checked: a primitive starting with a digit or '-'
	 * is a number; an integer has no fraction or exponent. */
	for (size_t i = 0; json_type(&c->d, v) == JSMN_PRIMITIVE && i < len; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && !(i == 0 && s[i] == '-' && len > 1))
			return fail(c, -EINVAL, "%s.NumPDBViolations is %s, expected an integer",
				    path, json_kind(&c->d, v));
	if (json_type(&c->d, v) != JSMN_PRIMITIVE)
		return fail(c, -EINVAL, "%s.NumPDBViolations is %s, expected an integer", path,
			    json_kind(&c->d, v));
	out->s = s;
	out->len = len;
	return 0;
}

/* One node's victims, the array v of its Pods (or null): MetaPods ({"UID"})
 * in names mode, whole Pods in full mode; into victims[*used..]. */
static int read_victims(struct ctx *c, int arr, const char *path, bool full,
			struct extreq_pod *victims, size_t cap, size_t *used)
{
	char where[EXTREQ_PATH_MAX + 32];
	int k;

	if (arr < 0 || json_is_null(&c->d, arr))
		return 0;
	if (json_type(&c->d, arr) != JSMN_ARRAY)
		return fail(c, -EINVAL, "%s.Pods is %s, expected an array", path, json_kind(&c->d, arr));
	k = arr + 1;
	for (int m = 0; m < c->d.t[arr].size; m++, k = json_skip(&c->d, k)) {
		struct extreq_pod *v;

		snprintf(where, sizeof(where), "%s.Pods[%d]", path, m);
		if (json_type(&c->d, k) != JSMN_OBJECT)
			return fail(c, -EINVAL, "%s is %s, expected an object", where,
				    json_kind(&c->d, k));
		if (*used >= cap)	/* counted before: only a bug gets here */
			return fail(c, -E2BIG, "more victims than counted");
		v = &victims[(*used)++];
		memset(v, 0, sizeof(*v));
		if (full ? read_pod(c, k, where, v, NULL) :
			   kubepod_read_uid(&c->d, k, where, true, &v->uid, c->err, c->errlen))
			return -EINVAL;
		if (!v->uid.len)
			return fail(c, -EINVAL, "%s has no UID: the scheduler could not tell which pod "
				    "it names", where);
	}
	return 0;
}

/* Every victim of every node, to size the array once. */
static size_t count_victims(const struct ctx *c, int map)
{
	size_t n = 0;
	int k = map + 1;

	for (int m = 0; m < c->d.t[map].size; m++, k = json_skip(&c->d, k + 1)) {
		int pods = json_member(&c->d, k + 1, "Pods", true);

		if (json_type(&c->d, pods) == JSMN_ARRAY)
			n += (size_t)c->d.t[pods].size;
	}
	return n;
}

static int read_candidates(struct ctx *c, int map, bool full, const struct extreq_limits *limits,
			   struct extreq_preemption *out)
{
	const char *field = full ? "NodeNameToVictims" : "NodeNameToMetaVictims";
	size_t n = (size_t)c->d.t[map].size, nv, used = 0;
	struct extreq_candidate *cand = NULL;
	struct extreq_pod *victims = NULL;
	char path[EXTREQ_PATH_MAX];
	int k = map + 1, rc;

	if (json_type(&c->d, map) != JSMN_OBJECT)
		return fail(c, -EINVAL, "%s is %s, expected an object or null", field,
			    json_kind(&c->d, map));
	if (n > limits->max_nodes)
		return fail(c, -E2BIG, "request has %zu candidate nodes, limit %zu", n,
			    limits->max_nodes);
	nv = count_victims(c, map);
	cand = calloc(n ? n : 1, sizeof(*cand));
	victims = calloc(nv ? nv : 1, sizeof(*victims));
	if (!cand || !victims) {
		rc = fail(c, -ENOMEM, "out of memory for %zu candidate nodes and %zu victims", n, nv);
		goto out_free;
	}
	for (size_t m = 0; m < n; m++, k = json_skip(&c->d, k + 1)) {
		struct extreq_node node;
		int v = k + 1;
		size_t first = used;

		/* The key is the node's name: the rule every name follows. */
		rc = take_name(c, k, field, (int)m, " (a node name)", &node);
		if (rc)
			goto out_free;
		snprintf(path, sizeof(path), "%s[\"%.*s\"]", field, (int)node.name_len, node.name);
		if (json_is_null(&c->d, v)) {
			rc = fail(c, -EINVAL, "%s is null, expected an object", path);
			goto out_free;
		}
		if (json_type(&c->d, v) != JSMN_OBJECT) {
			rc = fail(c, -EINVAL, "%s is %s, expected an object", path, json_kind(&c->d, v));
			goto out_free;
		}
		rc = read_victims(c, json_member(&c->d, v, "Pods", true), path, full, victims, nv,
				  &used);
		if (!rc)
			rc = read_pdb(c, v, path, &cand[m].pdb);
		if (rc)
			goto out_free;
		cand[m].name = node.name;
		cand[m].name_len = node.name_len;
		cand[m].victims = victims + first;
		cand[m].n_victims = used - first;
	}
	out->n = n;
	out->candidates = cand;
	out->victims = victims;
	return 0;

out_free:
	free(cand);
	free(victims);
	return rc;
}

int extreq_parse_preemption(const char *body, size_t len, const struct extreq_limits *limits,
			    struct extreq_preemption *out, char *err, size_t errlen)
{
	struct ctx c = { .err = err, .errlen = errlen };
	struct extreq_preemption r = { 0 };
	int rc, full, meta, map;

	rc = parse_object(&c, body, len, limits, JSON_MAX_DEPTH);
	if (rc)
		return rc;
	full = json_member(&c.d, 0, "NodeNameToVictims", true);
	meta = json_member(&c.d, 0, "NodeNameToMetaVictims", true);
	rc = one_of(&c, full, "NodeNameToVictims", meta, "NodeNameToMetaVictims",
		    "an ExtenderPreemptionArgs object", &map);
	if (!rc)
		rc = read_request_pod(&c, json_member(&c.d, 0, "Pod", true), &r.pod);
	if (!rc)
		rc = read_candidates(&c, map, map == full, limits, &r);
	if (rc)
		goto out_free_json;
	r.pod.mode = map == full ? EXTREQ_FULL : EXTREQ_NAMES;
	*out = r;

out_free_json:
	json_free(&c.d);
	return rc;
}

void extreq_preemption_free(struct extreq_preemption *p)
{
	free(p->candidates);
	free(p->victims);
	p->candidates = NULL;
	p->victims = NULL;
	p->n = 0;
}
