/* A node name as a request's lookups carry it: hashed once (hash_fnv1a())
 * for both tables that key on it, the node table (table.h) and the
 * in-flight pods (inflight.h). A 5,000-name prioritize hashed every name
 * three times (perf: 6% of its CPU). */
#ifndef NETSCHED_NAMEKEY_H
#define NETSCHED_NAMEKEY_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct namekey {
	const char *s;		/* not NUL-terminated; not owned */
	size_t len;
	uint64_t hash;		/* hash_fnv1a(s, len) */
};

static inline struct namekey namekey_of(const char *s, size_t len)
{
	return (struct namekey){ s, len, hash_fnv1a(s, len) };
}

#endif
