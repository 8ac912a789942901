/* Fair shares of a server's connection slots across client addresses.
 *
 * A per-address cap alone is not fair: with a cap of 32 and 256 slots,
 * eight addresses fill every slot and the ninth, the scheduler's perhaps,
 * gets nothing. A server keeps its connections in a connfair set instead;
 * when a new one takes it over its capacity, connfair_victim() names the
 * one to close:
 *   1. one of the address holding the most connections (the new one's
 *      address included), so any number of addresses can only share the
 *      slots, never take the last one from an address holding fewer;
 *   2. of that address's, a silent one first (no complete request head
 *      for a while: what a flood holds), then an idle one (between
 *      requests, or a report connection that has sent nothing yet), so
 *      work in progress is kept;
 *   3. the one waiting longest (idle, or in its current request, the
 *      longest): a caller's connection just opened is the newest of its
 *      address, so a flood from that address goes before it.
 * The connection just accepted is never the victim, and a proven one (a
 * client that showed a verified certificate: the scheduler, under mTLS) is
 * closed only when every other is proven too: attackers from more
 * addresses than there are slots squeeze each address to about one
 * connection, and the scheduler's one keep-alive connection must not be
 * the one "held by the busiest address".
 * A server may also cap what one address holds (connfair_addr_unproven(),
 * connfair_victim_at()): the same order within that address, so a newcomer
 * over the cap takes the place of its address's oldest silent connection
 * instead of being refused; proven connections do not count against it.
 *
 * Not thread-safe: the owner locks. Entries are the caller's memory
 * (embedded in its own per-connection struct); the set links and counts
 * them. A set holds at most the max_conns given to connfair_init(). */
#ifndef NETSCHED_CONNFAIR_H
#define NETSCHED_CONNFAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockaddr;

/* An IPv4 (4 bytes) or IPv6 (16) address; len 0 is "unknown", one
 * address like any other. */
struct connfair_addr {
	uint8_t bytes[16];
	uint8_t len;
};

struct connfair_conn {
	struct connfair_conn *prev, *next;	/* the set's; NULL when not in one */
	struct connfair_addr addr;
	bool in_set;
	/* Kept up to date by the owner, read by connfair_victim(). */
	bool idle;
	bool silent;		/* idle, and no complete request head for a while */
	/* Bytes of it wait unread in the kernel: a request on its way, not
	 * a connection that says nothing. Its owner sets it just before
	 * asking for a victim at its address. */
	bool talking;
	bool proven;		/* connfair_prove(); never cleared */
	uint64_t since_ns;	/* idle since, or in its current state since */
};

struct connfair_slot;

struct connfair {
	struct connfair_conn *head;
	size_t n, max;
	struct connfair_slot *slots;	/* address -> connections, open addressing */
	size_t n_slots;			/* a power of two, at least 2 x max */
};

/* Room for max_conns connections. 0 or -ENOMEM. */
int connfair_init(struct connfair *f, size_t max_conns);
/* Accepts a zeroed or destroyed set. The entries are the caller's. */
void connfair_destroy(struct connfair *f);

/* Adds c (c->addr set); -ENOSPC when the set already holds max_conns. */
int connfair_add(struct connfair *f, struct connfair_conn *c);
/* Removes c; nothing if it is not in the set. */
void connfair_remove(struct connfair *f, struct connfair_conn *c);

/* c showed a verified client certificate (proven, above). */
void connfair_prove(struct connfair *f, struct connfair_conn *c);

size_t connfair_count(const struct connfair *f);
size_t connfair_addr_count(const struct connfair *f, const struct connfair_addr *a);
/* a's connections that are not proven: what a per-address cap counts. */
size_t connfair_addr_unproven(const struct connfair *f, const struct connfair_addr *a);

/* The connection to close to make room (see the top), never spare; NULL
 * when the set holds nothing else. */
struct connfair_conn *connfair_victim(const struct connfair *f, const struct connfair_conn *spare);
/* The unproven connection of address a to close when a is over its own
 * cap: silent first, then idle, the longest waiting; never spare. NULL
 * when a holds no other unproven one. */
struct connfair_conn *connfair_victim_at(const struct connfair *f, const struct connfair_addr *a,
					 const struct connfair_conn *spare);

/* An AF_INET or AF_INET6 socket address's address (an IPv4-mapped IPv6
 * address counts as its IPv4 address); len 0 for anything else or NULL. */
void connfair_addr_of(struct connfair_addr *a, const struct sockaddr *sa);
/* "192.0.2.1", "2001:db8::1" or "?" into out. */
void connfair_addr_str(const struct connfair_addr *a, char *out, size_t len);

#endif
