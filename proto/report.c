#include "report.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "errmsg.h"
#include "keyfile.h"
#include "nodekey.h"
#include "nodename.h"
#include "netsched.pb-c.h"
#include "podwire.h"

#define REPORT_MAC_BYTES 32 /* HMAC-SHA256 */

/* Interface names are what the kernel allows, and must be printable so
 * they are safe in logs, JSON and metrics labels. Node names follow
 * nodename.h. */
static bool name_ok(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '/')
			return false;
	}
	return true;
}

void report_iface_count(struct report_iface *ifc, uint64_t rx_bytes, uint64_t tx_bytes,
			uint64_t covered_ms)
{
	ifc->rx_bytes = rx_bytes;
	ifc->tx_bytes = tx_bytes;
	ifc->traffic.covered_ms = covered_ms;
	ifc->traffic.rx.average = traffic_per_second(rx_bytes, covered_ms);
	ifc->traffic.tx.average = traffic_per_second(tx_bytes, covered_ms);
}

void report_pod_count(struct report_pod *p, uint64_t rx_bytes, uint64_t tx_bytes,
		      uint64_t covered_ms)
{
	p->rx_bytes = rx_bytes;
	p->tx_bytes = tx_bytes;
	p->covered_ms = covered_ms;
	p->rx.average = traffic_per_second(rx_bytes, covered_ms);
	p->tx.average = traffic_per_second(tx_bytes, covered_ms);
}

uint64_t report_node_link(const struct report *r)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < r->n_ifaces && i < REPORT_MAX_INTERFACES; i++) {
		uint64_t l = r->ifaces[i].traffic.link_bytes_per_second;

		if (!l)
			return 0;
		sum = sum + l < sum ? UINT64_MAX : sum + l;
	}
	return sum;
}

bool report_ip_ok(const struct report_ip *ip)
{
	static const uint8_t zero[16], mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *a = ip->addr;

	if (ip->len == 4)
		return a[0] != 0 && a[0] != 127 && (a[0] & 0xf0) != 0xe0 && a[0] != 0xff &&
		       !(a[0] == 169 && a[1] == 254);
	if (ip->len != 16)
		return false;
	if (!memcmp(a, zero, 15) && (a[15] == 0 || a[15] == 1))
		return false; /* :: and ::1 */
	return a[0] != 0xff && !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80) &&
	       memcmp(a, mapped, sizeof(mapped)) != 0;
}

bool report_ip_equal(const struct report_ip *a, const struct report_ip *b)
{
	return a->len == b->len && a->len <= 16 && memcmp(a->addr, b->addr, a->len) == 0;
}

int report_ip_format(const struct report_ip *ip, char *dst, size_t cap)
{
	if ((ip->len != 4 && ip->len != 16) ||
	    !inet_ntop(ip->len == 4 ? AF_INET : AF_INET6, ip->addr, dst, (socklen_t)cap))
		return -EINVAL;
	return 0;
}

int report_ip_parse(const char *s, struct report_ip *ip)
{
	struct report_ip out = { 0 };

	if (inet_pton(AF_INET, s, out.addr) == 1)
		out.len = 4;
	else if (inet_pton(AF_INET6, s, out.addr) == 1)
		out.len = 16;
	else
		return -EINVAL;
	*ip = out;
	return 0;
}

/* One interface's figures, each by its bound (traffic.h). */
static int validate_iface(const struct report *r, const struct report_iface *ifc, char *err,
			  size_t errlen)
{
	const struct traffic *t = &ifc->traffic;
	uint64_t link = t->link_bytes_per_second;

	if (t->covered_ms > REPORT_MAX_COVERED_MS)
		return errmsg(err, errlen, -ERANGE, "%s: %s covers %llu ms, limit %llu ms", r->node,
			    ifc->name, (unsigned long long)t->covered_ms, REPORT_MAX_COVERED_MS);
	if (ifc->failed_samples > REPORT_MAX_FAILED_SAMPLES)
		return errmsg(err, errlen, -ERANGE, "%s: %s has %u failed samples in a row, limit %u",
			      r->node, ifc->name, ifc->failed_samples, REPORT_MAX_FAILED_SAMPLES);
	if (t->covered_ms == 0 && (ifc->rx_bytes || ifc->tx_bytes))
		return errmsg(err, errlen, -ERANGE, "%s: %s has bytes but covers no time", r->node,
			    ifc->name);
	/* Decoding derives them; only a report built by hand can disagree. */
	if (t->rx.average != traffic_per_second(ifc->rx_bytes, t->covered_ms) ||
	    t->tx.average != traffic_per_second(ifc->tx_bytes, t->covered_ms))
		return errmsg(err, errlen, -EINVAL, "%s: %s averages are not its byte counts over "
			    "its covered time (report_iface_count())", r->node, ifc->name);
	if (link > TRAFFIC_MAX_BYTES_PER_SECOND)
		return errmsg(err, errlen, -ERANGE, "%s: %s link speed %llu B/s, limit %llu B/s",
			    r->node, ifc->name, (unsigned long long)link,
			    TRAFFIC_MAX_BYTES_PER_SECOND);
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const struct traffic_figure *f = &traffic_figures[i];
		uint64_t v = traffic_get(t, f);

		if (f->bound == TRAFFIC_RATE && v > TRAFFIC_MAX_BYTES_PER_SECOND)
			return errmsg(err, errlen, -ERANGE, "%s: %s %s %llu B/s, limit %llu B/s",
				    r->node, ifc->name, f->label, (unsigned long long)v,
				    TRAFFIC_MAX_BYTES_PER_SECOND);
		/* The agent drops any sample over twice the link speed, so no
		 * honest window, average or peak, can be above it. */
		if (f->bound == TRAFFIC_RATE && link && v > link * REPORT_MAX_LINK_FACTOR)
			return errmsg(err, errlen, -ERANGE,
				    "%s: %s %s %llu B/s on a %llu b/s link, limit %llu B/s", r->node,
				    ifc->name, f->label, (unsigned long long)v,
				    (unsigned long long)(link * 8),
				    (unsigned long long)(link * REPORT_MAX_LINK_FACTOR));
		/* Each sample is at most the peak, so their percentiles and
		 * any average of them are too; this also bounds them by the
		 * link. */
		if (f->bound == TRAFFIC_SAMPLED && v > traffic_at(t, f->peak))
			return errmsg(err, errlen, -ERANGE, "%s: %s %s %llu B/s, above its peak %llu B/s",
				    r->node, ifc->name, f->label, (unsigned long long)v,
				    (unsigned long long)traffic_at(t, f->peak));
	}
	return 0;
}

/* "pod 3 (10.244.1.7)", or "the rest of the pods" for i == r->n_pods: for
 * messages only, formatted when one is written. */
static const char *pod_name(const struct report *r, uint32_t i, char *buf, size_t cap)
{
	char ip[REPORT_IP_STRLEN] = "?";

	if (i >= r->n_pods)
		return "the rest of the pods";
	report_ip_format(&r->pods[i].ips[0], ip, sizeof(ip));
	snprintf(buf, cap, "pod %u (%s)", i, ip);
	return buf;
}

/* Pod i's own figures (i == r->n_pods: the rest). */
static int validate_pod(const struct report *r, uint32_t i, char *err, size_t errlen)
{
	const struct report_pod *p = i < r->n_pods ? &r->pods[i] : &r->pods_rest;
	char name[64];

	if (p->covered_ms > REPORT_MAX_COVERED_MS)
		return errmsg(err, errlen, -ERANGE, "%s: %s covers %llu ms, limit %llu ms", r->node,
			    pod_name(r, i, name, sizeof(name)), (unsigned long long)p->covered_ms,
			    REPORT_MAX_COVERED_MS);
	if (p->covered_ms == 0 && (p->rx_bytes || p->tx_bytes))
		return errmsg(err, errlen, -ERANGE, "%s: %s has bytes but covers no time", r->node,
			    pod_name(r, i, name, sizeof(name)));
	if (p->rx.average != traffic_per_second(p->rx_bytes, p->covered_ms) ||
	    p->tx.average != traffic_per_second(p->tx_bytes, p->covered_ms))
		return errmsg(err, errlen, -EINVAL, "%s: %s averages are not its byte counts over "
			    "its covered time (report_pod_count())", r->node,
			    pod_name(r, i, name, sizeof(name)));
	if (p->rx.average > TRAFFIC_MAX_BYTES_PER_SECOND ||
	    p->tx.average > TRAFFIC_MAX_BYTES_PER_SECOND ||
	    p->rx.recent > TRAFFIC_MAX_BYTES_PER_SECOND || p->tx.recent > TRAFFIC_MAX_BYTES_PER_SECOND)
		return errmsg(err, errlen, -ERANGE, "%s: %s rx %llu B/s (recent %llu), tx %llu B/s "
			    "(recent %llu), limit %llu B/s", r->node, pod_name(r, i, name, sizeof(name)),
			    (unsigned long long)p->rx.average, (unsigned long long)p->rx.recent,
			    (unsigned long long)p->tx.average, (unsigned long long)p->tx.recent,
			    TRAFFIC_MAX_BYTES_PER_SECOND);
	return 0;
}

/* Open addressing over the listed addresses: at most REPORT_MAX_PODS x
 * REPORT_MAX_POD_IPS of them, in a table twice that, so a scorer checks a
 * full report in a few microseconds, not a quadratic scan. */
#define IPSET_SLOTS (2u * REPORT_MAX_PODS * REPORT_MAX_POD_IPS)

static uint32_t ip_hash(const struct report_ip *ip)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (uint8_t i = 0; i < ip->len; i++)
		h = (h ^ ip->addr[i]) * 16777619u;
	return h;
}

/* Adds ip; false when it was there already. */
static bool ipset_add(const struct report_ip **slots, const struct report_ip *ip)
{
	uint32_t i = ip_hash(ip) % IPSET_SLOTS;

	while (slots[i]) {
		if (report_ip_equal(slots[i], ip))
			return false;
		i = (i + 1) % IPSET_SLOTS;
	}
	slots[i] = ip;
	return true;
}

/* What a pod list must be (report.h): bounded, well-formed, no address
 * twice, within the node's link. */
static int validate_pods(const struct report *r, char *err, size_t errlen)
{
	const struct report_ip *slots[IPSET_SLOTS] = { NULL };
	const struct report_pod *rest = &r->pods_rest;
	uint64_t link = report_node_link(r);
	unsigned __int128 rx = 0, tx = 0, rx_recent = 0, tx_recent = 0;
	char ip[REPORT_IP_STRLEN];
	int rc;

	if (!r->has_pods) {
		if (r->n_pods || r->pods_seen || rest->n_ips || rest->rx_bytes || rest->tx_bytes ||
		    rest->covered_ms || rest->rx.recent || rest->tx.recent)
			return errmsg(err, errlen, -EBADMSG, "%s: pod figures without a count of "
				    "pods seen", r->node);
		return 0;
	}
	if (r->n_pods > REPORT_MAX_PODS)
		return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE, "%s: %u pods listed, limit %u",
			    r->node, r->n_pods, REPORT_MAX_PODS);
	if (r->pods_seen > REPORT_MAX_PODS_SEEN)
		return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE, "%s: %u pods seen, limit %u",
			    r->node, r->pods_seen, REPORT_MAX_PODS_SEEN);
	if (r->n_pods > r->pods_seen)
		return errmsg(err, errlen, -EBADMSG, "%s: %u pods listed but only %u seen", r->node,
			    r->n_pods, r->pods_seen);
	if (rest->n_ips)
		return errmsg(err, errlen, -EBADMSG, "%s: the rest of the pods has %u addresses, "
			    "it has none", r->node, rest->n_ips);
	for (uint32_t i = 0; i <= r->n_pods; i++) {
		const struct report_pod *p = i < r->n_pods ? &r->pods[i] : rest;

		if (i < r->n_pods) {
			if (p->n_ips == 0)
				return errmsg(err, errlen, -EBADMSG, "%s: pod %u has no address", r->node,
					    i);
			if (p->n_ips > REPORT_MAX_POD_IPS)
				return errmsg(err, errlen, -REPORT_EPODS_OVERSIZE,
					    "%s: pod %u has %u addresses, limit %u", r->node, i,
					    p->n_ips, REPORT_MAX_POD_IPS);
			for (uint32_t k = 0; k < p->n_ips; k++) {
				if (!report_ip_ok(&p->ips[k]))
					return errmsg(err, errlen, -EBADMSG, "%s: pod %u address %u "
						    "(%u bytes) is no pod's address", r->node, i, k,
						    p->ips[k].len);
				if (!ipset_add(slots, &p->ips[k])) {
					report_ip_format(&p->ips[k], ip, sizeof(ip));
					return errmsg(err, errlen, -REPORT_EPODS_DUPLICATE,
						    "%s: pod %u lists %s, listed before", r->node, i,
						    ip);
				}
			}
		}
		rc = validate_pod(r, i, err, errlen);
		if (rc)
			return rc;
		rx += p->rx.average;
		tx += p->tx.average;
		rx_recent += p->rx.recent;
		tx_recent += p->tx.recent;
	}
	{
		unsigned __int128 most = rx;

		if (tx > most)
			most = tx;
		if (rx_recent > most)
			most = rx_recent;
		if (tx_recent > most)
			most = tx_recent;
		if (most > TRAFFIC_MAX_BYTES_PER_SECOND)
			return errmsg(err, errlen, -ERANGE, "%s: pods add up to %llu B/s in one "
				    "direction, limit %llu B/s for a node", r->node,
				    (unsigned long long)(most > UINT64_MAX ? UINT64_MAX : most),
				    TRAFFIC_MAX_BYTES_PER_SECOND);
		/* Traffic between two pods of a node counts on both and crosses
		 * no link: the factor leaves room for it. */
		if (link && most > (unsigned __int128)link * REPORT_MAX_LINK_FACTOR)
			return errmsg(err, errlen, -REPORT_EPODS_OVER_LINK,
				    "%s: %u pods add up to rx %llu B/s (recent %llu), tx %llu B/s "
				    "(recent %llu) on a %llu b/s link, limit %llu B/s", r->node,
				    r->pods_seen, (unsigned long long)rx,
				    (unsigned long long)rx_recent, (unsigned long long)tx,
				    (unsigned long long)tx_recent, (unsigned long long)(link * 8),
				    (unsigned long long)(link * REPORT_MAX_LINK_FACTOR));
	}
	return 0;
}

/* The node's name, before any error that names it (no control bytes in a
 * log line). */
static int validate_name(const struct report *r, char *err, size_t errlen)
{
	char why[256];

	if (nodename_check(r->node, strnlen(r->node, NODENAME_MAX_LEN + 1), why, sizeof(why)))
		return errmsg(err, errlen, -EBADMSG, "node name is %s", why);
	return 0;
}

/* Everything but the name (validate_name()). */
static int validate_figures(const struct report *r, char *err, size_t errlen)
{
	uint64_t rx_sum = 0, tx_sum = 0;
	int rc;

	if (r->n_ifaces > REPORT_MAX_INTERFACES)
		return errmsg(err, errlen, -E2BIG, "%s: %u interfaces, limit %u", r->node,
			    r->n_ifaces, REPORT_MAX_INTERFACES);
	if (r->window_end_unix_ms < r->window_start_unix_ms)
		return errmsg(err, errlen, -ERANGE, "%s: window ends before it starts", r->node);

	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		const struct report_iface *ifc = &r->ifaces[i];

		if (!name_ok(ifc->name, REPORT_MAX_IFNAME_LEN))
			return errmsg(err, errlen, -EBADMSG,
				    "%s: interface %u name is empty, longer than %u bytes or not printable",
				    r->node, i, REPORT_MAX_IFNAME_LEN);
		rc = validate_iface(r, ifc, err, errlen);
		if (rc)
			return rc;
		rx_sum += ifc->traffic.rx.average;
		tx_sum += ifc->traffic.tx.average;
	}
	/* Each interface within bounds can still add up to a node no NIC
	 * could carry. */
	if (rx_sum > TRAFFIC_MAX_BYTES_PER_SECOND || tx_sum > TRAFFIC_MAX_BYTES_PER_SECOND)
		return errmsg(err, errlen, -ERANGE, "%s: %u interfaces add up to rx %llu B/s tx %llu B/s, "
			    "limit %llu B/s for a node", r->node, r->n_ifaces,
			    (unsigned long long)rx_sum, (unsigned long long)tx_sum,
			    TRAFFIC_MAX_BYTES_PER_SECOND);
	return validate_pods(r, err, errlen);
}

int report_validate(const struct report *r, char *err, size_t errlen)
{
	int rc = validate_name(r, err, errlen);

	return rc ? rc : validate_figures(r, err, errlen);
}

/* The Interface field of each figure that travels as it is (traffic.h),
 * found once in protobuf-c's descriptor; NULL for the others. A row naming
 * no optional uint64 field of Interface is a bug: every encode and decode
 * then fails, saying which. */
#define WIRE_MAX_FIGURES 64
static const ProtobufCFieldDescriptor *wire_fields[WIRE_MAX_FIGURES];
static const char *wire_broken;
static pthread_once_t wire_once = PTHREAD_ONCE_INIT;

static void wire_find(void)
{
	if (traffic_n_figures > WIRE_MAX_FIGURES) {
		wire_broken = "more traffic figures than WIRE_MAX_FIGURES";
		return;
	}
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const char *name = traffic_figures[i].wire;
		const ProtobufCFieldDescriptor *fd;

		if (!name)
			continue;
		fd = protobuf_c_message_descriptor_get_field_by_name(&netsched__interface__descriptor,
								     name);
		if (!fd || fd->type != PROTOBUF_C_TYPE_UINT64 || fd->label != PROTOBUF_C_LABEL_OPTIONAL) {
			wire_broken = name;
			return;
		}
		wire_fields[i] = fd;
	}
}

static const char *wire_check(void)
{
	pthread_once(&wire_once, wire_find);
	return wire_broken;
}

static uint64_t *wire_value(const ProtobufCFieldDescriptor *fd, const Netsched__Interface *m)
{
	return (uint64_t *)(void *)((char *)m + fd->offset);
}

static protobuf_c_boolean *wire_has(const ProtobufCFieldDescriptor *fd, const Netsched__Interface *m)
{
	return (protobuf_c_boolean *)(void *)((char *)m + fd->quantifier_offset);
}

static void wire_put(Netsched__Interface *d, const struct report_iface *src)
{
	netsched__interface__init(d);
	d->name = (char *)src->name;
	d->has_ifindex = true;
	d->ifindex = src->ifindex;
	d->rx_bytes = src->rx_bytes;
	d->tx_bytes = src->tx_bytes;
	d->covered_ms = src->traffic.covered_ms;
	d->samples = src->samples;
	d->has_samples_expected = true;
	d->samples_expected = src->samples_expected;
	/* Said only when there is something to say: most reports stay as
	 * they were on the wire. */
	d->has_failed_samples = src->failed_samples != 0;
	d->failed_samples = src->failed_samples;
	d->has_link_speed_bps = src->traffic.link_bytes_per_second != 0;
	d->link_speed_bps = src->traffic.link_bytes_per_second * 8;
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const ProtobufCFieldDescriptor *fd = wire_fields[i];

		if (!fd)
			continue;
		*wire_value(fd, d) = traffic_get(&src->traffic, &traffic_figures[i]);
		*wire_has(fd, d) = true;
	}
}

/* What an older agent does not send is 0. */
static void wire_get(struct report_iface *d, const Netsched__Interface *s)
{
	d->ifindex = s->has_ifindex ? s->ifindex : 0;
	report_iface_count(d, s->rx_bytes, s->tx_bytes, s->covered_ms);
	d->samples = s->samples;
	d->samples_expected = s->has_samples_expected ? s->samples_expected : 0;
	d->failed_samples = s->has_failed_samples ? s->failed_samples : 0;
	d->traffic.link_bytes_per_second = s->has_link_speed_bps ? s->link_speed_bps / 8 : 0;
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const ProtobufCFieldDescriptor *fd = wire_fields[i];

		if (fd)
			traffic_set(&d->traffic, &traffic_figures[i],
				    *wire_has(fd, s) ? *wire_value(fd, s) : 0);
	}
}

int report_encode(const struct report *r, uint8_t *buf, size_t cap, size_t *len)
{
	return report_encode_signed(r, NULL, buf, cap, len);
}

int report_encode_signed(const struct report *r, const struct keyfile_key *key, uint8_t *buf,
			 size_t cap, size_t *len)
{
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned mac_len = 0;
	Netsched__Report rep = NETSCHED__REPORT__INIT;
	Netsched__Envelope env = NETSCHED__ENVELOPE__INIT;
	Netsched__Interface ifs[REPORT_MAX_INTERFACES];
	Netsched__Interface *ifp[REPORT_MAX_INTERFACES];
	struct podwire_table pods;
	uint8_t inner[REPORT_MAX_BYTES];
	size_t inner_len, outer_len;

	if (report_validate(r, NULL, 0) || wire_check() || (key && key->kind == KEYFILE_MASTER))
		return -EINVAL;

	rep.node = (char *)r->node;
	rep.instance_id = r->instance_id;
	rep.seq = r->seq;
	rep.window_start_unix_ms = r->window_start_unix_ms;
	rep.window_end_unix_ms = r->window_end_unix_ms;
	rep.has_sample_interval_ms = true;
	rep.sample_interval_ms = r->sample_interval_ms;
	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		wire_put(&ifs[i], &r->ifaces[i]);
		ifp[i] = &ifs[i];
	}
	rep.n_interfaces = r->n_ifaces;
	rep.interfaces = ifp;
	if (r->has_pods) {
		podwire_put_table(&pods, r);
		rep.pod_table = &pods.m;
	}

	inner_len = netsched__report__get_packed_size(&rep);
	if (inner_len > sizeof(inner))
		return -EMSGSIZE;
	netsched__report__pack(&rep, inner);

	env.version = REPORT_WIRE_VERSION;
	env.report.data = inner;
	env.report.len = inner_len;
	if (key) {
		if (!HMAC(EVP_sha256(), key->bytes, (int)key->len, inner, inner_len, mac, &mac_len) ||
		    mac_len != REPORT_MAC_BYTES)
			return -EIO;
		env.has_mac = true;
		env.mac.data = mac;
		env.mac.len = mac_len;
		env.has_key_id = true;
		env.key_id = key->id;
		if (key->kind == KEYFILE_NODE)
			env.signer = (char *)key->node;
	}
	outer_len = netsched__envelope__get_packed_size(&env);
	if (outer_len > cap || outer_len > REPORT_MAX_BYTES)
		return -EMSGSIZE;
	netsched__envelope__pack(&env, buf);
	*len = outer_len;
	return 0;
}

static int copy_name(char *dst, size_t dstsize, const char *src)
{
	size_t n = src ? strnlen(src, dstsize) : 0;

	if (n == 0 || n >= dstsize)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* The key env claims to be signed with: one of keys' own, or, for a signer
 * node, the key a master derives for it (into *derived). NULL when none. A
 * flood of made-up signers costs at most one derivation per master each. */
static const struct keyfile_key *signing_key(const Netsched__Envelope *env,
					     const struct keyfile *keys,
					     struct keyfile_key *derived)
{
	const struct keyfile_key *key = keyfile_find(keys, env->key_id);

	if (key || !env->signer)
		return key;
	for (size_t i = 0; i < keys->n; i++)
		if (keys->keys[i].kind == KEYFILE_MASTER &&
		    nodekey_derive(&keys->keys[i], env->signer, derived) == 0 &&
		    derived->id == env->key_id)
			return derived;
	return NULL;
}

/* Whether env carries a valid signature by one of keys (or the signer's
 * derived key); *kind says which kind of key it was. */
static int verify(const Netsched__Envelope *env, const struct keyfile *keys, size_t len,
		  enum keyfile_kind *kind, char *err, size_t errlen)
{
	const struct keyfile_key *key;
	struct keyfile_key derived;
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned mac_len = 0;
	int rc = 0;

	if (!env->has_mac || !env->has_key_id)
		return errmsg(err, errlen, -ENOKEY, "unsigned report (%zu bytes) while --key-file is set",
			    len);
	if (env->signer && !nodename_valid(env->signer, strnlen(env->signer, NODENAME_MAX_LEN + 1)))
		return errmsg(err, errlen, -EBADMSG, "report (%zu bytes) names a signer that is no "
			      "node name", len);
	key = signing_key(env, keys, &derived);
	if (!key && env->signer)
		return errmsg(err, errlen, -EKEYREJECTED, "report (%zu bytes) signed as node %s with "
			      "key %08x, which is not that node's key%s", len, env->signer, env->key_id, keys->n_master ? "" : " (this scorer holds no master key)");
	if (!key)
		return errmsg(err, errlen, -EKEYREJECTED,
			    "report (%zu bytes) signed with unknown key %08x", len, env->key_id);
	if (!HMAC(EVP_sha256(), key->bytes, (int)key->len, env->report.data, env->report.len, mac,
		  &mac_len))
		rc = errmsg(err, errlen, -EIO, "HMAC failed");
	else if (env->mac.len != mac_len || CRYPTO_memcmp(mac, env->mac.data, mac_len) != 0)
		rc = errmsg(err, errlen, -EKEYREJECTED,
			    "report (%zu bytes) with a bad signature for key %08x: forged or corrupted",
			    len, env->key_id);
	*kind = key->kind;
	OPENSSL_cleanse(&derived, sizeof(derived));
	return rc;
}

/* protobuf-c allocates every submessage and byte string it unpacks: a
 * report of 64 pods is some 300 mallocs, more than half of its decoding.
 * Unpacking takes its memory from a per-thread arena instead, and from
 * malloc only when a forged message needs more; free returns nothing to
 * the arena, which starts over with each decode. A decode that took
 * nothing from malloc does not walk its messages to free them (a fifth of
 * unpacking a report of 32 pods). */
#define ARENA_BYTES (64u * 1024u)
struct arena {
	_Alignas(16) unsigned char buf[ARENA_BYTES];
	size_t used;
	size_t spilled;		/* allocations malloc made in this decode */
};
static _Thread_local struct arena arena;

static void *arena_alloc(void *data, size_t size)
{
	struct arena *a = data;
	size_t need = (size + 15u) & ~(size_t)15u;

	if (need >= size && need <= ARENA_BYTES - a->used) {
		void *p = a->buf + a->used;

		a->used += need;
		return p;
	}
	a->spilled++;
	return malloc(size);
}

static void arena_free(void *data, void *p)
{
	struct arena *a = data;

	if (p && ((unsigned char *)p < a->buf || (unsigned char *)p >= a->buf + ARENA_BYTES))
		free(p);
}

int report_decode(const uint8_t *buf, size_t len, struct report *out, char *err, size_t errlen)
{
	return report_decode_verified(buf, len, NULL, out, err, errlen);
}

int report_decode_verified(const uint8_t *buf, size_t len, const struct keyfile *keys,
			   struct report *out, char *err, size_t errlen)
{
	ProtobufCAllocator alloc = { arena_alloc, arena_free, &arena };
	Netsched__Envelope *env = NULL;
	Netsched__Report *rep = NULL;
	enum keyfile_kind kind = KEYFILE_SHARED;
	struct report r;
	int rc;

	if (len > REPORT_MAX_BYTES)
		return errmsg(err, errlen, -E2BIG, "message of %zu bytes, limit %u", len,
			    REPORT_MAX_BYTES);
	if (wire_check())
		return errmsg(err, errlen, -EINVAL, "traffic figure %s is no optional uint64 "
			    "field of netsched.proto's Interface", wire_check());
	arena.used = 0;
	arena.spilled = 0;
	env = netsched__envelope__unpack(&alloc, len, buf);
	if (!env) {
		rc = errmsg(err, errlen, -EBADMSG, "not a netsched envelope (%zu bytes)", len);
		goto out;
	}
	if (env->version != REPORT_WIRE_VERSION) {
		rc = errmsg(err, errlen, -EPROTO, "wire version %u, this scorer speaks %u",
			  env->version, REPORT_WIRE_VERSION);
		goto out;
	}
	if (keys) {
		rc = verify(env, keys, len, &kind, err, errlen);
		if (rc)
			goto out;
	}
	rep = netsched__report__unpack(&alloc, env->report.len, env->report.data);
	if (!rep) {
		rc = errmsg(err, errlen, -EBADMSG, "envelope holds no valid report (%zu bytes)",
			  env->report.len);
		goto out;
	}
	memset(&r, 0, sizeof(r));
	if (copy_name(r.node, sizeof(r.node), rep->node)) {
		rc = errmsg(err, errlen, -EBADMSG, "node name is empty or longer than %u bytes",
			  NODENAME_MAX_LEN);
		goto out;
	}
	rc = validate_name(&r, err, errlen);
	if (rc)
		goto out;
	/* A node's own key speaks for that node alone. A shared key's report
	 * names no signer, or one that proves nothing. */
	if (keys && env->signer && strcmp(env->signer, r.node)) {
		rc = errmsg(err, errlen, -EPERM, "report for node %s signed with node %s's own key: "
			    "a node may report only for itself", r.node, env->signer);
		goto out;
	}
	r.signed_with = !keys ? REPORT_UNCHECKED :
			kind == KEYFILE_SHARED ? REPORT_SIGNED_SHARED : REPORT_SIGNED_NODE;
	if (rep->n_interfaces > REPORT_MAX_INTERFACES) {
		rc = errmsg(err, errlen, -E2BIG, "%s: %zu interfaces, limit %u", r.node,
			  rep->n_interfaces, REPORT_MAX_INTERFACES);
		goto out;
	}
	r.instance_id = rep->instance_id;
	r.seq = rep->seq;
	r.window_start_unix_ms = rep->window_start_unix_ms;
	r.window_end_unix_ms = rep->window_end_unix_ms;
	r.sample_interval_ms = rep->has_sample_interval_ms ? rep->sample_interval_ms : 0;
	r.n_ifaces = (uint32_t)rep->n_interfaces;
	for (size_t i = 0; i < rep->n_interfaces; i++) {
		const Netsched__Interface *s = rep->interfaces[i];
		struct report_iface *d = &r.ifaces[i];

		if (copy_name(d->name, sizeof(d->name), s->name)) {
			rc = errmsg(err, errlen, -EBADMSG,
				  "%s: interface %zu name is empty or longer than %u bytes", r.node,
				  i, REPORT_MAX_IFNAME_LEN);
			goto out;
		}
		wire_get(d, s);
	}
	if (rep->pod_table && (rep->has_pods_seen || rep->n_pods || rep->pods_rest)) {
		rc = errmsg(err, errlen, -EBADMSG, "%s: pod figures both as a table and as a list",
			  r.node);
		goto out;
	}
	rc = rep->pod_table ? podwire_get_table(&r, rep->pod_table, err, errlen) :
			      podwire_get_list(&r, rep, err, errlen);
	if (rc)
		goto out;
	rc = validate_figures(&r, err, errlen);
	if (rc)
		goto out;
	*out = r;
out:
	if (rep && arena.spilled)
		netsched__report__free_unpacked(rep, &alloc);
	if (env && arena.spilled)
		netsched__envelope__free_unpacked(env, &alloc);
	return rc;
}
