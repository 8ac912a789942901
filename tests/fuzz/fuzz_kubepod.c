/* libFuzzer: what the apiserver sends the pod watch (kubepod.h), read the
 * three ways it arrives: a watch event, a list page with its items, and a
 * Status. Whatever parses must keep kubepod.h's bounds: a UID of at most 64
 * bytes without escapes, a node name that is a valid node name, a resource
 * version and continue token within their limits, every string inside the
 * input; and for the pod index: at most one address per family, none when
 * the pod is absurd, a controller whose kind and name are bounded, valid
 * and inside the input, a terminated reason. The whole document is also
 * read as metadata the way the extender request reads it (folded keys). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/log.h"
#include "common/nodename.h"
#include "scorer/parse/kubepod.h"
#include "scorer/pods/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static const char *lo, *hi;

static void check_str(const struct kubepod_str *v, size_t max)
{
	if (!v->s)
		return;
	check(v->s >= lo && v->s + v->len <= hi);
	check(v->len <= max);
	check(!memchr(v->s, '\\', v->len));
}

/* Decoded (poduid.h): bounded, no control character. */
static void check_uid(const struct pod_uid *u)
{
	check(u->len <= POD_UID_MAX);
	for (size_t i = 0; i < u->len; i++)
		check((unsigned char)u->s[i] >= 0x20 && u->s[i] != 0x7f);
}

static void check_owner(const struct kubepod_owner *o)
{
	check_str(&o->kind, KUBEPOD_KIND_MAX);
	check_str(&o->name, NODENAME_MAX_LEN);
	check_str(&o->template_hash, KUBEPOD_LABEL_VALUE_MAX);
	check_uid(&o->uid);
	/* A controller has both, and its name is a DNS subdomain. */
	check(!o->kind.s == !o->name.s);
	if (o->name.s)
		check(o->kind.len > 0 && nodename_valid(o->name.s, o->name.len));
}

/* Its workload, if any, is made of bounded, terminated strings. */
static void check_workload(const struct kubepod *p)
{
	struct workload_key k;
	char label[WORKLOAD_LABEL_MAX + 1];

	if (workload_key_of(&p->ns, &p->owner, &p->name, &k))
		return;
	check(strlen(k.ns) > 0 && strlen(k.ns) <= WORKLOAD_NS_MAX);
	check(strlen(k.kind) > 0 && strlen(k.name) > 0);
	check(strlen(workload_label(&k, label, sizeof(label))) < sizeof(label));
}

static void check_pod(const struct kubepod *p)
{
	check_uid(&p->uid);
	check_str(&p->rv, KUBEPOD_RV_MAX);
	check_str(&p->node, NODENAME_MAX_LEN);
	if (p->node.s && p->node.len)
		check(nodename_valid(p->node.s, p->node.len));
	/* Annotations: free text, only inside the input. */
	check(!p->ingress.s || (p->ingress.s >= lo && p->ingress.s + p->ingress.len <= hi));
	check(!p->egress.s || (p->egress.s >= lo && p->egress.s + p->egress.len <= hi));
	/* What the pod index reads. */
	check(memchr(p->absurd, '\0', sizeof(p->absurd)) != NULL);
	check(p->n_ips <= KUBEPOD_MAX_IPS);
	if (p->absurd[0])
		check(p->n_ips == 0);
	if (p->n_ips == 2)
		check(p->ips[0].len != p->ips[1].len);
	for (unsigned k = 0; k < p->n_ips; k++)
		check(report_ip_ok(&p->ips[k]));
	check_owner(&p->owner);
	check_workload(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json doc = { 0 };
	struct kubepod_event ev;
	struct kubepod_list l;
	struct kubepod_status st;
	struct kubepod p;
	char err[256], out[64];

	lo = (const char *)data;
	hi = lo + size;
	if (json_parse(&doc, lo, size, 1u << 16, err, sizeof(err)))
		return 0;
	if (kubepod_read_event(&doc, &ev, err, sizeof(err)) == 0) {
		if (ev.type == KUBEPOD_ERROR)
			check(ev.status.code >= 0 && ev.status.code <= 999);
		else
			check_pod(&ev.pod);
		if (ev.type != KUBEPOD_ERROR && ev.type != KUBEPOD_BOOKMARK)
			check(ev.pod.uid.len > 0);
	}
	if (kubepod_read_list(&doc, &l, err, sizeof(err)) == 0) {
		int n = 0;

		check_str(&l.rv, KUBEPOD_RV_MAX);
		check_str(&l.cont, KUBEPOD_CONTINUE_MAX);
		for (int it = kubepod_list_item(&doc, &l, -1); it >= 0;
		     it = kubepod_list_item(&doc, &l, it)) {
			check(it > 0 && it < doc.n);
			if (kubepod_read(&doc, it, &p, err, sizeof(err)) == 0)
				check_pod(&p);
			n++;
		}
		check(n == l.n);
	}
	if (json_type(&doc, 0) == JSMN_OBJECT) {
		struct kubepod_owner o;

		if (kubepod_read_owner(&doc, 0, "Pod.metadata", true, &o, err, sizeof(err)) == 0)
			check_owner(&o);
		else
			check(!o.kind.s && !o.name.s && !o.template_hash.s && o.uid.len == 0);
	}
	if (kubepod_read_status(&doc, &st, err, sizeof(err)) == 0) {
		log_printable(st.message.s, st.message.len, out, sizeof(out));
		check(strlen(out) < sizeof(out));
	}
	json_free(&doc);
	return 0;
}
