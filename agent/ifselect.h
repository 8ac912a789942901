/* Which interfaces an agent measures: `--interfaces` and `--exclude-interfaces`.
 *
 *   auto         the interfaces that carry a default route (IPv4 or IPv6),
 *                never lo; a bond carries the route, so it counts once and
 *                its slaves not at all
 *   eth0         exactly that interface, whatever its type
 *   ens*         a glob (fnmatch): physical interfaces and bonds only, never
 *                lo, veth, bridges, tunnels, VLANs or bond slaves
 * Items combine with commas ("auto,eth1"); excludes are globs and always win.
 *
 * Pure functions over a list of links, so the rules are tested as tables. */
#ifndef NETSCHED_IFSELECT_H
#define NETSCHED_IFSELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IFSELECT_NAME_MAX 16	/* IFNAMSIZ */
#define IFSELECT_MAX_ITEMS 32

/* What the kernel says about one link (rtnetlink or /sys/class/net). */
struct ifselect_link {
	uint32_t ifindex;
	char name[IFSELECT_NAME_MAX];
	char kind[16];		/* IFLA_INFO_KIND: "veth", "bridge", "bond"; "" = hardware */
	bool loopback;
	bool bond_slave;	/* enslaved to a bond or team */
	bool default_route;	/* a default route leaves through it */
	/* For pods' interfaces (podselect.h); sysfs leaves them 0. */
	uint32_t master;	/* IFLA_MASTER: the bridge (or bond) it is enslaved to; 0 = none */
	bool peer_netns;	/* IFLA_LINK_NETNSID: its peer lives in another namespace */
};

struct ifselect_spec {
	bool is_auto;
	size_t n_include;
	char include[IFSELECT_MAX_ITEMS][IFSELECT_NAME_MAX];
	size_t n_exclude;
	char exclude[IFSELECT_MAX_ITEMS][IFSELECT_NAME_MAX];
};

/* Parses a comma-separated list into spec->include (and sets is_auto for the
 * item "auto"), or into spec->exclude when exclude is true. Returns 0, or
 * -EINVAL with why naming the bad item; spec is then untouched. */
int ifselect_parse(struct ifselect_spec *spec, const char *list, bool exclude, char *why,
		   size_t len);

/* Whether the n bytes at s make an interface name or glob the kernel
 * accepts: 1 to IFSELECT_NAME_MAX - 1 printable bytes, no '/', ':', quotes
 * or backslashes (podselect.c's items too). */
bool ifselect_item_ok(const char *s, size_t n);

/* Whether the link is to be measured. */
bool ifselect_match(const struct ifselect_spec *spec, const struct ifselect_link *link);

/* True for links no glob or auto may pick (lo, veth, bridges, tunnels...). */
bool ifselect_is_virtual(const struct ifselect_link *link);

#endif
