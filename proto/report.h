/* The agent -> scorer report: a plain C struct both binaries share, and the
 * only code that touches the protobuf-c generated types.
 *
 * report_encode() packs an Envelope around a Report; report_decode() unpacks
 * and validates one. Decoding never trusts the sender: every length, count and
 * number is bounded, and a report that fails any check is rejected whole
 * (the output struct is written only on success). */
#ifndef NETSCHED_REPORT_H
#define NETSCHED_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "nodename.h"
#include "traffic.h"

#define REPORT_WIRE_VERSION 1u
/* A full report with REPORT_MAX_INTERFACES long-named interfaces is ~4 KB. */
#define REPORT_MAX_BYTES (16u * 1024u)
#define REPORT_MAX_INTERFACES 32u
/* IFNAMSIZ - 1; node names follow nodename.h. */
#define REPORT_MAX_IFNAME_LEN 15u
/* A window longer than a day is a bug or a forgery. */
#define REPORT_MAX_COVERED_MS (24ULL * 3600ULL * 1000ULL)
/* Rates and link speeds are bounded by TRAFFIC_MAX_BYTES_PER_SECOND, on
 * one interface and a node's together. Where the link speed is known, no
 * rate may be over this many times it: the agent drops samples over twice
 * the link speed. */
#define REPORT_MAX_LINK_FACTOR 2

struct report_iface {
	char name[REPORT_MAX_IFNAME_LEN + 1];
	uint32_t ifindex;
	uint32_t samples;	/* deltas present */
	uint32_t samples_expected;
	/* Bytes counted in the window, as the wire carries them; the
	 * averages in traffic are these over traffic.covered_ms
	 * (report_iface_count()). */
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	struct traffic traffic;
};

struct report {
	char node[NODENAME_MAX_LEN + 1];
	uint64_t instance_id;
	uint64_t seq;
	uint64_t window_start_unix_ms;
	uint64_t window_end_unix_ms;
	uint32_t sample_interval_ms;
	uint32_t n_ifaces;
	struct report_iface ifaces[REPORT_MAX_INTERFACES];
};

struct keyfile;
struct keyfile_key;

/* Packs r into an Envelope in buf (cap bytes), signed with key: an
 * HMAC-SHA256 over the packed Report, and the key's id. key NULL: unsigned.
 * Same returns as report_encode(). */
int report_encode_signed(const struct report *r, const struct keyfile_key *key, uint8_t *buf,
			 size_t cap, size_t *len);

/* report_decode(), and with keys non-NULL the envelope must be signed by
 * one of them: -ENOKEY (no signature), -EKEYREJECTED (an unknown key or a
 * signature that does not match: forged or corrupted). The MAC is checked
 * before the report is unpacked; comparisons take constant time. */
int report_decode_verified(const uint8_t *buf, size_t len, const struct keyfile *keys,
			   struct report *out, char *err, size_t errlen);

/* Packs r into buf (cap bytes). Returns 0 and sets *len, or -EMSGSIZE when it
 * does not fit, or -EINVAL when r itself breaks the limits above. */
int report_encode(const struct report *r, uint8_t *buf, size_t cap, size_t *len);

/* Unpacks and validates len bytes. Returns 0 and fills *out, or -EBADMSG
 * (not a valid envelope or report), -EPROTO (unknown wire version), -E2BIG
 * (over a size or count limit) or -ERANGE (an absurd value); err (may be
 * NULL) receives a one-line reason naming the field, the value and the limit. */
int report_decode(const uint8_t *buf, size_t len, struct report *out, char *err, size_t errlen);

/* Checks the limits above on an already-built report (what decode enforces). */
int report_validate(const struct report *r, char *err, size_t errlen);

/* Sets ifc's byte counts, its covered time and the averages they make. */
void report_iface_count(struct report_iface *ifc, uint64_t rx_bytes, uint64_t tx_bytes,
			uint64_t covered_ms);

#endif
