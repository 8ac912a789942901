#include "membudget.h"

void membudget_init(struct membudget *b, size_t limit, size_t reserve, size_t small)
{
	atomic_init(&b->used, 0);
	b->limit = limit;
	b->reserve = reserve < limit ? reserve : limit;
	b->small = small;
}

bool membudget_take(struct membudget *b, size_t *held, size_t n)
{
	size_t cap, now;

	if (!b) {
		*held += n;
		return true;
	}
	cap = b->limit;
	if (*held > b->small || n > b->small - *held)
		cap -= b->reserve;
	now = atomic_fetch_add(&b->used, n) + n;
	if (now > cap || now < n) {
		atomic_fetch_sub(&b->used, n);
		return false;
	}
	*held += n;
	return true;
}

void membudget_shrink(struct membudget *b, size_t *held, size_t keep)
{
	if (*held <= keep)
		return;
	if (b)
		atomic_fetch_sub(&b->used, *held - keep);
	*held = keep;
}

void membudget_give(struct membudget *b, size_t *held)
{
	if (b && *held)
		atomic_fetch_sub(&b->used, *held);
	*held = 0;
}

size_t membudget_used(const struct membudget *b)
{
	return atomic_load(&((struct membudget *)b)->used);
}
