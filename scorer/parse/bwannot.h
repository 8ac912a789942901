/* A pod's bandwidth, as the annotations CNIs read write it.
 *
 * What a pod declares is what it asks for, per direction: ingress is what
 * the pod receives (its rx), egress what it sends (its tx). Each CNI reads
 * its own keys, in its own unit, and a unit mismatch is the easiest way to
 * reserve 8x or 1,000,000x too little, so every key is read in the unit of
 * the CNI that reads it:
 *   kubernetes.io/ingress-bandwidth, egress-bandwidth     the CNI bandwidth
 *       plugin (and every CNI that chains it: Calico, Cilium, flannel):
 *       a quantity in bits per second ("10M", "1G")
 *   qos.projectcalico.org/ingressBandwidth, egressBandwidth   Calico's own
 *       QoS controls: a quantity in bits per second
 *   ovn.kubernetes.io/ingress_rate, egress_rate           Kube-OVN: a plain
 *       number of Mbit/s ("100" is 100 Mbit/s)
 * The first key of a direction in this order that a pod carries wins: a pod
 * annotated for two CNIs is judged by the upstream one. */
#ifndef NETSCHED_BWANNOT_H
#define NETSCHED_BWANNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bwannot_unit {
	BWANNOT_BITS,	/* a Kubernetes quantity, bits per second */
	BWANNOT_MBIT,	/* a plain decimal number, Mbit/s */
};

struct bwannot_key {
	const char *key;
	bool ingress;		/* else egress */
	enum bwannot_unit unit;
};

#define BWANNOT_KEYS 6u
extern const struct bwannot_key bwannot_keys[BWANNOT_KEYS];

/* value[0..len) of key k in bits per second into *bps: 0, or -EINVAL when
 * it is not a value of k's unit (*bps untouched). */
int bwannot_parse(const struct bwannot_key *k, const char *value, size_t len, uint64_t *bps);

#endif
