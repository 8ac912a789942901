#include "parse/movereq.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "nodename.h"
#include "json.h"
#include "traffic.h"

/* The body's tokens: the object, nine keys and nine scalar values. */
#define MOVEREQ_MAX_TOKENS 64u

enum field {
	F_NAMESPACE,
	F_POD,
	F_UID,
	F_WORKLOAD,
	F_FROM,
	F_TO,
	F_RX,
	F_TX,
	F_HOLD,
	F_COUNT,
};

static const char *const field_names[F_COUNT] = {
	"namespace", "pod", "uid", "workload", "from", "to",
	"rxBytesPerSecond", "txBytesPerSecond", "holdSeconds",
};

/* A DNS label (a namespace): [a-z0-9-], alphanumeric at both ends. */
static bool dns_label(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && (c != '-' || i == 0 || i + 1 == len))
			return false;
	}
	return len > 0;
}

/* Printable ASCII without spaces or quotes: a UID, a workload label. */
static bool plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
			return false;
	return len > 0;
}

/* A string field into out (cap bytes with the NUL), checked by kind. */
static int take_string(const struct json *d, int v, enum field f, char *out, size_t cap,
		       char *err, size_t errlen)
{
	const char *name = field_names[f];
	char why[160];
	size_t len = 0;
	int rc;

	if (json_type(d, v) != JSMN_STRING)
		return errmsg(err, errlen, -EINVAL, "%s is %s, expected a string", name,
			      json_kind(d, v));
	rc = json_string(d, v, out, cap - 1, &len);
	if (rc == -E2BIG)
		return errmsg(err, errlen, -EINVAL, "%s is longer than its limit of %zu bytes", name,
			      cap - 1);
	if (rc)
		return errmsg(err, errlen, -EINVAL, "%s is not a valid string", name);
	out[len] = '\0';
	if (!len)
		return errmsg(err, errlen, -EINVAL, "%s is empty", name);
	switch (f) {
	case F_NAMESPACE:
		if (!dns_label(out, len))
			return errmsg(err, errlen, -EINVAL, "namespace is not a namespace name (a DNS "
				      "label: a-z, 0-9 and '-', at most %u bytes)", MOVEREQ_NS_MAX);
		break;
	case F_POD:
	case F_FROM:
	case F_TO:
		if (nodename_check(out, len, why, sizeof(why)))
			return errmsg(err, errlen, -EINVAL, "%s is %s", name, why);
		break;
	default:
		if (!plain(out, len))
			return errmsg(err, errlen, -EINVAL, "%s holds a space, a quote, a backslash or "
				      "a byte that is not printable ASCII", name);
		break;
	}
	return 0;
}

/* A whole, non-negative JSON number at most max into *out. */
static int take_count(const struct json *d, int v, enum field f, uint64_t max, uint64_t *out,
		      char *err, size_t errlen)
{
	const char *name = field_names[f];
	size_t len = 0;
	const char *s = json_text(d, v, &len);
	uint64_t n = 0;

	if (json_type(d, v) != JSMN_PRIMITIVE || !s || !len || !(s[0] == '-' || (s[0] >= '0' &&
										 s[0] <= '9')))
		return errmsg(err, errlen, -EINVAL, "%s is %s, expected a whole number", name,
			      json_kind(d, v));
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return errmsg(err, errlen, -EINVAL, "%s %.*s is not a whole number of at least "
				      "0", name, (int)(len < 32 ? len : 32), s);
		if (n > max / 10)
			goto over;
		n = n * 10 + (uint64_t)(s[i] - '0');
		if (n > max)
			goto over;
	}
	*out = n;
	return 0;
over:
	return errmsg(err, errlen, -ERANGE, "%s %.*s is over its limit of %llu", name,
		      (int)(len < 32 ? len : 32), s, (unsigned long long)max);
}

static int take_field(const struct json *d, int v, enum field f, struct movereq *out,
		      char *err, size_t errlen)
{
	uint64_t n = 0;
	int rc;

	switch (f) {
	case F_NAMESPACE:
		return take_string(d, v, f, out->ns, sizeof(out->ns), err, errlen);
	case F_POD:
		return take_string(d, v, f, out->pod, sizeof(out->pod), err, errlen);
	case F_UID:
		return take_string(d, v, f, out->uid, sizeof(out->uid), err, errlen);
	case F_WORKLOAD:
		return take_string(d, v, f, out->workload, sizeof(out->workload), err, errlen);
	case F_FROM:
		return take_string(d, v, f, out->from, sizeof(out->from), err, errlen);
	case F_TO:
		return take_string(d, v, f, out->to, sizeof(out->to), err, errlen);
	case F_RX:
		return take_count(d, v, f, TRAFFIC_MAX_BYTES_PER_SECOND, &out->rx_bytes_per_second,
				  err, errlen);
	case F_TX:
		return take_count(d, v, f, TRAFFIC_MAX_BYTES_PER_SECOND, &out->tx_bytes_per_second,
				  err, errlen);
	case F_HOLD:
		/* A whole number out of range is not a malformed one: -ERANGE,
		 * counted apart. */
		rc = take_count(d, v, f, MOVEREQ_HOLD_MAX_S, &n, err, errlen);
		if (!rc && n < MOVEREQ_HOLD_MIN_S)
			rc = errmsg(err, errlen, -ERANGE, "holdSeconds %llu is under its minimum of %u",
				    (unsigned long long)n, MOVEREQ_HOLD_MIN_S);
		out->hold_s = (uint32_t)n;
		return rc;
	case F_COUNT:
		break;
	}
	return -EINVAL;
}

int movereq_parse(const char *body, size_t len, struct movereq *out, char *err, size_t errlen)
{
	bool seen[F_COUNT] = { false };
	struct json d = { 0 };
	char why[200];
	int rc, i;

	memset(out, 0, sizeof(*out));
	if (len > MOVEREQ_BODY_MAX)
		return errmsg(err, errlen, -E2BIG, "body of %zu bytes is over the limit of %u", len,
			      MOVEREQ_BODY_MAX);
	rc = json_parse(&d, body, len, MOVEREQ_MAX_TOKENS, why, sizeof(why));
	if (rc)
		return errmsg(err, errlen, -EINVAL, "body is not a move: %s", why);
	if (json_type(&d, 0) != JSMN_OBJECT) {
		rc = errmsg(err, errlen, -EINVAL, "body is %s, expected an object", json_kind(&d, 0));
		goto out;
	}
	for (i = 1; i < d.n; i = json_skip(&d, i + 1)) {
		size_t klen = 0;
		const char *k = json_text(&d, i, &klen);
		int f;

		for (f = 0; f < F_COUNT; f++)
			if (json_is_string(&d, i, field_names[f]))
				break;
		if (f == F_COUNT) {
			rc = errmsg(err, errlen, -EINVAL, "unknown field \"%.*s\"; a move has namespace, "
				    "pod, uid, workload, from, to, rxBytesPerSecond, "
				    "txBytesPerSecond and holdSeconds",
				    (int)(klen < 64 ? klen : 64), k ? k : "");
			goto out;
		}
		if (seen[f]) {
			rc = errmsg(err, errlen, -EINVAL, "%s is given twice", field_names[f]);
			goto out;
		}
		seen[f] = true;
		rc = take_field(&d, i + 1, (enum field)f, out, err, errlen);
		if (rc)
			goto out;
	}
	for (int f = 0; f < F_COUNT; f++)
		if (!seen[f]) {
			rc = errmsg(err, errlen, -EINVAL, "%s is missing", field_names[f]);
			goto out;
		}
	rc = 0;
out:
	json_free(&d);
	return rc;
}
