/* The agent -> scorer report: a plain C struct both binaries share, and the
 * only code that touches the protobuf-c generated types (with podwire.h,
 * the pod figures' two wire forms, behind it).
 *
 * report_encode() packs an Envelope around a Report; report_decode() unpacks
 * and validates one. Decoding never trusts the sender: every length, count and
 * number is bounded, and a report that fails any check is rejected whole
 * (the output struct is written only on success). */
#ifndef NETSCHED_REPORT_H
#define NETSCHED_REPORT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodename.h"
#include "traffic.h"

#define REPORT_WIRE_VERSION 1u
/* A full report with REPORT_MAX_INTERFACES long-named interfaces is ~4 KB;
 * with REPORT_MAX_PODS pods too, 11.0 KB at worst (test_report.c). */
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
/* An interface's samples that failed in a row (report_iface.failed_samples):
 * the agent stops counting here, a day of 100 ms samples. */
#define REPORT_MAX_FAILED_SAMPLES 864000u

/* Pods (issue 23). A report lists at most REPORT_MAX_PODS pods (the
 * agent's --pods-reported is at most this), each with 1 to
 * REPORT_MAX_POD_IPS addresses, and sums the rest; REPORT_MAX_PODS_SEEN
 * bounds the count of pod interfaces it says it measured. The worst case
 * (every interface and pod at its bounds, IPv6 addresses) is 11.0 KB, so
 * REPORT_MAX_BYTES did not move (test_report.c holds it under 7/8 of it). */
#define REPORT_MAX_PODS 64u
#define REPORT_MAX_POD_IPS 4u
#define REPORT_MAX_PODS_SEEN 4096u

/* Why report_decode() refused a report's pod figures, beside the codes it
 * returns for the rest, so a scorer counts each apart (the whole report is
 * dropped, interfaces included: its sender is broken or lying):
 *   -REPORT_EPODS_OVERSIZE   more than REPORT_MAX_PODS pods, more than
 *                            REPORT_MAX_POD_IPS addresses on one, or more
 *                            than REPORT_MAX_PODS_SEEN seen
 *   -REPORT_EPODS_DUPLICATE  an address listed twice (on two pods, or one)
 *   -REPORT_EPODS_OVER_LINK  per direction, the pods' averages (listed and
 *                            rest) or their recent rates add up to more than
 *                            REPORT_MAX_LINK_FACTOR times the node's link
 *                            (its interfaces' link speeds added up, when all
 *                            are known)
 * Other faults in pods are the codes above: a malformed address -EBADMSG,
 * an absurd figure -ERANGE. */
#define REPORT_EPODS_OVERSIZE EOVERFLOW
#define REPORT_EPODS_DUPLICATE ENOTUNIQ
#define REPORT_EPODS_OVER_LINK EDOM

struct report_iface {
	char name[REPORT_MAX_IFNAME_LEN + 1];
	uint32_t ifindex;
	uint32_t samples;	/* deltas present */
	uint32_t samples_expected;
	/* The newest samples the agent could not read, in a row (0: the
	 * newest was read): gaps, not idle time. */
	uint32_t failed_samples;
	/* Bytes counted in the window, as the wire carries them; the
	 * averages in traffic are these over traffic.covered_ms
	 * (report_iface_count()). */
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	struct traffic traffic;
};

/* One address, as the wire carries it: len 4 (IPv4) or 16 (IPv6) bytes of
 * addr, network order; the rest of addr is 0. Never unspecified, loopback,
 * link-local, multicast or IPv4-mapped IPv6 (report_ip_ok()): no pod's. */
struct report_ip {
	uint8_t len;
	uint8_t addr[16];
};

struct report_pod_rates {
	uint64_t average;	/* bytes over covered_ms, per second (report_pod_count()) */
	uint64_t recent;	/* since the agent's previous report */
};

/* One pod's traffic, FROM THE POD'S POINT OF VIEW: rx is what the pod
 * received, which the host side of its interface counts as tx; tx is what
 * it sent (the host side's rx). */
struct report_pod {
	uint32_t n_ips;		/* 1..REPORT_MAX_POD_IPS; 0 in pods_rest */
	struct report_ip ips[REPORT_MAX_POD_IPS];
	uint64_t rx_bytes;	/* in the window */
	uint64_t tx_bytes;
	uint64_t covered_ms;	/* time the deltas cover; the rest: the longest */
	struct report_pod_rates rx, tx;
};

/* How a decoded report was signed (report_decode_verified()). */
enum report_signed {
	REPORT_UNCHECKED,	/* no keys asked for: not checked */
	REPORT_SIGNED_SHARED,	/* a shared key: any node holding it could have */
	REPORT_SIGNED_NODE,	/* the node's own key: only that node could have */
};

struct report {
	char node[NODENAME_MAX_LEN + 1];
	enum report_signed signed_with;	/* decoding's verdict; ignored by encoding */
	uint64_t instance_id;
	uint64_t seq;
	uint64_t window_start_unix_ms;
	uint64_t window_end_unix_ms;
	uint32_t sample_interval_ms;
	uint32_t n_ifaces;
	struct report_iface ifaces[REPORT_MAX_INTERFACES];
	/* Pod figures: only when has_pods (a pod table, or pods_seen, on the
	 * wire: podwire.h); a report without them (an older agent,
	 * --pod-interfaces off, or pods withheld) has has_pods false and the
	 * rest 0. Decoded, a pod's addresses are IPv4 first. */
	bool has_pods;
	uint32_t pods_seen;	/* pod interfaces measured, listed or not */
	uint32_t n_pods;	/* busiest first */
	struct report_pod pods[REPORT_MAX_PODS];
	struct report_pod pods_rest;	/* every other pod interface, summed */
};

struct keyfile;
struct keyfile_key;

/* Packs r into an Envelope in buf (cap bytes), signed with key: an
 * HMAC-SHA256 over the packed Report, and the key's id; a node's own key
 * (KEYFILE_NODE) also names its node as the signer, whatever r->node says.
 * key NULL: unsigned. A master key never signs (-EINVAL). Same returns as
 * report_encode(). */
int report_encode_signed(const struct report *r, const struct keyfile_key *key, uint8_t *buf,
			 size_t cap, size_t *len);

/* report_decode(), and with keys non-NULL the envelope must be signed by
 * one of them, or, when it names a signer node, by the key keys' masters
 * derive for it (nodekey.h): -ENOKEY (no signature), -EKEYREJECTED (an
 * unknown key, not the signer's, or a signature that does not match:
 * forged or corrupted), -EPERM (signed with one node's own key, for
 * another node: err names both). The MAC is checked before the report is
 * unpacked; comparisons take constant time. out->signed_with says which
 * kind of key it was. */
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

/* The same for a pod (rx and tx from the pod's point of view). */
void report_pod_count(struct report_pod *p, uint64_t rx_bytes, uint64_t tx_bytes,
		      uint64_t covered_ms);

/* The node's link in bytes per second: its interfaces' link speeds added
 * up, 0 when there is none or any is unknown. What pods are held to. */
uint64_t report_node_link(const struct report *r);

/* Whether ip is one a pod may have: 4 or 16 bytes, not unspecified,
 * loopback, link-local (169.254/16, fe80::/10: a CNI's gateway, never a
 * pod's status.podIPs), multicast or IPv4-mapped. */
bool report_ip_ok(const struct report_ip *ip);

/* Text form ("10.244.1.7", "fd00::7"), as inet_ntop(); cap at least
 * REPORT_IP_STRLEN. 0, or -EINVAL for a length other than 4 or 16. */
#define REPORT_IP_STRLEN 46
int report_ip_format(const struct report_ip *ip, char *dst, size_t cap);

/* Parses an IPv4 or IPv6 address in text form (a pod's status.podIPs) into
 * *ip. 0, or -EINVAL. */
int report_ip_parse(const char *s, struct report_ip *ip);

/* Whether a and b are the same address. */
bool report_ip_equal(const struct report_ip *a, const struct report_ip *b);

#endif
