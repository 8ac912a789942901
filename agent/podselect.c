#include "podselect.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

int podselect_parse(struct podselect_spec *spec, const char *list, char *why, size_t len)
{
	struct podselect_spec next = { 0 };
	const char *p = list;
	size_t item = 0;

	if (strcmp(list, "off") == 0) {
		*spec = next;
		return 0;
	}
	for (;; item++) {
		size_t k = strcspn(p, ",");

		if (k == 4 && strncmp(p, "auto", 4) == 0) {
			next.is_auto = true;
		} else if (k == 3 && strncmp(p, "off", 3) == 0) {
			snprintf(why, len, "item %zu: off stands alone", item + 1);
			return -EINVAL;
		} else if (!ifselect_item_ok(p, k)) {
			snprintf(why, len, "item %zu: not auto, off or an interface glob (1-%d bytes, "
				 "no '/', ':' or spaces)", item + 1, IFSELECT_NAME_MAX - 1);
			return -EINVAL;
		} else if (next.n_globs == IFSELECT_MAX_ITEMS) {
			snprintf(why, len, "more than %d globs", IFSELECT_MAX_ITEMS);
			return -EINVAL;
		} else {
			memcpy(next.globs[next.n_globs], p, k);
			next.globs[next.n_globs][k] = '\0';
			for (size_t i = 0; i < next.n_globs; i++)
				if (strcmp(next.globs[i], next.globs[next.n_globs]) == 0) {
					snprintf(why, len, "%s named twice", next.globs[i]);
					return -EINVAL;
				}
			next.n_globs++;
		}
		if (!p[k])
			break;
		p += k + 1;
	}
	*spec = next;
	return 0;
}

bool podselect_enabled(const struct podselect_spec *spec)
{
	return spec->is_auto || spec->n_globs;
}

/* veth, and netkit (Cilium's newer datapath): a pair whose other end is
 * the pod's eth0. */
static bool veth_like(const struct ifselect_link *l)
{
	return !strcmp(l->kind, "veth") || !strcmp(l->kind, "netkit");
}

bool podselect_match(const struct podselect_spec *spec, const struct ifselect_spec *excl,
		     const struct ifselect_link *l, bool measured)
{
	if (measured || l->loopback || !strcmp(l->kind, "bridge"))
		return false;
	for (size_t i = 0; excl && i < excl->n_exclude; i++)
		if (fnmatch(excl->exclude[i], l->name, 0) == 0)
			return false;
	if (spec->is_auto && veth_like(l) && l->peer_netns)
		return true;
	for (size_t i = 0; i < spec->n_globs; i++)
		if (fnmatch(spec->globs[i], l->name, 0) == 0)
			return true;
	return false;
}
