/* Leader election on a Lease: the judgement and the JSON (lease.h). */
#include "lease.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/units.h"

enum lease_action lease_judge(struct lease_state *st, const struct lease_record *r,
			      const char *identity, uint64_t duration_s, uint64_t now_ms)
{
	uint64_t d = r->duration_s ? r->duration_s : duration_s;

	if (!r->exists)
		return LEASE_CREATE;
	if (strcmp(r->holder, identity) == 0)
		return LEASE_RENEW;
	if (!r->holder[0])
		return LEASE_TAKE;	/* released */
	st->leader = false;
	if (strcmp(st->seen_holder, r->holder) || strcmp(st->seen_renew, r->renew) ||
	    st->seen_at_ms == 0) {
		snprintf(st->seen_holder, sizeof(st->seen_holder), "%s", r->holder);
		snprintf(st->seen_renew, sizeof(st->seen_renew), "%s", r->renew);
		st->seen_at_ms = now_ms ? now_ms : 1;
		return LEASE_FOLLOW;
	}
	return now_ms - st->seen_at_ms >= d * 1000 ? LEASE_TAKE : LEASE_FOLLOW;
}

void lease_wrote(struct lease_state *st, enum lease_action a, bool ok, uint64_t now_ms)
{
	if (a == LEASE_FOLLOW)
		return;
	if (ok) {
		st->leader = true;
		st->renewed_at_ms = now_ms;
		st->seen_holder[0] = st->seen_renew[0] = '\0';
		st->seen_at_ms = 0;
	} else {
		st->leader = false;
	}
}

bool lease_is_leader(const struct lease_state *st, uint64_t duration_s, uint64_t now_ms)
{
	return st->leader && now_ms - st->renewed_at_ms < duration_s * 1000;
}

static int copy_str(const struct json *doc, int obj, const char *key, char *out, size_t cap,
		    char *err, size_t errlen)
{
	int i = json_member(doc, obj, key, false);
	size_t len = 0;

	out[0] = '\0';
	if (i < 0 || json_is_null(doc, i))
		return 0;
	if (json_type(doc, i) != JSMN_STRING || json_string(doc, i, out, cap - 1, &len)) {
		snprintf(err, errlen, "Lease: %s is not a string of at most %zu bytes", key,
			 cap - 1);
		out[0] = '\0';
		return -EINVAL;
	}
	out[len] = '\0';
	return 0;
}

static int copy_u64(const struct json *doc, int obj, const char *key, uint64_t *out, char *err,
		    size_t errlen)
{
	int i = json_member(doc, obj, key, false);
	char buf[24];
	const char *t;
	size_t len;

	*out = 0;
	if (i < 0 || json_is_null(doc, i))
		return 0;
	t = json_text(doc, i, &len);
	if (json_type(doc, i) != JSMN_PRIMITIVE || !t || len == 0 || len >= sizeof(buf)) {
		snprintf(err, errlen, "Lease: %s is not a number", key);
		return -EINVAL;
	}
	memcpy(buf, t, len);
	buf[len] = '\0';
	if (units_parse_u64(buf, UINT32_MAX, out)) {
		snprintf(err, errlen, "Lease: %s is not a whole number", key);
		return -EINVAL;
	}
	return 0;
}

int lease_parse(const char *js, size_t len, struct lease_record *r, char *err, size_t errlen)
{
	struct json doc = { 0 };
	int meta, spec, rc;

	memset(r, 0, sizeof(*r));
	rc = json_parse(&doc, js, len, 4096, err, errlen);
	if (rc)
		return rc;
	meta = json_member(&doc, 0, "metadata", false);
	spec = json_member(&doc, 0, "spec", false);
	if (json_type(&doc, meta) != JSMN_OBJECT) {
		snprintf(err, errlen, "Lease: metadata is %s", json_kind(&doc, meta));
		rc = -EINVAL;
		goto cleanup;
	}
	if ((rc = copy_str(&doc, meta, "resourceVersion", r->rv, sizeof(r->rv), err, errlen)) ||
	    (rc = copy_str(&doc, spec, "holderIdentity", r->holder, sizeof(r->holder), err,
			   errlen)) ||
	    (rc = copy_str(&doc, spec, "renewTime", r->renew, sizeof(r->renew), err, errlen)) ||
	    (rc = copy_str(&doc, spec, "acquireTime", r->acquire, sizeof(r->acquire), err,
			   errlen)) ||
	    (rc = copy_u64(&doc, spec, "leaseDurationSeconds", &r->duration_s, err, errlen)) ||
	    (rc = copy_u64(&doc, spec, "leaseTransitions", &r->transitions, err, errlen)))
		goto cleanup;
	r->exists = true;
cleanup:
	json_free(&doc);
	if (rc)
		memset(r, 0, sizeof(*r));
	return rc;
}

void lease_body(struct buf *b, const char *name, const char *ns, const char *identity,
		uint64_t duration_s, const struct lease_record *r, enum lease_action a,
		const char *now_text)
{
	bool take = a == LEASE_CREATE || a == LEASE_TAKE;

	buf_puts(b, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":");
	buf_json_cstr(b, name);
	buf_puts(b, ",\"namespace\":");
	buf_json_cstr(b, ns);
	if (a != LEASE_CREATE && r->rv[0]) {
		buf_puts(b, ",\"resourceVersion\":");
		buf_json_cstr(b, r->rv);
	}
	buf_puts(b, "},\"spec\":{\"holderIdentity\":");
	buf_json_cstr(b, identity);
	buf_puts(b, ",\"leaseDurationSeconds\":");
	buf_json_u64(b, duration_s);
	buf_puts(b, ",\"acquireTime\":");
	buf_json_cstr(b, take || !r->acquire[0] ? now_text : r->acquire);
	buf_puts(b, ",\"renewTime\":");
	buf_json_cstr(b, now_text);
	buf_puts(b, ",\"leaseTransitions\":");
	buf_json_u64(b, a == LEASE_TAKE ? r->transitions + 1 : r->transitions);
	buf_puts(b, "}}");
}

void lease_micro_time(uint64_t unix_ns, char *out, size_t cap)
{
	time_t secs = (time_t)(unix_ns / 1000000000u);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(unix_ns % 1000000000u / 1000u));
}
