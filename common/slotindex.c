#include "slotindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int slotindex_init(struct slotindex *ix, size_t cap, unsigned flags)
{
	uint32_t b = 16;

	memset(ix, 0, sizeof(*ix));
	if (!cap || cap > SLOTINDEX_MAX_SLOTS)
		return -EINVAL;
	while (b < cap * 2)
		b *= 2;
	/* calloc'd: a slot's page is touched when the slot is first taken. */
	ix->slot = calloc(cap, sizeof(*ix->slot));
	ix->bucket = malloc((size_t)b * sizeof(*ix->bucket));
	if (!ix->slot || !ix->bucket) {
		slotindex_fini(ix);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < b; i++)
		ix->bucket[i] = SLOTINDEX_NONE;
	/* Written, not zeroed: a compiler may drop zeros over calloc's. */
	for (size_t i = 0; (flags & SLOTINDEX_TOUCH) && i < cap; i++)
		ix->slot[i].next = ix->slot[i].older = ix->slot[i].newer = SLOTINDEX_NONE;
	ix->mask = b - 1;
	ix->cap = cap;
	ix->free = ix->oldest = ix->newest = SLOTINDEX_NONE;
	return 0;
}

void slotindex_fini(struct slotindex *ix)
{
	free(ix->slot);
	free(ix->bucket);
	memset(ix, 0, sizeof(*ix));
}

int32_t slotindex_take(struct slotindex *ix, uint32_t hash)
{
	struct slotindex_slot *s;
	int32_t i = ix->free;

	if (i != SLOTINDEX_NONE)
		ix->free = ix->slot[i].next;
	else if (ix->high < ix->cap)
		i = (int32_t)ix->high++;
	else
		return SLOTINDEX_NONE;
	s = &ix->slot[i];
	s->hash = hash;
	s->used = true;
	s->queued = false;
	s->older = s->newer = SLOTINDEX_NONE;
	s->next = ix->bucket[hash & ix->mask];
	ix->bucket[hash & ix->mask] = i;
	ix->used++;
	return i;
}

void slotindex_put(struct slotindex *ix, int32_t i)
{
	struct slotindex_slot *s = &ix->slot[i];

	slotindex_dequeue(ix, i);
	for (int32_t *at = &ix->bucket[s->hash & ix->mask]; *at != SLOTINDEX_NONE;
	     at = &ix->slot[*at].next)
		if (*at == i) {
			*at = s->next;
			break;
		}
	s->used = false;
	s->next = ix->free;
	ix->free = i;
	ix->used--;
}

void slotindex_dequeue(struct slotindex *ix, int32_t i)
{
	struct slotindex_slot *s = &ix->slot[i];

	if (!s->queued)
		return;
	if (s->older != SLOTINDEX_NONE)
		ix->slot[s->older].newer = s->newer;
	else
		ix->oldest = s->newer;
	if (s->newer != SLOTINDEX_NONE)
		ix->slot[s->newer].older = s->older;
	else
		ix->newest = s->older;
	s->older = s->newer = SLOTINDEX_NONE;
	s->queued = false;
}

void slotindex_enqueue(struct slotindex *ix, int32_t i)
{
	struct slotindex_slot *s = &ix->slot[i];

	slotindex_dequeue(ix, i);
	s->older = ix->newest;
	s->newer = SLOTINDEX_NONE;
	if (ix->newest != SLOTINDEX_NONE)
		ix->slot[ix->newest].newer = i;
	else
		ix->oldest = i;
	ix->newest = i;
	s->queued = true;
}
