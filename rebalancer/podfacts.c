/* A PodList's protections joined to a node's pods (podfacts.h). */
#include "podfacts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"

#define PODFACTS_MAX_TOKENS (4u * 1024u * 1024u)

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int num(const char *s, size_t n)
{
	int v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int podfacts_parse_time(const char *s, size_t len, uint64_t *out)
{
	int64_t t;
	size_t i = 19;
	int off = 0;

	/* YYYY-MM-DDTHH:MM:SS */
	if (len < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
	    !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) ||
	    s[13] != ':' || !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
		return -EINVAL;
	if (num(s + 5, 2) < 1 || num(s + 5, 2) > 12 || num(s + 8, 2) < 1 || num(s + 8, 2) > 31 ||
	    num(s + 11, 2) > 23 || num(s + 14, 2) > 59 || num(s + 17, 2) > 60)
		return -EINVAL;
	if (s[i] == '.') {
		i++;
		if (i >= len || !digits(s + i, 1))
			return -EINVAL;
		while (i < len && digits(s + i, 1) && i < 40)
			i++;
	}
	if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z')) {
		off = 0;
	} else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && digits(s + i + 1, 2) &&
		   s[i + 3] == ':' && digits(s + i + 4, 2)) {
		off = (num(s + i + 1, 2) * 60 + num(s + i + 4, 2)) * 60;
		if (s[i] == '-')
			off = -off;
	} else {
		return -EINVAL;
	}
	t = days_from_civil(num(s, 4), (unsigned)num(s + 5, 2), (unsigned)num(s + 8, 2)) * 86400 +
	    num(s + 11, 2) * 3600 + num(s + 14, 2) * 60 + num(s + 17, 2) - off;
	if (t < 0)
		return -EINVAL;
	*out = (uint64_t)t;
	return 0;
}

static enum decide_owner owner_of(const struct json *doc, int meta)
{
	int refs = json_member(doc, meta, "ownerReferences", false);

	if (json_type(doc, refs) != JSMN_ARRAY)
		return DECIDE_OWNER_NONE;
	for (int e = 0, i = refs + 1; e < doc->t[refs].size; e++, i = json_skip(doc, i)) {
		int kind = json_member(doc, i, "kind", false);

		if (!json_text_is(doc, json_member(doc, i, "controller", false), "true"))
			continue;
		if (json_is_string(doc, kind, "ReplicaSet"))
			return DECIDE_OWNER_REPLICASET;
		if (json_is_string(doc, kind, "StatefulSet"))
			return DECIDE_OWNER_STATEFULSET;
		if (json_is_string(doc, kind, "Job"))
			return DECIDE_OWNER_JOB;
		if (json_is_string(doc, kind, "DaemonSet"))
			return DECIDE_OWNER_DAEMONSET;
		return DECIDE_OWNER_OTHER;
	}
	return DECIDE_OWNER_NONE;
}

static bool local_storage(const struct json *doc, int spec)
{
	int vols = json_member(doc, spec, "volumes", false);

	if (json_type(doc, vols) != JSMN_ARRAY)
		return false;
	for (int e = 0, i = vols + 1; e < doc->t[vols].size; e++, i = json_skip(doc, i))
		if (json_member(doc, i, "emptyDir", false) >= 0 ||
		    json_member(doc, i, "hostPath", false) >= 0)
			return true;
	return false;
}

static int str_of(const struct json *doc, int obj, const char *key, char *out, size_t cap)
{
	int i = json_member(doc, obj, key, false);
	size_t len = 0;

	out[0] = '\0';
	if (i < 0)
		return 0;
	if (json_type(doc, i) != JSMN_STRING || json_string(doc, i, out, cap - 1, &len))
		return -EINVAL;
	out[len] = '\0';
	return 0;
}

/* Item i's facts, if it is one of n's pods. */
static int join_item(const struct json *doc, int item, size_t e, struct decide_node *n, char *err,
		     size_t errlen)
{
	char ns[DECIDE_NS_MAX], name[DECIDE_POD_MAX], uid[DECIDE_UID_MAX];
	int meta = json_member(doc, item, "metadata", false);
	int spec = json_member(doc, item, "spec", false);
	int ann, created, prio;
	const char *t;
	size_t tl;

	if (json_type(doc, meta) != JSMN_OBJECT || json_type(doc, spec) != JSMN_OBJECT) {
		snprintf(err, errlen, "items[%zu]: metadata or spec is not an object", e);
		return -EINVAL;
	}
	if (str_of(doc, meta, "namespace", ns, sizeof(ns)) ||
	    str_of(doc, meta, "name", name, sizeof(name)) ||
	    str_of(doc, meta, "uid", uid, sizeof(uid))) {
		snprintf(err, errlen, "items[%zu]: namespace, name or uid is not a string of "
			 "the length Kubernetes allows", e);
		return -EINVAL;
	}
	for (size_t k = 0; k < n->n_pods; k++) {
		struct decide_pod *p = &n->pods[k];

		if (strcmp(p->namespace, ns) || strcmp(p->name, name) ||
		    (p->uid[0] && uid[0] && strcmp(p->uid, uid)))
			continue;
		created = json_member(doc, meta, "creationTimestamp", false);
		t = json_text(doc, created, &tl);
		if (json_type(doc, created) != JSMN_STRING ||
		    podfacts_parse_time(t, tl, &p->created_s)) {
			snprintf(err, errlen, "pod %s/%s: creationTimestamp is not an RFC 3339 time",
				 ns, name);
			return -EINVAL;
		}
		prio = json_member(doc, spec, "priority", false);
		p->priority = 0;
		if (prio >= 0) {
			char buf[24];

			t = json_text(doc, prio, &tl);
			if (json_type(doc, prio) != JSMN_PRIMITIVE || !t || tl == 0 ||
			    tl >= sizeof(buf) || !((t[0] >= '0' && t[0] <= '9') || t[0] == '-')) {
				snprintf(err, errlen, "pod %s/%s: spec.priority is %s, not a number",
					 ns, name, json_kind(doc, prio));
				return -EINVAL;
			}
			memcpy(buf, t, tl);
			buf[tl] = '\0';
			p->priority = strtoll(buf, NULL, 10);
		}
		ann = json_member(doc, meta, "annotations", false);
		p->mirror = json_member(doc, ann, "kubernetes.io/config.mirror", false) >= 0;
		p->deleting = json_member(doc, meta, "deletionTimestamp", false) >= 0 &&
			      !json_is_null(doc, json_member(doc, meta, "deletionTimestamp", false));
		p->owner = owner_of(doc, meta);
		p->local_storage = local_storage(doc, spec);
		if (!p->uid[0])
			memcpy(p->uid, uid, sizeof(p->uid));
		p->known = true;
	}
	return 0;
}

int podfacts_podlist(struct json *doc, const char *js, size_t len, size_t max_bytes,
		     size_t max_tokens, int *items, char *err, size_t errlen)
{
	int rc;

	if (len > max_bytes) {
		snprintf(err, errlen, "a PodList of %zu bytes, more than the %zu read", len, max_bytes);
		return -E2BIG;
	}
	rc = json_parse(doc, js, len, max_tokens, err, errlen);
	if (rc)
		return rc;
	*items = json_member(doc, 0, "items", false);
	if (json_type(doc, *items) != JSMN_ARRAY) {
		snprintf(err, errlen, "not a PodList: items is %s", json_kind(doc, *items));
		json_free(doc);
		return -EINVAL;
	}
	return 0;
}

int podfacts_join(const char *js, size_t len, struct decide_node *n, char *err, size_t errlen)
{
	struct json doc = { 0 };
	int items, rc;

	for (size_t k = 0; k < n->n_pods; k++)
		n->pods[k].known = false;
	rc = podfacts_podlist(&doc, js, len, PODFACTS_BODY_MAX, PODFACTS_MAX_TOKENS, &items, err,
			      errlen);
	if (rc)
		return rc;
	if (doc.t[items].size > (int)PODFACTS_MAX_ITEMS) {
		snprintf(err, errlen, "%d pods on one node, more than the %u read",
			 doc.t[items].size, PODFACTS_MAX_ITEMS);
		rc = -E2BIG;
		goto cleanup;
	}
	for (int e = 0, i = items + 1; e < doc.t[items].size; e++, i = json_skip(&doc, i)) {
		rc = join_item(&doc, i, (size_t)e, n, err, errlen);
		if (rc)
			goto cleanup;
	}
cleanup:
	json_free(&doc);
	if (rc)
		for (size_t k = 0; k < n->n_pods; k++)
			n->pods[k].known = false;
	return rc;
}
