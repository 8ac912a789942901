/* The rebalancer's apiserver requests (kubeops.h). */
#include "kubeops.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define KUBEOPS_REPLY_MAX (64u * 1024u)

struct collect {
	struct buf *out;
	size_t max;
	long code;
};

static void on_status(void *ctx, long code)
{
	((struct collect *)ctx)->code = code;
}

static bool on_body(void *ctx, const char *p, size_t n)
{
	struct collect *c = ctx;

	if (c->out->len + n > c->max)
		return false;	/* the rest is not needed, and not read */
	buf_append(c->out, p, n);
	return !buf_failed(c->out);
}

static int call(struct kubeops *ko, const char *method, const char *path, const char *body,
		size_t len, size_t max, struct buf *out, long *code, char *why, size_t whylen)
{
	struct collect c = { out, max, 0 };
	const struct kubeclient_handler h = { on_status, on_body, &c };
	int rc;

	buf_reset(out);
	rc = kubeclient_request(ko->kc, method, path, body, len, ko->timeout_ms, &h, why, whylen);
	*code = c.code;
	return rc;
}

void kubeops_escape(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < cap; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '.' || ch == '_') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

int kubeops_discover(struct kubeops *ko, char *why, size_t whylen)
{
	struct buf b;
	long code = 0;
	int rc;

	buf_init(&b, KUBEOPS_REPLY_MAX);
	rc = call(ko, "GET", "/apis/policy/v1", NULL, 0, KUBEOPS_REPLY_MAX, &b, &code, why, whylen);
	ko->policy_v1 = rc == 0 && code == 200 && b.data && strstr(b.data, "\"pods/eviction\"");
	buf_free(&b);
	return rc;
}

int kubeops_node_pods(struct kubeops *ko, const char *node, size_t max, struct buf *out,
		      long *code, char *why, size_t whylen)
{
	char esc[1024], path[1200];

	kubeops_escape(node, esc, sizeof(esc));
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", esc);
	return call(ko, "GET", path, NULL, 0, max, out, code, why, whylen);
}

enum kubeops_eviction kubeops_evict(struct kubeops *ko, const char *ns, const char *name,
				    const char *uid, long *code, char *why, size_t whylen)
{
	char ens[256], ename[1024], path[1400];
	struct buf body, reply;
	enum kubeops_eviction r = KUBEOPS_FAILED;
	int rc;

	buf_init(&body, 8192);
	buf_init(&reply, KUBEOPS_REPLY_MAX);
	kubeops_escape(ns, ens, sizeof(ens));
	kubeops_escape(name, ename, sizeof(ename));
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ens, ename);
	buf_printf(&body, "{\"apiVersion\":\"%s\",\"kind\":\"Eviction\",\"metadata\":{\"name\":",
		   ko->policy_v1 ? "policy/v1" : "policy/v1beta1");
	buf_json_cstr(&body, name);
	buf_puts(&body, ",\"namespace\":");
	buf_json_cstr(&body, ns);
	buf_puts(&body, "}");
	if (uid && uid[0]) {
		buf_puts(&body, ",\"deleteOptions\":{\"preconditions\":{\"uid\":");
		buf_json_cstr(&body, uid);
		buf_puts(&body, "}}");
	}
	buf_puts(&body, "}");
	if (buf_failed(&body)) {
		snprintf(why, whylen, "out of memory");
		goto cleanup;
	}
	rc = call(ko, "POST", path, body.data, body.len, KUBEOPS_REPLY_MAX, &reply, code, why,
		  whylen);
	if (rc)
		goto cleanup;
	if (*code == 200 || *code == 201)
		r = KUBEOPS_EVICTED;
	else if (*code == 429)
		r = KUBEOPS_PDB;
	else if (*code == 404 || *code == 409)
		r = KUBEOPS_GONE;
	else
		snprintf(why, whylen, "the apiserver answered %ld", *code);
	if (r == KUBEOPS_PDB || r == KUBEOPS_GONE) {
		/* The Status's message, for the log ("Cannot evict pod as it
		 * would violate the pod's disruption budget."). */
		const char *m = reply.data ? strstr(reply.data, "\"message\":\"") : NULL;

		snprintf(why, whylen, "%.*s", m ? (int)strcspn(m + 11, "\"") : 0, m ? m + 11 : "");
	}
cleanup:
	buf_free(&body);
	buf_free(&reply);
	return r;
}

int kubeops_event(struct kubeops *ko, const char *kind, const char *ns, const char *name,
		  const char *uid, const char *type, const char *reason, const char *message,
		  uint64_t unix_ns, char *why, size_t whylen)
{
	bool node = strcmp(kind, "Node") == 0;
	const char *evns = node ? "default" : ns;
	char ens[256], path[400], when[LEASE_TIME_MAX], secs[32];
	struct buf body, reply;
	long code = 0;
	int rc;

	buf_init(&body, 16384);
	buf_init(&reply, KUBEOPS_REPLY_MAX);
	lease_micro_time(unix_ns, when, sizeof(when));
	snprintf(secs, sizeof(secs), "%.19sZ", when);	/* Time, not MicroTime */
	kubeops_escape(evns, ens, sizeof(ens));
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ens);
	buf_puts(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":");
	buf_json_cstr(&body, "netsched-rebalancer.");
	buf_puts(&body, ",\"namespace\":");
	buf_json_cstr(&body, evns);
	buf_puts(&body, "},\"involvedObject\":{\"kind\":");
	buf_json_cstr(&body, kind);
	buf_puts(&body, node ? ",\"apiVersion\":\"v1\"" : ",\"apiVersion\":\"v1\",\"namespace\":");
	if (!node)
		buf_json_cstr(&body, ns);
	buf_puts(&body, ",\"name\":");
	buf_json_cstr(&body, name);
	if (uid && uid[0]) {
		buf_puts(&body, ",\"uid\":");
		buf_json_cstr(&body, uid);
	}
	buf_puts(&body, "},\"reason\":");
	buf_json_cstr(&body, reason);
	buf_puts(&body, ",\"message\":");
	buf_json_str(&body, message, strnlen(message, 1024));
	buf_puts(&body, ",\"type\":");
	buf_json_cstr(&body, type);
	buf_puts(&body, ",\"source\":{\"component\":");
	buf_json_cstr(&body, ko->component);
	buf_puts(&body, "},\"reportingComponent\":");
	buf_json_cstr(&body, ko->component);
	buf_puts(&body, ",\"reportingInstance\":");
	buf_json_cstr(&body, ko->identity);
	buf_puts(&body, ",\"firstTimestamp\":");
	buf_json_cstr(&body, secs);
	buf_puts(&body, ",\"lastTimestamp\":");
	buf_json_cstr(&body, secs);
	buf_puts(&body, ",\"count\":1}");
	if (buf_failed(&body)) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}
	rc = call(ko, "POST", path, body.data, body.len, KUBEOPS_REPLY_MAX, &reply, &code, why,
		  whylen);
	if (rc == 0 && code != 201 && code != 200) {
		snprintf(why, whylen, "the apiserver answered %ld", code);
		rc = -EIO;
	}
cleanup:
	buf_free(&body);
	buf_free(&reply);
	return rc;
}

static void lease_path(const char *ns, const char *name, char *path, size_t cap)
{
	char ens[256], ename[1024];

	kubeops_escape(ns, ens, sizeof(ens));
	kubeops_escape(name ? name : "", ename, sizeof(ename));
	snprintf(path, cap, "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s%s", ens,
		 name ? "/" : "", ename);
}

int kubeops_lease_get(struct kubeops *ko, const char *ns, const char *name,
		      struct lease_record *r, char *why, size_t whylen)
{
	char path[1400];
	struct buf b;
	long code = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	buf_init(&b, KUBEOPS_REPLY_MAX);
	lease_path(ns, name, path, sizeof(path));
	rc = call(ko, "GET", path, NULL, 0, KUBEOPS_REPLY_MAX, &b, &code, why, whylen);
	if (rc)
		goto cleanup;
	if (code == 404)
		goto cleanup;	/* none yet */
	if (code != 200) {
		snprintf(why, whylen, "GET Lease %s/%s: the apiserver answered %ld", ns, name, code);
		rc = -EIO;
		goto cleanup;
	}
	rc = lease_parse(b.data ? b.data : "", b.len, r, why, whylen);
cleanup:
	buf_free(&b);
	return rc;
}

int kubeops_lease_write(struct kubeops *ko, const char *ns, const char *name,
			const char *identity, uint64_t duration_s, const struct lease_record *r,
			enum lease_action a, uint64_t unix_ns, bool *ok, long *code, char *why,
			size_t whylen)
{
	char path[1400], now[LEASE_TIME_MAX];
	struct buf body, reply;
	int rc;

	*ok = false;
	buf_init(&body, 8192);
	buf_init(&reply, KUBEOPS_REPLY_MAX);
	lease_micro_time(unix_ns, now, sizeof(now));
	lease_body(&body, name, ns, identity, duration_s, r, a, now);
	lease_path(ns, a == LEASE_CREATE ? NULL : name, path, sizeof(path));
	if (buf_failed(&body)) {
		snprintf(why, whylen, "out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}
	rc = call(ko, a == LEASE_CREATE ? "POST" : "PUT", path, body.data, body.len,
		  KUBEOPS_REPLY_MAX, &reply, code, why, whylen);
	*ok = rc == 0 && (*code == 200 || *code == 201);
cleanup:
	buf_free(&body);
	buf_free(&reply);
	return rc;
}
