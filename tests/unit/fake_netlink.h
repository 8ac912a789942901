/* A fake rtnetlink kernel behind agent/nl.c's socket seam (struct nl_io),
 * answering with the replies recorded in tests/fixtures/netlink/ and
 * keeping the rules of the real one that matter to a socket's step:
 *  - a dump's reply comes a few messages per datagram, the next part
 *    queued when one is read (the kernel fills the socket as it is read);
 *  - a new dump while one is running on the socket is refused with an
 *    NLMSG_ERROR of -EBUSY, queued behind what is there;
 *  - replies carry the request's sequence number and the socket's port id.
 * Faults to inject: the next link dumps come from links-intr.bin (the
 * kernel flagged them NLM_F_DUMP_INTR, record-churn.sh); the next stats
 * dump ends early with an errno in NLMSG_DONE; stale.bin (the rest of an
 * abandoned dump and the kernel's EBUSY for the request after it, as
 * recorded) waits in the socket before the next reply; the next request
 * gets no answer. Counters on eth-like links can be made to move.
 * Header-only, for test_nl.c and test_sampler.c. */
#ifndef NETSCHED_TEST_FAKE_NETLINK_H
#define NETSCHED_TEST_FAKE_NETLINK_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "agent/nl.h"

#define FAKE_NL_DIR "tests/fixtures/netlink"
#define FAKE_NL_QUEUE 64
#define FAKE_NL_PER_DATAGRAM 8
#define FAKE_NL_DATAGRAM 32768
#define FAKE_NL_MAX_IFINDEX 64

struct fake_nl_file {
	uint8_t *buf;
	size_t len;
};

enum fake_nl_reply {
	FAKE_LINKS, FAKE_LINKS_INTR, FAKE_ROUTES4, FAKE_ROUTES6, FAKE_STATS, FAKE_NEIGH4,
	FAKE_NEIGH6, FAKE_FDB, FAKE_STALE, FAKE_N_FILES
};

struct fake_nl {
	struct nl_io io;
	struct fake_nl_file files[FAKE_N_FILES];
	uint32_t portid;
	struct {
		uint8_t *buf;
		size_t len;
	} q[FAKE_NL_QUEUE];
	size_t head, n;
	/* The dump running on the socket: what is left of its reply. */
	bool running;
	const uint8_t *dump;
	size_t dump_len, dump_off, dump_cut;
	uint32_t dump_seq;
	int32_t dump_errno;		/* NLMSG_DONE's, at dump_cut */
	/* Faults. */
	unsigned intr_link_dumps;	/* the next link dumps come interrupted */
	size_t stats_error_after;	/* the next stats dump ends after this many, */
	int32_t stats_errno;		/* with this errno in NLMSG_DONE (0: off) */
	bool stale_next;		/* stale.bin before the next reply */
	unsigned lose_next;		/* requests to leave unanswered */
	/* Counts. */
	unsigned dumps, ebusy, reopens, sent;
	uint64_t rx_add[FAKE_NL_MAX_IFINDEX];	/* added to a link's rx bytes */
};

static void fake_nl_load(struct fake_nl_file *f, const char *name)
{
	char path[256];
	FILE *fp;
	long len;

	snprintf(path, sizeof(path), FAKE_NL_DIR "/%s", name);
	fp = fopen(path, "rb");
	if (!fp || fseek(fp, 0, SEEK_END) || (len = ftell(fp)) <= 0 || fseek(fp, 0, SEEK_SET)) {
		fprintf(stderr, "fake_netlink: cannot read %s\n", path);
		abort();
	}
	f->buf = malloc((size_t)len);
	if (!f->buf || fread(f->buf, 1, (size_t)len, fp) != (size_t)len)
		abort();
	f->len = (size_t)len;
	fclose(fp);
}

static void fake_nl_push(struct fake_nl *k, const void *buf, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy || k->n == FAKE_NL_QUEUE)
		abort(); /* a test's bug: the queue is bounded like a socket's */
	memcpy(copy, buf, len);
	k->q[(k->head + k->n) % FAKE_NL_QUEUE].buf = copy;
	k->q[(k->head + k->n) % FAKE_NL_QUEUE].len = len;
	k->n++;
}

static void fake_nl_error(struct fake_nl *k, uint16_t type, uint32_t seq, int error)
{
	_Alignas(8) uint8_t buf[64];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = k->portid;
	if (type == NLMSG_DONE) {
		nlh->nlmsg_flags = NLM_F_MULTI;
		*(int32_t *)mnl_nlmsg_put_extra_header(nlh, sizeof(int32_t)) = error;
	} else {
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
		e->error = error;
	}
	fake_nl_push(k, buf, nlh->nlmsg_len);
}

/* A recorded message as the reply to seq: the request's number, our port
 * id, and the rx bytes of a stats message moved as asked. */
static void fake_nl_stamp(struct fake_nl *k, struct nlmsghdr *nlh, uint32_t seq)
{
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = k->portid;
	if (nlh->nlmsg_type == RTM_NEWSTATS) {
		struct if_stats_msg *ifsm = mnl_nlmsg_get_payload(nlh);
		struct nlattr *a;

		if (ifsm->ifindex >= FAKE_NL_MAX_IFINDEX || !k->rx_add[ifsm->ifindex])
			return;
		mnl_attr_for_each(a, nlh, sizeof(*ifsm)) {
			struct rtnl_link_stats64 st;

			if (mnl_attr_get_type(a) != IFLA_STATS_LINK_64)
				continue;
			memcpy(&st, mnl_attr_get_payload(a), sizeof(st));
			st.rx_bytes += k->rx_add[ifsm->ifindex];
			memcpy(mnl_attr_get_payload(a), &st, sizeof(st));
		}
	}
}

/* Queues the dump's next part: up to FAKE_NL_PER_DATAGRAM messages, a
 * flagged message always starting one (as the kernel flags the first of
 * a part). */
static void fake_nl_next_part(struct fake_nl *k)
{
	static _Alignas(8) uint8_t part[FAKE_NL_DATAGRAM];
	size_t len = 0, msgs = 0;

	while (k->dump_off < k->dump_len && msgs < FAKE_NL_PER_DATAGRAM) {
		const struct nlmsghdr *src = (const struct nlmsghdr *)(k->dump + k->dump_off);
		size_t sz = NLMSG_ALIGN(src->nlmsg_len);

		if (msgs && (src->nlmsg_flags & NLM_F_DUMP_INTR))
			break;
		if (len + sz > sizeof(part))
			break;
		memcpy(part + len, src, sz);
		fake_nl_stamp(k, (struct nlmsghdr *)(part + len), k->dump_seq);
		len += sz;
		msgs++;
		k->dump_off += sz;
		if (k->dump_cut && --k->dump_cut == 0) {
			k->dump_off = k->dump_len;
			break;
		}
	}
	if (len)
		fake_nl_push(k, part, len);
	if (k->dump_off >= k->dump_len) {
		k->running = false;
		if (k->dump_errno)
			fake_nl_error(k, NLMSG_DONE, k->dump_seq, k->dump_errno);
	}
}

static const struct fake_nl_file *fake_nl_reply_of(struct fake_nl *k, const struct nlmsghdr *req)
{
	uint8_t family = *(const uint8_t *)mnl_nlmsg_get_payload(req);

	switch (req->nlmsg_type) {
	case RTM_GETLINK:
		if (k->intr_link_dumps) {
			k->intr_link_dumps--;
			return &k->files[FAKE_LINKS_INTR];
		}
		return &k->files[FAKE_LINKS];
	case RTM_GETSTATS:
		return &k->files[FAKE_STATS];
	case RTM_GETROUTE:
		return &k->files[family == AF_INET6 ? FAKE_ROUTES6 : FAKE_ROUTES4];
	case RTM_GETNEIGH:
		return &k->files[family == AF_INET6 ? FAKE_NEIGH6 :
				 family == AF_BRIDGE ? FAKE_FDB : FAKE_NEIGH4];
	}
	return NULL;
}

/* stale.bin, as left in the socket by requests before seq: its own two
 * sequence numbers moved to just before it, in the same order. */
static void fake_nl_stale(struct fake_nl *k, uint32_t seq)
{
	const struct fake_nl_file *f = &k->files[FAKE_STALE];
	const struct nlmsghdr *first = (const struct nlmsghdr *)f->buf;
	uint8_t *copy = malloc(f->len);
	struct nlmsghdr *nlh;
	int left = (int)f->len;
	uint32_t base = first->nlmsg_seq;

	if (!copy)
		abort();
	memcpy(copy, f->buf, f->len);
	for (nlh = (struct nlmsghdr *)copy; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		nlh->nlmsg_seq = seq - 10 + (nlh->nlmsg_seq - base);
		nlh->nlmsg_pid = k->portid;
	}
	fake_nl_push(k, copy, f->len);
	free(copy);
}

static void fake_nl_request(struct fake_nl *k, const struct nlmsghdr *req)
{
	const struct fake_nl_file *f;

	k->sent++;
	if (k->stale_next) {
		k->stale_next = false;
		fake_nl_stale(k, req->nlmsg_seq);
	}
	if (k->lose_next) {
		k->lose_next--;
		return;
	}
	if (!(req->nlmsg_flags & NLM_F_DUMP)) {
		/* One interface's stats (nl_read_stats()). */
		const struct if_stats_msg *want = mnl_nlmsg_get_payload(req);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)k->files[FAKE_STATS].buf;
		int left = (int)k->files[FAKE_STATS].len;

		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			const struct if_stats_msg *ifsm = mnl_nlmsg_get_payload(nlh);
			_Alignas(8) uint8_t one[1024];

			if (nlh->nlmsg_type != RTM_NEWSTATS || ifsm->ifindex != want->ifindex ||
			    nlh->nlmsg_len > sizeof(one))
				continue;
			memcpy(one, nlh, nlh->nlmsg_len);
			((struct nlmsghdr *)one)->nlmsg_flags = 0;
			fake_nl_stamp(k, (struct nlmsghdr *)one, req->nlmsg_seq);
			fake_nl_push(k, one, nlh->nlmsg_len);
			return;
		}
		fake_nl_error(k, NLMSG_ERROR, req->nlmsg_seq, -ENODEV);
		return;
	}
	if (k->running) {
		k->ebusy++;
		fake_nl_error(k, NLMSG_ERROR, req->nlmsg_seq, -EBUSY);
		return;
	}
	f = fake_nl_reply_of(k, req);
	if (!f) {
		fake_nl_error(k, NLMSG_ERROR, req->nlmsg_seq, -EOPNOTSUPP);
		return;
	}
	k->dumps++;
	k->running = true;
	k->dump = f->buf;
	k->dump_len = f->len;
	k->dump_off = 0;
	k->dump_seq = req->nlmsg_seq;
	k->dump_cut = 0;
	k->dump_errno = 0;
	if (req->nlmsg_type == RTM_GETSTATS && k->stats_errno) {
		/* Ends after a few messages, with the errno the kernel's dump
		 * callback returned, as netlink_dump() says it: in NLMSG_DONE. */
		k->dump_cut = k->stats_error_after;
		k->dump_errno = k->stats_errno;
		k->stats_errno = 0;
	}
	fake_nl_next_part(k);
}

static int fake_nl_send(void *ctx, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int left = (int)len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		fake_nl_request(ctx, nlh);
	return 0;
}

static ssize_t fake_nl_recv(void *ctx, void *buf, size_t cap, bool wait)
{
	struct fake_nl *k = ctx;
	size_t len;

	(void)wait; /* nothing else will come: no wait */
	if (!k->n)
		return -EAGAIN;
	len = k->q[k->head].len;
	if (len > cap)
		return -EMSGSIZE;
	memcpy(buf, k->q[k->head].buf, len);
	free(k->q[k->head].buf);
	k->head = (k->head + 1) % FAKE_NL_QUEUE;
	k->n--;
	if (k->running)
		fake_nl_next_part(k);
	return (ssize_t)len;
}

static void fake_nl_flush(struct fake_nl *k)
{
	while (k->n) {
		free(k->q[k->head].buf);
		k->head = (k->head + 1) % FAKE_NL_QUEUE;
		k->n--;
	}
	k->running = false;
}

static int fake_nl_reopen(void *ctx, uint32_t *portid)
{
	struct fake_nl *k = ctx;

	fake_nl_flush(k);
	k->reopens++;
	*portid = ++k->portid;
	return 0;
}

static void fake_nl_init(struct fake_nl *k)
{
	static const char *const names[FAKE_N_FILES] = {
		[FAKE_LINKS] = "links.bin", [FAKE_LINKS_INTR] = "links-intr.bin",
		[FAKE_ROUTES4] = "routes4.bin", [FAKE_ROUTES6] = "routes6.bin",
		[FAKE_STATS] = "stats.bin", [FAKE_NEIGH4] = "neigh4.bin",
		[FAKE_NEIGH6] = "neigh6.bin", [FAKE_FDB] = "fdb.bin", [FAKE_STALE] = "stale.bin",
	};

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < FAKE_N_FILES; i++)
		fake_nl_load(&k->files[i], names[i]);
	k->portid = 4242;
	k->io = (struct nl_io){ fake_nl_send, fake_nl_recv, fake_nl_reopen, k };
}

static void fake_nl_free(struct fake_nl *k)
{
	fake_nl_flush(k);
	for (size_t i = 0; i < FAKE_N_FILES; i++)
		free(k->files[i].buf);
}

#endif
