#include "pods/workload.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "nodename.h"
#include "slotindex.h"

#define NONE (-1)
/* A CronJob's Jobs are <cronjob>-<scheduled time>: minutes since 1970 (8
 * digits since 1989) or, from older controllers, seconds (10). */
#define CRONJOB_SUFFIX_MIN_DIGITS 8u

/* ---------------------------------------------------------------- keys */

static bool copy_name(char *out, size_t cap, const char *s, size_t len)
{
	if (!s || len == 0 || len >= cap)
		return false;
	memcpy(out, s, len);
	out[len] = '\0';
	return true;
}

/* name ends in "-" + suffix, with something before it: the prefix's length. */
static size_t strip_suffix(const struct kubepod_str *name, const char *suffix, size_t slen)
{
	if (name->len < slen + 2 || name->s[name->len - slen - 1] != '-' ||
	    memcmp(name->s + name->len - slen, suffix, slen) != 0)
		return 0;
	return name->len - slen - 1;
}

/* name ends in "-" + at least CRONJOB_SUFFIX_MIN_DIGITS digits. */
static size_t strip_digits(const struct kubepod_str *name)
{
	size_t n = 0;

	while (n < name->len && name->s[name->len - 1 - n] >= '0' && name->s[name->len - 1 - n] <= '9')
		n++;
	if (n < CRONJOB_SUFFIX_MIN_DIGITS)
		return 0;
	return strip_suffix(name, name->s + name->len - n, n);
}

static bool is(const struct kubepod_str *v, const char *s)
{
	return v->s && v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}

int workload_key_of(const struct kubepod_str *ns, const struct kubepod_owner *owner,
		    const struct kubepod_str *pod_name, struct workload_key *out)
{
	struct workload_key k;
	const char *kind = "Pod";
	struct kubepod_str name = *pod_name;
	size_t cut;

	memset(&k, 0, sizeof(k));
	if (!ns->s || ns->len > WORKLOAD_NS_MAX || !nodename_valid(ns->s, ns->len) ||
	    memchr(ns->s, '.', ns->len))
		return -EINVAL;
	if (owner->kind.s) {
		name = owner->name;
		kind = NULL;
		if (is(&owner->kind, "ReplicaSet") && owner->template_hash.s &&
		    (cut = strip_suffix(&owner->name, owner->template_hash.s,
					owner->template_hash.len))) {
			kind = "Deployment";
			name.len = cut;
		} else if (is(&owner->kind, "Job") && (cut = strip_digits(&owner->name))) {
			kind = "CronJob";
			name.len = cut;
		}
		if (!kind && !copy_name(k.kind, sizeof(k.kind), owner->kind.s, owner->kind.len))
			return -EINVAL;
	}
	if (kind)
		snprintf(k.kind, sizeof(k.kind), "%s", kind);
	if (!name.s || !nodename_valid(name.s, name.len) ||
	    !copy_name(k.name, sizeof(k.name), name.s, name.len) ||
	    !copy_name(k.ns, sizeof(k.ns), ns->s, ns->len))
		return -EINVAL;
	*out = k;
	return 0;
}

const char *workload_label(const struct workload_key *k, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s/%s", k->ns, k->kind, k->name);
	return out;
}

/* --------------------------------------------------------------- table */

struct sample {
	uint64_t pod;		/* 0: empty */
	uint64_t rx, tx;
	uint64_t at_ns;
	struct workload_node node;	/* whose agent measured it */
};

/* Workloads sit in one array allocated at creation, found by their slot
 * index (slotindex.h), whose queue holds the idle ones, least recently
 * seen first. */
struct wl {
	bool dirty;			/* sampled since the last tick */
	bool learned;
	uint32_t refs;			/* pods in the index */
	uint64_t seen_ns;		/* last ref, unref or sample */
	uint64_t newest_ns;		/* newest sample */
	/* When a node its figure rests on may have gone silent: learn
	 * again then (0: none can). */
	uint64_t recheck_ns;
	uint64_t learned_ns;		/* the last learn(): the sources' ages are as of then */
	uint32_t n_sources;
	struct workload_source sources[WORKLOAD_SOURCES];
	struct workload_key key;
	struct workload_demand demand;
	struct sample s[WORKLOAD_SAMPLES];
};

struct workload {
	pthread_mutex_t lock;
	struct workload_config cfg;
	struct wl *w;
	struct slotindex ix;		/* by key; queued: the idle ones */
	/* Per node id (max_nodes of them; NULL: none): the generation of
	 * the node that last vouched, and when. */
	struct vouch {
		uint32_t gen;
		uint64_t last_ns;
	} *vouch;
	struct workload_stats st;
};

static uint32_t key_hash(const struct workload_key *k)
{
	uint64_t h = hash_fnv1a(k->ns, strlen(k->ns));

	h ^= hash_fnv1a(k->kind, strlen(k->kind)) * 31u;
	h ^= hash_fnv1a(k->name, strlen(k->name)) * 131u;
	return (uint32_t)(h ^ (h >> 32));
}

static bool key_eq(const struct workload_key *a, const struct workload_key *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->ns, b->ns) && !strcmp(a->kind, b->kind);
}

struct workload *workload_create(const struct workload_config *cfg)
{
	struct workload *w;

	if (!cfg->max_workloads || cfg->max_workloads > (1u << 22) || !cfg->half_life_ns ||
	    cfg->max_nodes > (1u << 24))
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	/* calloc'd: pages are touched only as slots are used. */
	w->w = calloc(cfg->max_workloads, sizeof(*w->w));
	w->vouch = cfg->max_nodes ? calloc(cfg->max_nodes, sizeof(*w->vouch)) : NULL;
	if (!w->w || (cfg->max_nodes && !w->vouch) ||
	    slotindex_init(&w->ix, cfg->max_workloads, 0) || pthread_mutex_init(&w->lock, NULL)) {
		free(w->w);
		slotindex_fini(&w->ix);
		free(w->vouch);
		free(w);
		return NULL;
	}
	return w;
}

void workload_destroy(struct workload *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w->w);
	slotindex_fini(&w->ix);
	free(w->vouch);
	free(w);
}

static int32_t find(const struct workload *w, const struct workload_key *k, uint32_t h)
{
	for (int32_t i = slotindex_first(&w->ix, h); i != NONE; i = slotindex_next(&w->ix, i))
		if (key_eq(&w->w[i].key, k))
			return i;
	return NONE;
}

/* Frees idle slot i. */
static void release(struct workload *w, int32_t i)
{
	if (w->w[i].learned)
		w->st.learned--;
	slotindex_put(&w->ix, i);
	w->st.tracked--;
}

/* A slot for a new workload of hash h: a free one, or the idle one seen
 * least recently; NONE when every slot holds a live workload. */
static int32_t take_slot(struct workload *w, uint32_t h)
{
	int32_t i = slotindex_take(&w->ix, h);

	if (i != NONE || slotindex_oldest(&w->ix) == NONE)
		return i;
	release(w, slotindex_oldest(&w->ix));
	w->st.evicted++;
	return slotindex_take(&w->ix, h);
}

int32_t workload_ref(struct workload *w, const struct workload_key *k, uint64_t now_ns)
{
	uint32_t h = key_hash(k);
	int32_t i;
	struct wl *x;

	pthread_mutex_lock(&w->lock);
	i = find(w, k, h);
	if (i == NONE) {
		i = take_slot(w, h);
		if (i == NONE) {
			w->st.refused++;
			pthread_mutex_unlock(&w->lock);
			return -ENOSPC;
		}
		x = &w->w[i];
		memset(x, 0, sizeof(*x));
		x->key = *k;
		w->st.tracked++;
	} else if (w->w[i].refs == 0) {
		slotindex_dequeue(&w->ix, i);
	}
	x = &w->w[i];
	if (x->refs++ == 0)
		w->st.live++;
	x->seen_ns = now_ns;
	pthread_mutex_unlock(&w->lock);
	return i;
}

static bool valid_id(const struct workload *w, int32_t id)
{
	return slotindex_used(&w->ix, id);
}

void workload_unref(struct workload *w, int32_t id, uint64_t now_ns)
{
	pthread_mutex_lock(&w->lock);
	if (valid_id(w, id) && w->w[id].refs) {
		struct wl *x = &w->w[id];

		x->seen_ns = now_ns;
		if (--x->refs == 0) {
			w->st.live--;
			slotindex_enqueue(&w->ix, id);
		}
	}
	pthread_mutex_unlock(&w->lock);
}

void workload_sample(struct workload *w, int32_t id, uint64_t pod, uint64_t rx, uint64_t tx,
		     uint64_t now_ns)
{
	workload_sample_from(w, id, pod, WORKLOAD_NO_NODE, rx, tx, now_ns);
}

void workload_sample_from(struct workload *w, int32_t id, uint64_t pod, struct workload_node node,
			  uint64_t rx, uint64_t tx, uint64_t now_ns)
{
	struct sample *slot = NULL;
	struct wl *x;

	if (!pod)
		return;
	pthread_mutex_lock(&w->lock);
	if (!valid_id(w, id))
		goto out;
	x = &w->w[id];
	/* Its own entry, else an empty one, else the oldest. */
	for (unsigned k = 0; k < WORKLOAD_SAMPLES; k++) {
		struct sample *s = &x->s[k];

		if (s->pod == pod) {
			slot = s;
			break;
		}
		if (!slot || (slot->pod && (!s->pod || s->at_ns < slot->at_ns)))
			slot = s;
	}
	*slot = (struct sample){ pod, rx, tx, now_ns, node.id < 0 ? WORKLOAD_NO_NODE : node };
	x->dirty = true;
	x->seen_ns = x->newest_ns = now_ns;
	w->st.samples++;
out:
	pthread_mutex_unlock(&w->lock);
}

void workload_vouch(struct workload *w, struct workload_node node, uint64_t now_ns)
{
	if (!w->vouch || node.id < 0 || (size_t)node.id >= w->cfg.max_nodes)
		return;
	pthread_mutex_lock(&w->lock);
	w->vouch[node.id] = (struct vouch){ node.gen, now_ns };
	pthread_mutex_unlock(&w->lock);
}

/* ------------------------------------------------------------ learning */

struct weighted {
	uint64_t rate;
	double weight;
};

static int by_rate(const void *a, const void *b)
{
	uint64_t x = ((const struct weighted *)a)->rate, y = ((const struct weighted *)b)->rate;

	return x < y ? -1 : x > y;
}

/* The weighted WORKLOAD_PERCENTILE (nearest rank) of v[0..n), n > 0:
 * the smallest rate whose cumulative weight reaches that share. */
static uint64_t percentile(struct weighted *v, size_t n)
{
	double total = 0, need, acc = 0;

	qsort(v, n, sizeof(*v), by_rate);
	for (size_t i = 0; i < n; i++)
		total += v[i].weight;
	need = total * WORKLOAD_PERCENTILE / 100.0;
	for (size_t i = 0; i < n; i++) {
		acc += v[i].weight;
		/* A relative tolerance: ten equal weights reach 0.9 at the 9th. */
		if (acc >= need * (1 - 1e-9))
			return v[i].rate;
	}
	return v[n - 1].rate;
}

static bool same_node(struct workload_node a, struct workload_node b)
{
	return a.id == b.id && (a.id < 0 || a.gen == b.gen);
}

/* When sample s stops counting: silent_ns after its node was last heard
 * from (its own time, when the node is not tracked or its slot went to
 * another node); UINT64_MAX: never (no node said, or no silence kept). */
static uint64_t silent_at(const struct workload *w, const struct sample *s)
{
	uint64_t heard = s->at_ns;

	if (!w->cfg.silent_ns || s->node.id < 0)
		return UINT64_MAX;
	if (w->vouch && (size_t)s->node.id < w->cfg.max_nodes &&
	    w->vouch[s->node.id].gen == s->node.gen && w->vouch[s->node.id].last_ns > heard)
		heard = w->vouch[s->node.id].last_ns;
	return heard > UINT64_MAX - w->cfg.silent_ns ? UINT64_MAX : heard + w->cfg.silent_ns;
}

/* Rate v of a node's sample, into [lo, hi]: what the other nodes measured. */
static uint64_t clip(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Each of in[0..n)'s rates (weights weight[]) into rx[] and tx[]: the
 * samples of a node holding less than half of the weight clipped into the
 * range of the other nodes' samples; the rest as they are. A majority is
 * never clipped by a minority: a lone liar beside one honest node would
 * otherwise drag the honest samples to its own. */
static void clip_by_others(const struct sample *const *in, const double *weight, size_t n,
			   struct weighted *rx, struct weighted *tx)
{
	double total = 0;

	for (size_t i = 0; i < n; i++)
		total += weight[i];
	for (size_t i = 0; i < n; i++) {
		uint64_t rlo = UINT64_MAX, rhi = 0, tlo = UINT64_MAX, thi = 0;
		bool others = false;
		double own = 0;

		for (size_t j = 0; j < n; j++)
			if (same_node(in[i]->node, in[j]->node))
				own += weight[j];
		for (size_t j = 0; j < n && own * 2 < total; j++) {
			if (same_node(in[i]->node, in[j]->node))
				continue;
			others = true;
			rlo = in[j]->rx < rlo ? in[j]->rx : rlo;
			rhi = in[j]->rx > rhi ? in[j]->rx : rhi;
			tlo = in[j]->tx < tlo ? in[j]->tx : tlo;
			thi = in[j]->tx > thi ? in[j]->tx : thi;
		}
		rx[i].rate = others ? clip(in[i]->rx, rlo, rhi) : in[i]->rx;
		tx[i].rate = others ? clip(in[i]->tx, tlo, thi) : in[i]->tx;
	}
}

static int by_share(const void *a, const void *b)
{
	uint32_t x = ((const struct workload_source *)a)->share_pct;
	uint32_t y = ((const struct workload_source *)b)->share_pct;

	return x > y ? -1 : x < y;
}

/* The nodes in[0..n) (weights weight[]) rest on, largest share first. */
static void sources(struct wl *x, const struct sample *const *in, const double *weight,
		    size_t n, uint64_t now)
{
	struct workload_source g[WORKLOAD_SAMPLES];
	double share[WORKLOAD_SAMPLES] = { 0 }, total = 0;
	uint64_t newest[WORKLOAD_SAMPLES] = { 0 };
	size_t groups = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < groups && !same_node(g[k].node, in[i]->node))
			k++;
		if (k == groups)
			g[groups++] = (struct workload_source){ .node = in[i]->node };
		g[k].pods++;
		share[k] += weight[i];
		total += weight[i];
		newest[k] = in[i]->at_ns > newest[k] ? in[i]->at_ns : newest[k];
	}
	for (size_t k = 0; k < groups; k++) {
		g[k].share_pct = total > 0 ? (uint32_t)(share[k] * 100.0 / total + 0.5) : 0;
		g[k].age_ns = now > newest[k] ? now - newest[k] : 0;
	}
	qsort(g, groups, sizeof(g[0]), by_share);
	x->n_sources = (uint32_t)(groups < WORKLOAD_SOURCES ? groups : WORKLOAD_SOURCES);
	memcpy(x->sources, g, x->n_sources * sizeof(g[0]));
}

static void learn(struct workload *w, struct wl *x, uint64_t now)
{
	struct weighted rx[WORKLOAD_SAMPLES], tx[WORKLOAD_SAMPLES];
	const struct sample *in[WORKLOAD_SAMPLES];
	double weight[WORKLOAD_SAMPLES];
	uint64_t recheck = UINT64_MAX;
	size_t n = 0;
	bool was = x->learned;

	for (unsigned k = 0; k < WORKLOAD_SAMPLES; k++) {
		const struct sample *s = &x->s[k];
		uint64_t until;
		double age;

		if (!s->pod)
			continue;
		/* Its node stopped vouching for it: it counts no more. */
		until = silent_at(w, s);
		if (now >= until)
			continue;
		recheck = until < recheck ? until : recheck;
		age = now > s->at_ns ? (double)(now - s->at_ns) : 0;
		weight[n] = exp2(-age / (double)w->cfg.half_life_ns);
		in[n] = s;
		n++;
	}
	clip_by_others(in, weight, n, rx, tx);
	for (size_t i = 0; i < n; i++)
		rx[i].weight = tx[i].weight = weight[i];
	sources(x, in, weight, n, now);
	x->recheck_ns = recheck == UINT64_MAX ? 0 : recheck;
	x->learned_ns = now;
	x->learned = n > 0;
	if (n) {
		x->demand.rx_bytes_per_second = percentile(rx, n);
		x->demand.tx_bytes_per_second = percentile(tx, n);
		x->demand.pods = (uint32_t)n;
	} else {
		memset(&x->demand, 0, sizeof(x->demand));
	}
	if (x->learned != was)
		w->st.learned += x->learned ? 1 : (size_t)-1;
	x->dirty = false;
}

void workload_tick(struct workload *w, uint64_t now_ns)
{
	uint64_t forget = w->cfg.half_life_ns * WORKLOAD_FORGET_HALF_LIVES;
	int32_t idle;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->ix.high; i++) {
		struct wl *x = &w->w[i];

		if (slotindex_used(&w->ix, (int32_t)i) &&
		    (x->dirty || (x->recheck_ns && now_ns >= x->recheck_ns)))
			learn(w, x, now_ns);
	}
	/* The idle list is in the order they went idle; seen_ns only moves
	 * for live ones, so its head is the one unseen longest. */
	while ((idle = slotindex_oldest(&w->ix)) != NONE && now_ns > w->w[idle].seen_ns &&
	       now_ns - w->w[idle].seen_ns >= forget) {
		release(w, idle);
		w->st.forgotten++;
	}
	pthread_mutex_unlock(&w->lock);
}

bool workload_demand_of(struct workload *w, const struct workload_key *k,
			struct workload_demand *out)
{
	uint32_t h;
	int32_t i;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!w)
		return false;
	h = key_hash(k);
	pthread_mutex_lock(&w->lock);
	i = find(w, k, h);
	if (i != NONE && w->w[i].learned) {
		*out = w->w[i].demand;
		ok = true;
	}
	pthread_mutex_unlock(&w->lock);
	return ok;
}

const char *workload_label_of(struct workload *w, int32_t id, char *out, size_t cap)
{
	out[0] = '\0';
	pthread_mutex_lock(&w->lock);
	if (valid_id(w, id))
		workload_label(&w->w[id].key, out, cap);
	pthread_mutex_unlock(&w->lock);
	return out;
}

void workload_stats(struct workload *w, struct workload_stats *out)
{
	pthread_mutex_lock(&w->lock);
	*out = w->st;
	pthread_mutex_unlock(&w->lock);
}

static int by_key(const void *a, const void *b)
{
	const struct workload_key *x = &((const struct workload_entry *)a)->key;
	const struct workload_key *y = &((const struct workload_entry *)b)->key;
	int c = strcmp(x->ns, y->ns);

	if (!c)
		c = strcmp(x->kind, y->kind);
	return c ? c : strcmp(x->name, y->name);
}

long workload_list(struct workload *w, uint64_t now_ns, struct workload_entry **out)
{
	struct workload_entry *e;
	size_t n = 0;

	pthread_mutex_lock(&w->lock);
	e = calloc(w->st.tracked ? w->st.tracked : 1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&w->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->ix.high && n < w->st.tracked; i++) {
		const struct wl *x = &w->w[i];

		if (!slotindex_used(&w->ix, (int32_t)i))
			continue;
		e[n].key = x->key;
		e[n].pods = x->refs;
		e[n].learned = x->learned;
		e[n].demand = x->demand;
		e[n].age_ns = x->learned && now_ns > x->newest_ns ? now_ns - x->newest_ns : 0;
		e[n].n_sources = x->learned ? x->n_sources : 0;
		memcpy(e[n].sources, x->sources, e[n].n_sources * sizeof(x->sources[0]));
		/* The sources' ages as of the last tick: now's. */
		for (uint32_t k = 0; k < e[n].n_sources; k++)
			e[n].sources[k].age_ns += now_ns > x->learned_ns ? now_ns - x->learned_ns : 0;
		n++;
	}
	pthread_mutex_unlock(&w->lock);
	qsort(e, n, sizeof(*e), by_key);
	*out = e;
	return (long)n;
}
