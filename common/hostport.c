#include "hostport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int hostport_parse(const char *s, char *addr, size_t addrlen, uint16_t *port)
{
	char host[INET6_ADDRSTRLEN];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *p, *end;
	int family = AF_INET;
	uint32_t v = 0;
	size_t hlen;

	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		p = s + 1;
		family = AF_INET6;
	} else {
		end = strrchr(s, ':');
		if (!end)
			return -EINVAL;
		p = s;
	}
	hlen = (size_t)(end - p);
	if (hlen == 0 || hlen >= sizeof(host) || hlen >= addrlen)
		return -EINVAL;
	memcpy(host, p, hlen);
	host[hlen] = '\0';
	if (inet_pton(family, host, bin) != 1)
		return -EINVAL;
	p = end + (family == AF_INET6 ? 2 : 1);
	if (!*p || strlen(p) > 5)
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	if (v > UINT16_MAX)
		return -EINVAL;
	memcpy(addr, host, hlen + 1);
	*port = (uint16_t)v;
	return 0;
}
