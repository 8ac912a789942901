#include "kubepod.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "errmsg.h"
#include "nodename.h"
#include "units.h"

/* Pod names are DNS subdomains like node names; namespaces, phases and
 * reasons are shorter. */
#define NAME_MAX_LEN NODENAME_MAX_LEN
#define TIME_MAX_LEN 40u

/* Member key of object obj as a string of at most max bytes as received,
 * or absent (null or missing: out->s stays NULL). */
static int get_text(const struct json *d, int obj, const char *path, const char *key, size_t max,
		    struct kubepod_str *out, char *err, size_t errlen)
{
	int v = json_member(d, obj, key, false);
	const char *s;
	size_t len;

	out->s = NULL;
	out->len = 0;
	if (v < 0 || json_is_null(d, v))
		return 0;
	if (json_type(d, v) != JSMN_STRING)
		return errmsg(err, errlen, -EINVAL, "%s.%s is %s, expected a string", path, key,
			    json_kind(d, v));
	s = json_text(d, v, &len);
	if (len > max)
		return errmsg(err, errlen, -EINVAL, "%s.%s is %zu bytes, longer than the %zu allowed", path, key,
			    len, max);
	out->s = s;
	out->len = len;
	return 0;
}

/* get_text(), and a string that needs an escape is refused: none of the
 * values read with it (names, versions, times) ever has one. */
static int get_str(const struct json *d, int obj, const char *path, const char *key, size_t max,
		   struct kubepod_str *out, char *err, size_t errlen)
{
	int rc = get_text(d, obj, path, key, max, out, err, errlen);

	if (!rc && out->s && memchr(out->s, '\\', out->len)) {
		out->s = NULL;
		out->len = 0;
		return errmsg(err, errlen, -EINVAL, "%s.%s has an escape, which no valid value needs", path,
			    key);
	}
	return rc;
}

int kubepod_read_uid(const struct json *d, int md, const char *path, bool fold,
		     struct pod_uid *out, char *err, size_t errlen)
{
	int v = json_member(d, md, "uid", fold);
	size_t len = 0;
	int rc;

	out->len = 0;
	if (v < 0 || json_is_null(d, v))
		return 0;
	rc = json_string(d, v, out->s, sizeof(out->s), &len);
	if (rc == -EINVAL)
		return errmsg(err, errlen, -EINVAL, "%s.uid is %s, expected a string", path,
			    json_kind(d, v));
	if (rc == -E2BIG)
		return errmsg(err, errlen, -EINVAL, "%s.uid is longer than the %u bytes allowed", path,
			    POD_UID_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out->s[i] < 0x20 || out->s[i] == 0x7f)
			return errmsg(err, errlen, -EINVAL, "%s.uid has a control character at byte %zu",
				    path, i);
	out->len = len;
	return 0;
}

/* Member key of obj as an object (or absent: -1). */
static int get_obj(const struct json *d, int obj, const char *path, const char *key, int *out,
		   char *err, size_t errlen)
{
	int v = json_member(d, obj, key, false);

	*out = -1;
	if (v < 0 || json_is_null(d, v))
		return 0;
	if (json_type(d, v) != JSMN_OBJECT)
		return errmsg(err, errlen, -EINVAL, "%s.%s is %s, expected an object", path, key,
			    json_kind(d, v));
	*out = v;
	return 0;
}

static bool str_is(const struct kubepod_str *v, const char *s)
{
	return v->s && v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}

int kubepod_parse_time(const char *s, size_t len, int64_t *out)
{
	char buf[TIME_MAX_LEN + 1];
	struct tm tm;
	const char *p;
	long off = 0;
	time_t t;

	if (!s || len < 20 || len > TIME_MAX_LEN)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(&tm, 0, sizeof(tm));
	p = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.') /* fractional seconds: a second is precise enough */
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == 'Z') {
		p++;
	} else if ((*p == '+' || *p == '-') && p[1] >= '0' && p[1] <= '2' && p[2] >= '0' &&
		   p[2] <= '9' && p[3] == ':' && p[4] >= '0' && p[4] <= '5' && p[5] >= '0' &&
		   p[5] <= '9') {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L + ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
		if (*p == '-')
			off = -off;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (int64_t)t - off;
	return 0;
}

/* status.conditions[type=PodScheduled,status=True].lastTransitionTime. */
static int scheduled_at(const struct json *d, int status, struct kubepod_str *at, char *err,
			size_t errlen)
{
	int conds = json_member(d, status, "conditions", false);
	struct kubepod_str type, st, t;
	int k;

	at->s = NULL;
	if (conds < 0 || json_is_null(d, conds))
		return 0;
	if (json_type(d, conds) != JSMN_ARRAY)
		return errmsg(err, errlen, -EINVAL, "status.conditions is %s, expected an array",
			    json_kind(d, conds));
	k = conds + 1;
	for (int m = 0; m < d->t[conds].size; m++, k = json_skip(d, k)) {
		if (json_type(d, k) != JSMN_OBJECT)
			return errmsg(err, errlen, -EINVAL, "status.conditions[%d] is %s, expected an object", m,
				    json_kind(d, k));
		if (get_str(d, k, "status.conditions[]", "type", NAME_MAX_LEN, &type, err, errlen) ||
		    get_str(d, k, "status.conditions[]", "status", NAME_MAX_LEN, &st, err, errlen) ||
		    get_str(d, k, "status.conditions[]", "lastTransitionTime", TIME_MAX_LEN, &t, err,
			    errlen))
			return -EINVAL;
		if (str_is(&type, "PodScheduled") && str_is(&st, "True"))
			*at = t;
	}
	return 0;
}

int kubepod_read(const struct json *d, int obj, struct kubepod *p, char *err, size_t errlen)
{
	int md, ann = -1, spec, status;
	struct kubepod_str phase, created, sched, deleting;

	memset(p, 0, sizeof(*p));
	if (json_type(d, obj) != JSMN_OBJECT)
		return errmsg(err, errlen, -EINVAL, "the pod is %s, expected an object", json_kind(d, obj));
	if (get_obj(d, obj, "pod", "metadata", &md, err, errlen) ||
	    get_obj(d, obj, "pod", "spec", &spec, err, errlen) ||
	    get_obj(d, obj, "pod", "status", &status, err, errlen))
		return -EINVAL;
	if (md < 0)
		return errmsg(err, errlen, -EINVAL, "the pod has no metadata");
	if (kubepod_read_uid(d, md, "metadata", false, &p->uid, err, errlen) ||
	    get_str(d, md, "metadata", "namespace", NAME_MAX_LEN, &p->ns, err, errlen) ||
	    get_str(d, md, "metadata", "name", NAME_MAX_LEN, &p->name, err, errlen) ||
	    get_str(d, md, "metadata", "resourceVersion", KUBEPOD_RV_MAX, &p->rv, err, errlen) ||
	    get_str(d, md, "metadata", "creationTimestamp", TIME_MAX_LEN, &created, err, errlen) ||
	    get_str(d, md, "metadata", "deletionTimestamp", TIME_MAX_LEN, &deleting, err, errlen) ||
	    get_obj(d, md, "metadata", "annotations", &ann, err, errlen))
		return -EINVAL;
	/* Annotation values are free text, taken as the extender request takes
	 * them (the event's size bounds them): whether one is a quantity is
	 * units_parse_quantity_n()'s question, and a pod is never refused for
	 * it. */
	if (ann >= 0 &&
	    (get_text(d, ann, "metadata.annotations", "kubernetes.io/ingress-bandwidth", SIZE_MAX,
		      &p->ingress, err, errlen) ||
	     get_text(d, ann, "metadata.annotations", "kubernetes.io/egress-bandwidth", SIZE_MAX,
		      &p->egress, err, errlen)))
		return -EINVAL;
	if (spec >= 0 &&
	    get_str(d, spec, "spec", "nodeName", NODENAME_MAX_LEN, &p->node, err, errlen))
		return -EINVAL;
	if (p->node.s && p->node.len) {
		char why[160];

		if (nodename_check(p->node.s, p->node.len, why, sizeof(why)))
			return errmsg(err, errlen, -EINVAL, "spec.nodeName: %s", why);
	}
	if (status >= 0 &&
	    (get_str(d, status, "status", "phase", NAME_MAX_LEN, &phase, err, errlen) ||
	     scheduled_at(d, status, &sched, err, errlen)))
		return -EINVAL;
	p->finished = deleting.s != NULL ||
		      (status >= 0 && (str_is(&phase, "Succeeded") || str_is(&phase, "Failed")));
	if (status < 0 || !sched.s)
		sched = created;
	if (sched.s && kubepod_parse_time(sched.s, sched.len, &p->scheduled_unix_s))
		return errmsg(err, errlen, -EINVAL, "the pod's scheduling time is not an RFC 3339 time");
	return 0;
}

static int read_status(const struct json *d, int obj, struct kubepod_status *st, char *err,
		       size_t errlen)
{
	int code;
	const char *num;
	size_t len;
	char buf[8];
	uint64_t v;

	memset(st, 0, sizeof(*st));
	if (json_type(d, obj) != JSMN_OBJECT)
		return errmsg(err, errlen, -EINVAL, "the Status is %s, expected an object", json_kind(d, obj));
	/* Reasons and messages are for logs: long ones are cut by the caller,
	 * escapes kept as received (the apiserver quotes names: User \"x\"),
	 * never refused, so a 410 is a 410 whatever its message says. */
	if (get_text(d, obj, "Status", "reason", NAME_MAX_LEN, &st->reason, err, errlen) ||
	    get_text(d, obj, "Status", "message", 64u * 1024u, &st->message, err, errlen))
		return -EINVAL;
	code = json_member(d, obj, "code", false);
	if (code < 0)
		return 0;
	num = json_text(d, code, &len);
	if (json_type(d, code) != JSMN_PRIMITIVE || !num || len == 0 || len > 3 || num[0] == '0')
		return errmsg(err, errlen, -EINVAL, "Status.code is not an HTTP status code");
	memcpy(buf, num, len);
	buf[len] = '\0';
	if (units_parse_u64(buf, 999, &v))
		return errmsg(err, errlen, -EINVAL, "Status.code is not an HTTP status code");
	st->code = (int64_t)v;
	return 0;
}

int kubepod_read_status(const struct json *d, struct kubepod_status *st, char *err,
			size_t errlen)
{
	return read_status(d, 0, st, err, errlen);
}

int kubepod_read_event(const struct json *d, struct kubepod_event *ev, char *err, size_t errlen)
{
	struct kubepod_str type;
	int obj;

	memset(ev, 0, sizeof(*ev));
	if (json_type(d, 0) != JSMN_OBJECT)
		return errmsg(err, errlen, -EINVAL, "the watch event is %s, expected an object",
			    json_kind(d, 0));
	if (get_str(d, 0, "event", "type", 16, &type, err, errlen) ||
	    get_obj(d, 0, "event", "object", &obj, err, errlen))
		return -EINVAL;
	if (obj < 0)
		return errmsg(err, errlen, -EINVAL, "the watch event has no object");
	if (str_is(&type, "ERROR")) {
		ev->type = KUBEPOD_ERROR;
		return read_status(d, obj, &ev->status, err, errlen);
	}
	if (str_is(&type, "ADDED"))
		ev->type = KUBEPOD_ADDED;
	else if (str_is(&type, "MODIFIED"))
		ev->type = KUBEPOD_MODIFIED;
	else if (str_is(&type, "DELETED"))
		ev->type = KUBEPOD_DELETED;
	else if (str_is(&type, "BOOKMARK"))
		ev->type = KUBEPOD_BOOKMARK;
	else
		return errmsg(err, errlen, -EINVAL, "the watch event's type is %s, expected ADDED, MODIFIED, "
			    "DELETED, BOOKMARK or ERROR", type.s ? "unknown" : "missing");
	if (kubepod_read(d, obj, &ev->pod, err, errlen))
		return -EINVAL;
	if (ev->type != KUBEPOD_BOOKMARK && ev->pod.uid.len == 0)
		return errmsg(err, errlen, -EINVAL, "the watch event's pod has no metadata.uid");
	return 0;
}

int kubepod_read_list(const struct json *d, struct kubepod_list *l, char *err, size_t errlen)
{
	int md;

	memset(l, 0, sizeof(*l));
	l->items = -1;
	if (json_type(d, 0) != JSMN_OBJECT)
		return errmsg(err, errlen, -EINVAL, "the pod list is %s, expected an object", json_kind(d, 0));
	if (get_obj(d, 0, "list", "metadata", &md, err, errlen))
		return -EINVAL;
	if (md < 0)
		return errmsg(err, errlen, -EINVAL, "the pod list has no metadata");
	if (get_str(d, md, "list.metadata", "resourceVersion", KUBEPOD_RV_MAX, &l->rv, err,
		    errlen) ||
	    get_str(d, md, "list.metadata", "continue", KUBEPOD_CONTINUE_MAX, &l->cont, err,
		    errlen))
		return -EINVAL;
	if (!l->rv.s || l->rv.len == 0)
		return errmsg(err, errlen, -EINVAL, "the pod list has no metadata.resourceVersion");
	l->items = json_member(d, 0, "items", false);
	if (l->items < 0 || json_is_null(d, l->items)) {
		l->items = -1; /* an empty list may say "items": null */
		return 0;
	}
	if (json_type(d, l->items) != JSMN_ARRAY)
		return errmsg(err, errlen, -EINVAL, "the pod list's items is %s, expected an array",
			    json_kind(d, l->items));
	l->n = d->t[l->items].size;
	return 0;
}

int kubepod_list_item(const struct json *d, const struct kubepod_list *l, int at)
{
	if (l->items < 0 || l->n == 0)
		return -1;
	at = at < 0 ? l->items + 1 : json_skip(d, at);
	/* The array ends where the token after it begins. */
	return at < json_skip(d, l->items) ? at : -1;
}
