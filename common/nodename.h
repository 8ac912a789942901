/* The one rule for a Kubernetes node name, applied by every reader of one:
 * agent flags, reports on the wire, extender requests, Prometheus replies.
 *
 * Node names are DNS-1123 subdomains (the API server validates them so):
 * 1..253 bytes of lowercase letters, digits, '-' and '.', where every
 * dot-separated label starts and ends with a letter or digit. So a valid
 * name never needs escaping in JSON, logs or metric labels. */
#ifndef NETSCHED_NODENAME_H
#define NETSCHED_NODENAME_H

#include <stdbool.h>
#include <stddef.h>

#define NODENAME_MAX_LEN 253u

/* 0 when s[0..len) is a node name; else -EINVAL (-E2BIG when too long) and
 * why says what is wrong and at which byte, phrased to follow "is" ("empty",
 * "300 bytes long, limit 253", "not a DNS subdomain: byte 4 is 0x0a ..."),
 * never echoing a byte that is not printable ASCII. why may be NULL. */
int nodename_check(const char *s, size_t len, char *why, size_t whylen);

static inline bool nodename_valid(const char *s, size_t len)
{
	return nodename_check(s, len, NULL, 0) == 0;
}

#endif
