/* The pods netsched refused, from a PodList (pending.h). */
#include "pending.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/units.h"
#include "podfacts.h"

#define PENDING_MAX_TOKENS (4u * 1024u * 1024u)

/* Words of every reason netsched's filter gives (scorer/rules/filter.c). */
static const char MARK[] = "netsched:";

static bool has_mark(const char *t, size_t len)
{
	size_t m = sizeof(MARK) - 1;

	for (size_t i = 0; t && i + m <= len; i++)
		if (memcmp(t + i, MARK, m) == 0)
			return true;
	return false;
}

/* Whether status.conditions says netsched's filter refused the pod. */
static bool refused_by_netsched(const struct json *doc, int item)
{
	int status = json_member(doc, item, "status", false);
	int conds = json_member(doc, status, "conditions", false);
	const char *t;
	size_t len;

	if (json_type(doc, conds) != JSMN_ARRAY)
		return false;
	for (int e = 0, c = conds + 1; e < doc->t[conds].size; e++, c = json_skip(doc, c)) {
		if (!json_is_string(doc, json_member(doc, c, "type", false), "PodScheduled"))
			continue;
		if (!json_is_string(doc, json_member(doc, c, "status", false), "False") ||
		    !json_is_string(doc, json_member(doc, c, "reason", false), "Unschedulable"))
			return false;
		t = json_text(doc, json_member(doc, c, "message", false), &len);
		return json_type(doc, json_member(doc, c, "message", false)) == JSMN_STRING &&
		       has_mark(t, len);
	}
	return false;
}

/* The annotation key's quantity, bits per second, as bytes per second
 * (rounded up: the filter compares bits to free bytes x 8). 0 absent,
 * 1 unreadable. */
static int ask_of(const struct json *doc, int ann, const char *key, uint64_t *bytes)
{
	int v = json_member(doc, ann, key, false);
	const char *t;
	size_t len;
	uint64_t bits;

	*bytes = 0;
	if (v < 0)
		return 0;
	t = json_text(doc, v, &len);
	if (json_type(doc, v) != JSMN_STRING || units_parse_quantity_n(t, len, &bits))
		return 1;
	*bytes = bits / 8 + (bits % 8 != 0);
	return 0;
}

static int str_of(const struct json *doc, int obj, const char *key, char *out, size_t cap)
{
	size_t len;
	int i = json_member(doc, obj, key, false);

	if (json_type(doc, i) != JSMN_STRING || json_string(doc, i, out, cap - 1, &len) || len == 0)
		return -EINVAL;
	out[len] = '\0';
	return 0;
}

int pending_parse(const char *js, size_t len, struct nudge_pod *out, size_t cap,
		  struct pending_counts *c, char *err, size_t errlen)
{
	struct json doc = { 0 };
	int items, rc;

	memset(c, 0, sizeof(*c));
	rc = podfacts_podlist(&doc, js, len, PENDING_BODY_MAX, PENDING_MAX_TOKENS, &items, err,
			      errlen);
	if (rc)
		return rc;
	for (int e = 0, i = items + 1; e < doc.t[items].size; e++, i = json_skip(&doc, i)) {
		int meta = json_member(&doc, i, "metadata", false);
		int ann = json_member(&doc, meta, "annotations", false);
		struct nudge_pod p = { 0 };

		if (json_type(&doc, i) != JSMN_OBJECT || json_type(&doc, meta) != JSMN_OBJECT ||
		    str_of(&doc, meta, "namespace", p.namespace, sizeof(p.namespace)) ||
		    str_of(&doc, meta, "name", p.name, sizeof(p.name))) {
			snprintf(err, errlen, "items[%d]: metadata.namespace or name is not a string "
				 "of the length Kubernetes allows", e);
			rc = -EINVAL;
			goto cleanup;
		}
		if (!refused_by_netsched(&doc, i))
			continue;
		if (ask_of(&doc, ann, "kubernetes.io/ingress-bandwidth", &p.ask[DECIDE_RX]) ||
		    ask_of(&doc, ann, "kubernetes.io/egress-bandwidth", &p.ask[DECIDE_TX])) {
			c->skipped++;
			continue;
		}
		if (p.ask[DECIDE_RX] == 0 && p.ask[DECIDE_TX] == 0)
			continue;
		if (c->kept == cap) {
			c->over++;
			continue;
		}
		out[c->kept++] = p;
	}
cleanup:
	json_free(&doc);
	if (rc)
		c->kept = 0;
	return rc;
}
