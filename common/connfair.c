#include "connfair.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hash.h"

struct connfair_slot {
	struct connfair_addr addr;
	size_t count;		/* 0: empty */
	size_t proven;		/* of count */
};

static bool addr_eq(const struct connfair_addr *a, const struct connfair_addr *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

static size_t home(const struct connfair *f, const struct connfair_addr *a)
{
	return (size_t)hash_fnv1a(a->bytes, a->len) & (f->n_slots - 1);
}

/* The slot holding a, or the empty one where it would go. Never full: at
 * most max addresses in at least 2 x max slots. */
static struct connfair_slot *find(const struct connfair *f, const struct connfair_addr *a)
{
	size_t i = home(f, a);

	while (f->slots[i].count && !addr_eq(&f->slots[i].addr, a))
		i = (i + 1) & (f->n_slots - 1);
	return &f->slots[i];
}

/* Empties slot i, moving later entries of its probe run back so every
 * entry stays reachable from its home slot (no tombstones). */
static void empty_slot(struct connfair *f, size_t i)
{
	size_t mask = f->n_slots - 1, j = i;

	for (;;) {
		size_t h;

		j = (j + 1) & mask;
		if (!f->slots[j].count)
			break;
		h = home(f, &f->slots[j].addr);
		/* j's entry may move to i unless its home lies cyclically
		 * in (i, j]. */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		f->slots[i] = f->slots[j];
		i = j;
	}
	f->slots[i].count = 0;
}

int connfair_init(struct connfair *f, size_t max_conns)
{
	size_t n = 16;

	memset(f, 0, sizeof(*f));
	while (n < 2 * max_conns)
		n *= 2;
	f->slots = calloc(n, sizeof(*f->slots));
	if (!f->slots)
		return -ENOMEM;
	f->n_slots = n;
	f->max = max_conns;
	return 0;
}

void connfair_destroy(struct connfair *f)
{
	free(f->slots);
	memset(f, 0, sizeof(*f));
}

int connfair_add(struct connfair *f, struct connfair_conn *c)
{
	struct connfair_slot *s;

	if (c->in_set)
		return 0;
	if (f->n >= f->max)
		return -ENOSPC;
	s = find(f, &c->addr);
	if (!s->count) {
		s->addr = c->addr;
		s->proven = 0;
	}
	s->count++;
	s->proven += c->proven;
	c->prev = NULL;
	c->next = f->head;
	if (f->head)
		f->head->prev = c;
	f->head = c;
	c->in_set = true;
	f->n++;
	return 0;
}

void connfair_remove(struct connfair *f, struct connfair_conn *c)
{
	struct connfair_slot *s;

	if (!c->in_set)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		f->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	c->in_set = false;
	f->n--;
	s = find(f, &c->addr);
	if (c->proven && s->proven)
		s->proven--;
	if (s->count && --s->count == 0)
		empty_slot(f, (size_t)(s - f->slots));
}

void connfair_prove(struct connfair *f, struct connfair_conn *c)
{
	if (c->proven)
		return;
	c->proven = true;
	if (c->in_set)
		find(f, &c->addr)->proven++;
}

size_t connfair_count(const struct connfair *f)
{
	return f->n;
}

size_t connfair_addr_count(const struct connfair *f, const struct connfair_addr *a)
{
	return f->slots ? find(f, a)->count : 0;
}

size_t connfair_addr_unproven(const struct connfair *f, const struct connfair_addr *a)
{
	const struct connfair_slot *s;

	if (!f->slots)
		return 0;
	s = find(f, a);
	return s->count - s->proven;
}

/* Within one address and state of proof: silent, then one whose request
 * is not on its way (nothing waits unread: a connection that says nothing,
 * reopened in a loop, never reaches "silent"), then idle, then the longest
 * waiting. */
static bool worse_within(const struct connfair_conn *a, const struct connfair_conn *b)
{
	if (a->silent != b->silent)
		return a->silent;
	if (a->talking != b->talking)
		return b->talking;
	if (a->idle != b->idle)
		return a->idle;
	return a->since_ns < b->since_ns;
}

/* Whether a should go before b (both in the set). */
static bool worse(size_t count_a, const struct connfair_conn *a, size_t count_b,
		  const struct connfair_conn *b)
{
	if (a->proven != b->proven)
		return b->proven;
	if (count_a != count_b)
		return count_a > count_b;
	return worse_within(a, b);
}

struct connfair_conn *connfair_victim(const struct connfair *f, const struct connfair_conn *spare)
{
	struct connfair_conn *best = NULL;
	size_t best_count = 0;

	for (struct connfair_conn *c = f->head; c; c = c->next) {
		size_t count;

		if (c == spare)
			continue;
		count = find(f, &c->addr)->count;
		if (!best || worse(count, c, best_count, best)) {
			best = c;
			best_count = count;
		}
	}
	return best;
}

struct connfair_conn *connfair_victim_at(const struct connfair *f, const struct connfair_addr *a,
					 const struct connfair_conn *spare)
{
	struct connfair_conn *best = NULL;

	for (struct connfair_conn *c = f->head; c; c = c->next)
		if (c != spare && !c->proven && addr_eq(&c->addr, a) && (!best || worse_within(c, best)))
			best = c;
	return best;
}

void connfair_addr_of(struct connfair_addr *a, const struct sockaddr *sa)
{
	memset(a, 0, sizeof(*a));
	if (sa && sa->sa_family == AF_INET) {
		memcpy(a->bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		a->len = 4;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *in6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(in6)) {
			memcpy(a->bytes, in6->s6_addr + 12, 4);
			a->len = 4;
		} else {
			memcpy(a->bytes, in6->s6_addr, 16);
			a->len = 16;
		}
	}
}

void connfair_addr_str(const struct connfair_addr *a, char *out, size_t len)
{
	snprintf(out, len, "?");
	if (a->len == 4)
		inet_ntop(AF_INET, a->bytes, out, (socklen_t)len);
	else if (a->len == 16)
		inet_ntop(AF_INET6, a->bytes, out, (socklen_t)len);
}
