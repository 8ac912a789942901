/* What json_parse_shallow() promises, judged against a full parse of the
 * same text: its tokens are exactly the full parse's tokens nested in at
 * most opaque_depth containers, in order, each with the same type, extent
 * and parent; a container at opaque_depth has no members. Shared by
 * test_json (real requests) and fuzz_json (any bytes). Header-only: each
 * test is one translation unit. */
#ifndef NETSCHED_TEST_JSON_SHALLOW_H
#define NETSCHED_TEST_JSON_SHALLOW_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"

/* How many containers hold token i (a value's parent is its key, which
 * is not one). */
static inline unsigned json_shallow_depth(const struct json *d, int i)
{
	unsigned depth = 0;

	for (int p = d->t[i].parent; p >= 0; p = d->t[p].parent)
		depth += d->t[p].type == JSMN_OBJECT || d->t[p].type == JSMN_ARRAY;
	return depth;
}

/* true when shallow is full seen to opaque_depth; else false and why says
 * at which token they part. */
static inline bool json_shallow_same(const struct json *full, const struct json *shallow,
				     unsigned opaque_depth, char *why, size_t whylen)
{
	int *at = malloc((size_t)full->n * sizeof(*at)), k = 0;
	bool same = false;

	if (!at) {
		snprintf(why, whylen, "out of memory");
		return false;
	}
	for (int i = 0; i < full->n; i++) {
		const jsmntok_t *f = &full->t[i], *s;
		unsigned depth = json_shallow_depth(full, i);
		bool container = f->type == JSMN_OBJECT || f->type == JSMN_ARRAY;

		at[i] = -1;
		if (depth > opaque_depth)
			continue;
		if (k >= shallow->n) {
			snprintf(why, whylen, "full token %d (byte %d) is missing", i, f->start);
			goto out;
		}
		s = &shallow->t[k];
		if (s->type != f->type || s->start != f->start || s->end != f->end ||
		    s->size != (container && depth == opaque_depth ? 0 : f->size) ||
		    s->parent != (f->parent < 0 ? -1 : at[f->parent])) {
			snprintf(why, whylen, "token %d (byte %d) differs from full token %d (byte %d)",
				 k, s->start, i, f->start);
			goto out;
		}
		at[i] = k++;
	}
	if (k != shallow->n) {
		snprintf(why, whylen, "%d tokens, the full parse keeps %d", shallow->n, k);
		goto out;
	}
	same = true;
out:
	free(at);
	return same;
}

#endif
