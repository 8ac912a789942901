/* A pod's IP address: what the agent's per-pod traffic (proto/report.h) and
 * the pod watch (kubepod.h, status.podIPs) are joined on (podindex.h).
 * IPv4 is held as IPv4-mapped IPv6 (::ffff:a.b.c.d), so one 16-byte form
 * compares both families. A pod has at most POD_IP_MAX addresses: one per
 * family, as the apiserver validates status.podIPs. */
#ifndef NETSCHED_PODIP_H
#define NETSCHED_PODIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POD_IP_MAX 2u
/* "ffff:ffff:...:255.255.255.255" and a NUL: INET6_ADDRSTRLEN. */
#define POD_IP_TEXT_MAX 46u

struct pod_ip {
	uint8_t b[16];
};

/* s[0..len) (not NUL-terminated) as an IPv4 dotted quad or an IPv6
 * address in any form inet_pton() takes, without a zone or a prefix
 * length. 0, or -EINVAL. The unspecified address (0.0.0.0, ::), loopback,
 * and multicast are refused: no pod has them. */
int podip_parse(const char *s, size_t len, struct pod_ip *out);

/* v4-mapped or not. */
bool podip_is_v4(const struct pod_ip *ip);

/* The address as text, in out (POD_IP_TEXT_MAX bytes at least). */
const char *podip_format(const struct pod_ip *ip, char *out, size_t cap);

static inline bool podip_equal(const struct pod_ip *a, const struct pod_ip *b)
{
	for (size_t i = 0; i < sizeof(a->b); i++)
		if (a->b[i] != b->b[i])
			return false;
	return true;
}

#endif
