#include "podwire.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"

/* The rest of the pods: figures only, never an address. */
static void rest_put(Netsched__Pod *d, const struct report_pod *src)
{
	netsched__pod__init(d);
	d->rx_bytes = src->rx_bytes;
	d->tx_bytes = src->tx_bytes;
	d->covered_ms = src->covered_ms;
	d->has_rx_recent_bytes_per_second = true;
	d->rx_recent_bytes_per_second = src->rx.recent;
	d->has_tx_recent_bytes_per_second = true;
	d->tx_recent_bytes_per_second = src->tx.recent;
}

void podwire_put_table(struct podwire_table *w, const struct report *r)
{
	size_t n = r->n_pods, b4 = 0, b6 = 0;

	netsched__pod_table__init(&w->m);
	for (size_t i = 0; i < n; i++) {
		const struct report_pod *p = &r->pods[i];

		w->ipv4_count[i] = w->ipv6_count[i] = 0;
		for (uint32_t k = 0; k < p->n_ips; k++) {
			const struct report_ip *ip = &p->ips[k];

			if (ip->len == 4) {
				memcpy(w->ipv4 + b4, ip->addr, 4);
				b4 += 4;
				w->ipv4_count[i]++;
			} else {
				memcpy(w->ipv6 + b6, ip->addr, 16);
				b6 += 16;
				w->ipv6_count[i]++;
			}
		}
		w->rx_bytes[i] = p->rx_bytes;
		w->tx_bytes[i] = p->tx_bytes;
		w->covered_ms[i] = p->covered_ms;
		w->rx_recent[i] = p->rx.recent;
		w->tx_recent[i] = p->tx.recent;
	}
	w->m.seen = r->pods_seen;
	w->m.n_ipv4_count = w->m.n_ipv6_count = n;
	w->m.ipv4_count = w->ipv4_count;
	w->m.ipv6_count = w->ipv6_count;
	w->m.has_ipv4 = b4 > 0;
	w->m.ipv4.data = w->ipv4;
	w->m.ipv4.len = b4;
	w->m.has_ipv6 = b6 > 0;
	w->m.ipv6.data = w->ipv6;
	w->m.ipv6.len = b6;
	w->m.n_rx_bytes = w->m.n_tx_bytes = w->m.n_covered_ms = n;
	w->m.rx_bytes = w->rx_bytes;
	w->m.tx_bytes = w->tx_bytes;
	w->m.covered_ms = w->covered_ms;
	w->m.n_rx_recent_bytes_per_second = w->m.n_tx_recent_bytes_per_second = n;
	w->m.rx_recent_bytes_per_second = w->rx_recent;
	w->m.tx_recent_bytes_per_second = w->tx_recent;
	rest_put(&w->rest, &r->pods_rest);
	w->m.rest = &w->rest;
}

static void ip_put(struct report_pod *d, const uint8_t *addr, uint8_t len)
{
	struct report_ip *ip = &d->ips[d->n_ips++];

	ip->len = len;
	memcpy(ip->addr, addr, len);
}

/* A Pod message's figures and addresses (IPv4 first); -1 (malformed) for
 * an address neither 4 nor 16 bytes long, -2 (oversize) for too many. */
static int pod_get(struct report_pod *d, const Netsched__Pod *s)
{
	if (s->n_ips > REPORT_MAX_POD_IPS)
		return -2;
	for (size_t k = 0; k < s->n_ips; k++)
		if (s->ips[k].len != 4 && s->ips[k].len != 16)
			return -1;
	d->n_ips = 0;
	for (size_t k = 0; k < s->n_ips; k++)
		if (s->ips[k].len == 4)
			ip_put(d, s->ips[k].data, 4);
	for (size_t k = 0; k < s->n_ips; k++)
		if (s->ips[k].len == 16)
			ip_put(d, s->ips[k].data, 16);
	report_pod_count(d, s->rx_bytes, s->tx_bytes, s->covered_ms);
	d->rx.recent = s->has_rx_recent_bytes_per_second ? s->rx_recent_bytes_per_second : 0;
	d->tx.recent = s->has_tx_recent_bytes_per_second ? s->tx_recent_bytes_per_second : 0;
	return 0;
}

/* pod_get() into pod i (i == r->n_pods: the rest), its failure in err. */
static int pod_get_named(struct report *r, size_t i, const Netsched__Pod *s, char *err,
			 size_t errlen)
{
	char which[32] = "the rest of the pods";
	int bad = pod_get(i < r->n_pods ? &r->pods[i] : &r->pods_rest, s);

	if (!bad)
		return 0;
	if (i < r->n_pods)
		snprintf(which, sizeof(which), "pod %zu", i);
	if (bad == -1)
		return errmsg(err, errlen, -EBADMSG, "%s: %s has an address neither 4 nor 16 bytes "
			      "long", r->node, which);
	return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE, "%s: %s has %zu addresses, limit %u",
		      r->node, which, s->n_ips, REPORT_MAX_POD_IPS);
}

static int too_many(const struct report *r, size_t n, char *err, size_t errlen)
{
	return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE, "%s: %zu pods listed, limit %u", r->node,
		      n, REPORT_MAX_PODS);
}

int podwire_get_list(struct report *r, const Netsched__Report *rep, char *err, size_t errlen)
{
	int rc;

	if (rep->n_pods > REPORT_MAX_PODS)
		return too_many(r, rep->n_pods, err, errlen);
	r->has_pods = rep->has_pods_seen;
	r->pods_seen = rep->has_pods_seen ? rep->pods_seen : 0;
	r->n_pods = (uint32_t)rep->n_pods;
	for (size_t i = 0; i < rep->n_pods; i++) {
		rc = pod_get_named(r, i, rep->pods[i], err, errlen);
		if (rc)
			return rc;
	}
	return rep->pods_rest ? pod_get_named(r, r->n_pods, rep->pods_rest, err, errlen) : 0;
}

int podwire_get_table(struct report *r, const Netsched__PodTable *t, char *err, size_t errlen)
{
	const struct {
		const char *name;
		size_t n;
	} columns[] = {
		{ "ipv4_count", t->n_ipv4_count },
		{ "ipv6_count", t->n_ipv6_count },
		{ "tx_bytes", t->n_tx_bytes },
		{ "covered_ms", t->n_covered_ms },
		{ "rx_recent_bytes_per_second", t->n_rx_recent_bytes_per_second },
		{ "tx_recent_bytes_per_second", t->n_tx_recent_bytes_per_second },
	};
	size_t n = t->n_rx_bytes, v4 = 0, v6 = 0;
	const uint8_t *a4 = t->ipv4.data, *a6 = t->ipv6.data;

	if (n > REPORT_MAX_PODS)
		return too_many(r, n, err, errlen);
	for (size_t c = 0; c < sizeof(columns) / sizeof(columns[0]); c++)
		if (columns[c].n != n)
			return errmsg(err, errlen, -EBADMSG, "%s: the pod table lists %zu pods by "
				      "rx_bytes but %zu by %s", r->node, n, columns[c].n,
				      columns[c].name);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = (uint64_t)t->ipv4_count[i] + t->ipv6_count[i];

		if (k > REPORT_MAX_POD_IPS)
			return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE, "%s: pod %zu has %llu "
				      "addresses, limit %u", r->node, i, (unsigned long long)k,
				      REPORT_MAX_POD_IPS);
		v4 += t->ipv4_count[i];
		v6 += t->ipv6_count[i];
	}
	if (t->ipv4.len != v4 * 4 || t->ipv6.len != v6 * 16)
		return errmsg(err, errlen, -EBADMSG, "%s: the pod table holds %zu bytes of IPv4 "
			      "and %zu of IPv6 addresses, its counts make %zu and %zu", r->node,
			      t->ipv4.len, t->ipv6.len, v4 * 4, v6 * 16);
	r->has_pods = true;
	r->pods_seen = t->seen;
	r->n_pods = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct report_pod *d = &r->pods[i];

		d->n_ips = 0;
		for (uint32_t k = 0; k < t->ipv4_count[i]; k++, a4 += 4)
			ip_put(d, a4, 4);
		for (uint32_t k = 0; k < t->ipv6_count[i]; k++, a6 += 16)
			ip_put(d, a6, 16);
		report_pod_count(d, t->rx_bytes[i], t->tx_bytes[i], t->covered_ms[i]);
		d->rx.recent = t->rx_recent_bytes_per_second[i];
		d->tx.recent = t->tx_recent_bytes_per_second[i];
	}
	return t->rest ? pod_get_named(r, n, t->rest, err, errlen) : 0;
}
