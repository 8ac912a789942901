#include "nl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

struct nl {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
	/* The kernel fills dump replies up to 32 KB (libmnl's MNL_SOCKET_DUMP_SIZE);
	 * a smaller buffer would truncate them. */
	char buf[32768];
};

struct nl *nl_open(char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = 2 };
	struct nl *nl = calloc(1, sizeof(*nl));

	if (!nl) {
		snprintf(err, errlen, "netlink: out of memory");
		return NULL;
	}
	nl->sock = mnl_socket_open(NETLINK_ROUTE);
	if (!nl->sock) {
		snprintf(err, errlen, "netlink: socket: %s", strerror(errno));
		goto fail;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink: bind: %s", strerror(errno));
		goto fail;
	}
	if (setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		snprintf(err, errlen, "netlink: SO_RCVTIMEO: %s", strerror(errno));
		goto fail;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);
	return nl;
fail:
	nl_close(nl);
	return NULL;
}

void nl_close(struct nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl);
}

/* Sends the request in nl->buf and feeds every reply to cb until the kernel
 * says done (dump) or acknowledges (single request). */
static int transact(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int rc;

	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rc = mnl_cb_run(nl->buf, (size_t)n, seq, nl->portid, cb, data);
	} while (rc == MNL_CB_OK);
	return rc == MNL_CB_ERROR ? (errno ? -errno : -EIO) : 0;
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
	rc = transact(nl, nlh, link_cb, &found);
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
	struct counters c;

	if (nlh->nlmsg_type != RTM_NEWSTATS || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifsm))
		return MNL_CB_OK;
	ifsm = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ifsm), stats_attr_cb, tb) < 0 || !tb[IFLA_STATS_LINK_64])
		return MNL_CB_OK;
	/* The payload may be longer on newer kernels; the prefix is stable.
	 * memcpy: netlink attributes are only 4-byte aligned. */
	memcpy(&st, mnl_attr_get_payload(tb[IFLA_STATS_LINK_64]), sizeof(st));
	c = (struct counters){
		.rx_bytes = st.rx_bytes,
		.tx_bytes = st.tx_bytes,
		.rx_packets = st.rx_packets,
		.tx_packets = st.tx_packets,
		.rx_dropped = st.rx_dropped,
		.tx_dropped = st.tx_dropped,
		.rx_errors = st.rx_errors,
		.tx_errors = st.tx_errors,
	};
	d->fn(d->ctx, ifsm->ifindex, &c);
	return MNL_CB_OK;
}

int nl_dump_stats(struct nl *nl, nl_stats_fn fn, void *ctx)
{
	struct dump_ctx d = { fn, ctx };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct if_stats_msg *ifsm;

	nlh->nlmsg_type = RTM_GETSTATS;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++nl->seq;
	ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
	ifsm->family = AF_UNSPEC;
	ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
	return transact(nl, nlh, stats_cb, &d);
}
