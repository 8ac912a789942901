#include "nodes/table.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "log.h"
#include "units.h"

/* Open addressing with linear probing over a power-of-two index at most half
 * full, so a probe sequence always ends at an empty entry. Nodes leave only
 * by eviction, with backward-shift deletion (no tombstones).
 *
 * The index holds positions; the nodes themselves sit densely in an array
 * of max_nodes. A prioritize call looks up thousands of nodes in random
 * order: with the nodes inside a sparse array of twice as many ~370-byte
 * slots (12 MB at 10,000 nodes), nearly every lookup missed the caches and
 * the TLB, and 5,000 lookups were half of the request's CPU (perf). */
struct table {
	pthread_rwlock_t lock;
	size_t max_nodes;
	size_t count;
	size_t mask;
	uint32_t *index;		/* mask + 1 entries: 0 empty, else 1 + position */
	struct table_node *nodes;	/* max_nodes entries, the first count in use */
	uint64_t evict_after_ns;	/* 0: never evict */
	uint64_t resync_after_ns;	/* 0: a node's window order is never reset */
	uint64_t no_stale_until_ns;	/* no node can be stale before this */
	uint64_t evictions;
	struct filter_config filter;	/* maxUtilization; off until table_filter() */
	enum policy_direction direction;
};

struct table *table_create(size_t max_nodes)
{
	struct table *t;
	size_t n = 16;

	/* Positions are kept in uint32_t, the index is twice max_nodes. */
	if (max_nodes == 0 || max_nodes > UINT32_MAX / 4)
		return NULL;
	while (n < max_nodes * 2)
		n *= 2;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->index = calloc(n, sizeof(*t->index));
	t->nodes = calloc(max_nodes, sizeof(*t->nodes));
	if (!t->index || !t->nodes)
		goto out_free_arrays;
	if (pthread_rwlock_init(&t->lock, NULL))
		goto out_free_arrays;
	t->max_nodes = max_nodes;
	t->mask = n - 1;
	return t;

out_free_arrays:
	free(t->index);
	free(t->nodes);
	free(t);
	return NULL;
}

void table_destroy(struct table *t)
{
	if (!t)
		return;
	pthread_rwlock_destroy(&t->lock);
	free(t->index);
	free(t->nodes);
	free(t);
}

/* Unkeyed: the table is bounded and probing is over a half-empty array. */
static size_t hash_name(const char *name, size_t len)
{
	return (size_t)hash_fnv1a(name, len);
}

/* The index entry holding name's position, or the empty entry where it
 * would go; h is hash_name(name, len). */
static uint32_t *find_slot_hashed(const struct table *t, const char *name, size_t len, size_t h)
{
	size_t i = h & t->mask;

	for (;;) {
		uint32_t *e = &t->index[i];
		const char *have;

		if (!*e)
			return e;
		have = t->nodes[*e - 1].name;
		/* len <= NODENAME_MAX_LEN, so have[len] is inside the name:
		 * no strnlen() over every probed name (a tenth of a 5,000-name
		 * prioritize went there). */
		if (memcmp(have, name, len) == 0 && have[len] == '\0')
			return e;
		i = (i + 1) & t->mask;
	}
}

static uint32_t *find_slot(const struct table *t, const char *name, size_t len)
{
	return find_slot_hashed(t, name, len, hash_name(name, len));
}

/* Index entries are written under the write lock, but table_prefetch()
 * reads them without one: both sides atomic (relaxed: only the value
 * matters), so that read is no data race. */
static void set_entry(uint32_t *e, uint32_t v)
{
	__atomic_store_n(e, v, __ATOMIC_RELAXED);
}

static size_t home_of(const struct table *t, uint32_t e)
{
	const char *name = t->nodes[e - 1].name;

	return hash_name(name, strlen(name)) & t->mask;
}

/* table_node.unread_ns of r: the interface furthest behind. */
static uint64_t unread_ns(const struct report *r)
{
	/* An agent that says failed samples says its interval; if not, 1 s. */
	uint64_t step = (r->sample_interval_ms ? r->sample_interval_ms : 1000) * NS_PER_MS;
	uint64_t worst = 0;

	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		const struct report_iface *f = &r->ifaces[i];
		unsigned __int128 ns = (unsigned __int128)f->failed_samples * step;

		if (!f->failed_samples)
			continue;
		if (f->samples == 0 || ns >= UINT64_MAX)
			return UINT64_MAX; /* no figures at all: not data */
		if (ns > worst)
			worst = (uint64_t)ns;
	}
	return worst;
}

static void summarize(const struct report *r, struct table_node *n)
{
	n->unread_ns = unread_ns(r);
	memset(&n->traffic, 0, sizeof(n->traffic));
	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		if (i == 0)
			n->traffic = r->ifaces[0].traffic;
		else
			traffic_add(&n->traffic, &r->ifaces[i].traffic);
	}
	n->n_ifaces = r->n_ifaces;
	if (r->n_ifaces > 1)
		snprintf(n->ifaces_label, sizeof(n->ifaces_label), "%s+%u", r->ifaces[0].name,
			 r->n_ifaces - 1);
	else
		snprintf(n->ifaces_label, sizeof(n->ifaces_label), "%s",
			 r->n_ifaces ? r->ifaces[0].name : "no interface");
}

void table_filter(struct table *t, const struct filter_config *cfg, enum policy_direction dir)
{
	pthread_rwlock_wrlock(&t->lock);
	t->filter = *cfg;
	t->direction = dir;
	pthread_rwlock_unlock(&t->lock);
}

/* A maxUtilization transition, logged once the lock is released. */
struct transition {
	enum filter_event ev;
	char node[NODENAME_MAX_LEN + 1];
	char label[REPORT_MAX_IFNAME_LEN + 12];
	const char *which;
	uint64_t rate, link;
	struct filter_config cfg;
};

static void step_filter(struct table *t, struct table_node *n, uint64_t now, struct transition *tr)
{
	tr->rate = filter_rate(t->direction, &n->traffic, &tr->which);
	tr->link = n->traffic.link_bytes_per_second;
	tr->ev = filter_step(&t->filter, &n->held, tr->rate, tr->link, now);
	if (tr->ev == FILTER_SAME)
		return;
	tr->cfg = t->filter;
	memcpy(tr->node, n->name, sizeof(tr->node));
	memcpy(tr->label, n->ifaces_label, sizeof(tr->label));
}

static void log_transition(const struct transition *tr)
{
	unsigned pct = tr->link ? (unsigned)((unsigned __int128)tr->rate * 100 / tr->link) : 0;

	if (tr->ev == FILTER_CROSSED)
		log_info("table", "%s: %s %s at %u%% of its link, above maxUtilization %u%%: filtered "
			 "until at most %u%% and at least %llu ms", tr->node, tr->label, tr->which,
			 pct, tr->cfg.max_utilization_pct, filter_release_pct(&tr->cfg),
			 (unsigned long long)tr->cfg.hold_ms);
	else if (tr->ev == FILTER_RELEASED)
		log_info("table", "%s: %s %s at %u%% of its link (release at %u%%): schedulable again",
			 tr->node, tr->label, tr->which, pct, filter_release_pct(&tr->cfg));
}

void table_evict_after(struct table *t, uint64_t age_ns)
{
	pthread_rwlock_wrlock(&t->lock);
	t->evict_after_ns = age_ns;
	pthread_rwlock_unlock(&t->lock);
}

void table_resync_after(struct table *t, uint64_t age_ns)
{
	pthread_rwlock_wrlock(&t->lock);
	t->resync_after_ns = age_ns;
	pthread_rwlock_unlock(&t->lock);
}

/* The order rules of enum table_result, for a report r of known node n. */
static enum table_result order(const struct table *t, const struct table_node *n,
			       const struct report *r, uint64_t now)
{
	bool same = n->instance_id == r->instance_id;

	if (r->window_end_unix_ms > n->window_end_unix_ms)
		return TABLE_APPLIED;
	/* Two reports within a millisecond: the instance's own order. */
	if (same && r->seq > n->seq && r->window_end_unix_ms == n->window_end_unix_ms)
		return TABLE_APPLIED;
	if (same && r->seq > n->seq && t->resync_after_ns &&
	    table_node_age_ns(n, now) > t->resync_after_ns)
		return TABLE_APPLIED;
	return same && r->seq <= n->seq ? TABLE_DUPLICATE : TABLE_OUTDATED;
}

/* The evictions, or the count, read under the lock. */
static uint64_t read_locked(struct table *t, bool evictions)
{
	uint64_t n;

	pthread_rwlock_rdlock(&t->lock);
	n = evictions ? t->evictions : t->count;
	pthread_rwlock_unlock(&t->lock);
	return n;
}

uint64_t table_evictions(struct table *t)
{
	return read_locked(t, true);
}

/* Removes the node at position pos. Its index entry is emptied and later
 * members of its probe run move back, so every remaining name is still found
 * from its home entry (Knuth's Algorithm R); then the last node moves into
 * the hole, so the nodes stay dense. */
static void remove_node(struct table *t, size_t pos)
{
	const struct table_node *gone = &t->nodes[pos];
	uint32_t *e = find_slot(t, gone->name, strlen(gone->name));
	size_t i = (size_t)(e - t->index), j = i, last = t->count - 1;

	for (;;) {
		size_t k;

		j = (j + 1) & t->mask;
		if (!t->index[j])
			break;
		k = home_of(t, t->index[j]);
		/* Entry j may stay if its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		set_entry(&t->index[i], t->index[j]);
		i = j;
	}
	set_entry(&t->index[i], 0);
	if (pos != last) {
		const struct table_node *moved = &t->nodes[last];

		set_entry(find_slot(t, moved->name, strlen(moved->name)), (uint32_t)pos + 1);
		t->nodes[pos] = *moved;
	}
	memset(&t->nodes[last], 0, sizeof(t->nodes[last]));
	t->count--;
}

/* Makes room by evicting the stalest node, if any node is stale. A full
 * table of fresh nodes is scanned at most once per evict_after period, so
 * a flood of new names cannot turn every report into a full scan. */
static bool evict_stalest(struct table *t, uint64_t now)
{
	size_t stalest = SIZE_MAX;
	uint64_t oldest = UINT64_MAX;

	if (!t->evict_after_ns || now < t->no_stale_until_ns)
		return false;
	for (size_t i = 0; i < t->count; i++)
		if (t->nodes[i].arrival_mono_ns < oldest) {
			oldest = t->nodes[i].arrival_mono_ns;
			stalest = i;
		}
	if (stalest == SIZE_MAX || table_node_age_ns(&t->nodes[stalest], now) <= t->evict_after_ns) {
		t->no_stale_until_ns = oldest == UINT64_MAX ? now : oldest + t->evict_after_ns + 1;
		return false;
	}
	remove_node(t, stalest);
	t->evictions++;
	return true;
}

enum table_result table_apply(struct table *t, const struct report *r, uint64_t now_mono_ns)
{
	return table_apply_skewed(t, r, now_mono_ns, 0);
}

enum table_result table_apply_skewed(struct table *t, const struct report *r,
				     uint64_t now_mono_ns, int64_t clock_skew_ms)
{
	size_t len = strnlen(r->node, sizeof(r->node));
	enum table_result res = TABLE_APPLIED;
	struct transition tr = { .ev = FILTER_SAME };
	struct table_node *n;
	uint32_t *e;

	pthread_rwlock_wrlock(&t->lock);
	e = find_slot(t, r->node, len);
	if (*e) {
		n = &t->nodes[*e - 1];
		res = order(t, n, r, now_mono_ns);
		if (res != TABLE_APPLIED)
			goto out_unlock;
	} else {
		if (t->count >= t->max_nodes) {
			if (!evict_stalest(t, now_mono_ns)) {
				res = TABLE_FULL;
				goto out_unlock;
			}
			/* The eviction may have moved entries: look again. */
			e = find_slot(t, r->node, len);
			res = TABLE_EVICTED;
		}
		n = &t->nodes[t->count++];
		memset(n, 0, sizeof(*n)); /* no state from an evicted node */
		set_entry(e, (uint32_t)t->count);
		memcpy(n->name, r->node, len);
		n->name[len] = '\0';
	}
	n->instance_id = r->instance_id;
	n->seq = r->seq;
	n->window_end_unix_ms = r->window_end_unix_ms;
	n->arrival_mono_ns = now_mono_ns;
	n->clock_skew_ms = clock_skew_ms;
	summarize(r, n);
	n->reports++;
	step_filter(t, n, now_mono_ns, &tr);
out_unlock:
	pthread_rwlock_unlock(&t->lock);
	log_transition(&tr);
	return res;
}

/* table_get()'s copy: the figures, and the name from the caller: it is
 * the one found, and the rest of its 254 bytes are zeros in lines no
 * lookup needs to fetch (a prioritize looks up thousands of nodes; the
 * whole-node copy was a tenth of its CPU, perf). */
static void copy_node(size_t i, const struct table_node *n, void *ctx)
{
	struct table_node *out = ctx;

	(void)i;
	memcpy(out, n, offsetof(struct table_node, name));
	out->name[0] = '\0';
}

bool table_get(struct table *t, const char *name, size_t len, struct table_node *out)
{
	struct namekey key = namekey_of(name, len);

	if (!table_get_each(t, &key, 1, copy_node, out))
		return false;
	memcpy(out->name, name, len);
	out->name[len] = '\0';
	return true;
}

size_t table_get_each(struct table *t, const struct namekey *keys, size_t n,
		      void (*fn)(size_t i, const struct table_node *node, void *ctx), void *ctx)
{
	size_t found = 0;

	pthread_rwlock_rdlock(&t->lock);
	for (size_t i = 0; i < n; i++) {
		const uint32_t *e;

		if (i + TABLE_PREFETCH_AHEAD < n)
			table_prefetch(t, &keys[i + TABLE_PREFETCH_AHEAD]);

		/* find_slot() reads have[len]: inside the name only up to
		 * NODENAME_MAX_LEN. */
		if (keys[i].len == 0 || keys[i].len > NODENAME_MAX_LEN)
			continue;
		e = find_slot_hashed(t, keys[i].s, keys[i].len, (size_t)keys[i].hash);
		if (*e) {
			fn(i, &t->nodes[*e - 1], ctx);
			found++;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	return found;
}

void table_prefetch(const struct table *t, const struct namekey *key)
{
	uint32_t e = __atomic_load_n(&t->index[(size_t)key->hash & t->mask], __ATOMIC_RELAXED);

	/* Without the lock the entry may be stale or another name's (a probe
	 * run moved): a wasted fetch, never a wrong answer, and always within
	 * the nodes array. */
	if (e && e <= t->max_nodes)
		__builtin_prefetch(&t->nodes[e - 1]);
}

size_t table_snapshot(struct table *t, struct table_node *out, size_t cap)
{
	size_t n = 0;

	pthread_rwlock_rdlock(&t->lock);
	for (; n < t->count && n < cap; n++)
		out[n] = t->nodes[n];
	pthread_rwlock_unlock(&t->lock);
	return n;
}

void table_each(struct table *t, void (*fn)(const struct table_node *n, void *ctx), void *ctx)
{
	pthread_rwlock_rdlock(&t->lock);
	for (size_t i = 0; i < t->count; i++)
		fn(&t->nodes[i], ctx);
	pthread_rwlock_unlock(&t->lock);
}

size_t table_count(struct table *t)
{
	return (size_t)read_locked(t, false);
}

uint64_t table_node_age_ns(const struct table_node *n, uint64_t now_ns)
{
	return now_ns > n->arrival_mono_ns ? now_ns - n->arrival_mono_ns : 0;
}

uint64_t table_node_data_age_ns(const struct table_node *n, uint64_t now_ns)
{
	return units_add_sat(table_node_age_ns(n, now_ns), n->unread_ns);
}

size_t table_count_fresh(struct table *t, uint64_t now_ns, uint64_t max_age_ns)
{
	size_t n = 0;

	pthread_rwlock_rdlock(&t->lock);
	for (size_t i = 0; i < t->count; i++)
		n += table_node_data_age_ns(&t->nodes[i], now_ns) <= max_age_ns;
	pthread_rwlock_unlock(&t->lock);
	return n;
}

size_t table_capacity(const struct table *t)
{
	return t->max_nodes;
}
