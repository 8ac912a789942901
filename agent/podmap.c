#include "podmap.h"

#include <stdlib.h>
#include <string.h>

#include <linux/rtnetlink.h>

static int cmp_iface(const void *a, const void *b)
{
	uint32_t x = ((const struct podmap_iface *)a)->ifindex;
	uint32_t y = ((const struct podmap_iface *)b)->ifindex;

	return x < y ? -1 : x > y;
}

static const struct podmap_iface *find_iface(const struct podmap *m, uint32_t ifindex)
{
	struct podmap_iface key = { .ifindex = ifindex };

	return m->n_ifaces ? bsearch(&key, m->ifaces, m->n_ifaces, sizeof(key), cmp_iface) : NULL;
}

/* Whether ifindex is the bridge of some pod interface. A node has one or
 * two bridges at most: a scan is the cheapest lookup. */
static bool is_bridge(const struct podmap *m, uint32_t ifindex)
{
	for (size_t i = 0; i < m->n_ifaces; i++)
		if (m->ifaces[i].master == ifindex)
			return true;
	return false;
}

void podmap_begin(struct podmap *m, const struct podmap_iface *ifaces, size_t n)
{
	if (n > PODMAP_MAX_IFACES)
		n = PODMAP_MAX_IFACES;
	memcpy(m->ifaces, ifaces, n * sizeof(*ifaces));
	m->n_ifaces = n;
	qsort(m->ifaces, n, sizeof(*ifaces), cmp_iface);
	m->n_addrs = m->n_neigh = m->n_fdb = 0;
}

static void add_addr(struct podmap *m, const struct report_ip *ip, uint32_t ifindex, uint8_t rank)
{
	if (m->n_addrs == PODMAP_MAX_ADDRS) {
		m->dropped++;
		return;
	}
	m->addrs[m->n_addrs] = (struct podmap_addr){ .ip = *ip, .ifindex = ifindex, .rank = rank,
						     .order = (uint32_t)m->n_addrs };
	m->n_addrs++;
}

void podmap_add(struct podmap *m, const struct podmap_fact *f)
{
	const struct podmap_iface *pod;

	if (f->deleted || (f->kind != PODMAP_FDB && !report_ip_ok(&f->ip)))
		return;
	switch (f->kind) {
	case PODMAP_ROUTE:
		if (find_iface(m, f->ifindex))
			add_addr(m, &f->ip, f->ifindex, f->table == RT_TABLE_MAIN ? 0 : 1);
		break;
	case PODMAP_NEIGH:
		if (!is_bridge(m, f->ifindex))
			break;
		if (m->n_neigh == PODMAP_MAX_ADDRS) {
			m->dropped++;
			break;
		}
		m->neigh[m->n_neigh++] = (struct podmap_neigh){ .ip = f->ip, .bridge = f->ifindex };
		memcpy(m->neigh[m->n_neigh - 1].mac, f->mac, 6);
		break;
	case PODMAP_FDB:
		pod = find_iface(m, f->ifindex);
		if (!pod || pod->master != f->master)
			break;
		if (m->n_fdb == PODMAP_MAX_FDB) {
			m->dropped++;
			break;
		}
		m->fdb[m->n_fdb] = (struct podmap_fdb){ .port = f->ifindex };
		memcpy(m->fdb[m->n_fdb].mac, f->mac, 6);
		m->n_fdb++;
		break;
	}
}

static int cmp_ip(const struct report_ip *a, const struct report_ip *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->addr, b->addr, a->len);
}

/* By address, the best claim first. */
static int cmp_claim(const void *pa, const void *pb)
{
	const struct podmap_addr *a = pa, *b = pb;
	int c = cmp_ip(&a->ip, &b->ip);

	if (c)
		return c;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* By interface, then address: what podmap_lookup() searches. */
static int cmp_owner(const void *pa, const void *pb)
{
	const struct podmap_addr *a = pa, *b = pb;

	if (a->ifindex != b->ifindex)
		return a->ifindex < b->ifindex ? -1 : 1;
	return cmp_ip(&a->ip, &b->ip);
}

/* The port of mac on bridge, 0 when the FDB does not know it. */
static uint32_t port_of(const struct podmap *m, const uint8_t *mac, uint32_t bridge)
{
	for (size_t i = 0; i < m->n_fdb; i++) {
		const struct podmap_iface *pod;

		if (memcmp(m->fdb[i].mac, mac, 6))
			continue;
		pod = find_iface(m, m->fdb[i].port);
		if (pod && pod->master == bridge)
			return m->fdb[i].port;
	}
	return 0;
}

void podmap_end(struct podmap *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n_neigh; i++) {
		uint32_t port = port_of(m, m->neigh[i].mac, m->neigh[i].bridge);

		if (port)
			add_addr(m, &m->neigh[i].ip, port, 2);
	}
	/* One owner per address: the best claim. */
	qsort(m->addrs, m->n_addrs, sizeof(m->addrs[0]), cmp_claim);
	for (size_t i = 0; i < m->n_addrs; i++) {
		if (k && cmp_ip(&m->addrs[k - 1].ip, &m->addrs[i].ip) == 0) {
			if (m->addrs[k - 1].ifindex != m->addrs[i].ifindex)
				m->conflicts++;
			continue;
		}
		m->addrs[k++] = m->addrs[i];
	}
	m->n_addrs = k;
	qsort(m->addrs, m->n_addrs, sizeof(m->addrs[0]), cmp_owner);
}

size_t podmap_lookup(const struct podmap *m, uint32_t ifindex, struct report_ip *out, size_t cap)
{
	size_t lo = 0, hi = m->n_addrs, n = 0;

	/* The first entry of ifindex. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->addrs[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->n_addrs && m->addrs[i].ifindex == ifindex; i++, n++)
		if (n < cap)
			out[n] = m->addrs[i].ip;
	return n;
}

static bool has_addr(const struct podmap *m, const struct report_ip *ip)
{
	for (size_t i = 0; i < m->n_addrs; i++)
		if (report_ip_equal(&m->addrs[i].ip, ip))
			return true;
	return false;
}

bool podmap_notice(const struct podmap *m, const struct podmap_fact *f)
{
	bool known = false;

	switch (f->kind) {
	case PODMAP_ROUTE:
		/* Pods come and go with their routes: rare, always worth a look. */
		return find_iface(m, f->ifindex) || has_addr(m, &f->ip);
	case PODMAP_NEIGH:
		if (!is_bridge(m, f->ifindex))
			return false;
		/* A deletion need not say the MAC. */
		for (size_t i = 0; i < m->n_neigh && !known; i++)
			known = m->neigh[i].bridge == f->ifindex &&
				report_ip_equal(&m->neigh[i].ip, &f->ip) &&
				(f->deleted || !memcmp(m->neigh[i].mac, f->mac, 6));
		break;
	case PODMAP_FDB:
		if (!find_iface(m, f->ifindex))
			return false;
		for (size_t i = 0; i < m->n_fdb && !known; i++)
			known = m->fdb[i].port == f->ifindex && !memcmp(m->fdb[i].mac, f->mac, 6);
		break;
	}
	/* A state change of what we know changes nothing. */
	return f->deleted ? known : !known;
}
