#include "pods/podindex.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "parse/podlabel.h"
#include "pods/podindex_int.h"
#include "report.h"

static uint32_t buckets_for(size_t n)
{
	uint32_t b = 16;

	while (b < n * 2)
		b *= 2;
	return b;
}

static int32_t *heads(size_t n)
{
	int32_t *h = malloc(n * sizeof(*h));

	for (size_t i = 0; h && i < n; i++)
		h[i] = NONE;
	return h;
}

/* What x holds, whole or as far as podindex_create() got (calloc'd). */
static void free_parts(struct podindex *x)
{
	for (size_t i = 0; x->nodes && i < x->node_ix.high; i++) {
		free(x->nodes[i].m);
		free(x->nodes[i].tab);
	}
	free(x->per_pod);
	free(x->pods);
	free(x->nodes);
	slotindex_fini(&x->pod_ix);
	free(x->ip_buckets);
	slotindex_fini(&x->node_ix);
	free(x);
}

struct podindex *podindex_create(const struct podindex_config *cfg, struct workload *wl)
{
	struct podindex *x;

	if (!cfg->max_pods || !cfg->max_nodes || cfg->max_pods > (1u << 24) ||
	    cfg->max_nodes > (1u << 24) || !wl)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->cfg = *cfg;
	x->wl = wl;
	x->ip_mask = buckets_for(cfg->max_pods * KUBEPOD_MAX_IPS) - 1;
	/* calloc'd: a slot's pages are touched when it is first used. */
	x->pods = calloc(cfg->max_pods, sizeof(*x->pods));
	x->nodes = calloc(cfg->max_nodes, sizeof(*x->nodes));
	x->ip_buckets = heads((size_t)x->ip_mask + 1);
	x->per_pod = malloc(cfg->max_nodes * 2 * sizeof(*x->per_pod));
	if (!x->pods || !x->nodes || !x->ip_buckets || !x->per_pod ||
	    slotindex_init(&x->pod_ix, cfg->max_pods, 0) ||
	    slotindex_init(&x->node_ix, cfg->max_nodes, 0) || pthread_mutex_init(&x->lock, NULL)) {
		free_parts(x);
		return NULL;
	}
	return x;
}

void podindex_destroy(struct podindex *x)
{
	if (!x)
		return;
	pthread_mutex_destroy(&x->lock);
	free_parts(x);
}

/* ---------------------------------------------------------------- nodes */

static const void *node_name(const void *x, int32_t i, size_t *len)
{
	*len = ((const struct podindex *)x)->nodes[i].len;
	return ((const struct podindex *)x)->nodes[i].name;
}

int32_t podindex_find_node(const struct podindex *x, const char *name, size_t len, uint32_t h)
{
	return slotindex_find(&x->node_ix, h, name, len, node_name, x);
}

/* Node name's slot, made if new; NONE when the slots are all taken. A
 * slot keeps its arrays when freed, for the next node. */
static int32_t node_get(struct podindex *x, const char *name, size_t len)
{
	uint32_t h = hash32(name, len);
	int32_t i = podindex_find_node(x, name, len, h);
	struct member *m;
	struct islot *tab;
	uint32_t cap, mask, gen;
	struct xnode *n;

	if (i != NONE)
		return i;
	i = slotindex_take(&x->node_ix, h);
	if (i == NONE)
		return NONE;
	n = &x->nodes[i];
	m = n->m;
	tab = n->tab;
	cap = n->cap;
	mask = n->tab_mask;
	gen = n->gen + 1;
	memset(n, 0, sizeof(*n));
	n->gen = gen;
	n->m = m;
	n->tab = tab;
	n->cap = cap;
	n->tab_mask = mask;
	n->dirty = true;
	memcpy(n->name, name, len);
	n->len = (uint16_t)len;
	x->st.nodes++;
	return i;
}

static void node_put(struct podindex *x, int32_t i)
{
	struct xnode *n = &x->nodes[i];

	if (n->pods)
		return;
	slotindex_put(&x->node_ix, i);
	x->st.nodes--;
}

/* The node's address table from its members, when they changed: twice
 * as many slots as addresses, a power of two. 0 or -ENOMEM. */
int podindex_node_table(struct xnode *n)
{
	uint32_t want = 16;

	if (!n->dirty)
		return 0;
	while (want < n->pods * KUBEPOD_MAX_IPS * 2)
		want *= 2;
	if (!n->tab || n->tab_mask + 1 < want || n->tab_mask + 1 > 4 * want) {
		struct islot *t = malloc(want * sizeof(*t));

		if (!t)
			return -ENOMEM;
		free(n->tab);
		n->tab = t;
		n->tab_mask = want - 1;
	}
	for (uint32_t k = 0; k <= n->tab_mask; k++)
		n->tab[k].ref = NONE;
	for (uint32_t i = 0; i < n->pods; i++)
		for (unsigned k = 0; k < n->m[i].n_ips; k++) {
			uint32_t h = ip_hash(&n->m[i].ips[k]), at = h & n->tab_mask;

			while (n->tab[at].ref != NONE)
				at = (at + 1) & n->tab_mask;
			n->tab[at] = (struct islot){ h, (int32_t)(i * KUBEPOD_MAX_IPS + k) };
		}
	n->dirty = false;
	return 0;
}

/* ----------------------------------------------------------------- pods */

static const void *pod_uid(const void *x, int32_t i, size_t *len)
{
	*len = ((const struct podindex *)x)->pods[i].uid_len;
	return ((const struct podindex *)x)->pods[i].uid;
}

static int32_t find_pod(const struct podindex *x, const char *uid, size_t len, uint32_t h)
{
	return slotindex_find(&x->pod_ix, h, uid, len, pod_uid, x);
}

static struct member *member_of(struct podindex *x, const struct xpod *p)
{
	return &x->nodes[p->node].m[p->member];
}

static void ips_unlink(struct podindex *x, int32_t i)
{
	struct xpod *p = &x->pods[i];

	for (unsigned k = 0; k < p->n_ips; k++) {
		int32_t *at = &x->ip_buckets[ip_hash(&p->ips[k]) & x->ip_mask];

		while (*at != NONE && *at != IPREF(i, k))
			at = &x->pods[IPREF_POD(*at)].ip_next[IPREF_K(*at)];
		if (*at != NONE)
			*at = p->ip_next[k];
	}
	p->n_ips = 0;
}

static void ips_link(struct podindex *x, int32_t i, const struct report_ip *ips, unsigned n)
{
	struct xpod *p = &x->pods[i];

	for (unsigned k = 0; k < n && k < KUBEPOD_MAX_IPS; k++) {
		int32_t *head = &x->ip_buckets[ip_hash(&ips[k]) & x->ip_mask];

		p->ips[k] = ips[k];
		p->ip_next[k] = *head;
		*head = IPREF(i, k);
	}
	p->n_ips = (uint8_t)(n < KUBEPOD_MAX_IPS ? n : KUBEPOD_MAX_IPS);
}

static bool same_ips(const struct xpod *p, const struct kubepod *k)
{
	if (p->n_ips != k->n_ips)
		return false;
	for (unsigned i = 0; i < p->n_ips; i++)
		if (!report_ip_equal(&p->ips[i], &k->ips[i]))
			return false;
	return true;
}

static void set_running(struct podindex *x, struct xnode *n, struct member *m, bool on)
{
	if (m->running == on)
		return;
	m->running = on;
	n->running += on ? 1 : (uint32_t)-1;
	x->st.running += on ? 1 : (size_t)-1;
}

/* Takes pod i off its node: the last member takes its place. */
static void node_detach(struct podindex *x, int32_t i, uint64_t now)
{
	struct xpod *p = &x->pods[i];
	struct xnode *n;
	struct member *m;

	if (p->node == NONE)
		return;
	n = &x->nodes[p->node];
	m = &n->m[p->member];
	set_running(x, n, m, false);
	if (m->workload != NONE)
		workload_unref(x->wl, m->workload, now);
	if (p->member != n->pods - 1) {
		*m = n->m[n->pods - 1];
		x->pods[m->pod].member = p->member;
	}
	n->pods--;
	n->dirty = true;
	node_put(x, p->node);
	p->node = NONE;
}

/* Puts pod i on node as a new member; false when memory ran out. */
static bool node_attach(struct podindex *x, int32_t i, int32_t node)
{
	struct xpod *p = &x->pods[i];
	struct xnode *n = &x->nodes[node];

	if (n->pods == n->cap) {
		uint32_t cap = n->cap ? n->cap * 2 : 8;
		struct member *m = realloc(n->m, cap * sizeof(*m));

		if (!m)
			return false;
		n->m = m;
		n->cap = cap;
	}
	n->m[n->pods] = (struct member){ .pod = i, .gen = p->gen, .workload = NONE };
	p->node = node;
	p->member = n->pods++;
	n->dirty = true;
	return true;
}

static void pod_free(struct podindex *x, int32_t i, uint64_t now)
{
	ips_unlink(x, i);
	node_detach(x, i, now);
	slotindex_put(&x->pod_ix, i);
	x->st.pods--;
}

static int32_t pod_alloc(struct podindex *x, const char *uid, size_t len, uint32_t h)
{
	int32_t i;
	struct xpod *p;
	uint32_t gen;

	i = slotindex_take(&x->pod_ix, h);
	if (i == NONE)
		return NONE;
	p = &x->pods[i];
	gen = p->gen + 1;
	memset(p, 0, sizeof(*p));
	p->gen = gen;
	p->uid_len = (uint8_t)len;
	memcpy(p->uid, uid, len);
	p->node = NONE;
	x->st.pods++;
	return i;
}

static void say(struct podindex *x, uint64_t now, const struct kubepod *p, const char *what)
{
	char pod[PODLABEL_MAX + 1];

	log_limited(&x->log, now, NS_PER_SEC, LOG_LVL_WARN, "podindex",
		    "pod %s: %s: not indexed (its traffic is not joined, its workload not learned)",
		    podlabel_format(p->ns.s, p->ns.len, p->name.s, p->name.len, pod, sizeof(pod)),
		    what);
}

/* The monotonic time the pod started: its start time if it is a
 * readable past, else now. */
static uint64_t started_at(const struct kubepod *p, uint64_t now, uint64_t unix_ms)
{
	int64_t now_s = (int64_t)(unix_ms / 1000);
	uint64_t ago;

	if (p->started_unix_s <= 0 || p->started_unix_s >= now_s)
		return now ? now : 1;
	ago = (uint64_t)(now_s - p->started_unix_s) * NS_PER_SEC;
	return ago < now ? now - ago : 1;
}

/* The member's workload (key NULL: none); owners can change (an orphan
 * adopted), so it is asked again every event. */
static void set_workload(struct podindex *x, struct member *m, const struct workload_key *key,
			 uint64_t now)
{
	int32_t id = NONE;

	if (key) {
		id = workload_ref(x->wl, key, now);
		if (id < 0)
			id = NONE;
	}
	if (m->workload != NONE)
		workload_unref(x->wl, m->workload, now);
	m->workload = id;
}

void podindex_update(struct podindex *x, const struct kubepod *p, uint64_t now_ns,
		     uint64_t unix_ms)
{
	struct workload_key key;
	bool has = !workload_key_of(&p->ns, &p->owner, &p->name, &key);

	podindex_update_keyed(x, p, has ? &key : NULL, now_ns, unix_ms);
}

void podindex_update_keyed(struct podindex *x, const struct kubepod *p,
			   const struct workload_key *key, uint64_t now_ns, uint64_t unix_ms)
{
	struct member *m;
	struct xnode *n;
	struct xpod *q;
	bool moved = false;
	uint32_t h;
	int32_t i, node;

	if (!p->uid.len || !p->node.s || !p->node.len || p->node.len > NODENAME_MAX_LEN)
		return;
	h = hash32(p->uid.s, p->uid.len);
	pthread_mutex_lock(&x->lock);
	i = find_pod(x, p->uid.s, p->uid.len, h);
	if (p->absurd[0] || p->host_network) {
		/* Not ours to join: gone from the index if it was in. */
		if (i != NONE)
			pod_free(x, i, now_ns);
		if (p->absurd[0]) {
			x->st.ignored++;
			say(x, now_ns, p, p->absurd);
		}
		goto out;
	}
	if (i == NONE)
		i = pod_alloc(x, p->uid.s, p->uid.len, h);
	if (i == NONE) {
		x->st.full++;
		say(x, now_ns, p, "the pod index is full");
		goto out;
	}
	q = &x->pods[i];
	q->epoch = x->epoch;
	node = q->node;
	if (node == NONE || x->nodes[node].len != p->node.len ||
	    memcmp(x->nodes[node].name, p->node.s, p->node.len)) {
		node_detach(x, i, now_ns);
		node = node_get(x, p->node.s, p->node.len);
		if (node == NONE || !node_attach(x, i, node)) {
			if (node != NONE)
				node_put(x, node);
			pod_free(x, i, now_ns);
			x->st.full++;
			say(x, now_ns, p, "the pod index's nodes are all taken, or memory ran out");
			goto out;
		}
		moved = true;
	}
	n = &x->nodes[node];
	m = member_of(x, q);
	if (p->running && !m->running)
		m->started_ns = started_at(p, now_ns, unix_ms);
	else if (!p->running)
		m->started_ns = 0;
	set_running(x, n, m, p->running);
	if (moved || !same_ips(q, p)) {
		ips_unlink(x, i);
		ips_link(x, i, p->ips, p->n_ips);
		memcpy(m->ips, q->ips, sizeof(m->ips));
		m->n_ips = q->n_ips;
		n->dirty = true;
	}
	set_workload(x, m, key, now_ns);
	if (!q->label[0])
		podlabel_format(p->ns.s, p->ns.len, p->name.s, p->name.len, q->label,
				sizeof(q->label));
out:
	pthread_mutex_unlock(&x->lock);
}

void podindex_remove(struct podindex *x, const char *uid, size_t uid_len, uint64_t now_ns)
{
	int32_t i;

	if (!uid || !uid_len || uid_len > POD_UID_MAX)
		return;
	pthread_mutex_lock(&x->lock);
	i = find_pod(x, uid, uid_len, hash32(uid, uid_len));
	if (i != NONE)
		pod_free(x, i, now_ns);
	pthread_mutex_unlock(&x->lock);
}

void podindex_list_begin(struct podindex *x)
{
	pthread_mutex_lock(&x->lock);
	x->epoch++;
	x->listing = true;
	pthread_mutex_unlock(&x->lock);
}

void podindex_list_end(struct podindex *x, uint64_t now_ns)
{
	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; x->listing && i < x->pod_ix.high; i++)
		if (slotindex_used(&x->pod_ix, (int32_t)i) && x->pods[i].epoch != x->epoch)
			pod_free(x, (int32_t)i, now_ns);
	x->listing = false;
	pthread_mutex_unlock(&x->lock);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n), n > 0 (sorts it): the middle one, or the mean of
 * the two middle ones. */
static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] & v[n / 2] & 1);
}

void podindex_tick(struct podindex *x, uint64_t now_ns)
{
	uint64_t *rx = x->per_pod, *tx = x->per_pod + x->cfg.max_nodes;
	size_t pods = 0, nodes = 0;

	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < x->node_ix.high; i++) {
		const struct xnode *n = &x->nodes[i];

		if (!n->pods || !n->reported_ns || !n->pods_seen || now_ns < n->reported_ns ||
		    now_ns - n->reported_ns > x->cfg.stale_ns)
			continue;
		rx[nodes] = n->pod_rx / n->pods_seen;
		tx[nodes] = n->pod_tx / n->pods_seen;
		nodes++;
		pods += n->pods_seen;
	}
	/* Each node's average per pod, and the median over nodes: one node
	 * claiming 4,096 idle pods, or pods moving 57 GB/s, is one value
	 * among the others', never the cluster's figure (with three nodes or
	 * more, it stays within the range of the others'). */
	x->st.avg_pods = pods;
	x->st.avg_nodes = nodes;
	x->st.avg_rx_bytes_per_second = nodes ? median(rx, nodes) : 0;
	x->st.avg_tx_bytes_per_second = nodes ? median(tx, nodes) : 0;
	pthread_mutex_unlock(&x->lock);
}

void podindex_set_link_ceiling(struct podindex *x, uint64_t bytes_per_second)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	x->link_ceiling = bytes_per_second;
	x->st.link_ceiling_bytes_per_second = bytes_per_second;
	pthread_mutex_unlock(&x->lock);
}

/* For the lookups by node name: false when x or the name is none the
 * index could hold; else x's lock is taken (the caller releases it) and
 * *node is the node's row, or NONE. */
static bool lock_node(struct podindex *x, const char *name, size_t len, int32_t *node)
{
	if (!x || !name || !len || len > NODENAME_MAX_LEN)
		return false;
	pthread_mutex_lock(&x->lock);
	*node = podindex_find_node(x, name, len, hash32(name, len));
	return true;
}

uint64_t podindex_node_link(struct podindex *x, const char *name, size_t len)
{
	uint64_t link = 0;
	int32_t node;

	if (!lock_node(x, name, len, &node))
		return 0;
	if (node != NONE)
		link = x->nodes[node].link;
	pthread_mutex_unlock(&x->lock);
	return link;
}

bool podindex_node_name(struct podindex *x, struct workload_node node, char *out, size_t cap)
{
	bool ok = false;

	if (cap)
		out[0] = '\0';
	if (!x || node.id < 0 || !cap)
		return false;
	pthread_mutex_lock(&x->lock);
	if ((size_t)node.id < x->node_ix.high && x->nodes[node.id].gen == node.gen &&
	    x->nodes[node.id].pods) {
		snprintf(out, cap, "%.*s", (int)x->nodes[node.id].len, x->nodes[node.id].name);
		ok = true;
	}
	pthread_mutex_unlock(&x->lock);
	return ok;
}

size_t podindex_node_top(struct podindex *x, const char *name, size_t len,
			 struct podindex_top out[PODINDEX_TOP])
{
	size_t k = 0;
	int32_t node;

	if (!lock_node(x, name, len, &node))
		return 0;
	for (unsigned j = 0; node != NONE && j < x->nodes[node].n_top; j++) {
		const struct top *t = &x->nodes[node].top[j];
		const struct xpod *p = &x->pods[t->pod];
		int32_t wl;

		/* Gone since, or the slot reused: not that pod any more. */
		if (!slotindex_used(&x->pod_ix, t->pod) || p->gen != t->gen || p->node != node)
			continue;
		memcpy(out[k].pod, p->label, sizeof(out[k].pod));
		wl = x->nodes[node].m[p->member].workload;
		if (wl != NONE)
			workload_label_of(x->wl, wl, out[k].workload, sizeof(out[k].workload));
		else
			out[k].workload[0] = '\0';
		out[k].rx_bytes_per_second = t->rx;
		out[k].tx_bytes_per_second = t->tx;
		k++;
	}
	pthread_mutex_unlock(&x->lock);
	return k;
}

void podindex_stats(struct podindex *x, struct podindex_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	*out = x->st;
	pthread_mutex_unlock(&x->lock);
}

size_t podindex_node_pods(struct podindex *x, const char *name, size_t len,
			  struct podindex_pod *out, size_t cap)
{
	const struct xnode *n;
	size_t k = 0;
	int32_t node;

	if (!lock_node(x, name, len, &node))
		return 0;
	n = node != NONE ? &x->nodes[node] : NULL;
	for (uint32_t i = 0; n && n->reported_ns && i < n->pods && k < cap; i++) {
		const struct member *m = &n->m[i];
		const struct xpod *p = &x->pods[m->pod];

		if (!m->running || m->joined != n->stamp)
			continue;
		memcpy(out[k].label, p->label, sizeof(out[k].label));
		memcpy(out[k].uid, p->uid, p->uid_len);
		out[k].uid[p->uid_len] = '\0';
		out[k].workload[0] = '\0';
		if (m->workload != NONE)
			workload_label_of(x->wl, m->workload, out[k].workload, sizeof(out[k].workload));
		out[k].rx_bytes_per_second = m->rx;
		out[k].tx_bytes_per_second = m->tx;
		k++;
	}
	pthread_mutex_unlock(&x->lock);
	return k;
}
