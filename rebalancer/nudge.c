/* When the rebalancer nudges the scheduler (nudge.h). */
#include "nudge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/units.h"

void nudge_config_defaults(struct nudge_config *cfg)
{
	cfg->on = true;
	cfg->step = 0.05;
	cfg->min_interval_s = 10;
	cfg->max_nodes = 3;
}

int nudge_config_check(const struct nudge_config *cfg, char *err, size_t errlen)
{
	if (!(cfg->step > 0.0 && cfg->step <= 1.0)) {
		snprintf(err, errlen, "--nudge-step %.3f: must be in (0, 1]", cfg->step);
		return -EINVAL;
	}
	if (cfg->min_interval_s < 1 || cfg->min_interval_s > 3600) {
		snprintf(err, errlen, "--nudge-interval %llu s: must be 1 s to 1 h",
			 (unsigned long long)cfg->min_interval_s);
		return -EINVAL;
	}
	if (cfg->max_nodes < 1 || cfg->max_nodes > NUDGE_NODES_MAX) {
		snprintf(err, errlen, "--nudge-max-nodes %u: must be 1 to %u", cfg->max_nodes,
			 NUDGE_NODES_MAX);
		return -EINVAL;
	}
	return 0;
}

uint64_t nudge_free(const struct decide_node *n, enum decide_dir d)
{
	uint64_t used;

	if (!n->fresh || n->link == 0)
		return 0;
	used = units_add_sat(n->rate[d], n->inflight[d]);
	return n->link > used ? n->link - used : 0;
}

void nudge_memory_free(struct nudge_memory *m)
{
	free(m->nodes);
	memset(m, 0, sizeof(*m));
}

static uint64_t key_of(const struct decide_node *n)
{
	return hash_fnv1a(n->name, strlen(n->name)) | 1;
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = ((const struct nudge_base *)a)->key, y = ((const struct nudge_base *)b)->key;

	return x < y ? -1 : x > y;
}

/* Non-const: nudge_looked() writes through it into m's own table. */
static struct nudge_base *find(const struct nudge_memory *m, uint64_t key)
{
	struct nudge_base k = { .key = key };

	if (!m->nodes)
		return NULL;
	return bsearch(&k, m->nodes, m->n_nodes, sizeof(*m->nodes), by_key);
}

/* Whether room r covers what the pod asks in both directions. */
static bool fits(const uint64_t r[2], const struct nudge_pod *p)
{
	return r[DECIDE_RX] >= p->ask[DECIDE_RX] && r[DECIDE_TX] >= p->ask[DECIDE_TX];
}

int nudge_observe(struct nudge_memory *m, const struct nudge_config *cfg,
		  const struct decide_snapshot *s, bool *look)
{
	struct nudge_base *next = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*next));
	bool grew = false;

	*look = false;
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct decide_node *n = &s->nodes[i];
		const struct nudge_base *old = find(m, key_of(n));

		next[i].key = key_of(n);
		for (int d = DECIDE_RX; d <= DECIDE_TX; d++) {
			uint64_t f = nudge_free(n, (enum decide_dir)d);
			uint64_t base = old && old->free[d] < f ? old->free[d] : f;
			/* The step in bytes per second; at least 1. */
			uint64_t step = (uint64_t)(cfg->step * (double)n->link);

			next[i].free[d] = base;
			if (n->fresh && n->link && f - base >= (step ? step : 1) && f > base)
				grew = true;
		}
	}
	qsort(next, s->n_nodes, sizeof(*next), by_key);
	free(m->nodes);
	m->nodes = next;
	m->n_nodes = s->n_nodes;
	*look = cfg->on && grew && (m->last_nudge_s == 0 || s->now_s < m->last_nudge_s ||
				    s->now_s - m->last_nudge_s >= cfg->min_interval_s);
	return 0;
}

size_t nudge_plan(const struct nudge_config *cfg, const struct nudge_memory *m,
		  const struct decide_snapshot *s, const struct nudge_pod *pods, size_t n_pods,
		  struct nudge_pick *out, size_t cap)
{
	size_t n = 0, max = cap < cfg->max_nodes ? cap : cfg->max_nodes;

	if (!cfg->on)
		return 0;
	for (size_t p = 0; p < n_pods && n < max; p++) {
		const struct nudge_pod *pod = &pods[p];
		enum decide_dir dir = pod->ask[DECIDE_TX] > pod->ask[DECIDE_RX] ? DECIDE_TX : DECIDE_RX;
		size_t best = SIZE_MAX;
		uint64_t best_free = 0, best_base = 0;
		bool taken = false;

		if (pod->ask[DECIDE_RX] == 0 && pod->ask[DECIDE_TX] == 0)
			continue;	/* nothing declared: no room can be said to fit it */
		for (size_t i = 0; i < s->n_nodes; i++) {
			const struct decide_node *node = &s->nodes[i];
			const struct nudge_base *b = find(m, key_of(node));
			uint64_t now[2] = { nudge_free(node, DECIDE_RX), nudge_free(node, DECIDE_TX) };

			if (!b || !fits(now, pod) || fits(b->free, pod))
				continue;
			if (best == SIZE_MAX || now[dir] > best_free) {
				best = i;
				best_free = now[dir];
				best_base = b->free[dir];
			}
		}
		if (best == SIZE_MAX)
			continue;
		for (size_t k = 0; k < n; k++)
			taken |= out[k].node == best;
		if (taken)
			continue;	/* one label on that node moves every pod */
		out[n++] = (struct nudge_pick){ best, p, dir, best_free, best_base };
	}
	return n;
}

void nudge_looked(struct nudge_memory *m, const struct decide_snapshot *s)
{
	for (size_t i = 0; i < s->n_nodes; i++) {
		struct nudge_base *b = find(m, key_of(&s->nodes[i]));

		if (!b)
			continue;
		b->free[DECIDE_RX] = nudge_free(&s->nodes[i], DECIDE_RX);
		b->free[DECIDE_TX] = nudge_free(&s->nodes[i], DECIDE_TX);
	}
}

void nudge_done(struct nudge_memory *m, uint64_t now_s)
{
	m->last_nudge_s = now_s ? now_s : 1;
}
