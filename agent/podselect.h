/* Which interfaces are pods': `--pod-interfaces`, decided the way
 * `--interfaces` is (ifselect.h), and `--exclude-interfaces` wins here too.
 *
 *   auto     veth-like links (veth, netkit) whose peer lives in another
 *            network namespace (IFLA_LINK_NETNSID): the host side of every
 *            pod a veth-based CNI wires, routed or bridged
 *   cali*    globs (fnmatch) on the name, whatever the kind, for CNIs whose
 *            names say it (Calico cali*, Cilium lxc*, AWS VPC CNI eni*,
 *            flannel and the bridge plugin veth*)
 *   off      no pod is measured
 * "auto" and globs combine ("auto,eni*"). Never a pod's: lo, a bridge (the
 * pods' bridge itself, cni0), and the node's measured uplinks (a simulated
 * node's uplink is a veth into another namespace too).
 *
 * Pure functions over a link, so the rules are tested as tables. */
#ifndef NETSCHED_PODSELECT_H
#define NETSCHED_PODSELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "ifselect.h"

struct podselect_spec {
	bool is_auto;
	size_t n_globs;		/* 0 and !is_auto: off */
	char globs[IFSELECT_MAX_ITEMS][IFSELECT_NAME_MAX];
};

/* Parses "auto", "off" or a comma-separated list of globs and "auto".
 * Returns 0, or -EINVAL with why naming the bad item; spec is then
 * untouched. */
int podselect_parse(struct podselect_spec *spec, const char *list, char *why, size_t len);

/* Whether any interface can be a pod's under spec. */
bool podselect_enabled(const struct podselect_spec *spec);

/* Whether link is a pod's interface. excl: the --exclude-interfaces globs
 * (its exclude list; NULL for none); measured: whether the agent measures
 * it as an uplink. */
bool podselect_match(const struct podselect_spec *spec, const struct ifselect_spec *excl,
		     const struct ifselect_link *link, bool measured);

#endif
