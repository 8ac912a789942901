#include "reports/anchor.h"

#include <stdbool.h>
#include <stdlib.h>

#include "clock.h"
#include "hash.h"

/* Slots looked at from a key's home before the oldest gives way. */
#define ANCHOR_PROBE 8u

/* One held report. The node is kept as its hash: only signed reports get
 * here, and the key that signs them can forge any report anyway. */
struct anchor {
	uint64_t key;		/* hash of node and instance; 0: free */
	uint64_t instance;
	uint64_t seq;
	uint64_t end_unix_ms;
	uint64_t arrival_ns;
};

struct anchors {
	struct anchor *slot;
	size_t mask;
};

struct anchors *anchors_create(size_t max)
{
	struct anchors *a;
	size_t n = ANCHOR_PROBE;

	if (!max)
		return NULL;
	while (n < max)
		n *= 2;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->slot = calloc(n, sizeof(*a->slot));
	if (!a->slot) {
		free(a);
		return NULL;
	}
	a->mask = n - 1;
	return a;
}

void anchors_destroy(struct anchors *a)
{
	if (!a)
		return;
	free(a->slot);
	free(a);
}

static uint64_t key_of(const char *node, size_t len, uint64_t instance)
{
	uint64_t k = hash_fnv1a(node, len) ^ (instance * 0x9e3779b97f4a7c15ULL);

	return k ? k : 1;
}

/* The slot holding key, or the one to take for it (a free one, else the
 * oldest near its home). */
static struct anchor *find(struct anchors *a, uint64_t key, uint64_t instance, bool *found)
{
	struct anchor *take = NULL;

	for (size_t i = 0; i < ANCHOR_PROBE; i++) {
		struct anchor *s = &a->slot[(key + i) & a->mask];

		if (s->key == key && s->instance == instance) {
			*found = true;
			return s;
		}
		if (!take || (take->key && (!s->key || s->arrival_ns < take->arrival_ns)))
			take = s;
	}
	*found = false;
	return take;
}

/* Whether the agent's clock moved, from the held report to this one, as
 * ours did between their arrivals. */
static bool consistent(const struct anchor *s, uint64_t end, uint64_t now)
{
	uint64_t theirs = end - s->end_unix_ms;
	uint64_t ours = now > s->arrival_ns ? (now - s->arrival_ns) / NS_PER_MS : 0;
	uint64_t gap = theirs > ours ? theirs - ours : ours - theirs;

	return gap <= ANCHOR_SLACK_MS;
}

enum anchor_verdict anchors_judge(struct anchors *a, const char *node, size_t len,
				  uint64_t instance, uint64_t seq, uint64_t end_unix_ms,
				  uint64_t now_mono_ns)
{
	uint64_t key = key_of(node, len, instance);
	bool found;
	struct anchor *s = find(a, key, instance, &found);

	if (found && seq <= s->seq)
		return ANCHOR_REPLAYED;
	if (found && end_unix_ms > s->end_unix_ms && consistent(s, end_unix_ms, now_mono_ns)) {
		s->key = 0;
		return ANCHOR_LIVE;
	}
	*s = (struct anchor){ .key = key, .instance = instance, .seq = seq,
			      .end_unix_ms = end_unix_ms, .arrival_ns = now_mono_ns };
	return ANCHOR_HELD;
}
