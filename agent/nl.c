#include "nl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "clock.h"
#include "log.h"

struct nl {
	struct mnl_socket *sock;
	struct mnl_socket *watch;	/* RTMGRP_LINK notifications */
	struct mnl_socket *podwatch;	/* route and neighbour notifications (nl_open() with pods) */
	int netns;			/* the namespace sock reads, to reopen it there; -1: unknown */
	const struct nl_io *io;		/* tests: a fake kernel instead of sock */
	const char *node;		/* for log lines */
	uint32_t portid;
	uint32_t seq;
	bool no_getstats;	/* the kernel refused RTM_GETSTATS once */
	struct nl_health health;
	struct log_limit retry_log, fail_log, reopen_log;
	/* The kernel fills dump replies up to 32 KB (libmnl's MNL_SOCKET_DUMP_SIZE);
	 * a smaller buffer would truncate them. Aligned: replies are read in
	 * place as struct nlmsghdr. */
	_Alignas(8) char buf[32768];
};

/* Retried and failed requests are logged once a minute at most, with how
 * many were not: pod churn can interrupt a dump every sample. */
#define NL_LOG_QUIET_NS (60ULL * NS_PER_SEC)
/* Our requests are one header and a few attributes. */
#define NL_REQ_MAX 256

/* The request socket: bound, with a receive timeout so that a kernel that
 * never answers cannot hang the agent. */
static struct mnl_socket *request_socket(char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = 2 };
	struct mnl_socket *sock = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (!sock) {
		snprintf(err, errlen, "netlink: socket: %s", strerror(errno));
		return NULL;
	}
	if (mnl_socket_bind(sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink: bind: %s", strerror(errno));
		goto fail;
	}
	if (setsockopt(mnl_socket_get_fd(sock), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		snprintf(err, errlen, "netlink: SO_RCVTIMEO: %s", strerror(errno));
		goto fail;
	}
	return sock;
fail:
	mnl_socket_close(sock);
	return NULL;
}

/* The calling thread's network namespace: the one setns() changes. */
static int this_netns(void)
{
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	return fd >= 0 ? fd : open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
}

struct nl *nl_open(bool pods, char *err, size_t errlen)
{
	struct nl *nl = calloc(1, sizeof(*nl));

	if (!nl) {
		snprintf(err, errlen, "netlink: out of memory");
		return NULL;
	}
	nl->node = "?";
	/* Without it a socket out of step is reopened only in the namespace
	 * the agent is in then, which is this one unless --netns. */
	nl->netns = this_netns();
	nl->sock = request_socket(err, errlen);
	if (!nl->sock)
		goto fail;
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);
	nl->watch = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!nl->watch || mnl_socket_bind(nl->watch, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink: link notifications: %s", strerror(errno));
		goto fail;
	}
	if (pods) {
		/* Without it pods' addresses are still looked up, less often. */
		nl->podwatch = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (nl->podwatch && mnl_socket_bind(nl->podwatch, RTMGRP_IPV4_ROUTE |
						    RTMGRP_IPV6_ROUTE | RTMGRP_NEIGH,
						    MNL_SOCKET_AUTOPID) < 0) {
			mnl_socket_close(nl->podwatch);
			nl->podwatch = NULL;
		}
	}
	return nl;
fail:
	nl_close(nl);
	return NULL;
}

struct nl *nl_open_io(const struct nl_io *io, uint32_t portid)
{
	struct nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return NULL;
	nl->node = "?";
	nl->netns = -1;
	nl->io = io;
	nl->portid = portid;
	nl->seq = 1000;
	return nl;
}

void nl_close(struct nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		mnl_socket_close(nl->sock);
	if (nl->watch)
		mnl_socket_close(nl->watch);
	if (nl->podwatch)
		mnl_socket_close(nl->podwatch);
	if (nl->netns >= 0)
		close(nl->netns);
	free(nl);
}

void nl_set_node(struct nl *nl, const char *node)
{
	nl->node = node;
}

void nl_health(const struct nl *nl, struct nl_health *out)
{
	*out = nl->health;
}

/* ------------------------------------------------------ the request socket */

static int sock_send(struct nl *nl, const void *buf, size_t len)
{
	if (nl->io)
		return nl->io->send(nl->io->ctx, buf, len);
	return mnl_socket_sendto(nl->sock, buf, len) < 0 ? -errno : 0;
}

/* One datagram, or -errno: -ETIMEDOUT when none came in time (wait), or
 * -EAGAIN when none is there (!wait). */
static ssize_t sock_recv(struct nl *nl, void *buf, size_t cap, bool wait)
{
	ssize_t n;

	if (nl->io) {
		n = nl->io->recv(nl->io->ctx, buf, cap, wait);
	} else {
		/* MSG_TRUNC: the datagram's real length, so a cut one is seen. */
		n = recv(mnl_socket_get_fd(nl->sock), buf, cap, (wait ? 0 : MSG_DONTWAIT) | MSG_TRUNC);
		if (n < 0)
			n = -errno;
		else if ((size_t)n > cap)
			n = -EMSGSIZE;
	}
	return n == -EAGAIN && wait ? -ETIMEDOUT : n;
}

/* A fresh socket in the namespace the old one read, in its place; the old
 * one, with whatever it still holds, is closed. 0 or -errno (the old one
 * kept). Needs CAP_SYS_ADMIN only when the agent reads another namespace
 * (--netns), which it had to enter at start anyway. */
static int reopen(struct nl *nl, char *err, size_t errlen)
{
	struct mnl_socket *sock;
	struct stat a, b;
	bool moved = false;
	int here = -1, rc = 0;

	if (nl->io) {
		rc = nl->io->reopen(nl->io->ctx, &nl->portid);
		if (rc)
			snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	if (nl->netns >= 0) {
		here = this_netns();
		if (here < 0 || fstat(here, &a) || fstat(nl->netns, &b)) {
			rc = -errno;
			snprintf(err, errlen, "netns: %s", strerror(errno));
			goto out;
		}
		if (a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
			if (setns(nl->netns, CLONE_NEWNET)) {
				rc = -errno;
				snprintf(err, errlen, "setns: %s", strerror(errno));
				goto out;
			}
			moved = true;
		}
	}
	sock = request_socket(err, errlen);
	if (moved && setns(here, CLONE_NEWNET))
		log_error("netlink", "%s: cannot return to the agent's namespace after reopening "
			  "the netlink socket: %s", nl->node, strerror(errno));
	if (!sock) {
		rc = -EIO;
		goto out;
	}
	mnl_socket_close(nl->sock);
	nl->sock = sock;
	nl->portid = mnl_socket_get_portid(sock);
out:
	if (here >= 0)
		close(here);
	return rc;
}

/* Reads without waiting whatever the socket holds: the rest of a dump
 * left unread (each read makes the kernel queue its next part, until its
 * end), acks and errors of earlier requests. Counted as stale. */
static void drain(struct nl *nl)
{
	for (size_t i = 0; i < NL_READ_MAX; i++) {
		ssize_t n = sock_recv(nl, nl->buf, sizeof(nl->buf), false);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)nl->buf;
		int left = (int)n;

		if (n < 0 && n != -ENOBUFS && n != -EMSGSIZE)
			return;
		for (; n > 0 && mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
			nl->health.stale++;
	}
}

/* One request's replies, datagram by datagram. */
struct reply {
	uint32_t seq, portid;
	mnl_cb_t cb;
	void *data;
	bool interrupted;	/* NLM_F_DUMP_INTR: what follows may miss or repeat entries */
	bool ended;		/* NLMSG_DONE, or an error or ack of ours */
	int err;		/* the kernel's answer: 0 or -errno */
	uint64_t stale;
};

/* Takes one datagram: this request's messages go to cb, until the kernel
 * flags the dump interrupted; messages of earlier requests are skipped
 * (read to their end so the socket stays in step). Returns whether this
 * request's replies have ended. */
static bool reply_take(struct reply *r, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > INT_MAX ? INT_MAX : (int)len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_seq != r->seq || (nlh->nlmsg_pid && nlh->nlmsg_pid != r->portid)) {
			r->stale++;
			continue;
		}
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			r->interrupted = true;
		if (nlh->nlmsg_type == NLMSG_DONE) {
			int32_t e = 0;

			/* A dump that failed on the kernel's side ends with its
			 * errno in NLMSG_DONE. */
			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(e))
				memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
			r->err = e < 0 ? e : 0;
			r->ended = true;
			return true;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			int32_t e = -EBADMSG;

			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(struct nlmsgerr))
				memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
			r->err = e <= 0 && e > -4096 ? e : -EBADMSG;
			r->ended = true;
			return true;
		}
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE && !r->interrupted)
			r->cb(nlh, r->data);
	}
	return false;
}

/* Sends req and reads its replies to their end. 0 (r says how it ended),
 * or -errno: the send failed, no reply in time (-ETIMEDOUT), replies lost
 * (-ENOBUFS) or too long (-EMSGSIZE), or no end after NL_READ_MAX datagrams
 * (-EPROTO). */
static int exchange(struct nl *nl, const struct nlmsghdr *req, struct reply *r)
{
	int rc = sock_send(nl, req, req->nlmsg_len);

	if (rc)
		return rc;
	for (size_t i = 0; i < NL_READ_MAX; i++) {
		ssize_t n = sock_recv(nl, nl->buf, sizeof(nl->buf), true);

		if (n < 0)
			return (int)n;
		if (reply_take(r, nl->buf, (size_t)n))
			return 0;
	}
	return -EPROTO;
}

/* Socket errors after which it may hold, or have lost, replies we cannot
 * account for. */
static bool out_of_step(int rc)
{
	return rc == -ETIMEDOUT || rc == -ENOBUFS || rc == -EMSGSIZE || rc == -EPROTO;
}

/* The kernel's answers the next try may get past: interrupted, a dump
 * still running on the socket, short of memory. The others (-EOPNOTSUPP,
 * -EINVAL, -ENODEV, ...) are final. */
static bool retryable(int rc)
{
	return rc == -EINTR || rc == -EBUSY || rc == -EAGAIN || rc == -ENOBUFS;
}

static const char *what_of(uint16_t type)
{
	switch (type) {
	case RTM_GETLINK: return "links";
	case RTM_GETSTATS: return "link stats";
	case RTM_GETROUTE: return "routes";
	case RTM_GETNEIGH: return "neighbours";
	}
	return "netlink";
}

static const char *why_of(int rc)
{
	return rc == -EINTR ? "interrupted (links changed during it)" : strerror(-rc);
}

/* Sends the request in nl->buf and feeds every reply to cb until the kernel
 * says done (dump) or acknowledges (single request), keeping the socket in
 * step (nl.h): NL_TRIES tries at most. restart (may be NULL) is called
 * before each try after the first: cb saw that try's entries up to the
 * interruption, and sees them again. Without restart cb must keep the
 * last of an entry seen twice (counters) or take it twice harmlessly
 * (podmap merges an address seen twice on one interface). */
static int transact(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
		    void (*restart)(void *data))
{
	_Alignas(8) char req_buf[NL_REQ_MAX];
	struct nlmsghdr *req = (struct nlmsghdr *)req_buf;
	const char *what = what_of(nlh->nlmsg_type);
	char err[128];
	unsigned tries = 0, interrupted = 0, reopened = 0;
	int rc = -EIO, sock_err = 0, last = 0;

	if (nlh->nlmsg_len > sizeof(req_buf))
		return -EMSGSIZE;
	/* Replies land in nl->buf: keep the request for the next try. */
	memcpy(req_buf, nlh, nlh->nlmsg_len);
	nl->health.requests++;
	while (tries < NL_TRIES) {
		struct reply r = { .seq = req->nlmsg_seq, .portid = nl->portid, .cb = cb, .data = data };

		tries++;
		sock_err = exchange(nl, req, &r);
		nl->health.stale += r.stale;
		rc = sock_err ? sock_err : r.interrupted ? -EINTR : r.err;
		if (!sock_err && r.interrupted) {
			nl->health.interrupted++;
			interrupted++;
		}
		if (!rc || !(sock_err ? out_of_step(sock_err) : retryable(rc)) || tries == NL_TRIES)
			break;
		nl->health.retries++;
		last = rc;
		/* Stale replies even on a retry, after the drain: the socket does
		 * not catch up. Out of step: start over on a new one. */
		if (out_of_step(sock_err) || (tries > 1 && r.stale)) {
			if (reopen(nl, err, sizeof(err))) {
				nl->health.reopen_errors++;
				log_limited(&nl->fail_log, clock_mono_ns(), NL_LOG_QUIET_NS, LOG_LVL_ERROR,
					    "netlink", "%s: netlink dump of %s: %s; cannot reopen the "
					    "socket: %s", nl->node, what, why_of(rc), err);
				drain(nl);
			} else {
				nl->health.reopens++;
				reopened++;
				log_limited(&nl->reopen_log, clock_mono_ns(), NL_LOG_QUIET_NS,
					    LOG_LVL_WARN, "netlink", "%s: netlink dump of %s: %s (try "
					    "%u of %u); reopened the socket (%llu times so far)",
					    nl->node, what, why_of(rc), tries, NL_TRIES,
					    (unsigned long long)nl->health.reopens);
			}
		} else {
			drain(nl);
		}
		req->nlmsg_seq = ++nl->seq;
		if (restart)
			restart(data);
	}
	if (rc && (out_of_step(sock_err) || retryable(rc))) {
		nl->health.failed++;
		log_limited(&nl->fail_log, clock_mono_ns(), NL_LOG_QUIET_NS, LOG_LVL_WARN, "netlink",
			    "%s: netlink dump of %s failed %u times in a row (%u interrupted), last: "
			    "%s; trying again at the next sample (%llu failed so far)", nl->node, what,
			    tries, interrupted, why_of(rc), (unsigned long long)nl->health.failed);
		/* The next call starts on a quiet socket. */
		drain(nl);
	} else if (!rc && tries > 1 && interrupted == tries - 1) {
		log_limited(&nl->retry_log, clock_mono_ns(), NL_LOG_QUIET_NS, LOG_LVL_INFO, "netlink",
			    "%s: netlink dump of %s interrupted %u time%s in a row (links changing); "
			    "read whole on try %u (%llu interrupted so far)", nl->node, what,
			    interrupted, interrupted == 1 ? "" : "s", tries,
			    (unsigned long long)nl->health.interrupted);
	} else if (!rc && tries > 1) {
		log_limited(&nl->retry_log, clock_mono_ns(), NL_LOG_QUIET_NS, LOG_LVL_INFO, "netlink",
			    "%s: netlink dump of %s failed %u time%s in a row (last: %s%s); read "
			    "whole on try %u", nl->node, what, tries - 1, tries == 2 ? "" : "s",
			    why_of(last), reopened ? "; socket reopened" : "", tries);
	}
	return rc;
}

bool nl_links_changed(struct nl *nl)
{
	bool changed = false;
	ssize_t n = 0;

	if (!nl->watch)
		return false;
	/* The content does not matter: any event means "look again". An
	 * overrun (ENOBUFS) lost some: look again too, a full dump. */
	for (size_t i = 0; i < NL_READ_MAX; i++) {
		n = mnl_socket_recvfrom(nl->watch, nl->buf, sizeof(nl->buf));
		if (n <= 0)
			break;
		changed = true;
	}
	return changed || (n < 0 && errno == ENOBUFS);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index > 0)
		*(uint32_t *)data = (uint32_t)ifi->ifi_index;
	return MNL_CB_OK;
}

int nl_ifindex(struct nl *nl, const char *name, uint32_t *ifindex)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	uint32_t found = 0;
	int rc;

	if (strnlen(name, IFNAMSIZ) >= IFNAMSIZ)
		return -ENODEV;
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK; /* the ACK ends the exchange */
	nlh->nlmsg_seq = ++nl->seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	/* Skip the per-VF and stats blobs we do not read. */
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	rc = transact(nl, nlh, link_cb, &found, NULL);
	if (rc)
		return rc;
	if (!found)
		return -ENODEV;
	*ifindex = found;
	return 0;
}

struct dump_ctx {
	nl_stats_fn fn;
	void *ctx;
};

static struct ifreading from64(const struct rtnl_link_stats64 *st)
{
	return (struct ifreading){
		.rx_bytes = st->rx_bytes,
		.tx_bytes = st->tx_bytes,
		.rx_dropped = st->rx_dropped,
		.tx_dropped = st->tx_dropped,
		.rx_missed_errors = st->rx_missed_errors,
	};
}

static int stats_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(attr, IFLA_STATS_MAX) < 0)
		return MNL_CB_OK; /* newer kernel, newer attribute */
	if (mnl_attr_get_type(attr) == IFLA_STATS_LINK_64 &&
	    mnl_attr_validate2(attr, MNL_TYPE_UNSPEC, sizeof(struct rtnl_link_stats64)) < 0)
		return MNL_CB_OK; /* too short to trust: treat as absent */
	tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_STATS_MAX + 1] = { NULL };
	const struct dump_ctx *d = data;
	const struct if_stats_msg *ifsm;
	struct rtnl_link_stats64 st;
	struct ifreading c;

	if (nlh->nlmsg_type != RTM_NEWSTATS || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifsm))
		return MNL_CB_OK;
	ifsm = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ifsm), stats_attr_cb, tb) < 0 || !tb[IFLA_STATS_LINK_64])
		return MNL_CB_OK;
	/* The payload may be longer on newer kernels; the prefix is stable.
	 * memcpy: netlink attributes are only 4-byte aligned. */
	memcpy(&st, mnl_attr_get_payload(tb[IFLA_STATS_LINK_64]), sizeof(st));
	c = from64(&st);
	d->fn(d->ctx, ifsm->ifindex, &c, 64);
	return MNL_CB_OK;
}

static int link_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, IFLA_MAX) < 0)
		return MNL_CB_OK;
	switch (type) {
	case IFLA_IFNAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_OK;
		break;
	case IFLA_STATS64:
		if (mnl_attr_validate2(attr, MNL_TYPE_UNSPEC, sizeof(struct rtnl_link_stats64)) < 0)
			return MNL_CB_OK;
		break;
	case IFLA_STATS:
		if (mnl_attr_validate2(attr, MNL_TYPE_UNSPEC, sizeof(struct rtnl_link_stats)) < 0)
			return MNL_CB_OK;
		break;
	case IFLA_LINKINFO:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return MNL_CB_OK;
		break;
	case IFLA_MASTER:
	case IFLA_LINK_NETNSID:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_OK;
		break;
	}
	tb[type] = attr;
	return MNL_CB_OK;
}

/* Counters from an RTM_GETLINK dump, for kernels without RTM_GETSTATS. */
static int getlink_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
	const struct dump_ctx *d = data;
	const struct ifinfomsg *ifi;
	struct rtnl_link_stats64 st64;
	struct rtnl_link_stats st32;
	struct ifreading c;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ifi), link_attr_cb, tb) < 0 || ifi->ifi_index <= 0)
		return MNL_CB_OK;
	if (tb[IFLA_STATS64]) {
		memcpy(&st64, mnl_attr_get_payload(tb[IFLA_STATS64]), sizeof(st64));
		c = from64(&st64);
		d->fn(d->ctx, (uint32_t)ifi->ifi_index, &c, 64);
	} else if (tb[IFLA_STATS]) {
		memcpy(&st32, mnl_attr_get_payload(tb[IFLA_STATS]), sizeof(st32));
		c = (struct ifreading){
			.rx_bytes = st32.rx_bytes,
			.tx_bytes = st32.tx_bytes,
			.rx_dropped = st32.rx_dropped,
			.tx_dropped = st32.tx_dropped,
			.rx_missed_errors = st32.rx_missed_errors,
		};
		d->fn(d->ctx, (uint32_t)ifi->ifi_index, &c, 32);
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *put_dump(struct nl *nl, uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++nl->seq;
	return nlh;
}

int nl_dump_stats(struct nl *nl, nl_stats_fn fn, void *ctx)
{
	struct dump_ctx d = { fn, ctx };
	struct nlmsghdr *nlh;
	struct if_stats_msg *ifsm;
	struct ifinfomsg *ifi;
	int rc;

	if (!nl->no_getstats) {
		nlh = put_dump(nl, RTM_GETSTATS);
		ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
		ifsm->family = AF_UNSPEC;
		ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
		rc = transact(nl, nlh, stats_cb, &d, NULL);
		if (rc != -EOPNOTSUPP && rc != -EINVAL)
			return rc;
		nl->no_getstats = true;
	}
	nlh = put_dump(nl, RTM_GETLINK);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return transact(nl, nlh, getlink_stats_cb, &d, NULL);
}

int nl_read_stats(struct nl *nl, const uint32_t *ifindexes, size_t n, nl_stats_fn fn, void *ctx)
{
	struct dump_ctx d = { fn, ctx };
	char *p = nl->buf, err[128];
	uint32_t first = nl->seq + 1;
	size_t replies = 0;
	int rc;

	if (n == 0)
		return 0;
	if (n > NL_MAX_BATCH || nl->no_getstats)
		return -EOPNOTSUPP;
	for (size_t i = 0; i < n; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(p);
		struct if_stats_msg *ifsm;

		nlh->nlmsg_type = RTM_GETSTATS;
		nlh->nlmsg_flags = NLM_F_REQUEST;
		nlh->nlmsg_seq = ++nl->seq;
		ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
		ifsm->family = AF_UNSPEC;
		ifsm->ifindex = ifindexes[i];
		ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
		p += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	nl->health.requests++;
	rc = sock_send(nl, nl->buf, (size_t)(p - nl->buf));
	/* One reply per request: the stats, or an error for a gone ifindex. */
	for (size_t k = 0; !rc && replies < n; k++) {
		ssize_t len = k < NL_READ_MAX ? sock_recv(nl, nl->buf, sizeof(nl->buf), true) : -EPROTO;
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)nl->buf;
		int left = (int)len;

		if (len < 0) {
			rc = (int)len;
			break;
		}
		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			if ((nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid) ||
			    nlh->nlmsg_seq < first || nlh->nlmsg_seq > nl->seq) {
				nl->health.stale++; /* a reply to an earlier request */
				continue;
			}
			replies++;
			if (nlh->nlmsg_type == RTM_NEWSTATS)
				stats_cb(nlh, &d);
		}
	}
	if (rc) {
		/* Not retried here: the caller reads these with a dump next. */
		nl->health.failed++;
		if (out_of_step(rc)) {
			if (reopen(nl, err, sizeof(err)) == 0) {
				nl->health.reopens++;
				log_limited(&nl->reopen_log, clock_mono_ns(), NL_LOG_QUIET_NS,
					    LOG_LVL_WARN, "netlink", "%s: netlink stats requests: %s; "
					    "reopened the socket (%llu times so far)", nl->node,
					    strerror(-rc), (unsigned long long)nl->health.reopens);
			} else {
				nl->health.reopen_errors++;
			}
		}
	}
	return rc;
}

struct links_ctx {
	struct ifselect_link *links;
	size_t cap;
	size_t n;
	bool overflow;
};

static int linkinfo_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, IFLA_INFO_MAX) < 0)
		return MNL_CB_OK;
	if ((type == IFLA_INFO_KIND || type == IFLA_INFO_SLAVE_KIND) &&
	    mnl_attr_validate(attr, MNL_TYPE_STRING) < 0)
		return MNL_CB_OK;
	tb[type] = attr;
	return MNL_CB_OK;
}

/* Copies a netlink string attribute (NUL-terminated or not) into dst. */
static void attr_str(const struct nlattr *attr, char *dst, size_t cap)
{
	size_t n = strnlen(mnl_attr_get_payload(attr), mnl_attr_get_payload_len(attr));

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, mnl_attr_get_payload(attr), n);
	dst[n] = '\0';
}

static int links_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
	const struct nlattr *info[IFLA_INFO_MAX + 1] = { NULL };
	struct links_ctx *lc = data;
	const struct ifinfomsg *ifi;
	struct ifselect_link l = { 0 };
	char slave_kind[16] = "";

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ifi), link_attr_cb, tb) < 0 || ifi->ifi_index <= 0 ||
	    !tb[IFLA_IFNAME])
		return MNL_CB_OK;
	l.ifindex = (uint32_t)ifi->ifi_index;
	l.loopback = ifi->ifi_flags & IFF_LOOPBACK;
	attr_str(tb[IFLA_IFNAME], l.name, sizeof(l.name));
	if (tb[IFLA_LINKINFO] && mnl_attr_parse_nested(tb[IFLA_LINKINFO], linkinfo_attr_cb, info) >= 0) {
		if (info[IFLA_INFO_KIND])
			attr_str(info[IFLA_INFO_KIND], l.kind, sizeof(l.kind));
		if (info[IFLA_INFO_SLAVE_KIND])
			attr_str(info[IFLA_INFO_SLAVE_KIND], slave_kind, sizeof(slave_kind));
	}
	l.bond_slave = !strcmp(slave_kind, "bond") || !strcmp(slave_kind, "team");
	l.master = tb[IFLA_MASTER] ? mnl_attr_get_u32(tb[IFLA_MASTER]) : 0;
	l.peer_netns = tb[IFLA_LINK_NETNSID] != NULL;
	if (lc->n == lc->cap) {
		lc->overflow = true;
		return MNL_CB_OK;
	}
	lc->links[lc->n++] = l;
	return MNL_CB_OK;
}

/* A link dump tried again lists every link again. */
static void links_restart(void *data)
{
	struct links_ctx *lc = data;

	lc->n = 0;
	lc->overflow = false;
}

static void mark_default(struct links_ctx *lc, uint32_t ifindex)
{
	for (size_t i = 0; i < lc->n; i++)
		if (lc->links[i].ifindex == ifindex)
			lc->links[i].default_route = true;
}

static int route_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, RTA_MAX) < 0)
		return MNL_CB_OK;
	if ((type == RTA_OIF || type == RTA_TABLE) && mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	tb[type] = attr;
	return MNL_CB_OK;
}

static int routes_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { NULL };
	struct links_ctx *lc = data;
	const struct rtmsg *rtm;
	uint32_t table;

	if (nlh->nlmsg_type != RTM_NEWROUTE || mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_dst_len != 0 || rtm->rtm_type != RTN_UNICAST ||
	    mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, tb) < 0)
		return MNL_CB_OK;
	table = tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	if (table != RT_TABLE_MAIN)
		return MNL_CB_OK;
	if (tb[RTA_OIF])
		mark_default(lc, mnl_attr_get_u32(tb[RTA_OIF]));
	if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *nh = mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		size_t left = mnl_attr_get_payload_len(tb[RTA_MULTIPATH]);

		while (left >= sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) && nh->rtnh_len <= left) {
			mark_default(lc, (uint32_t)nh->rtnh_ifindex);
			if ((size_t)RTNH_ALIGN(nh->rtnh_len) >= left)
				break;
			left -= (size_t)RTNH_ALIGN(nh->rtnh_len);
			nh = RTNH_NEXT(nh);
		}
	}
	return MNL_CB_OK;
}

int nl_links(struct nl *nl, struct ifselect_link *links, size_t cap, size_t *n)
{
	struct links_ctx lc = { links, cap, 0, false };
	static const uint8_t families[] = { AF_INET, AF_INET6 };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct rtmsg *rtm;
	int rc;

	nlh = put_dump(nl, RTM_GETLINK);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	rc = transact(nl, nlh, links_cb, &lc, links_restart);
	if (rc)
		return rc;
	for (size_t f = 0; f < sizeof(families); f++) {
		nlh = put_dump(nl, RTM_GETROUTE);
		rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = families[f];
		rc = transact(nl, nlh, routes_cb, &lc, NULL);
		/* A kernel without IPv6 has no IPv6 routes to mark. */
		if (rc && !(families[f] == AF_INET6 && rc == -EAFNOSUPPORT))
			return rc;
	}
	*n = lc.n;
	return lc.overflow ? -E2BIG : 0;
}

/* ------------------------------------------------------------ pods' facts */

#define NL_FACT_ATTR_MAX (RTA_MAX > NDA_MAX ? RTA_MAX : NDA_MAX)

struct facts_ctx {
	nl_fact_fn fn;
	void *ctx;
};

static int fact_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	/* RTA_MAX and NDA_MAX bound the two tables; both are small. */
	if (mnl_attr_get_type(attr) > NL_FACT_ATTR_MAX)
		return MNL_CB_OK;
	tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

/* An address attribute of 4 or 16 bytes, as its family says. */
static bool fact_ip(const struct nlattr *a, uint8_t family, struct report_ip *ip)
{
	uint16_t len = a ? mnl_attr_get_payload_len(a) : 0;

	if (!a || !((family == AF_INET && len == 4) || (family == AF_INET6 && len == 16)))
		return false;
	ip->len = (uint8_t)len;
	memcpy(ip->addr, mnl_attr_get_payload(a), len);
	return true;
}

static bool fact_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) != sizeof(uint32_t))
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

static bool fact_mac(const struct nlattr *a, uint8_t *mac)
{
	if (!a || mnl_attr_get_payload_len(a) != 6)
		return false;
	memcpy(mac, mnl_attr_get_payload(a), 6);
	return true;
}

/* A host route (/32, /128) through one interface. */
static void route_fact(const struct nlmsghdr *nlh, const struct facts_ctx *fc)
{
	const struct nlattr *tb[NL_FACT_ATTR_MAX + 1] = { NULL };
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct podmap_fact f = { .kind = PODMAP_ROUTE, .deleted = nlh->nlmsg_type == RTM_DELROUTE };

	/* Kernel routes are the prefixes of the host's own addresses (a ptp
	 * CNI's fd00::1/128 on every pod's veth), never a pod's. */
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm) || rtm->rtm_type != RTN_UNICAST ||
	    (rtm->rtm_flags & RTM_F_CLONED) || rtm->rtm_protocol == RTPROT_KERNEL ||
	    !((rtm->rtm_family == AF_INET && rtm->rtm_dst_len == 32) ||
	      (rtm->rtm_family == AF_INET6 && rtm->rtm_dst_len == 128)) ||
	    mnl_attr_parse(nlh, sizeof(*rtm), fact_attr_cb, tb) < 0 ||
	    !fact_ip(tb[RTA_DST], rtm->rtm_family, &f.ip) || !fact_u32(tb[RTA_OIF], &f.ifindex))
		return;
	if (!fact_u32(tb[RTA_TABLE], &f.table))
		f.table = rtm->rtm_table;
	fc->fn(fc->ctx, &f);
}

/* Neighbour states that name a MAC someone answers at. */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

/* A neighbour entry (IP to MAC on a device), or a bridge FDB entry (MAC
 * behind a port). An FDB entry of the port's own address (permanent) or
 * of the device itself (NTF_SELF) is no pod's. */
static void neigh_fact(const struct nlmsghdr *nlh, const struct facts_ctx *fc)
{
	const struct nlattr *tb[NL_FACT_ATTR_MAX + 1] = { NULL };
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct podmap_fact f = { .deleted = nlh->nlmsg_type == RTM_DELNEIGH };

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm) || ndm->ndm_ifindex <= 0 ||
	    mnl_attr_parse(nlh, sizeof(*ndm), fact_attr_cb, tb) < 0)
		return;
	f.ifindex = (uint32_t)ndm->ndm_ifindex;
	if (ndm->ndm_family == AF_BRIDGE) {
		if ((ndm->ndm_flags & NTF_SELF) || (ndm->ndm_state & NUD_PERMANENT) ||
		    !fact_mac(tb[NDA_LLADDR], f.mac) || !fact_u32(tb[NDA_MASTER], &f.master))
			return;
		f.kind = PODMAP_FDB;
	} else {
		if (!fact_ip(tb[NDA_DST], ndm->ndm_family, &f.ip))
			return;
		f.kind = PODMAP_NEIGH;
		/* Failed or incomplete: no longer a way to it. */
		if (!fact_mac(tb[NDA_LLADDR], f.mac) || !(ndm->ndm_state & NUD_USABLE))
			f.deleted = true;
	}
	fc->fn(fc->ctx, &f);
}

static int facts_cb(const struct nlmsghdr *nlh, void *data)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		route_fact(nlh, data);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		neigh_fact(nlh, data);
		break;
	}
	return MNL_CB_OK;
}

int nl_pod_facts(struct nl *nl, bool bridges, nl_fact_fn fn, void *ctx)
{
	static const uint8_t families[] = { AF_INET, AF_INET6, AF_BRIDGE };
	struct facts_ctx fc = { fn, ctx };
	struct nlmsghdr *nlh;
	int rc;

	/* Every table: a dump is not filtered unless asked. */
	for (size_t i = 0; i < 2; i++) {
		struct rtmsg *rtm;

		nlh = put_dump(nl, RTM_GETROUTE);
		rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = families[i];
		rc = transact(nl, nlh, facts_cb, &fc, NULL);
		if (rc && !(families[i] == AF_INET6 && rc == -EAFNOSUPPORT))
			return rc;
	}
	/* Neighbours, and the bridges' FDB, only where a pod is a port. */
	for (size_t i = 0; bridges && i < sizeof(families); i++) {
		struct ndmsg *ndm;

		nlh = put_dump(nl, RTM_GETNEIGH);
		ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
		ndm->ndm_family = families[i];
		rc = transact(nl, nlh, facts_cb, &fc, NULL);
		if (rc && !(families[i] == AF_INET6 && rc == -EAFNOSUPPORT))
			return rc;
	}
	return 0;
}

bool nl_pod_watch(const struct nl *nl)
{
	return nl->podwatch != NULL;
}

bool nl_pod_changes(struct nl *nl, nl_fact_fn fn, void *ctx)
{
	struct facts_ctx fc = { fn, ctx };
	ssize_t n = 0;

	if (!nl->podwatch)
		return false;
	for (size_t i = 0; i < NL_READ_MAX; i++) {
		n = mnl_socket_recvfrom(nl->podwatch, nl->buf, sizeof(nl->buf));
		if (n <= 0)
			break;
		mnl_cb_run(nl->buf, (size_t)n, 0, 0, facts_cb, &fc);
	}
	return n < 0 && errno == ENOBUFS;
}

/* ---------------------------------------------------------- replies alone */

/* Feeds every message of buf to cb, as transact() does with what it
 * receives; 0 at the end of the buffer or at NLMSG_DONE, -errno on an
 * error message or a malformed one. */
static int walk(const void *buf, size_t len, mnl_cb_t cb, void *data)
{
	int rc;

	errno = 0;
	rc = mnl_cb_run(buf, len, 0, 0, cb, data);
	return rc == MNL_CB_ERROR ? (errno ? -errno : -EBADMSG) : 0;
}

static int any_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	return nlh->nlmsg_type == RTM_NEWSTATS ? stats_cb(nlh, data) : getlink_stats_cb(nlh, data);
}

int nl_parse_stats(const void *buf, size_t len, nl_stats_fn fn, void *ctx)
{
	struct dump_ctx d = { fn, ctx };

	return walk(buf, len, any_stats_cb, &d);
}

int nl_parse_links(const void *buf, size_t len, struct ifselect_link *links, size_t cap,
		   size_t *n)
{
	struct links_ctx lc = { links, cap, 0, false };
	int rc = walk(buf, len, links_cb, &lc);

	*n = lc.n;
	return rc ? rc : lc.overflow ? -E2BIG : 0;
}

int nl_parse_routes(const void *buf, size_t len, struct ifselect_link *links, size_t n)
{
	struct links_ctx lc = { links, n, n, false };

	return walk(buf, len, routes_cb, &lc);
}

int nl_parse_facts(const void *buf, size_t len, nl_fact_fn fn, void *ctx)
{
	struct facts_ctx fc = { fn, ctx };

	return walk(buf, len, facts_cb, &fc);
}
