#include "scratch.h"

#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* Under AddressSanitizer a kept block is poisoned, and a taken one open only
 * for what was asked: a use after scratch_give() or a write past the need
 * is reported as it would be for malloc()'s own memory. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SCRATCH_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define SCRATCH_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define SCRATCH_POISON(p, n) ((void)(p), (void)(n))
#define SCRATCH_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SCRATCH_PAGE 4096u

struct kept {
	void *p;
	size_t cap;
	uint64_t since_ns;	/* when it was given back */
};

static struct {
	pthread_mutex_t lock;
	struct kept k[SCRATCH_BLOCKS];
	size_t n;
	size_t bytes;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Takes entry i out of the pool (lock held); its block is the caller's. */
static void *remove_at(size_t i, size_t *cap)
{
	void *p = pool.k[i].p;

	if (cap)
		*cap = pool.k[i].cap;
	pool.bytes -= pool.k[i].cap;
	pool.k[i] = pool.k[--pool.n];
	return p;
}

/* Moves blocks idle for SCRATCH_IDLE_NS into out (lock held), to be freed
 * once the lock is released. */
static size_t expire(uint64_t now, void **out)
{
	size_t m = 0;

	for (size_t i = 0; i < pool.n;) {
		if (now > pool.k[i].since_ns && now - pool.k[i].since_ns > SCRATCH_IDLE_NS)
			out[m++] = remove_at(i, NULL);
		else
			i++;
	}
	return m;
}

/* The entry given back longest ago (lock held, pool not empty). */
static size_t oldest(void)
{
	size_t o = 0;

	for (size_t i = 1; i < pool.n; i++)
		if (pool.k[i].since_ns < pool.k[o].since_ns)
			o = i;
	return o;
}

/* The smaller block wastes less; of two alike, the one given back last
 * is likelier still in the caches. */
static bool better(const struct kept *a, const struct kept *b)
{
	return a->cap < b->cap || (a->cap == b->cap && a->since_ns > b->since_ns);
}

static void free_all(void **blocks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		SCRATCH_UNPOISON(blocks[i], malloc_usable_size(blocks[i]));
		free(blocks[i]);
	}
}

void *scratch_take(size_t need, size_t *cap)
{
	void *old[SCRATCH_BLOCKS], *p = NULL;
	size_t best = SIZE_MAX, got = 0, m;

	if (need == 0)
		need = 1;
	if (need >= SCRATCH_BLOCK_MIN && need <= SCRATCH_BLOCK_MAX) {
		pthread_mutex_lock(&pool.lock);
		m = expire(clock_mono_ns(), old);
		for (size_t i = 0; i < pool.n; i++)
			if (pool.k[i].cap >= need && (best == SIZE_MAX || better(&pool.k[i], &pool.k[best])))
				best = i;
		if (best != SIZE_MAX)
			p = remove_at(best, &got);
		pthread_mutex_unlock(&pool.lock);
		free_all(old, m);
		if (p) {
			SCRATCH_UNPOISON(p, cap ? got : need);
			if (cap)
				*cap = got;
			return p;
		}
	}
	p = malloc(need);
	if (p && cap)
		*cap = need;
	return p;
}

void *scratch_take_zeroed(size_t n, size_t size)
{
	void *p;

	if (n == 0)
		n = 1;
	if (size && n > SIZE_MAX / size)
		return NULL;
	p = scratch_take(n * size, NULL);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void scratch_give(void *p)
{
	void *old[SCRATCH_BLOCKS];
	size_t cap, m;
	uint64_t now;

	if (!p)
		return;
	/* glibc's (and the sanitizers') usable size: the MHD callback hands
	 * back only the pointer. */
	cap = malloc_usable_size(p);
	/* A block taken for SCRATCH_BLOCK_MAX comes back a little larger:
	 * malloc() rounds a mapping up to a page. */
	if (cap < SCRATCH_BLOCK_MIN || cap > SCRATCH_BLOCK_MAX + SCRATCH_PAGE) {
		free(p);
		return;
	}
	now = clock_mono_ns();
	pthread_mutex_lock(&pool.lock);
	m = expire(now, old);
	/* Full: the block given back longest ago makes room, so what is kept
	 * follows the sizes requests need now. */
	while (pool.n && (pool.n == SCRATCH_BLOCKS || pool.bytes + cap > SCRATCH_KEPT_MAX))
		old[m++] = remove_at(oldest(), NULL);
	SCRATCH_POISON(p, cap);
	pool.k[pool.n++] = (struct kept){ p, cap, now };
	pool.bytes += cap;
	pthread_mutex_unlock(&pool.lock);
	free_all(old, m);
}

void scratch_drop(void *p, bool taken)
{
	if (taken)
		scratch_give(p);
	else
		free(p);
}

void scratch_trim(uint64_t now_ns)
{
	void *old[SCRATCH_BLOCKS];
	size_t m;

	pthread_mutex_lock(&pool.lock);
	m = expire(now_ns, old);
	pthread_mutex_unlock(&pool.lock);
	free_all(old, m);
}

void scratch_stats(size_t *blocks, size_t *bytes)
{
	pthread_mutex_lock(&pool.lock);
	*blocks = pool.n;
	*bytes = pool.bytes;
	pthread_mutex_unlock(&pool.lock);
}
