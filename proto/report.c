#include "report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "errmsg.h"
#include "keyfile.h"
#include "nodename.h"
#include "netsched.pb-c.h"

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

static uint64_t rate(uint64_t bytes, uint64_t covered_ms)
{
	if (covered_ms == 0)
		return 0;
	return (uint64_t)((unsigned __int128)bytes * 1000u / covered_ms);
}

uint64_t report_iface_rx_rate(const struct report_iface *ifc)
{
	return rate(ifc->rx_bytes, ifc->covered_ms);
}

uint64_t report_iface_tx_rate(const struct report_iface *ifc)
{
	return rate(ifc->tx_bytes, ifc->covered_ms);
}

int report_validate(const struct report *r, char *err, size_t errlen)
{
	uint64_t rx_sum = 0, tx_sum = 0;
	char why[256];

	if (nodename_check(r->node, strnlen(r->node, REPORT_MAX_NODE_LEN + 1), why, sizeof(why)))
		return errmsg(err, errlen, -EBADMSG, "node name is %s", why);
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
		if (ifc->covered_ms > REPORT_MAX_COVERED_MS)
			return errmsg(err, errlen, -ERANGE, "%s: %s covers %llu ms, limit %llu ms",
				    r->node, ifc->name, (unsigned long long)ifc->covered_ms,
				    REPORT_MAX_COVERED_MS);
		if (ifc->covered_ms == 0 && (ifc->rx_bytes || ifc->tx_bytes))
			return errmsg(err, errlen, -ERANGE, "%s: %s has bytes but covers no time",
				    r->node, ifc->name);
		if (report_iface_rx_rate(ifc) > REPORT_MAX_BYTES_PER_SECOND ||
		    report_iface_tx_rate(ifc) > REPORT_MAX_BYTES_PER_SECOND ||
		    ifc->rx_peak_bytes_per_second > REPORT_MAX_BYTES_PER_SECOND ||
		    ifc->tx_peak_bytes_per_second > REPORT_MAX_BYTES_PER_SECOND)
			return errmsg(err, errlen, -ERANGE,
				    "%s: %s rx %llu B/s tx %llu B/s, limit %llu B/s", r->node,
				    ifc->name, (unsigned long long)report_iface_rx_rate(ifc),
				    (unsigned long long)report_iface_tx_rate(ifc),
				    REPORT_MAX_BYTES_PER_SECOND);
		if (ifc->link_speed_bps > REPORT_MAX_LINK_SPEED_BPS)
			return errmsg(err, errlen, -ERANGE, "%s: %s link speed %llu b/s, limit %llu b/s",
				    r->node, ifc->name, (unsigned long long)ifc->link_speed_bps,
				    REPORT_MAX_LINK_SPEED_BPS);
		/* The agent drops any sample over twice the link speed, so no
		 * honest window, average or peak, can be above it. */
		if (ifc->link_speed_bps) {
			uint64_t limit = ifc->link_speed_bps / 8 * REPORT_MAX_LINK_FACTOR;
			uint64_t rx = report_iface_rx_rate(ifc), tx = report_iface_tx_rate(ifc);

			if (rx > limit || tx > limit || ifc->rx_peak_bytes_per_second > limit ||
			    ifc->tx_peak_bytes_per_second > limit)
				return errmsg(err, errlen, -ERANGE,
					    "%s: %s rx %llu B/s tx %llu B/s (peaks %llu, %llu) on a "
					    "%llu b/s link, limit %llu B/s", r->node, ifc->name,
					    (unsigned long long)rx, (unsigned long long)tx,
					    (unsigned long long)ifc->rx_peak_bytes_per_second,
					    (unsigned long long)ifc->tx_peak_bytes_per_second,
					    (unsigned long long)ifc->link_speed_bps,
					    (unsigned long long)limit);
		}
		/* Each sample is at most the peak, so their percentile and any
		 * average of them are too; this also bounds both by the link. */
		if (ifc->rx_p95_bytes_per_second > ifc->rx_peak_bytes_per_second ||
		    ifc->rx_recent_bytes_per_second > ifc->rx_peak_bytes_per_second ||
		    ifc->tx_p95_bytes_per_second > ifc->tx_peak_bytes_per_second ||
		    ifc->tx_recent_bytes_per_second > ifc->tx_peak_bytes_per_second)
			return errmsg(err, errlen, -ERANGE,
				    "%s: %s p95 rx %llu tx %llu B/s, recent rx %llu tx %llu B/s: "
				    "above the peaks rx %llu tx %llu B/s", r->node, ifc->name,
				    (unsigned long long)ifc->rx_p95_bytes_per_second,
				    (unsigned long long)ifc->tx_p95_bytes_per_second,
				    (unsigned long long)ifc->rx_recent_bytes_per_second,
				    (unsigned long long)ifc->tx_recent_bytes_per_second,
				    (unsigned long long)ifc->rx_peak_bytes_per_second,
				    (unsigned long long)ifc->tx_peak_bytes_per_second);
		rx_sum += report_iface_rx_rate(ifc);
		tx_sum += report_iface_tx_rate(ifc);
	}
	/* Each interface within bounds can still add up to a node no NIC
	 * could carry. */
	if (rx_sum > REPORT_MAX_BYTES_PER_SECOND || tx_sum > REPORT_MAX_BYTES_PER_SECOND)
		return errmsg(err, errlen, -ERANGE, "%s: %u interfaces add up to rx %llu B/s tx %llu B/s, "
			    "limit %llu B/s for a node", r->node, r->n_ifaces,
			    (unsigned long long)rx_sum, (unsigned long long)tx_sum,
			    REPORT_MAX_BYTES_PER_SECOND);
	return 0;
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
	uint8_t inner[REPORT_MAX_BYTES];
	size_t inner_len, outer_len;

	if (report_validate(r, NULL, 0))
		return -EINVAL;

	rep.node = (char *)r->node;
	rep.instance_id = r->instance_id;
	rep.seq = r->seq;
	rep.window_start_unix_ms = r->window_start_unix_ms;
	rep.window_end_unix_ms = r->window_end_unix_ms;
	rep.has_sample_interval_ms = true;
	rep.sample_interval_ms = r->sample_interval_ms;
	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		const struct report_iface *src = &r->ifaces[i];
		Netsched__Interface *d = &ifs[i];

		netsched__interface__init(d);
		d->name = (char *)src->name;
		d->has_ifindex = true;
		d->ifindex = src->ifindex;
		d->rx_bytes = src->rx_bytes;
		d->tx_bytes = src->tx_bytes;
		d->covered_ms = src->covered_ms;
		d->samples = src->samples;
		d->has_samples_expected = true;
		d->samples_expected = src->samples_expected;
		d->has_link_speed_bps = src->link_speed_bps != 0;
		d->link_speed_bps = src->link_speed_bps;
		d->has_rx_peak_bytes_per_second = true;
		d->rx_peak_bytes_per_second = src->rx_peak_bytes_per_second;
		d->has_tx_peak_bytes_per_second = true;
		d->tx_peak_bytes_per_second = src->tx_peak_bytes_per_second;
		d->has_rx_p95_bytes_per_second = d->has_tx_p95_bytes_per_second = true;
		d->rx_p95_bytes_per_second = src->rx_p95_bytes_per_second;
		d->tx_p95_bytes_per_second = src->tx_p95_bytes_per_second;
		d->has_rx_recent_bytes_per_second = d->has_tx_recent_bytes_per_second = true;
		d->rx_recent_bytes_per_second = src->rx_recent_bytes_per_second;
		d->tx_recent_bytes_per_second = src->tx_recent_bytes_per_second;
		d->has_rx_dropped = d->has_rx_missed = d->has_tx_dropped = true;
		d->rx_dropped = src->rx_dropped;
		d->rx_missed = src->rx_missed;
		d->tx_dropped = src->tx_dropped;
		ifp[i] = d;
	}
	rep.n_interfaces = r->n_ifaces;
	rep.interfaces = ifp;

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

/* Whether env carries a valid signature by one of keys. */
static int verify(const Netsched__Envelope *env, const struct keyfile *keys, size_t len, char *err,
		  size_t errlen)
{
	const struct keyfile_key *key;
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned mac_len = 0;

	if (!env->has_mac || !env->has_key_id)
		return errmsg(err, errlen, -ENOKEY, "unsigned report (%zu bytes) while --key-file is set",
			    len);
	key = keyfile_find(keys, env->key_id);
	if (!key)
		return errmsg(err, errlen, -EKEYREJECTED,
			    "report (%zu bytes) signed with unknown key %08x", len, env->key_id);
	if (!HMAC(EVP_sha256(), key->bytes, (int)key->len, env->report.data, env->report.len, mac,
		  &mac_len))
		return errmsg(err, errlen, -EIO, "HMAC failed");
	if (env->mac.len != mac_len || CRYPTO_memcmp(mac, env->mac.data, mac_len) != 0)
		return errmsg(err, errlen, -EKEYREJECTED,
			    "report (%zu bytes) with a bad signature for key %08x: forged or corrupted",
			    len, env->key_id);
	return 0;
}

int report_decode(const uint8_t *buf, size_t len, struct report *out, char *err, size_t errlen)
{
	return report_decode_verified(buf, len, NULL, out, err, errlen);
}

int report_decode_verified(const uint8_t *buf, size_t len, const struct keyfile *keys,
			   struct report *out, char *err, size_t errlen)
{
	Netsched__Envelope *env = NULL;
	Netsched__Report *rep = NULL;
	struct report r;
	int rc;

	if (len > REPORT_MAX_BYTES)
		return errmsg(err, errlen, -E2BIG, "message of %zu bytes, limit %u", len,
			    REPORT_MAX_BYTES);
	env = netsched__envelope__unpack(NULL, len, buf);
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
		rc = verify(env, keys, len, err, errlen);
		if (rc)
			goto out;
	}
	rep = netsched__report__unpack(NULL, env->report.len, env->report.data);
	if (!rep) {
		rc = errmsg(err, errlen, -EBADMSG, "envelope holds no valid report (%zu bytes)",
			  env->report.len);
		goto out;
	}
	if (rep->n_interfaces > REPORT_MAX_INTERFACES) {
		rc = errmsg(err, errlen, -E2BIG, "%zu interfaces, limit %u", rep->n_interfaces,
			  REPORT_MAX_INTERFACES);
		goto out;
	}

	memset(&r, 0, sizeof(r));
	if (copy_name(r.node, sizeof(r.node), rep->node)) {
		rc = errmsg(err, errlen, -EBADMSG, "node name is empty or longer than %u bytes",
			  REPORT_MAX_NODE_LEN);
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
		d->ifindex = s->has_ifindex ? s->ifindex : 0;
		d->rx_bytes = s->rx_bytes;
		d->tx_bytes = s->tx_bytes;
		d->covered_ms = s->covered_ms;
		d->samples = s->samples;
		d->samples_expected = s->has_samples_expected ? s->samples_expected : 0;
		d->link_speed_bps = s->has_link_speed_bps ? s->link_speed_bps : 0;
		d->rx_peak_bytes_per_second =
			s->has_rx_peak_bytes_per_second ? s->rx_peak_bytes_per_second : 0;
		d->tx_peak_bytes_per_second =
			s->has_tx_peak_bytes_per_second ? s->tx_peak_bytes_per_second : 0;
		d->rx_p95_bytes_per_second =
			s->has_rx_p95_bytes_per_second ? s->rx_p95_bytes_per_second : 0;
		d->tx_p95_bytes_per_second =
			s->has_tx_p95_bytes_per_second ? s->tx_p95_bytes_per_second : 0;
		d->rx_recent_bytes_per_second =
			s->has_rx_recent_bytes_per_second ? s->rx_recent_bytes_per_second : 0;
		d->tx_recent_bytes_per_second =
			s->has_tx_recent_bytes_per_second ? s->tx_recent_bytes_per_second : 0;
		d->rx_dropped = s->has_rx_dropped ? s->rx_dropped : 0;
		d->rx_missed = s->has_rx_missed ? s->rx_missed : 0;
		d->tx_dropped = s->has_tx_dropped ? s->tx_dropped : 0;
	}
	rc = report_validate(&r, err, errlen);
	if (rc)
		goto out;
	*out = r;
out:
	if (rep)
		netsched__report__free_unpacked(rep, NULL);
	if (env)
		netsched__envelope__free_unpacked(env, NULL);
	return rc;
}
