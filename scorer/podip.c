#include "podip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

bool podip_is_v4(const struct pod_ip *ip)
{
	return memcmp(ip->b, v4_prefix, sizeof(v4_prefix)) == 0;
}

/* Addresses no pod has: unspecified, loopback, multicast. */
static bool unusable(const struct pod_ip *ip)
{
	static const uint8_t zero[16], loop6[16] = { [15] = 1 };

	if (podip_is_v4(ip))
		return ip->b[12] == 0 || ip->b[12] == 127 || (ip->b[12] & 0xf0) == 0xe0 ||
		       ip->b[12] == 255;
	return !memcmp(ip->b, zero, 16) || !memcmp(ip->b, loop6, 16) || ip->b[0] == 0xff;
}

int podip_parse(const char *s, size_t len, struct pod_ip *out)
{
	char buf[POD_IP_TEXT_MAX];
	struct pod_ip ip;

	if (!s || len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return -EINVAL;
	if (inet_pton(AF_INET, buf, ip.b + 12) == 1) {
		memcpy(ip.b, v4_prefix, sizeof(v4_prefix));
	} else if (inet_pton(AF_INET6, buf, ip.b) != 1) {
		return -EINVAL;
	}
	if (unusable(&ip))
		return -EINVAL;
	*out = ip;
	return 0;
}

const char *podip_format(const struct pod_ip *ip, char *out, size_t cap)
{
	if (!inet_ntop(podip_is_v4(ip) ? AF_INET : AF_INET6, podip_is_v4(ip) ? ip->b + 12 : ip->b,
		       out, (socklen_t)cap))
		snprintf(out, cap, "?");
	return out;
}
