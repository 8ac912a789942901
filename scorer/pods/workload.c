#include "pods/workload.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "nodename.h"

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
};

/* Slots sit in one array allocated at creation, chained into power-of-two
 * hash buckets by index; idle ones are also on a list, least recently
 * seen first. */
struct wl {
	int32_t next;			/* bucket chain, or the free list */
	int32_t idle_prev, idle_next;	/* the idle list; NONE at its ends */
	uint32_t hash;
	bool used;
	bool dirty;			/* sampled since the last tick */
	bool learned;
	uint32_t refs;			/* pods in the index */
	uint64_t seen_ns;		/* last ref, unref or sample */
	uint64_t newest_ns;		/* newest sample */
	struct workload_key key;
	struct workload_demand demand;
	struct sample s[WORKLOAD_SAMPLES];
};

struct workload {
	pthread_mutex_t lock;
	struct workload_config cfg;
	struct wl *w;
	int32_t *buckets;
	uint32_t mask;
	int32_t free_list;		/* slots freed */
	size_t high;			/* slots ever used: the rest are free, untouched */
	int32_t idle_head, idle_tail;
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
	uint32_t b = 16;

	if (!cfg->max_workloads || cfg->max_workloads > (1u << 22) || !cfg->half_life_ns)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	while (b < cfg->max_workloads * 2)
		b *= 2;
	w->mask = b - 1;
	/* calloc'd: pages are touched only as slots are used. */
	w->w = calloc(cfg->max_workloads, sizeof(*w->w));
	w->buckets = malloc((size_t)b * sizeof(*w->buckets));
	if (!w->w || !w->buckets || pthread_mutex_init(&w->lock, NULL)) {
		free(w->w);
		free(w->buckets);
		free(w);
		return NULL;
	}
	for (uint32_t i = 0; i < b; i++)
		w->buckets[i] = NONE;
	w->free_list = w->idle_head = w->idle_tail = NONE;
	return w;
}

void workload_destroy(struct workload *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w->w);
	free(w->buckets);
	free(w);
}

static int32_t find(const struct workload *w, const struct workload_key *k, uint32_t h)
{
	for (int32_t i = w->buckets[h & w->mask]; i != NONE; i = w->w[i].next)
		if (w->w[i].hash == h && key_eq(&w->w[i].key, k))
			return i;
	return NONE;
}

static void idle_push(struct workload *w, int32_t i)
{
	struct wl *x = &w->w[i];

	x->idle_next = NONE;
	x->idle_prev = w->idle_tail;
	if (w->idle_tail != NONE)
		w->w[w->idle_tail].idle_next = i;
	else
		w->idle_head = i;
	w->idle_tail = i;
}

static void idle_remove(struct workload *w, int32_t i)
{
	struct wl *x = &w->w[i];

	if (x->idle_prev != NONE)
		w->w[x->idle_prev].idle_next = x->idle_next;
	else
		w->idle_head = x->idle_next;
	if (x->idle_next != NONE)
		w->w[x->idle_next].idle_prev = x->idle_prev;
	else
		w->idle_tail = x->idle_prev;
	x->idle_prev = x->idle_next = NONE;
}

/* Frees idle slot i. */
static void release(struct workload *w, int32_t i)
{
	struct wl *x = &w->w[i];

	idle_remove(w, i);
	for (int32_t *at = &w->buckets[x->hash & w->mask]; *at != NONE; at = &w->w[*at].next)
		if (*at == i) {
			*at = x->next;
			break;
		}
	if (x->learned)
		w->st.learned--;
	x->used = false;
	x->next = w->free_list;
	w->free_list = i;
	w->st.tracked--;
}

/* A slot for a new workload: a free one, or the idle one seen least
 * recently; NONE when every slot holds a live workload. */
static int32_t take_slot(struct workload *w)
{
	int32_t i;

	if (w->free_list != NONE) {
		i = w->free_list;
		w->free_list = w->w[i].next;
		return i;
	}
	if (w->high < w->cfg.max_workloads)
		return (int32_t)w->high++;
	if (w->idle_head == NONE)
		return NONE;
	i = w->idle_head;
	release(w, i);
	w->st.evicted++;
	w->free_list = w->w[i].next;
	return i;
}

int32_t workload_ref(struct workload *w, const struct workload_key *k, uint64_t now_ns)
{
	uint32_t h = key_hash(k);
	int32_t i;
	struct wl *x;

	pthread_mutex_lock(&w->lock);
	i = find(w, k, h);
	if (i == NONE) {
		i = take_slot(w);
		if (i == NONE) {
			w->st.refused++;
			pthread_mutex_unlock(&w->lock);
			return -ENOSPC;
		}
		x = &w->w[i];
		memset(x, 0, sizeof(*x));
		x->used = true;
		x->hash = h;
		x->key = *k;
		x->idle_prev = x->idle_next = NONE;
		x->next = w->buckets[h & w->mask];
		w->buckets[h & w->mask] = i;
		w->st.tracked++;
	} else if (w->w[i].refs == 0) {
		idle_remove(w, i);
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
	return id >= 0 && (size_t)id < w->high && w->w[id].used;
}

void workload_unref(struct workload *w, int32_t id, uint64_t now_ns)
{
	pthread_mutex_lock(&w->lock);
	if (valid_id(w, id) && w->w[id].refs) {
		struct wl *x = &w->w[id];

		x->seen_ns = now_ns;
		if (--x->refs == 0) {
			w->st.live--;
			idle_push(w, id);
		}
	}
	pthread_mutex_unlock(&w->lock);
}

void workload_sample(struct workload *w, int32_t id, uint64_t pod, uint64_t rx, uint64_t tx,
		     uint64_t now_ns)
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
	*slot = (struct sample){ pod, rx, tx, now_ns };
	x->dirty = true;
	x->seen_ns = x->newest_ns = now_ns;
	w->st.samples++;
out:
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

static void learn(struct workload *w, struct wl *x, uint64_t now)
{
	struct weighted rx[WORKLOAD_SAMPLES], tx[WORKLOAD_SAMPLES];
	size_t n = 0;
	bool was = x->learned;

	for (unsigned k = 0; k < WORKLOAD_SAMPLES; k++) {
		const struct sample *s = &x->s[k];
		double age;

		if (!s->pod)
			continue;
		age = now > s->at_ns ? (double)(now - s->at_ns) : 0;
		rx[n].weight = tx[n].weight = exp2(-age / (double)w->cfg.half_life_ns);
		rx[n].rate = s->rx;
		tx[n].rate = s->tx;
		n++;
	}
	x->learned = n > 0;
	if (n) {
		x->demand.rx_bytes_per_second = percentile(rx, n);
		x->demand.tx_bytes_per_second = percentile(tx, n);
		x->demand.pods = (uint32_t)n;
	}
	if (x->learned != was)
		w->st.learned += x->learned ? 1 : (size_t)-1;
	x->dirty = false;
}

void workload_tick(struct workload *w, uint64_t now_ns)
{
	uint64_t forget = w->cfg.half_life_ns * WORKLOAD_FORGET_HALF_LIVES;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->high; i++) {
		struct wl *x = &w->w[i];

		if (x->used && x->dirty)
			learn(w, x, now_ns);
	}
	/* The idle list is in the order they went idle; seen_ns only moves
	 * for live ones, so its head is the one unseen longest. */
	while (w->idle_head != NONE && now_ns > w->w[w->idle_head].seen_ns &&
	       now_ns - w->w[w->idle_head].seen_ns >= forget) {
		release(w, w->idle_head);
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
	for (size_t i = 0; i < w->high && n < w->st.tracked; i++) {
		const struct wl *x = &w->w[i];

		if (!x->used)
			continue;
		e[n].key = x->key;
		e[n].pods = x->refs;
		e[n].learned = x->learned;
		e[n].demand = x->demand;
		e[n].age_ns = x->learned && now_ns > x->newest_ns ? now_ns - x->newest_ns : 0;
		n++;
	}
	pthread_mutex_unlock(&w->lock);
	qsort(e, n, sizeof(*e), by_key);
	*out = e;
	return (long)n;
}
