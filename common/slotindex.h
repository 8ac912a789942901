/* A fixed set of slots found by key: the one index structure behind the
 * in-flight pods, the pod index and the workloads (scorer/pods/).
 *
 * The caller keeps its records in its own array of cap entries, numbered
 * as the slots are; the index keeps, per slot, what finds and orders them:
 *  - hash chains: power-of-two buckets (at least twice the slots, so
 *    chains stay short), each a chain of slot numbers. The caller hashes
 *    its key and compares keys itself while walking a chain
 *    (slotindex_first()/slotindex_next() stop only at slots of that hash);
 *  - a free list: a slot put back is the next one taken; until then,
 *    slots are taken in order, never touched before (calloc'd: a large
 *    cap costs memory only as it is used) unless SLOTINDEX_TOUCH asked
 *    for every page at once (a request path then never faults one in);
 *  - one queue, oldest first (an LRU list): the caller decides what it
 *    holds (unconfirmed assumptions, idle workloads) and which gives way
 *    when the slots are full (slotindex_oldest()).
 * Nothing grows after slotindex_init(); no slot number changes while it
 * is used. Slot numbers are int32_t, SLOTINDEX_NONE ends every list.
 *
 * Not thread-safe: each owner holds its own lock around it. The index
 * owns its arrays (slotindex_fini()); the records are the caller's. */
#ifndef NETSCHED_SLOTINDEX_H
#define NETSCHED_SLOTINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SLOTINDEX_NONE (-1)
/* At most this many slots (slot numbers and bucket counts stay in range). */
#define SLOTINDEX_MAX_SLOTS (1u << 24)

struct slotindex_slot {
	int32_t next;		/* its hash chain, or the free list */
	int32_t older, newer;	/* the queue */
	uint32_t hash;
	bool used;
	bool queued;
};

struct slotindex {
	struct slotindex_slot *slot;	/* cap of them */
	int32_t *bucket;		/* mask + 1 chain heads */
	uint32_t mask;
	size_t cap;
	size_t high;			/* slots ever taken: the rest untouched */
	size_t used;
	int32_t free;			/* slots put back */
	int32_t oldest, newest;		/* the queue */
};

/* slotindex_init()'s flags. */
#define SLOTINDEX_TOUCH 1u	/* every slot's page now, not on first use */

/* cap slots (1..SLOTINDEX_MAX_SLOTS): 0, -EINVAL or -ENOMEM (then
 * nothing to fini). */
int slotindex_init(struct slotindex *ix, size_t cap, unsigned flags);
/* Frees the arrays; a zeroed or failed index is fine. */
void slotindex_fini(struct slotindex *ix);

/* A free slot, chained under hash and marked used: the last put back,
 * else the first never taken; SLOTINDEX_NONE when all are used (the
 * caller may then free its queue's oldest and ask again). */
int32_t slotindex_take(struct slotindex *ix, uint32_t hash);

/* Slot i (used) leaves its chain and the queue and is free again. */
void slotindex_put(struct slotindex *ix, int32_t i);

static inline bool slotindex_full(const struct slotindex *ix)
{
	return ix->free == SLOTINDEX_NONE && ix->high >= ix->cap;
}

static inline bool slotindex_used(const struct slotindex *ix, int32_t i)
{
	return i >= 0 && (size_t)i < ix->high && ix->slot[i].used;
}

/* The slots chained under hash, newest first: walk with
 * for (i = slotindex_first(ix, h); i != SLOTINDEX_NONE; i = slotindex_next(ix, i)). */
static inline int32_t slotindex_skip(const struct slotindex *ix, int32_t i, uint32_t hash)
{
	while (i != SLOTINDEX_NONE && ix->slot[i].hash != hash)
		i = ix->slot[i].next;
	return i;
}

static inline int32_t slotindex_first(const struct slotindex *ix, uint32_t hash)
{
	return slotindex_skip(ix, ix->bucket[hash & ix->mask], hash);
}

static inline int32_t slotindex_next(const struct slotindex *ix, int32_t i)
{
	return slotindex_skip(ix, ix->slot[i].next, ix->slot[i].hash);
}

/* For records keyed on bytes: the slot under hash whose key (key_of(ctx,
 * slot, &its length)) is key[0..len); SLOTINDEX_NONE when none. Inline,
 * so a constant key_of costs no call. */
static inline int32_t slotindex_find(const struct slotindex *ix, uint32_t hash, const void *key,
				     size_t len,
				     const void *(*key_of)(const void *ctx, int32_t slot, size_t *len),
				     const void *ctx)
{
	for (int32_t i = slotindex_first(ix, hash); i != SLOTINDEX_NONE; i = slotindex_next(ix, i)) {
		size_t n;
		const void *k = key_of(ctx, i, &n);

		if (n == len && memcmp(k, key, len) == 0)
			return i;
	}
	return SLOTINDEX_NONE;
}

/* The queue, oldest first. Slot i (used) joins it as the newest, moving
 * there if it was in it already; leaves it (if in it). */
void slotindex_enqueue(struct slotindex *ix, int32_t i);
void slotindex_dequeue(struct slotindex *ix, int32_t i);

static inline bool slotindex_queued(const struct slotindex *ix, int32_t i)
{
	return ix->slot[i].queued;
}

/* SLOTINDEX_NONE when the queue is empty. */
static inline int32_t slotindex_oldest(const struct slotindex *ix)
{
	return ix->oldest;
}

#endif
