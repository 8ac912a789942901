/* One string hash for in-memory tables: 64-bit FNV-1a.
 *
 * Not keyed: fine where the table is bounded and probing stays short (the
 * node table is never more than half full). Nothing here is a MAC. */
#ifndef NETSCHED_HASH_H
#define NETSCHED_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_fnv1a(const void *data, size_t len);

#endif
