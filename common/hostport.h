/* "ADDR:PORT" listen addresses, as both binaries' HTTP flags take them. */
#ifndef NETSCHED_HOSTPORT_H
#define NETSCHED_HOSTPORT_H

#include <stddef.h>
#include <stdint.h>

/* ADDR is an IPv4 literal or a bracketed IPv6 literal ("0.0.0.0:8470",
 * "[::]:8470"); addr receives the literal without brackets. Host names are
 * refused: a listen address must not depend on DNS at start-up. Returns 0,
 * or -EINVAL with the outputs untouched. */
int hostport_parse(const char *s, char *addr, size_t addrlen, uint16_t *port);

#endif
