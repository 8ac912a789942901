#include "hash.h"

uint64_t hash_fnv1a(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}
