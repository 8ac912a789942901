/* libFuzzer: what the apiserver sends the pod watch (kubepod.h), read the
 * three ways it arrives: a watch event, a list page with its items, and a
 * Status. Whatever parses must keep kubepod.h's bounds: a UID of at most 64
 * bytes without escapes, a node name that is a valid node name, a resource
 * version and continue token within their limits, every string inside the
 * input. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/log.h"
#include "common/nodename.h"
#include "scorer/kubepod.h"

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
	if (kubepod_read_status(&doc, &st, err, sizeof(err)) == 0) {
		log_printable(st.message.s, st.message.len, out, sizeof(out));
		check(strlen(out) < sizeof(out));
	}
	json_free(&doc);
	return 0;
}
