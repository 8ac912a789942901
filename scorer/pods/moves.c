#include "pods/moves.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"

#define NONE (-1)

/* --------------------------------------------------------------- table */

struct row {
	struct movereq rq;
	uint64_t from_hash, to_hash, wl_hash;
	uint64_t created_ns, expires_ns;
	int32_t next_from, next_to, next_wl;	/* chains; the free list through next_from */
	bool used;
	bool landed;
};

struct moves {
	pthread_rwlock_t lock;
	size_t max;
	struct row *rows;
	int32_t *from_buckets, *to_buckets, *wl_buckets;
	uint32_t mask;
	int32_t free;
	atomic_size_t in_use;		/* rows used, expired or not: 0 skips every lookup */
	uint64_t accepted, replaced, full;
	atomic_uint_fast64_t landed;
};

struct moves *moves_create(size_t max)
{
	struct moves *m;
	uint32_t b = 16;

	if (!max || max > MOVES_MAX_MAX)
		return NULL;
	while (b < max * 2)
		b *= 2;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->max = max;
	m->mask = b - 1;
	m->rows = calloc(max, sizeof(*m->rows));
	m->from_buckets = malloc(b * sizeof(int32_t));
	m->to_buckets = malloc(b * sizeof(int32_t));
	m->wl_buckets = malloc(b * sizeof(int32_t));
	if (!m->rows || !m->from_buckets || !m->to_buckets || !m->wl_buckets ||
	    pthread_rwlock_init(&m->lock, NULL)) {
		free(m->rows);
		free(m->from_buckets);
		free(m->to_buckets);
		free(m->wl_buckets);
		free(m);
		return NULL;
	}
	for (uint32_t i = 0; i < b; i++)
		m->from_buckets[i] = m->to_buckets[i] = m->wl_buckets[i] = NONE;
	for (size_t i = 0; i < max; i++)
		m->rows[i].next_from = i + 1 < max ? (int32_t)(i + 1) : NONE;
	m->free = 0;
	return m;
}

void moves_destroy(struct moves *m)
{
	if (!m)
		return;
	pthread_rwlock_destroy(&m->lock);
	free(m->rows);
	free(m->from_buckets);
	free(m->to_buckets);
	free(m->wl_buckets);
	free(m);
}

static bool live(const struct row *r, uint64_t now)
{
	return r->used && now < r->expires_ns;
}

static uint64_t name_hash(const char *s)
{
	return hash_fnv1a(s, strlen(s));
}

enum chain { BY_FROM, BY_TO, BY_WORKLOAD };

static int32_t *next_of(struct row *r, enum chain c)
{
	return c == BY_FROM ? &r->next_from : c == BY_TO ? &r->next_to : &r->next_wl;
}

static void unlink_chain(struct moves *m, int32_t *head, int32_t i, enum chain c)
{
	for (int32_t *p = head; *p != NONE; p = next_of(&m->rows[*p], c))
		if (*p == i) {
			*p = *next_of(&m->rows[i], c);
			return;
		}
}

/* Frees row i (used): out of both chains, onto the free list. */
static void release(struct moves *m, int32_t i)
{
	struct row *r = &m->rows[i];

	unlink_chain(m, &m->from_buckets[r->from_hash & m->mask], i, BY_FROM);
	unlink_chain(m, &m->to_buckets[r->to_hash & m->mask], i, BY_TO);
	unlink_chain(m, &m->wl_buckets[r->wl_hash & m->mask], i, BY_WORKLOAD);
	memset(r, 0, sizeof(*r));
	r->next_from = m->free;
	r->next_to = r->next_wl = NONE;
	m->free = i;
	atomic_fetch_sub(&m->in_use, 1);
}

/* A free row, releasing an expired one if none is free; NONE: full. */
static int32_t take_row(struct moves *m, uint64_t now)
{
	int32_t i;

	if (m->free == NONE)
		for (size_t k = 0; k < m->max; k++)
			if (m->rows[k].used && !live(&m->rows[k], now)) {
				release(m, (int32_t)k);
				break;
			}
	i = m->free;
	if (i != NONE)
		m->free = m->rows[i].next_from;
	return i;
}

int moves_put(struct moves *m, const struct movereq *rq, uint64_t now_ns)
{
	int rc = 0;
	int32_t i;
	struct row *r;

	pthread_rwlock_wrlock(&m->lock);
	for (size_t k = 0; k < m->max; k++)
		if (m->rows[k].used && !strcmp(m->rows[k].rq.uid, rq->uid)) {
			release(m, (int32_t)k);
			rc = 1;
			break;
		}
	i = take_row(m, now_ns);
	if (i == NONE) {
		m->full++;
		pthread_rwlock_unlock(&m->lock);
		return -ENOSPC;
	}
	r = &m->rows[i];
	*r = (struct row){
		.rq = *rq,
		.from_hash = name_hash(rq->from),
		.to_hash = name_hash(rq->to),
		.wl_hash = name_hash(rq->workload),
		.created_ns = now_ns,
		.expires_ns = now_ns + (uint64_t)rq->hold_s * NS_PER_SEC,
		.used = true,
	};
	r->next_from = m->from_buckets[r->from_hash & m->mask];
	m->from_buckets[r->from_hash & m->mask] = i;
	r->next_to = m->to_buckets[r->to_hash & m->mask];
	m->to_buckets[r->to_hash & m->mask] = i;
	r->next_wl = m->wl_buckets[r->wl_hash & m->mask];
	m->wl_buckets[r->wl_hash & m->mask] = i;
	atomic_fetch_add(&m->in_use, 1);
	m->accepted++;
	m->replaced += rc == 1;
	pthread_rwlock_unlock(&m->lock);
	return rc;
}

static bool same_name(const char *a, const char *s, size_t len)
{
	return strlen(a) == len && !memcmp(a, s, len);
}

static uint32_t seconds_up(uint64_t ns)
{
	return (uint32_t)((ns + NS_PER_SEC - 1) / NS_PER_SEC);
}

void moves_mine(struct moves *m, const char *wl, size_t wl_len, uint64_t now_ns,
		struct moves_mine *out)
{
	uint64_t h;

	out->n = 0;
	if (!m || !wl_len || !atomic_load_explicit(&m->in_use, memory_order_relaxed))
		return;
	h = hash_fnv1a(wl, wl_len);
	pthread_rwlock_rdlock(&m->lock);
	for (int32_t j = m->wl_buckets[h & m->mask]; j != NONE && out->n < MOVES_MINE_MAX;
	     j = m->rows[j].next_wl) {
		const struct row *r = &m->rows[j];
		struct moves_mine_row *o;

		if (r->wl_hash != h || !live(r, now_ns) || !same_name(r->rq.workload, wl, wl_len))
			continue;
		o = &out->rows[out->n++];
		o->from_hash = r->from_hash;
		o->to_hash = r->to_hash;
		memcpy(o->from, r->rq.from, sizeof(o->from));
		memcpy(o->to, r->rq.to, sizeof(o->to));
		o->rx = r->landed ? 0 : r->rq.rx_bytes_per_second;
		o->tx = r->landed ? 0 : r->rq.tx_bytes_per_second;
		o->hold_s = r->rq.hold_s;
		o->remaining_s = seconds_up(r->expires_ns - now_ns);
	}
	pthread_rwlock_unlock(&m->lock);
}

size_t moves_reserved_each(struct moves *m, const struct namekey *keys, size_t n, uint64_t now_ns,
			   void (*fn)(size_t i, uint64_t rx, uint64_t tx, void *ctx), void *ctx)
{
	size_t had = 0;

	if (!m || !atomic_load_explicit(&m->in_use, memory_order_relaxed))
		return 0;
	pthread_rwlock_rdlock(&m->lock);
	for (size_t i = 0; i < n; i++) {
		uint64_t rx = 0, tx = 0;
		bool any = false;

		for (int32_t j = m->to_buckets[keys[i].hash & m->mask]; j != NONE;
		     j = m->rows[j].next_to) {
			const struct row *r = &m->rows[j];

			if (r->to_hash != keys[i].hash || !live(r, now_ns) || r->landed ||
			    !same_name(r->rq.to, keys[i].s, keys[i].len))
				continue;
			rx = rx + r->rq.rx_bytes_per_second;	/* each at most 400 GB/s */
			tx = tx + r->rq.tx_bytes_per_second;
			any = true;
		}
		if (any) {
			fn(i, rx, tx, ctx);
			had++;
		}
	}
	pthread_rwlock_unlock(&m->lock);
	return had;
}

bool moves_active(struct moves *m)
{
	return m && atomic_load_explicit(&m->in_use, memory_order_relaxed);
}

size_t moves_held_on(struct moves *m, const char *name, size_t len, uint64_t now_ns)
{
	uint64_t h = hash_fnv1a(name, len);
	size_t n = 0;

	if (!m || !atomic_load_explicit(&m->in_use, memory_order_relaxed))
		return 0;
	pthread_rwlock_rdlock(&m->lock);
	for (int32_t j = m->from_buckets[h & m->mask]; j != NONE; j = m->rows[j].next_from) {
		const struct row *r = &m->rows[j];

		n += r->from_hash == h && live(r, now_ns) && same_name(r->rq.from, name, len);
	}
	pthread_rwlock_unlock(&m->lock);
	return n;
}

size_t moves_bound(struct moves *m, const char *uid, size_t uid_len, const char *node,
		   size_t node_len, const char *wl, size_t wl_len, uint64_t bound_ns,
		   uint64_t now_ns)
{
	uint64_t h = hash_fnv1a(node, node_len);
	size_t n = 0;

	if (!m || !wl_len || !atomic_load_explicit(&m->in_use, memory_order_relaxed))
		return 0;
	pthread_rwlock_wrlock(&m->lock);
	for (int32_t j = m->to_buckets[h & m->mask]; j != NONE; j = m->rows[j].next_to) {
		struct row *r = &m->rows[j];

		if (r->to_hash != h || !live(r, now_ns) || r->landed ||
		    !same_name(r->rq.to, node, node_len) || !same_name(r->rq.workload, wl, wl_len) ||
		    same_name(r->rq.uid, uid, uid_len) || bound_ns + NS_PER_SEC < r->created_ns)
			continue;
		r->landed = true;
		n++;
	}
	pthread_rwlock_unlock(&m->lock);
	if (n)
		atomic_fetch_add(&m->landed, n);
	return n;
}

void moves_tick(struct moves *m, uint64_t now_ns)
{
	if (!m || !atomic_load_explicit(&m->in_use, memory_order_relaxed))
		return;
	pthread_rwlock_wrlock(&m->lock);
	for (size_t k = 0; k < m->max; k++)
		if (m->rows[k].used && !live(&m->rows[k], now_ns))
			release(m, (int32_t)k);
	pthread_rwlock_unlock(&m->lock);
}

static int by_route(const void *a, const void *b)
{
	const struct moves_entry *x = a, *y = b;
	int c = strcmp(x->rq.from, y->rq.from);

	if (!c)
		c = strcmp(x->rq.to, y->rq.to);
	return c ? c : strcmp(x->rq.uid, y->rq.uid);
}

long moves_list(struct moves *m, uint64_t now_ns, struct moves_entry **out)
{
	struct moves_entry *e;
	size_t n = 0;

	e = calloc(m ? m->max : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (m) {
		pthread_rwlock_rdlock(&m->lock);
		for (size_t k = 0; k < m->max; k++) {
			const struct row *r = &m->rows[k];

			if (!live(r, now_ns))
				continue;
			e[n].rq = r->rq;
			e[n].remaining_ns = r->expires_ns - now_ns;
			e[n].landed = r->landed;
			n++;
		}
		pthread_rwlock_unlock(&m->lock);
	}
	qsort(e, n, sizeof(*e), by_route);
	*out = e;
	return (long)n;
}

void moves_stats(struct moves *m, uint64_t now_ns, struct moves_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	pthread_rwlock_rdlock(&m->lock);
	out->accepted = m->accepted;
	out->replaced = m->replaced;
	out->full = m->full;
	out->max = m->max;
	if (atomic_load_explicit(&m->in_use, memory_order_relaxed))
		for (size_t k = 0; k < m->max; k++)
			if (live(&m->rows[k], now_ns)) {
				out->holds++;
				out->reservations += !m->rows[k].landed;
			}
	pthread_rwlock_unlock(&m->lock);
	out->landed = atomic_load(&m->landed);
}

const char *moves_workload_short(const char *label)
{
	const char *slash = strrchr(label, '/');

	return slash ? slash + 1 : label;
}
