/* Fair eviction across client addresses: which connection goes when a
 * server is full (rows), and the per-address counts staying exact through
 * any order of adds and removes (the address table's deletion). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "common/connfair.h"

static struct connfair_addr v4(unsigned last)
{
	struct connfair_addr a = { .bytes = { 127, 0, 0, (uint8_t)last }, .len = 4 };

	return a;
}

#define MAX_ROW_CONNS 8

/* One connection of a row: its address's last byte, idle, since (s). */
struct conn_spec {
	unsigned addr;
	bool idle;
	unsigned since;
};

struct victim_row {
	const char *name;
	struct conn_spec conns[MAX_ROW_CONNS];
	size_t n;
	int spare;		/* index never chosen, or -1 */
	int want;		/* index of the victim, -1: none */
	unsigned proven;	/* bit i: connection i showed a verified certificate */
	unsigned silent;	/* bit i: connection i sent no request head for a while */
};

static const struct victim_row victim_rows[] = {
	{ "empty set: no victim", { { 0 } }, 0, -1, -1, 0, 0 },
	{ "only the new connection: no victim", { { 2, false, 9 } }, 1, 0, -1, 0, 0 },
	{ "the address holding the most loses, though its are busy and newer",
	  { { 1, true, 1 }, { 2, false, 5 }, { 2, false, 6 }, { 3, true, 2 } }, 4, -1, 1, 0, 0 },
	{ "within that address a silent one goes first, though newer than an idle one",
	  { { 2, true, 1 }, { 2, true, 8 }, { 3, false, 2 } }, 3, -1, 1, 0, 1u << 1 },
	{ "within that address an idle one goes first",
	  { { 2, false, 1 }, { 2, true, 8 }, { 3, false, 2 } }, 3, -1, 1, 0, 0 },
	{ "among idle ones the longest idle",
	  { { 2, true, 7 }, { 2, true, 3 }, { 2, true, 5 } }, 3, -1, 1, 0, 0 },
	{ "equal counts: idle before busy across addresses",
	  { { 1, false, 1 }, { 2, true, 9 }, { 3, false, 2 } }, 3, -1, 1, 0, 0 },
	{ "equal counts, all busy: the oldest in its state",
	  { { 1, false, 4 }, { 2, false, 2 }, { 3, false, 3 } }, 3, -1, 1, 0, 0 },
	{ "the new connection's own address counts, but never itself",
	  { { 5, false, 1 }, { 5, false, 9 }, { 6, true, 0 } }, 3, 1, 0, 0, 0 },
	{ "a newcomer from a fresh address takes from the busiest, not the scheduler",
	  { { 1, false, 0 }, { 7, true, 3 }, { 7, true, 4 }, { 8, false, 9 } }, 4, 3, 1, 0, 0 },
	{ "a proven connection stays though its address holds the most and it idles longest",
	  { { 1, true, 0 }, { 1, true, 1 }, { 2, false, 5 }, { 3, true, 6 } }, 4, -1, 1, 1u << 0, 0 },
	{ "a proven one alone at an address stays, every unproven goes first",
	  { { 1, true, 0 }, { 2, false, 5 }, { 3, false, 6 } }, 3, 2, 1, 1u << 0, 0 },
	{ "all proven: the usual rules among them",
	  { { 1, true, 4 }, { 1, true, 2 }, { 2, false, 1 } }, 3, -1, 1, 7u, 0 },
};

static void test_connfair_victim_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(victim_rows) / sizeof(victim_rows[0]); r++) {
		const struct victim_row *row = &victim_rows[r];
		struct connfair_conn c[MAX_ROW_CONNS];
		struct connfair f;
		struct connfair_conn *got;

		memset(c, 0, sizeof(c));
		assert_int_equal(connfair_init(&f, MAX_ROW_CONNS), 0);
		for (size_t i = 0; i < row->n; i++) {
			c[i].addr = v4(row->conns[i].addr);
			c[i].idle = row->conns[i].idle;
			c[i].since_ns = row->conns[i].since;
			c[i].proven = row->proven >> i & 1u;
			c[i].silent = row->silent >> i & 1u;
			assert_int_equal(connfair_add(&f, &c[i]), 0);
		}
		got = connfair_victim(&f, row->spare >= 0 ? &c[row->spare] : NULL);
		if (got != (row->want >= 0 ? &c[row->want] : NULL))
			fail_msg("%s: got connection %ld, want %d", row->name,
				 got ? (long)(got - c) : -1L, row->want);
		connfair_destroy(&f);
	}
}

/* 2,000 connections over 700 addresses (many probe runs collide), removed
 * in a scrambled order: every address's count stays exact. */
static void test_connfair_counts_survive_removal(void **state)
{
	enum { N = 2000, ADDRS = 700 };
	static struct connfair_conn c[N];
	size_t want[ADDRS] = { 0 };
	struct connfair f;

	(void)state;
	memset(c, 0, sizeof(c));
	assert_int_equal(connfair_init(&f, N), 0);
	for (size_t i = 0; i < N; i++) {
		unsigned a = (unsigned)((i * 7919u) % ADDRS);

		c[i].addr.len = 4;
		c[i].addr.bytes[0] = 10;
		c[i].addr.bytes[2] = (uint8_t)(a >> 8);
		c[i].addr.bytes[3] = (uint8_t)a;
		assert_int_equal(connfair_add(&f, &c[i]), 0);
		want[a]++;
	}
	assert_int_equal(connfair_add(&f, &(struct connfair_conn){ .addr = v4(1) }), -ENOSPC);
	for (size_t k = 0; k < N; k++) {
		size_t i = (k * 1237u) % N;
		unsigned a = (unsigned)((i * 7919u) % ADDRS);

		connfair_remove(&f, &c[i]);
		connfair_remove(&f, &c[i]);	/* twice: nothing more */
		want[a]--;
		if (k % 97 == 0)
			for (unsigned b = 0; b < ADDRS; b++)
				assert_int_equal(connfair_addr_count(&f, &(struct connfair_addr){
							 .bytes = { 10, 0, (uint8_t)(b >> 8), (uint8_t)b },
							 .len = 4 }),
						 want[b]);
	}
	assert_int_equal(connfair_count(&f), 0);
	assert_null(connfair_victim(&f, NULL));
	connfair_destroy(&f);
	connfair_destroy(&f);	/* destroyed twice: fine */
}

/* One address over its own cap (a hostNetwork pod's flood from its node's
 * address, shared with the kubelet and the scheduler): the victim is that
 * address's oldest silent connection, never the newcomer, never a proven
 * one, and proven ones do not count against the cap. */
static void test_connfair_victim_at(void **state)
{
	struct connfair_conn c[6];
	struct connfair_addr node = v4(7);
	struct connfair f;

	(void)state;
	memset(c, 0, sizeof(c));
	assert_int_equal(connfair_init(&f, 8), 0);
	for (size_t i = 0; i < 6; i++) {
		c[i].addr = i == 5 ? v4(9) : node;
		c[i].idle = true;
		c[i].since_ns = 10 + i;
	}
	c[0].proven = true;	/* the scheduler's keep-alive, idle longest */
	c[1].idle = false;	/* a request in progress, older than the flood */
	c[1].since_ns = 1;
	c[3].silent = true;	/* the flood's */
	c[4].silent = true;
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(connfair_add(&f, &c[i]), 0);
	assert_int_equal(connfair_addr_count(&f, &node), 5);
	assert_int_equal(connfair_addr_unproven(&f, &node), 4);
	assert_ptr_equal(connfair_victim_at(&f, &node, &c[4]), &c[3]);	/* oldest silent */
	c[3].silent = false;
	assert_ptr_equal(connfair_victim_at(&f, &node, &c[2]), &c[4]);	/* silent before idle */
	c[4].silent = false;
	assert_ptr_equal(connfair_victim_at(&f, &node, &c[4]), &c[2]);	/* idle before busy */
	connfair_remove(&f, &c[2]);
	connfair_remove(&f, &c[3]);
	connfair_remove(&f, &c[4]);
	assert_ptr_equal(connfair_victim_at(&f, &node, NULL), &c[1]);	/* busy, if nothing else */
	assert_null(connfair_victim_at(&f, &node, &c[1]));		/* proven ones never */
	/* Proven after it joined: counted as such until it leaves. */
	connfair_prove(&f, &c[1]);
	assert_int_equal(connfair_addr_unproven(&f, &node), 0);
	connfair_remove(&f, &c[1]);
	connfair_remove(&f, &c[0]);
	assert_int_equal(connfair_addr_count(&f, &node), 0);
	assert_int_equal(connfair_addr_unproven(&f, &node), 0);
	connfair_destroy(&f);
}

static void test_connfair_addresses(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct connfair_addr a, b;
	char s[64];

	(void)state;
	inet_pton(AF_INET, "192.0.2.7", &sin.sin_addr);
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &sin6.sin6_addr);
	connfair_addr_of(&a, (struct sockaddr *)&sin);
	connfair_addr_of(&b, (struct sockaddr *)&sin6);
	assert_int_equal(a.len, 4);
	assert_memory_equal(&a, &b, sizeof(a));	/* mapped: the same client */
	connfair_addr_str(&a, s, sizeof(s));
	assert_string_equal(s, "192.0.2.7");
	inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
	connfair_addr_of(&b, (struct sockaddr *)&sin6);
	assert_int_equal(b.len, 16);
	connfair_addr_str(&b, s, sizeof(s));
	assert_string_equal(s, "2001:db8::1");
	connfair_addr_of(&b, NULL);
	assert_int_equal(b.len, 0);
	connfair_addr_str(&b, s, sizeof(s));
	assert_string_equal(s, "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connfair_victim_rows),
		cmocka_unit_test(test_connfair_counts_survive_removal),
		cmocka_unit_test(test_connfair_victim_at),
		cmocka_unit_test(test_connfair_addresses),
	};
	return cmocka_run_group_tests_name("connfair", tests, NULL, NULL);
}
