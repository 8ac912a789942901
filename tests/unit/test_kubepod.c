/* Reading the apiserver's pods: a real pod as the 1.20 apiserver writes it
 * (managed fields and all), watch events of every type, list pages, Status
 * errors, RFC 3339 times, and what is refused: wrong types, oversized or
 * escaped UIDs, invalid node names, unknown event types, lists without a
 * resourceVersion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scorer/parse/kubepod.h"

#define POD_UID "0c4b2c3e-8d1a-4b55-9f0e-2b8a51f3c0de"

/* A bound pod as kube-apiserver v1.20 returns it, trimmed of nothing that
 * matters to the parser's walk (managed fields nest deeply). */
static const char pod_json[] =
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-1\","
	"\"namespace\":\"shop\",\"uid\":\"" POD_UID "\",\"resourceVersion\":\"4711\","
	"\"creationTimestamp\":\"2026-11-23T09:00:00Z\",\"labels\":{\"app\":\"web\"},"
	"\"annotations\":{\"kubernetes.io/ingress-bandwidth\":\"200M\",\"other\":\"x\"},"
	"\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"fieldsType\":"
	"\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},"
	"\"f:kubernetes.io/ingress-bandwidth\":{}}},\"f:spec\":{\"f:containers\":{}}}}]},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}],\"nodeName\":\"node-7\","
	"\"schedulerName\":\"default-scheduler\"},\"status\":{\"phase\":\"Pending\",\"conditions\":"
	"[{\"type\":\"Initialized\",\"status\":\"True\",\"lastTransitionTime\":"
	"\"2026-11-23T08:00:00Z\"},{\"type\":\"PodScheduled\",\"status\":\"True\","
	"\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-23T09:00:05Z\"}]}}";

/* text, holding its pod at depth pod_depth, parsed as the pod watch parses
 * it: the containers KUBEPOD_DEPTH levels below the pod opaque, so every
 * row below also checks that nothing kubepod reads lies there. */
static int parse(struct json *doc, const char *text, unsigned pod_depth)
{
	char err[256];

	memset(doc, 0, sizeof(*doc));
	return json_parse_shallow(doc, text, strlen(text), 100000, pod_depth + KUBEPOD_DEPTH, NULL,
				  err, sizeof(err));
}

static bool str_eq(const struct kubepod_str *v, const char *s)
{
	return v->s && v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}

static bool uid_eq(const struct pod_uid *u, const char *s)
{
	return u->len == strlen(s) && memcmp(u->s, s, u->len) == 0;
}

static void test_kubepod_read_pod(void **state)
{
	struct json doc;
	struct kubepod p;
	char err[256];
	int64_t t;

	(void)state;
	assert_int_equal(parse(&doc, pod_json, 0), 0);
	assert_int_equal(kubepod_read(&doc, 0, &p, err, sizeof(err)), 0);
	assert_true(uid_eq(&p.uid, POD_UID));
	assert_true(str_eq(&p.ns, "shop"));
	assert_true(str_eq(&p.name, "web-1"));
	assert_true(str_eq(&p.node, "node-7"));
	assert_true(str_eq(&p.ingress, "200M"));
	assert_null(p.egress.s);
	assert_true(str_eq(&p.rv, "4711"));
	assert_false(p.finished);
	/* The PodScheduled condition, not the creation time. */
	assert_int_equal(kubepod_parse_time("2026-11-23T09:00:05Z", 20, &t), 0);
	assert_int_equal(p.scheduled_unix_s, t);
	json_free(&doc);
}

struct pod_case {
	const char *name;
	const char *json;
	int rc;			/* 0 or -EINVAL */
	const char *err;	/* part of the message */
	bool finished;
	const char *node;	/* NULL: not bound */
	int64_t sched;		/* -1: do not check */
	const char *uid;	/* NULL: do not check */
};

static const struct pod_case pod_cases[] = {
	{ "created bound: creation time", "{\"metadata\":{\"uid\":\"u1\",\"creationTimestamp\":"
	  "\"1970-01-01T00:01:40Z\"},\"spec\":{\"nodeName\":\"n1\"}}", 0, NULL, false, "n1", 100, NULL },
	{ "unbound", "{\"metadata\":{\"uid\":\"u1\"},\"spec\":{}}", 0, NULL, false, NULL, 0, NULL },
	{ "null spec and status", "{\"metadata\":{\"uid\":\"u1\"},\"spec\":null,\"status\":null}",
	  0, NULL, false, NULL, 0, NULL },
	{ "succeeded", "{\"metadata\":{\"uid\":\"u1\"},\"spec\":{\"nodeName\":\"n1\"},"
	  "\"status\":{\"phase\":\"Succeeded\"}}", 0, NULL, true, "n1", -1, NULL },
	{ "failed", "{\"metadata\":{\"uid\":\"u1\"},\"status\":{\"phase\":\"Failed\"}}", 0, NULL,
	  true, NULL, -1, NULL },
	{ "terminating", "{\"metadata\":{\"uid\":\"u1\",\"deletionTimestamp\":"
	  "\"2026-11-23T09:00:00Z\"},\"spec\":{\"nodeName\":\"n1\"}}", 0, NULL, true, "n1", -1, NULL },
	{ "offset time and fraction", "{\"metadata\":{\"uid\":\"u1\",\"creationTimestamp\":"
	  "\"1970-01-01T01:01:40.123+01:00\"}}", 0, NULL, false, NULL, 100, NULL },
	{ "not an object", "[1]", -EINVAL, "expected an object", false, NULL, -1, NULL },
	{ "no metadata", "{\"spec\":{}}", -EINVAL, "no metadata", false, NULL, -1, NULL },
	{ "uid a number", "{\"metadata\":{\"uid\":7}}", -EINVAL, "metadata.uid is a number",
	  false, NULL, -1, NULL },
	{ "uid too long", "{\"metadata\":{\"uid\":\"0123456789012345678901234567890123456789"
	  "01234567890123456789012345\"}}", -EINVAL, "longer than the 64 bytes allowed", false, NULL, -1,
	  NULL },
	/* UIDs are decoded and bounded as the extender request's are (poduid.h). */
	{ "uid escaped: decoded", "{\"metadata\":{\"uid\":\"a\\u002db\\/c\"}}", 0, NULL, false, NULL,
	  -1, "a-b/c" },
	{ "uid bounded once decoded", "{\"metadata\":{\"uid\":\"\\u0030123456789012345678901234567"
	  "890123456789012345678901234567890123\"}}", 0, NULL, false, NULL, -1,
	  "0123456789012345678901234567890123456789012345678901234567890123" },
	{ "uid decoded over the bound", "{\"metadata\":{\"uid\":\"012345678901234567890123456789"
	  "012345678901234567890123456789012\\u00e9\"}}", -EINVAL, "longer than the 64 bytes allowed",
	  false, NULL, -1, NULL },
	{ "uid with a control character", "{\"metadata\":{\"uid\":\"a\\u0000b\"}}", -EINVAL,
	  "metadata.uid has a control character at byte 1", false, NULL, -1, NULL },
	{ "node name with a capital", "{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"nodeName\":"
	  "\"Node-1\"}}", -EINVAL, "spec.nodeName", false, NULL, -1, NULL },
	{ "node name with a slash", "{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"nodeName\":"
	  "\"a/b\"}}", -EINVAL, "spec.nodeName", false, NULL, -1, NULL },
	{ "annotations an array", "{\"metadata\":{\"uid\":\"u\",\"annotations\":[]}}", -EINVAL,
	  "metadata.annotations is an array", false, NULL, -1, NULL },
	{ "conditions an object", "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"conditions\":{}}}",
	  -EINVAL, "status.conditions is an object", false, NULL, -1, NULL },
	{ "condition a string", "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"conditions\":"
	  "[\"x\"]}}", -EINVAL, "status.conditions[0]", false, NULL, -1, NULL },
	{ "bad time", "{\"metadata\":{\"uid\":\"u\",\"creationTimestamp\":\"yesterday, noon "
	  "sharp!!\"}}", -EINVAL, "RFC 3339", false, NULL, -1, NULL },
	/* Annotations are free text, read as the extender request reads them:
	 * whether one is a quantity is units_parse_quantity_n()'s question, and
	 * a pod is never refused for it. */
	{ "huge annotation", "{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"kubernetes.io/"
	  "egress-bandwidth\":\"1111111111111111111111111111111111111111111111111111111111111"
	  "11111\"}}}", 0, NULL, false, NULL, -1, NULL },
	{ "escaped annotation", "{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"kubernetes.io/"
	  "egress-bandwidth\":\"10\\u004d\"}}}", 0, NULL, false, NULL, -1, NULL },
	{ "annotation a number", "{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"kubernetes.io/"
	  "egress-bandwidth\":10}}}", -EINVAL, "egress-bandwidth is a number", false, NULL, -1, NULL },
};

static void test_kubepod_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pod_cases) / sizeof(pod_cases[0]); i++) {
		const struct pod_case *c = &pod_cases[i];
		char err[256] = "";
		struct json doc;
		struct kubepod p;
		int rc;

		if (parse(&doc, c->json, 0))
			fail_msg("%s: not JSON", c->name);
		rc = kubepod_read(&doc, 0, &p, err, sizeof(err));
		if (rc != c->rc)
			fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->rc, err);
		if (c->err && !strstr(err, c->err))
			fail_msg("%s: error \"%s\" lacks \"%s\"", c->name, err, c->err);
		if (!rc) {
			if (p.finished != c->finished)
				fail_msg("%s: finished %d", c->name, p.finished);
			if (c->node ? !str_eq(&p.node, c->node) : p.node.s != NULL)
				fail_msg("%s: node", c->name);
			if (c->uid && !uid_eq(&p.uid, c->uid))
				fail_msg("%s: uid \"%.*s\", want \"%s\"", c->name, (int)p.uid.len,
					 p.uid.s, c->uid);
			if (c->sched >= 0 && p.scheduled_unix_s != c->sched)
				fail_msg("%s: scheduled %lld, want %lld", c->name,
					 (long long)p.scheduled_unix_s, (long long)c->sched);
		}
		json_free(&doc);
	}
}

/* ----------------------------------- what the pod index reads (kubepod.h) */

#define MD "\"metadata\":{\"uid\":\"u\",\"namespace\":\"shop\",\"name\":\"web-6d4cf56db6-x7k2p\""
#define RS_OWNER "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\"," \
		 "\"name\":\"web-6d4cf56db6\",\"uid\":\"rs-1\",\"controller\":true," \
		 "\"blockOwnerDeletion\":true}]"

struct index_case {
	const char *name;
	const char *json;
	const char *absurd;	/* NULL: none; else part of the reason */
	bool running;
	bool host_network;
	unsigned n_ips;
	const char *ip[2];	/* as report_ip_format() writes them */
	int64_t started;	/* -1: do not check */
	const char *kind;	/* the controller's; NULL: none */
	const char *owner;
	const char *hash;
};

static const struct index_case index_cases[] = {
	{ "running dual-stack replica", "{" MD ",\"labels\":{\"app\":\"web\",\"pod-template-hash\":"
	  "\"6d4cf56db6\"}," RS_OWNER "},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":"
	  "\"Running\",\"startTime\":\"1970-01-01T00:01:40Z\",\"podIP\":\"10.244.1.7\",\"podIPs\":"
	  "[{\"ip\":\"10.244.1.7\"},{\"ip\":\"fd00:10:244:1::7\"}],\"conditions\":[{\"type\":"
	  "\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"1970-01-01T00:02:00Z\"}]}}",
	  NULL, true, false, 2, { "10.244.1.7", "fd00:10:244:1::7" }, 120, "ReplicaSet",
	  "web-6d4cf56db6", "6d4cf56db6" },
	{ "podIP alone; not ready: startTime", "{" MD "},\"status\":{\"phase\":\"Running\","
	  "\"startTime\":\"1970-01-01T00:01:40Z\",\"podIP\":\"10.244.1.8\",\"conditions\":"
	  "[{\"type\":\"Ready\",\"status\":\"False\",\"lastTransitionTime\":"
	  "\"1970-01-01T00:02:00Z\"}]}}", NULL, true, false, 1, { "10.244.1.8", NULL }, 100, NULL,
	  NULL, NULL },
	{ "pending, no address yet", "{" MD "},\"status\":{\"phase\":\"Pending\"}}", NULL, false,
	  false, 0, { NULL, NULL }, 0, NULL, NULL, NULL },
	{ "host network", "{" MD "},\"spec\":{\"hostNetwork\":true},\"status\":{\"phase\":"
	  "\"Running\",\"podIP\":\"192.168.1.10\"}}", NULL, true, true, 1, { "192.168.1.10", NULL },
	  -1, NULL, NULL, NULL },
	{ "statefulset; other owners are not controllers", "{" MD ",\"ownerReferences\":["
	  "{\"kind\":\"Thing\",\"name\":\"t\",\"uid\":\"t\"},{\"kind\":\"StatefulSet\",\"name\":"
	  "\"db\",\"uid\":\"s\",\"controller\":true},{\"kind\":\"X\",\"name\":\"x\",\"controller\":"
	  "false}]}}", NULL, false, false, 0, { NULL, NULL }, -1, "StatefulSet", "db", NULL },
	{ "an unreadable start is no start", "{" MD "},\"status\":{\"phase\":\"Running\","
	  "\"startTime\":\"soon\"}}", NULL, true, false, 0, { NULL, NULL }, 0, NULL, NULL, NULL },
	/* Absurd: the pod is still read (it counts in flight), not indexed. */
	{ "three addresses", "{" MD "},\"status\":{\"podIPs\":[{\"ip\":\"10.0.0.1\"},{\"ip\":"
	  "\"10.0.0.2\"},{\"ip\":\"10.0.0.3\"}]}}", "status.podIPs has 3 entries, more than the 2",
	  false, false, 0, { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "two of a family", "{" MD "},\"status\":{\"podIPs\":[{\"ip\":\"10.0.0.1\"},{\"ip\":"
	  "\"10.0.0.2\"}]}}", "two IPv4 addresses", false, false, 0, { NULL, NULL }, -1, NULL, NULL,
	  NULL },
	{ "not an address", "{" MD "},\"status\":{\"podIP\":\"10.0.0.300\"}}",
	  "status.podIP is not a pod's IP address", false, false, 0, { NULL, NULL }, -1, NULL, NULL,
	  NULL },
	{ "loopback", "{" MD "},\"status\":{\"podIPs\":[{\"ip\":\"127.0.0.1\"}]}}",
	  "status.podIPs[].ip is not a pod's IP address", false, false, 0, { NULL, NULL }, -1, NULL,
	  NULL, NULL },
	{ "an address with a zone", "{" MD "},\"status\":{\"podIP\":\"fe80::1%eth0\"}}",
	  "status.podIP is not a pod's IP address", false, false, 0, { NULL, NULL }, -1, NULL, NULL,
	  NULL },
	{ "an IPv4-mapped IPv6 address", "{" MD "},\"status\":{\"podIP\":\"::ffff:10.0.0.1\"}}",
	  "status.podIP is not a pod's IP address", false, false, 0, { NULL, NULL }, -1, NULL, NULL,
	  NULL },
	{ "an escaped address", "{" MD "},\"status\":{\"podIP\":\"10.0.0.\\u0031\"}}",
	  "status.podIP is not", false, false, 0, { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "podIPs an object", "{" MD "},\"status\":{\"podIPs\":{}}}",
	  "status.podIPs is an object", false, false, 0, { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "podIP and podIPs disagree", "{" MD "},\"status\":{\"podIP\":\"10.0.0.9\",\"podIPs\":"
	  "[{\"ip\":\"10.0.0.1\"}]}}", "two IPv4", false, false, 0, { NULL, NULL }, -1, NULL, NULL,
	  NULL },
	{ "two controllers", "{" MD ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":"
	  "\"a\",\"uid\":\"a\",\"controller\":true},{\"kind\":\"Job\",\"name\":\"b\",\"uid\":\"b\","
	  "\"controller\":true}]}}", "more than one controller", false, false, 0, { NULL, NULL }, -1,
	  NULL, NULL, NULL },
	{ "seventeen owners", "{" MD ",\"ownerReferences\":[{},{},{},{},{},{},{},{},{},{},{},{},"
	  "{},{},{},{},{}]}}", "has 17 entries, more than the 16 allowed", false, false, 0,
	  { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "a controller without a name", "{" MD ",\"ownerReferences\":[{\"kind\":\"Job\","
	  "\"controller\":true}]}}", "ownerReferences[0].name is not a DNS subdomain", false, false,
	  0, { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "a kind that is no kind", "{" MD ",\"ownerReferences\":[{\"kind\":\"apps/Job\",\"name\":"
	  "\"j\",\"controller\":true}]}}", "ownerReferences[0].kind is not a kind", false, false, 0,
	  { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "controller a string", "{" MD ",\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\","
	  "\"controller\":\"yes\"}]}}", "controller is a string, expected a boolean", false, false,
	  0, { NULL, NULL }, -1, NULL, NULL, NULL },
	{ "a hash that is no label value", "{" MD ",\"labels\":{\"pod-template-hash\":\"a b\"}}}",
	  "pod-template-hash", false, false, 0, { NULL, NULL }, -1, NULL, NULL, NULL },
};

/* Whether a bound pod has started (kubepod.h), parsed as the watch parses
 * it (its containers' state objects opaque), and why one waits. */
struct started_case {
	const char *name;
	const char *status;
	bool started;
	const char *waiting;	/* NULL: none said */
};

#define CS(x) "\"containerStatuses\":[" x "]"
static const struct started_case started_cases[] = {
	{ "running, started", "\"phase\":\"Running\"," CS("{\"name\":\"c\",\"ready\":true,"
	  "\"started\":true,\"state\":{\"running\":{\"startedAt\":\"2026-01-01T00:00:00Z\"}}}"),
	  true, NULL },
	{ "running state, started not said (kubelet < 1.16)", "\"phase\":\"Running\","
	  CS("{\"name\":\"c\",\"state\":{\"running\":{}}}"), true, NULL },
	{ "Running, no container statuses: the phase", "\"phase\":\"Running\"", true, NULL },
	{ "pending, image pull back-off", "\"phase\":\"Pending\"," CS("{\"name\":\"c\",\"ready\":"
	  "false,\"started\":false,\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\","
	  "\"message\":\"Back-off pulling image \\\"netsched.invalid/x\\\"\"}}}"), false,
	  "ImagePullBackOff" },
	{ "pending, no status at all", "\"phase\":\"Pending\"", false, NULL },
	{ "crash loop: Running, nothing started", "\"phase\":\"Running\"," CS("{\"name\":\"c\","
	  "\"ready\":false,\"started\":false,\"restartCount\":5,\"state\":{\"waiting\":{\"reason\":"
	  "\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":{\"exitCode\":1}}}"), false,
	  "CrashLoopBackOff" },
	{ "a sidecar runs, the main container waits", "\"phase\":\"Running\","
	  CS("{\"name\":\"main\",\"started\":false,\"state\":{\"waiting\":{\"reason\":"
	     "\"CreateContainerConfigError\"}}},{\"name\":\"side\",\"started\":true,\"state\":"
	     "{\"running\":{}}}"), true, "CreateContainerConfigError" },
	{ "statuses not an array", "\"phase\":\"Running\",\"containerStatuses\":{}", false, NULL },
	{ "a state too large to read", "\"phase\":\"Running\"," CS("{\"name\":\"c\",\"state\":"
	  "{\"waiting\":{\"reason\":\"X\",\"message\":\"" "%4200s" "\"}}}"), false, NULL },
};

static void test_kubepod_started(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(started_cases) / sizeof(started_cases[0]); i++) {
		const struct started_case *c = &started_cases[i];
		static char text[8192], status[6000];
		char err[256] = "";
		struct json doc;
		struct kubepod p;

		snprintf(status, sizeof(status), c->status, "");
		snprintf(text, sizeof(text), "{" MD "},\"spec\":{\"nodeName\":\"n1\"},\"status\":{%s}}",
			 status);
		if (parse(&doc, text, 0))
			fail_msg("%s: not JSON", c->name);
		if (kubepod_read(&doc, 0, &p, err, sizeof(err)))
			fail_msg("%s: refused: %s", c->name, err);
		if (p.started != c->started)
			fail_msg("%s: started %d, want %d", c->name, p.started, c->started);
		if (c->waiting ? !str_eq(&p.waiting, c->waiting) : p.waiting.s != NULL)
			fail_msg("%s: waiting %.*s, want %s", c->name, (int)p.waiting.len,
				 p.waiting.s ? p.waiting.s : "", c->waiting ? c->waiting : "none");
		json_free(&doc);
	}
}

static void test_kubepod_index_fields(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(index_cases) / sizeof(index_cases[0]); i++) {
		const struct index_case *c = &index_cases[i];
		char err[256] = "", ip[REPORT_IP_STRLEN];
		struct json doc;
		struct kubepod p;

		if (parse(&doc, c->json, 0))
			fail_msg("%s: not JSON", c->name);
		if (kubepod_read(&doc, 0, &p, err, sizeof(err)))
			fail_msg("%s: refused: %s", c->name, err);
		if (c->absurd ? !strstr(p.absurd, c->absurd) : p.absurd[0] != '\0')
			fail_msg("%s: absurd \"%s\", want \"%s\"", c->name, p.absurd,
				 c->absurd ? c->absurd : "");
		if (p.running != c->running || p.host_network != c->host_network)
			fail_msg("%s: running %d, host network %d", c->name, p.running,
				 p.host_network);
		if (p.n_ips != c->n_ips)
			fail_msg("%s: %u addresses, want %u", c->name, p.n_ips, c->n_ips);
		for (unsigned k = 0; k < p.n_ips; k++)
			if (report_ip_format(&p.ips[k], ip, sizeof(ip)) || strcmp(ip, c->ip[k]))
				fail_msg("%s: address %u is %s, want %s", c->name, k, ip, c->ip[k]);
		if (c->started >= 0 && p.started_unix_s != c->started)
			fail_msg("%s: started %lld, want %lld", c->name, (long long)p.started_unix_s,
				 (long long)c->started);
		if (c->kind ? !str_eq(&p.owner.kind, c->kind) || !str_eq(&p.owner.name, c->owner) :
			      p.owner.kind.s != NULL)
			fail_msg("%s: owner %.*s %.*s", c->name, (int)p.owner.kind.len,
				 p.owner.kind.s ? p.owner.kind.s : "", (int)p.owner.name.len,
				 p.owner.name.s ? p.owner.name.s : "");
		if (c->hash ? !str_eq(&p.owner.template_hash, c->hash) :
			      p.owner.template_hash.s != NULL)
			fail_msg("%s: pod-template-hash", c->name);
		json_free(&doc);
	}
}

/* The extender request reads the owner with Go's struct-field folding
 * (OwnerReferences, Kind), labels exactly; an absurd one says why and
 * leaves the owner empty. */
static void test_kubepod_owner_folded(void **state)
{
	struct kubepod_owner o;
	struct json doc;
	char why[160];

	(void)state;
	assert_int_equal(parse(&doc, "{\"Labels\":{\"pod-template-hash\":\"abc12\"},"
				     "\"OwnerReferences\":[{\"Kind\":\"ReplicaSet\",\"NAME\":\"web-abc12\","
				     "\"Uid\":\"r\",\"Controller\":true}]}", 0), 0);
	assert_int_equal(kubepod_read_owner(&doc, 0, "Pod.metadata", true, &o, why, sizeof(why)), 0);
	assert_true(str_eq(&o.kind, "ReplicaSet"));
	assert_true(str_eq(&o.name, "web-abc12"));
	assert_true(uid_eq(&o.uid, "r"));
	assert_true(str_eq(&o.template_hash, "abc12"));
	assert_int_equal(kubepod_read_owner(&doc, 0, "Pod.metadata", false, &o, why, sizeof(why)), 0);
	assert_null(o.kind.s);
	json_free(&doc);
	assert_int_equal(parse(&doc, "{\"ownerReferences\":7}", 0), 0);
	assert_int_equal(kubepod_read_owner(&doc, 0, "Pod.metadata", true, &o, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "Pod.metadata.ownerReferences is a number, expected an array");
	assert_null(o.kind.s);
	json_free(&doc);
}

static void test_kubepod_events(void **state)
{
	char text[sizeof(pod_json) + 64], err[256];
	struct kubepod_event ev;
	struct json doc;

	(void)state;
	snprintf(text, sizeof(text), "{\"type\":\"MODIFIED\",\"object\":%s}", pod_json);
	assert_int_equal(parse(&doc, text, 1), 0);
	assert_int_equal(kubepod_read_event(&doc, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBEPOD_MODIFIED);
	assert_true(str_eq(&ev.pod.node, "node-7"));
	json_free(&doc);

	assert_int_equal(parse(&doc, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
				     "\"metadata\":{\"resourceVersion\":\"991\"}}}", 1), 0);
	assert_int_equal(kubepod_read_event(&doc, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBEPOD_BOOKMARK);
	assert_true(str_eq(&ev.pod.rv, "991"));
	json_free(&doc);

	assert_int_equal(parse(&doc, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
				     "\"status\":\"Failure\",\"message\":\"too old resource "
				     "version: 5 (77)\",\"reason\":\"Expired\",\"code\":410}}", 1), 0);
	assert_int_equal(kubepod_read_event(&doc, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBEPOD_ERROR);
	assert_int_equal(ev.status.code, 410);
	assert_true(str_eq(&ev.status.reason, "Expired"));
	json_free(&doc);

	/* A message as the apiserver writes it, names in quotes: kept as
	 * received, and the code still read. */
	assert_int_equal(parse(&doc, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
				     "\"message\":\"pods is forbidden: User \\\"system:anonymous\\\" "
				     "cannot watch\",\"reason\":\"Forbidden\",\"code\":403}}", 1), 0);
	assert_int_equal(kubepod_read_event(&doc, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.status.code, 403);
	assert_true(str_eq(&ev.status.message,
			   "pods is forbidden: User \\\"system:anonymous\\\" cannot watch"));
	json_free(&doc);

	static const struct {
		const char *json, *err;
	} bad[] = {
		{ "{\"type\":\"ADDED\"}", "no object" },
		{ "{\"type\":\"RENAMED\",\"object\":{}}", "expected ADDED" },
		{ "{\"object\":{}}", "type is missing" },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}", "no metadata.uid" },
		{ "{\"type\":\"DELETED\",\"object\":[]}", "object is an array" },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}", "not an HTTP status" },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":4100}}", "not an HTTP status" },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":0}}", "not an HTTP status" },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":-1}}", "not an HTTP status" },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":4e2}}", "not an HTTP status" },
		{ "[]", "expected an object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&doc, bad[i].json, 1), 0);
		err[0] = '\0';
		if (kubepod_read_event(&doc, &ev, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].err))
			fail_msg("%s: error \"%s\", want \"%s\"", bad[i].json, err, bad[i].err);
		json_free(&doc);
	}
}

static void test_kubepod_list(void **state)
{
	char text[3 * sizeof(pod_json) + 256], err[256];
	struct kubepod_list l;
	struct kubepod p;
	struct json doc;
	int n = 0;

	(void)state;
	snprintf(text, sizeof(text), "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":"
		 "\"812\",\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ\"},\"items\":[%s,%s]}",
		 pod_json, pod_json);
	assert_int_equal(parse(&doc, text, 2), 0);
	assert_int_equal(kubepod_read_list(&doc, &l, err, sizeof(err)), 0);
	assert_true(str_eq(&l.rv, "812"));
	assert_true(str_eq(&l.cont, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"));
	assert_int_equal(l.n, 2);
	for (int it = kubepod_list_item(&doc, &l, -1); it >= 0; it = kubepod_list_item(&doc, &l, it)) {
		assert_int_equal(kubepod_read(&doc, it, &p, err, sizeof(err)), 0);
		assert_true(uid_eq(&p.uid, POD_UID));
		n++;
	}
	assert_int_equal(n, 2);
	json_free(&doc);

	/* An empty cluster: items null, the last page. */
	assert_int_equal(parse(&doc, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":null}", 2), 0);
	assert_int_equal(kubepod_read_list(&doc, &l, err, sizeof(err)), 0);
	assert_int_equal(kubepod_list_item(&doc, &l, -1), -1);
	assert_null(l.cont.s);
	json_free(&doc);

	assert_int_equal(parse(&doc, "{\"metadata\":{},\"items\":[]}", 2), 0);
	assert_int_equal(kubepod_read_list(&doc, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no metadata.resourceVersion"));
	json_free(&doc);
	assert_int_equal(parse(&doc, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":{}}", 2), 0);
	assert_int_equal(kubepod_read_list(&doc, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "items is an object"));
	json_free(&doc);
}

static void test_kubepod_time(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(kubepod_parse_time("1970-01-01T00:00:00Z", 20, &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(kubepod_parse_time("2026-11-23T09:25:18Z", 20, &t), 0);
	assert_int_equal(t, 1795425918);
	assert_int_equal(kubepod_parse_time("2026-11-23T10:25:18+01:00", 25, &t), 0);
	assert_int_equal(t, 1795425918);
	assert_int_equal(kubepod_parse_time("2026-11-23T09:25:18.999999Z", 27, &t), 0);
	assert_int_equal(t, 1795425918);
	static const char *const bad[] = {
		"2026-11-23 09:25:18Z", "2026-11-23T09:25:18", "2026-11-23T09:25:18Zjunk",
		"2026-11-23T09:25:18+1:00", "2026-13-23T09:25:18Z", "not a time at all, really",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kubepod_parse_time(bad[i], strlen(bad[i]), &t) == 0)
			fail_msg("\"%s\" parsed as %lld", bad[i], (long long)t);
	assert_int_equal(kubepod_parse_time(NULL, 0, &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubepod_read_pod),
		cmocka_unit_test(test_kubepod_cases),
		cmocka_unit_test(test_kubepod_index_fields),
		cmocka_unit_test(test_kubepod_started),
		cmocka_unit_test(test_kubepod_owner_folded),
		cmocka_unit_test(test_kubepod_events),
		cmocka_unit_test(test_kubepod_list),
		cmocka_unit_test(test_kubepod_time),
	};
	return cmocka_run_group_tests_name("kubepod", tests, NULL, NULL);
}
