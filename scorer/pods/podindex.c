#include "pods/podindex.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "pods/inflight.h"
#include "log.h"
#include "report.h"
#include "slotindex.h"
#include "units.h"

#define NONE (-1)
/* A pod's address in the global address table: slot * KUBEPOD_MAX_IPS + k. */
#define IPREF(slot, k) ((int32_t)((slot) * (int32_t)KUBEPOD_MAX_IPS + (int32_t)(k)))
#define IPREF_POD(r) ((r) / (int32_t)KUBEPOD_MAX_IPS)
#define IPREF_K(r) ((r) % (int32_t)KUBEPOD_MAX_IPS)

/* What the join needs of a pod, kept with its node's other pods in one
 * array: a report is joined without touching a pod record (550,000 of
 * them at 5,000 nodes are far out of cache; one node's pods are a few kB). */
struct member {
	int32_t pod;			/* its slot in pods[] */
	uint32_t gen;			/* the slot's generation: samples name the pod */
	int32_t workload;		/* NONE: none */
	uint32_t joined;		/* its node's stamp when a report last listed it */
	bool running;
	uint8_t n_ips;
	struct report_ip ips[KUBEPOD_MAX_IPS];
	uint64_t started_ns;		/* running since (monotonic); 0: not running */
	uint64_t rx, tx;		/* its latest window's rates */
	uint64_t reading;		/* the agent's reading last sampled (fingerprint); 0: none */
	uint64_t read_ns;		/* when it was first seen */
};

/* One address of a node's member, in the node's own open-addressed table:
 * ref = member * KUBEPOD_MAX_IPS + k, NONE empty. */
struct islot {
	uint32_t hash;
	int32_t ref;
};

struct xpod {
	int32_t ip_next[KUBEPOD_MAX_IPS];	/* global address chains (IPREF) */
	uint32_t gen;			/* bumped on reuse */
	uint32_t epoch;			/* the list that last named it */
	int32_t node;
	uint32_t member;		/* its index in its node's members */
	uint8_t uid_len;
	uint8_t n_ips;
	char uid[POD_UID_MAX];
	char label[PODINDEX_LABEL_MAX + 1];
	struct report_ip ips[KUBEPOD_MAX_IPS];
};

struct top {
	int32_t pod;
	uint32_t gen;
	uint64_t rx, tx;
};

struct xnode {
	uint32_t gen;			/* bumped on reuse: a workload sample's node (workload.h) */
	uint16_t len;
	char name[NODENAME_MAX_LEN + 1];
	struct member *m;		/* its pods; pods of them used */
	uint32_t pods;			/* 0: a free slot */
	uint32_t cap;
	uint32_t running;		/* ... that run */
	struct islot *tab;		/* its members' addresses; rebuilt when dirty */
	uint32_t tab_mask;
	bool dirty;
	uint32_t stamp;			/* reports joined */
	uint64_t reported_ns;		/* the latest join; 0: none */
	uint64_t pod_rx, pod_tx;	/* what its pods moved then, all together, as vouched */
	uint64_t link;			/* its link then (report_node_link()); 0: unknown */
	uint32_t pods_seen;		/* ... how many pod interfaces the agent measured */
	unsigned n_top;
	struct top top[PODINDEX_TOP];
};

struct podindex {
	pthread_mutex_t lock;
	struct podindex_config cfg;
	struct workload *wl;
	struct xpod *pods;
	struct slotindex pod_ix;	/* by uid */
	int32_t *ip_buckets;
	uint32_t ip_mask;
	struct xnode *nodes;
	struct slotindex node_ix;	/* by name; a slot's arrays stay when freed */
	uint32_t epoch;
	bool listing;
	uint64_t link_ceiling;		/* the cluster's fastest known link (set) */
	uint64_t *per_pod;		/* max_nodes x 2: the tick's per-node averages */
	struct podindex_stats st;
	struct log_limit log;
	struct log_limit nic_log;	/* pods' figures over their NIC's */
};

static uint32_t hash32(const void *p, size_t len)
{
	uint64_t h = hash_fnv1a(p, len);

	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t ip_hash(const struct report_ip *ip)
{
	return hash32(ip->addr, ip->len <= sizeof(ip->addr) ? ip->len : sizeof(ip->addr));
}

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
		free(x->per_pod);
		free(x->pods);
		free(x->nodes);
		slotindex_fini(&x->pod_ix);
		free(x->ip_buckets);
		slotindex_fini(&x->node_ix);
		free(x);
		return NULL;
	}
	return x;
}

void podindex_destroy(struct podindex *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->node_ix.high; i++) {
		free(x->nodes[i].m);
		free(x->nodes[i].tab);
	}
	pthread_mutex_destroy(&x->lock);
	free(x->per_pod);
	free(x->pods);
	free(x->nodes);
	slotindex_fini(&x->pod_ix);
	free(x->ip_buckets);
	slotindex_fini(&x->node_ix);
	free(x);
}

/* ---------------------------------------------------------------- nodes */

static int32_t find_node(const struct podindex *x, const char *name, size_t len, uint32_t h)
{
	for (int32_t i = slotindex_first(&x->node_ix, h); i != NONE;
	     i = slotindex_next(&x->node_ix, i)) {
		const struct xnode *n = &x->nodes[i];

		if (n->len == len && memcmp(n->name, name, len) == 0)
			return i;
	}
	return NONE;
}

/* Node name's slot, made if new; NONE when the slots are all taken. A
 * slot keeps its arrays when freed, for the next node. */
static int32_t node_get(struct podindex *x, const char *name, size_t len)
{
	uint32_t h = hash32(name, len);
	int32_t i = find_node(x, name, len, h);
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
static int node_table(struct xnode *n)
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

static int32_t find_pod(const struct podindex *x, const char *uid, size_t len, uint32_t h)
{
	for (int32_t i = slotindex_first(&x->pod_ix, h); i != NONE;
	     i = slotindex_next(&x->pod_ix, i)) {
		const struct xpod *p = &x->pods[i];

		if (p->uid_len == len && memcmp(p->uid, uid, len) == 0)
			return i;
	}
	return NONE;
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

/* The sample key of a pod: unique while the index lives. */
static uint64_t pod_key(const struct member *m)
{
	return ((uint64_t)m->gen << 32) | (uint64_t)(m->pod + 1);
}

static void say(struct podindex *x, uint64_t now, const struct kubepod *p, const char *what)
{
	char ns[64], name[128];

	log_limited(&x->log, now, NS_PER_SEC, LOG_LVL_WARN, "podindex",
		    "pod %s/%s: %s: not indexed (its traffic is not joined, its workload not learned)",
		    log_printable(p->ns.s, p->ns.len, ns, sizeof(ns)),
		    log_printable(p->name.s, p->name.len, name, sizeof(name)), what);
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

/* The member's workload from the pod's owner; owners can change (an
 * orphan adopted), so it is asked again every event. */
static void set_workload(struct podindex *x, struct member *m, const struct kubepod *p,
			 uint64_t now)
{
	struct workload_key key;
	int32_t id = NONE;

	if (!workload_key_of(&p->ns, &p->owner, &p->name, &key)) {
		id = workload_ref(x->wl, &key, now);
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
	set_workload(x, m, p, now_ns);
	if (!q->label[0]) {
		char ns[64], name[PODINDEX_LABEL_MAX + 1];

		/* Printable ASCII: it goes into JSON and metric labels as is. */
		snprintf(q->label, sizeof(q->label), "%s/%s",
			 log_printable(p->ns.s, p->ns.len, ns, sizeof(ns)),
			 log_printable(p->name.s, p->name.len, name, sizeof(name)));
	}
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

/* ----------------------------------------------------------------- join */

enum match {
	MATCH_UNKNOWN,
	MATCH_ELSEWHERE,
	MATCH_NOT_RUNNING,
	MATCH_POD,
};

/* The member of node n that owns one of t's addresses: running, the
 * newest start if several claim it (the others' end was missed). */
static enum match lookup_here(const struct xnode *n, const struct report_pod *t, int32_t *member)
{
	enum match m = MATCH_UNKNOWN;

	*member = NONE;
	for (unsigned k = 0; k < t->n_ips && k < REPORT_MAX_POD_IPS; k++) {
		uint32_t h = ip_hash(&t->ips[k]);

		for (uint32_t at = h & n->tab_mask; n->tab[at].ref != NONE;
		     at = (at + 1) & n->tab_mask) {
			int32_t ref = n->tab[at].ref;
			const struct member *c = &n->m[ref / (int32_t)KUBEPOD_MAX_IPS];

			if (n->tab[at].hash != h ||
			    !report_ip_equal(&c->ips[ref % (int32_t)KUBEPOD_MAX_IPS], &t->ips[k]))
				continue;
			if (!c->running) {
				if (m < MATCH_NOT_RUNNING)
					m = MATCH_NOT_RUNNING;
			} else if (*member == NONE ||
				   c->started_ns > n->m[*member].started_ns) {
				*member = ref / (int32_t)KUBEPOD_MAX_IPS;
				m = MATCH_POD;
			}
		}
	}
	return m;
}

/* Whether some pod elsewhere has one of t's addresses (the global table:
 * asked only for entries the node does not own). */
static bool elsewhere(const struct podindex *x, const struct report_pod *t)
{
	for (unsigned k = 0; k < t->n_ips && k < REPORT_MAX_POD_IPS; k++)
		for (int32_t r = x->ip_buckets[ip_hash(&t->ips[k]) & x->ip_mask]; r != NONE;
		     r = x->pods[IPREF_POD(r)].ip_next[IPREF_K(r)])
			if (report_ip_equal(&x->pods[IPREF_POD(r)].ips[IPREF_K(r)], &t->ips[k]))
				return true;
	return false;
}

/* Keeps member m among the node's PODINDEX_TOP by rx + tx, most first. */
static void top_insert(struct xnode *n, const struct member *m)
{
	uint64_t sum = units_add_sat(m->rx, m->tx);
	unsigned at = n->n_top;

	while (at > 0 && units_add_sat(n->top[at - 1].rx, n->top[at - 1].tx) < sum)
		at--;
	if (at >= PODINDEX_TOP)
		return;
	if (n->n_top < PODINDEX_TOP)
		n->n_top++;
	memmove(&n->top[at + 1], &n->top[at], (n->n_top - 1 - at) * sizeof(n->top[0]));
	n->top[at] = (struct top){ m->pod, m->gen, m->rx, m->tx };
}

/* Whether the pod had run its start-up before a window of covered_ms
 * began. The agent reads pods' counters at most every half window and
 * copies that reading into each report until the next (README.md, "Pods"),
 * so the window ended up to half its length before now. */
static bool settled(const struct member *m, uint64_t covered_ms, uint64_t now)
{
	uint64_t need = PODINDEX_STARTUP_NS + (covered_ms + covered_ms / 2) * NS_PER_MS;

	return m->started_ns && now > m->started_ns && now - m->started_ns >= need;
}

/* The node's window: its longest interface's, in ms. */
static uint64_t node_window_ms(const struct report *r)
{
	uint64_t node = 0;

	for (uint32_t i = 0; i < r->n_ifaces && i < REPORT_MAX_INTERFACES; i++)
		if (r->ifaces[i].traffic.covered_ms > node)
			node = r->ifaces[i].traffic.covered_ms;
	return node;
}

/* Whether a pod's window of covered_ms is whole: as long as the node's
 * (one sample's leeway). A young interface's window starts when it
 * appeared, with its pod: start-up and all. */
static bool whole(uint64_t covered_ms, uint64_t node_ms, const struct report *r)
{
	uint64_t slack = r->sample_interval_ms ? r->sample_interval_ms : 1000;

	return covered_ms + slack >= node_ms;
}

/* Whether the figures (covered_ms, bytes each way, and what they are
 * shared by: 1 for a listed pod) are a new reading of m's interface, and
 * if so remembers them. The agent reads pods every --pod-interval and
 * copies the reading into each report until the next (README.md, "Pods"),
 * so the same figures come again and again: sampled once, a reading is
 * one measurement, as old as when it was first seen. The agent reads at
 * least every half window, so the same figures half a window after they
 * were first seen are a new reading that found them unchanged (an idle
 * pod's zeros). */
static bool new_reading(struct member *m, const struct report_pod *t, uint64_t shared,
			uint64_t node_ms, uint64_t now)
{
	/* A multiply-xorshift mix of the figures: a collision (odds 2^-64)
	 * skips one reading, no more. */
	uint64_t fp = t->rx_bytes;

	fp = (fp ^ t->tx_bytes) * 0x9e3779b97f4a7c15ULL;
	fp = (fp ^ (fp >> 29) ^ t->covered_ms) * 0xbf58476d1ce4e5b9ULL;
	fp = (fp ^ (fp >> 31) ^ shared) * 0x94d049bb133111ebULL;
	fp = (fp ^ (fp >> 32)) | 1;

	if (fp == m->reading && now >= m->read_ns && now - m->read_ns < node_ms / 2 * NS_PER_MS)
		return false;
	m->reading = fp;
	m->read_ns = now;
	return true;
}

/* What a node's agent says of its pods, held to what its node can vouch
 * for (podindex.h): per direction, the pods' figures add up to at most
 * what crossed its NIC, and none is over its link (or, unknown, the
 * cluster's fastest known link). */
struct vouched {
	uint64_t nic_rx, nic_tx;	/* the node's interfaces' rates, bytes a second */
	uint64_t sum_rx, sum_tx;	/* its pods' rates added up, listed and rest */
	uint64_t cap;			/* one pod at most; 0: no link known anywhere */
	struct workload_node node;
};

static uint64_t mul_div(uint64_t v, uint64_t num, uint64_t den)
{
	unsigned __int128 r = (unsigned __int128)v * num / (den ? den : 1);

	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* One pod's rate v, in a direction where the pods add up to sum and the
 * NIC counted nic, as its node vouches for it. */
static uint64_t vouch_rate(uint64_t v, uint64_t nic, uint64_t sum, uint64_t cap)
{
	if (sum > nic)
		v = mul_div(v, nic, sum);
	return cap && v > cap ? cap : v;
}

static void sample(struct podindex *x, const struct member *m, const struct vouched *v,
		   uint64_t rx, uint64_t tx, uint64_t now)
{
	workload_sample_from(x->wl, m->workload, pod_key(m), v->node,
			     vouch_rate(rx, v->nic_rx, v->sum_rx, v->cap),
			     vouch_rate(tx, v->nic_tx, v->sum_tx, v->cap), now);
}

/* The node's NIC, its pods' sums and the cap of one pod, from report r;
 * says so (a line a second) when the pods claim more than the NIC. */
static void vouch_figures(struct podindex *x, const struct report *r, struct vouched *v,
			  uint64_t now)
{
	uint64_t link = report_node_link(r);

	/* Rates, each over its own covered time, not bytes: a sample the
	 * agent dropped from the NIC's window (a spike over twice the link,
	 * as a starved agent's late sample looks) but kept in a pod's took
	 * bytes from the NIC alone, and scaled every pod of the node down to
	 * nearly nothing (tests/k8s/test_k8s_weight.sh on a busy machine). */
	v->nic_rx = v->nic_tx = 0;
	for (uint32_t i = 0; i < r->n_ifaces && i < REPORT_MAX_INTERFACES; i++) {
		v->nic_rx = units_add_sat(v->nic_rx, r->ifaces[i].traffic.rx.average);
		v->nic_tx = units_add_sat(v->nic_tx, r->ifaces[i].traffic.tx.average);
	}
	v->sum_rx = r->pods_rest.rx.average;
	v->sum_tx = r->pods_rest.tx.average;
	for (uint32_t e = 0; e < r->n_pods && e < REPORT_MAX_PODS; e++) {
		v->sum_rx = units_add_sat(v->sum_rx, r->pods[e].rx.average);
		v->sum_tx = units_add_sat(v->sum_tx, r->pods[e].tx.average);
	}
	v->cap = link ? link : x->link_ceiling;
	if (v->sum_rx > v->nic_rx || v->sum_tx > v->nic_tx) {
		bool rx = v->sum_rx > v->nic_rx;
		uint64_t sum = rx ? v->sum_rx : v->sum_tx, nic = rx ? v->nic_rx : v->nic_tx;
		char a[32], b[32];

		x->st.nic_scaled++;
		units_format_bytes_rate(a, sizeof(a), (double)sum);
		units_format_bytes_rate(b, sizeof(b), (double)nic);
		log_limited(&x->nic_log, now, NS_PER_SEC, LOG_LVL_INFO, "podindex",
			    "%s: pods' %s %s exceeds its NIC's %s; pod figures scaled to %.1f%% (traffic "
			    "between its own pods, or figures it cannot vouch for)", r->node,
			    rx ? "rx" : "tx", a, b, (double)nic * 100.0 / (double)sum);
	}
}

/* When every listed entry matched: the running pods the list left out,
 * if they are exactly the rest the agent counted, each at the rest's
 * average (the agent lists the busiest; these are lighter). */
static void sample_unlisted(struct podindex *x, struct xnode *n, const struct report *r,
			    const struct vouched *v, size_t matched, uint64_t node_ms, uint64_t now)
{
	const struct report_pod *rest = &r->pods_rest;
	size_t left = n->running > matched ? n->running - matched : 0;
	uint64_t rx, tx;

	if (!left || r->pods_seen < r->n_pods || left != r->pods_seen - r->n_pods)
		return;
	rx = rest->rx.average / left;
	tx = rest->tx.average / left;
	for (uint32_t i = 0; i < n->pods; i++) {
		struct member *m = &n->m[i];

		if (!m->running || m->joined == n->stamp)
			continue;
		m->rx = rx;
		m->tx = tx;
		if (m->workload != NONE && whole(rest->covered_ms, node_ms, r) &&
		    settled(m, rest->covered_ms, now) && new_reading(m, rest, left, node_ms, now))
			sample(x, m, v, rx, tx, now);
	}
}

/* The listed pods of a report that may still be in flight, copied out of
 * the index so they are told to the in-flight pods without its lock. */
struct measured {
	size_t n;
	struct inflight_measure m[REPORT_MAX_PODS];
	char uid[REPORT_MAX_PODS][POD_UID_MAX];
};

/* Adds member m, measured for covered_ms, if it may still be in flight:
 * it has run for less than horizon (it was bound before it ran). */
static void measured_add(struct measured *out, const struct podindex *x, const struct member *m,
			 uint64_t covered_ms, uint64_t horizon, uint64_t now)
{
	const struct xpod *p = &x->pods[m->pod];

	if (!horizon || !covered_ms || out->n >= REPORT_MAX_PODS || !m->started_ns ||
	    (now > m->started_ns && now - m->started_ns >= horizon))
		return;
	memcpy(out->uid[out->n], p->uid, p->uid_len);
	out->m[out->n] = (struct inflight_measure){ out->uid[out->n], p->uid_len, covered_ms };
	out->n++;
}

void podindex_join(struct podindex *x, const struct report *r, uint64_t now_ns)
{
	struct measured seen;
	uint64_t horizon = x ? inflight_horizon_ns(x->cfg.inflight) : 0;
	size_t len = strnlen(r->node, sizeof(r->node)), matched = 0;
	uint64_t node_ms = node_window_ms(r);
	uint64_t sum_rx = r->pods_rest.rx.average, sum_tx = r->pods_rest.tx.average;
	struct xnode *n = NULL;
	struct vouched v;
	int32_t node;

	if (!x || !r->has_pods)
		return;
	seen.n = 0;
	pthread_mutex_lock(&x->lock);
	node = find_node(x, r->node, len, hash32(r->node, len));
	if (node != NONE && node_table(&x->nodes[node]) == 0) {
		n = &x->nodes[node];
		n->stamp++;
		n->n_top = 0;
		vouch_figures(x, r, &v, now_ns);
		v.node = (struct workload_node){ node, n->gen };
		/* It still vouches for what it measured before (workload.h). */
		workload_vouch(x->wl, v.node, now_ns);
	}
	for (uint32_t e = 0; e < r->n_pods && e < REPORT_MAX_PODS; e++) {
		const struct report_pod *t = &r->pods[e];
		enum match how = MATCH_UNKNOWN;
		int32_t i = NONE;
		struct member *m;
		bool all;

		sum_rx = units_add_sat(sum_rx, t->rx.average);
		sum_tx = units_add_sat(sum_tx, t->tx.average);
		if (n)
			how = lookup_here(n, t, &i);
		if (how == MATCH_NOT_RUNNING) {
			x->st.not_running++;
			continue;
		}
		if (how == MATCH_UNKNOWN) {
			if (elsewhere(x, t))
				x->st.wrong_node++;
			else
				x->st.unknown_ip++;
			continue;
		}
		x->st.matched++;
		matched++;
		m = &n->m[i];
		m->rx = t->rx.average;
		m->tx = t->tx.average;
		m->joined = n->stamp;
		top_insert(n, m);
		/* Within a sample of the node's window is all of it, as for
		 * learning. */
		all = whole(t->covered_ms, node_ms, r);
		measured_add(&seen, x, m, all ? node_ms : t->covered_ms, horizon, now_ns);
		if (m->workload != NONE && all &&
		    settled(m, t->covered_ms, now_ns) && new_reading(m, t, 1, node_ms, now_ns))
			sample(x, m, &v, m->rx, m->tx, now_ns);
	}
	if (n) {
		if (matched == r->n_pods)
			sample_unlisted(x, n, r, &v, matched, node_ms, now_ns);
		n->reported_ns = now_ns ? now_ns : 1;
		n->pod_rx = vouch_rate(sum_rx, v.nic_rx, v.sum_rx, 0);
		n->pod_tx = vouch_rate(sum_tx, v.nic_tx, v.sum_tx, 0);
		n->pods_seen = r->pods_seen;
		n->link = report_node_link(r);
	}
	pthread_mutex_unlock(&x->lock);
	if (seen.n)
		inflight_measured(x->cfg.inflight, r->node, len, node_ms, seen.m, seen.n, now_ns);
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

uint64_t podindex_node_link(struct podindex *x, const char *name, size_t len)
{
	uint64_t link = 0;
	int32_t node;

	if (!x || !name || !len || len > NODENAME_MAX_LEN)
		return 0;
	pthread_mutex_lock(&x->lock);
	node = find_node(x, name, len, hash32(name, len));
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

	if (!x || !name || !len || len > NODENAME_MAX_LEN)
		return 0;
	pthread_mutex_lock(&x->lock);
	node = find_node(x, name, len, hash32(name, len));
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
