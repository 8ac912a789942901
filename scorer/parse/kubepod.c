#include "parse/kubepod.h"

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

/* status.conditions[type=PodScheduled,status=True].lastTransitionTime
 * into *sched, and the same of Ready into *ready. */
static int conditions(const struct json *d, int status, struct kubepod_str *sched,
		      struct kubepod_str *ready, char *err, size_t errlen)
{
	int conds = json_member(d, status, "conditions", false);
	struct kubepod_str type, st, t;
	int k;

	sched->s = ready->s = NULL;
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
			*sched = t;
		if (str_is(&type, "Ready") && str_is(&st, "True"))
			*ready = t;
	}
	return 0;
}

/* ------------------------------------------- the pod index's fields */

/* A label value: at most 63 of [A-Za-z0-9._-]. */
static bool label_value_ok(const struct kubepod_str *v)
{
	if (v->len > KUBEPOD_LABEL_VALUE_MAX)
		return false;
	for (size_t i = 0; i < v->len; i++) {
		char c = v->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* A kind: 1..63 letters and digits (Go type names: ReplicaSet, Job). */
static bool kind_ok(const struct kubepod_str *v)
{
	if (!v->s || v->len == 0 || v->len > KUBEPOD_KIND_MAX)
		return false;
	for (size_t i = 0; i < v->len; i++) {
		char c = v->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* Member key of obj, matched with fold, as a string without escapes of at
 * most max bytes; absent or null: s NULL. */
static int owner_str(const struct json *d, int obj, const char *key, bool fold, size_t max,
		     struct kubepod_str *out)
{
	int v = json_member(d, obj, key, fold);

	out->s = NULL;
	out->len = 0;
	if (v < 0 || json_is_null(d, v))
		return 0;
	if (json_type(d, v) != JSMN_STRING)
		return -EINVAL;
	out->s = json_text(d, v, &out->len);
	if (out->len > max || memchr(out->s, '\\', out->len)) {
		out->s = NULL;
		out->len = 0;
		return -EINVAL;
	}
	return 0;
}

/* ownerReferences[m] (object k), the controller: kind, name and uid. */
static int read_controller(const struct json *d, int k, const char *path, int m, bool fold,
			   struct kubepod_owner *out, char *why, size_t whylen)
{
	char uid_path[96];

	if (out->kind.s)
		return errmsg(why, whylen, -EINVAL, "%s.ownerReferences has more than one controller",
			    path);
	if (owner_str(d, k, "kind", fold, KUBEPOD_KIND_MAX, &out->kind) || !kind_ok(&out->kind))
		return errmsg(why, whylen, -EINVAL, "%s.ownerReferences[%d].kind is not a kind of up to "
			    "%u letters and digits", path, m, KUBEPOD_KIND_MAX);
	if (owner_str(d, k, "name", fold, NODENAME_MAX_LEN, &out->name) || !out->name.s ||
	    !nodename_valid(out->name.s, out->name.len))
		return errmsg(why, whylen, -EINVAL, "%s.ownerReferences[%d].name is not a DNS subdomain "
			    "of up to %u bytes", path, m, NODENAME_MAX_LEN);
	snprintf(uid_path, sizeof(uid_path), "%s.ownerReferences[%d]", path, m);
	return kubepod_read_uid(d, k, uid_path, fold, &out->uid, why, whylen);
}

int kubepod_read_owner(const struct json *d, int md, const char *path, bool fold,
		       struct kubepod_owner *out, char *why, size_t whylen)
{
	int refs = json_member(d, md, "ownerReferences", fold);
	int labels = json_member(d, md, "labels", fold);
	int rc = -EINVAL, k;

	memset(out, 0, sizeof(*out));
	if (refs >= 0 && !json_is_null(d, refs)) {
		if (json_type(d, refs) != JSMN_ARRAY) {
			errmsg(why, whylen, rc, "%s.ownerReferences is %s, expected an array", path,
			       json_kind(d, refs));
			goto absurd;
		}
		if (d->t[refs].size > (int)KUBEPOD_MAX_OWNER_REFS) {
			errmsg(why, whylen, rc, "%s.ownerReferences has %d entries, more than the %u "
			       "allowed", path, d->t[refs].size, KUBEPOD_MAX_OWNER_REFS);
			goto absurd;
		}
		k = refs + 1;
		for (int m = 0; m < d->t[refs].size; m++, k = json_skip(d, k)) {
			int c;

			if (json_type(d, k) != JSMN_OBJECT) {
				errmsg(why, whylen, rc, "%s.ownerReferences[%d] is %s, expected an "
				       "object", path, m, json_kind(d, k));
				goto absurd;
			}
			c = json_member(d, k, "controller", fold);
			if (c < 0 || json_is_null(d, c) || json_text_is(d, c, "false"))
				continue;
			if (!json_text_is(d, c, "true")) {
				errmsg(why, whylen, rc, "%s.ownerReferences[%d].controller is %s, "
				       "expected a boolean", path, m, json_kind(d, c));
				goto absurd;
			}
			if (read_controller(d, k, path, m, fold, out, why, whylen))
				goto absurd;
		}
	}
	if (labels >= 0 && !json_is_null(d, labels)) {
		if (json_type(d, labels) != JSMN_OBJECT) {
			errmsg(why, whylen, rc, "%s.labels is %s, expected an object", path,
			       json_kind(d, labels));
			goto absurd;
		}
		if (owner_str(d, labels, "pod-template-hash", false, KUBEPOD_LABEL_VALUE_MAX,
			      &out->template_hash) ||
		    (out->template_hash.s && !label_value_ok(&out->template_hash))) {
			errmsg(why, whylen, rc, "%s.labels[\"pod-template-hash\"] is not a label value "
			       "of up to %u bytes", path, KUBEPOD_LABEL_VALUE_MAX);
			goto absurd;
		}
	}
	return 0;
absurd:
	memset(out, 0, sizeof(*out));
	return rc;
}

/* Adds address v from field to p's; false with p->absurd set when it is
 * not a pod's address (report_ip_ok()) or makes more than a pod may have. */
static bool add_ip(struct kubepod *p, const char *field, const struct kubepod_str *v)
{
	char text[REPORT_IP_STRLEN];
	struct report_ip ip;

	if (!v->s || v->len >= sizeof(text))
		goto bad;
	memcpy(text, v->s, v->len);
	text[v->len] = '\0';
	if (report_ip_parse(text, &ip) || !report_ip_ok(&ip))
		goto bad;
	for (unsigned i = 0; i < p->n_ips; i++) {
		if (report_ip_equal(&p->ips[i], &ip))
			return true;
		if (p->ips[i].len == ip.len) {
			snprintf(p->absurd, sizeof(p->absurd), "%s: two IPv%c addresses, a pod has one "
				 "per family", field, ip.len == 4 ? '4' : '6');
			return false;
		}
	}
	p->ips[p->n_ips++] = ip; /* one per family: never more than KUBEPOD_MAX_IPS */
	return true;
bad:
	snprintf(p->absurd, sizeof(p->absurd), "%s is not a pod's IP address", field);
	return false;
}

/* status.podIPs[].ip and status.podIP: a pod has one address per family. */
static bool read_ips(const struct json *d, int status, struct kubepod *p)
{
	int ips = json_member(d, status, "podIPs", false), k;
	struct kubepod_str one;

	if (ips >= 0 && !json_is_null(d, ips)) {
		if (json_type(d, ips) != JSMN_ARRAY) {
			snprintf(p->absurd, sizeof(p->absurd), "status.podIPs is %s, expected an array",
				 json_kind(d, ips));
			return false;
		}
		if (d->t[ips].size > (int)KUBEPOD_MAX_IPS) {
			snprintf(p->absurd, sizeof(p->absurd), "status.podIPs has %d entries, more than "
				 "the %u a pod may have", d->t[ips].size, KUBEPOD_MAX_IPS);
			return false;
		}
		k = ips + 1;
		for (int m = 0; m < d->t[ips].size; m++, k = json_skip(d, k)) {
			if (json_type(d, k) != JSMN_OBJECT ||
			    owner_str(d, k, "ip", false, REPORT_IP_STRLEN, &one) ||
			    !add_ip(p, "status.podIPs[].ip", &one)) {
				if (!p->absurd[0])
					snprintf(p->absurd, sizeof(p->absurd), "status.podIPs[%d] is not "
						 "an object with an ip", m);
				return false;
			}
		}
	}
	if (owner_str(d, status, "podIP", false, REPORT_IP_STRLEN, &one)) {
		snprintf(p->absurd, sizeof(p->absurd), "status.podIP is not a pod's IP address");
		return false;
	}
	return !one.s || one.len == 0 || add_ip(p, "status.podIP", &one);
}

/* One container status's state object (k: its token; opaque when parsed
 * shallow, so read from its text): whether it runs, and why it waits. */
static bool state_runs(const struct json *d, int k, struct kubepod_str *waiting)
{
	struct json sub = { 0 };
	struct kubepod_str reason = { 0 };
	const char *text;
	char err[64];
	size_t len;
	bool runs = false;
	int w;

	text = json_text(d, k, &len);
	if (json_type(d, k) != JSMN_OBJECT || !text || len > KUBEPOD_STATE_MAX ||
	    json_parse(&sub, text, len, 64, err, sizeof(err)))
		return false;
	runs = json_member(&sub, 0, "running", false) >= 0 &&
	       json_type(&sub, json_member(&sub, 0, "running", false)) == JSMN_OBJECT;
	w = json_member(&sub, 0, "waiting", false);
	if (!waiting->s && w >= 0 && json_type(&sub, w) == JSMN_OBJECT &&
	    !owner_str(&sub, w, "reason", false, NAME_MAX_LEN, &reason) && reason.s)
		*waiting = reason; /* points into the pod's text, as the rest */
	json_free(&sub);
	return runs;
}

/* status.containerStatuses: whether a container has started (kubepod.h),
 * and why one waits. */
static bool read_started(const struct json *d, int status, struct kubepod *p)
{
	int cs = json_member(d, status, "containerStatuses", false), k;
	bool started = false;

	if (cs < 0 || json_is_null(d, cs))
		return true; /* nothing said: the phase alone */
	if (json_type(d, cs) != JSMN_ARRAY)
		return false;
	k = cs + 1;
	for (int m = 0; m < d->t[cs].size && m < (int)KUBEPOD_MAX_CONTAINERS;
	     m++, k = json_skip(d, k)) {
		int st, rd, state;

		if (json_type(d, k) != JSMN_OBJECT)
			continue;
		st = json_member(d, k, "started", false);
		rd = json_member(d, k, "ready", false);
		state = json_member(d, k, "state", false);
		if ((st >= 0 && json_text_is(d, st, "true")) || (rd >= 0 && json_text_is(d, rd, "true")))
			started = true;
		if (state >= 0 && state_runs(d, state, &p->waiting))
			started = true;
	}
	return started;
}

/* What the pod index reads (kubepod.h): never fails the pod. */
static void read_index_fields(const struct json *d, int md, int spec, int status,
			      const struct kubepod_str *phase, const struct kubepod_str *ready,
			      struct kubepod *p)
{
	struct kubepod_str start = { 0 };
	char why[KUBEPOD_ABSURD_MAX];
	int hn = spec >= 0 ? json_member(d, spec, "hostNetwork", false) : -1;

	p->host_network = hn >= 0 && json_text_is(d, hn, "true");

	if (kubepod_read_owner(d, md, "metadata", false, &p->owner, why, sizeof(why)))
		snprintf(p->absurd, sizeof(p->absurd), "%s", why);
	if (status < 0)
		return;
	p->running = str_is(phase, "Running");
	/* Read whatever the phase: a Pending pod's containers say why they wait. */
	p->started = read_started(d, status, p) && p->running;
	if (!p->absurd[0] && !read_ips(d, status, p))
		p->n_ips = 0;
	if (ready->s) {
		start = *ready;
	} else if (owner_str(d, status, "startTime", false, TIME_MAX_LEN, &start)) {
		start.s = NULL;
	}
	if (start.s && kubepod_parse_time(start.s, start.len, &p->started_unix_s))
		p->started_unix_s = 0;
}

int kubepod_read(const struct json *d, int obj, struct kubepod *p, char *err, size_t errlen)
{
	int md, ann = -1, spec, status;
	struct kubepod_str phase = { 0 }, created, sched = { 0 }, ready = { 0 }, deleting;

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
	for (size_t i = 0; ann >= 0 && i < BWANNOT_KEYS; i++) {
		const struct bwannot_key *k = &bwannot_keys[i];
		const struct bwannot_key **key = k->ingress ? &p->ingress_key : &p->egress_key;
		struct kubepod_str *v = k->ingress ? &p->ingress : &p->egress;

		if (*key)
			continue;	/* an earlier key of this direction won */
		if (get_text(d, ann, "metadata.annotations", k->key, SIZE_MAX, v, err, errlen))
			return -EINVAL;
		if (v->s)
			*key = k;
	}
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
	     conditions(d, status, &sched, &ready, err, errlen)))
		return -EINVAL;
	p->finished = deleting.s != NULL ||
		      (status >= 0 && (str_is(&phase, "Succeeded") || str_is(&phase, "Failed")));
	if (status < 0 || !sched.s)
		sched = created;
	if (sched.s && kubepod_parse_time(sched.s, sched.len, &p->scheduled_unix_s))
		return errmsg(err, errlen, -EINVAL, "the pod's scheduling time is not an RFC 3339 time");
	read_index_fields(d, md, spec, status, &phase, &ready, p);
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
