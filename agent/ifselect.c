#include "ifselect.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

bool ifselect_item_ok(const char *s, size_t n)
{
	if (n == 0 || n >= IFSELECT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '/' || s[i] == ':' || s[i] == '"' ||
		    s[i] == '\\')
			return false;
	return true;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int ifselect_parse(struct ifselect_spec *spec, const char *list, bool exclude, char *why,
		   size_t len)
{
	struct ifselect_spec next = *spec;
	size_t *n = exclude ? &next.n_exclude : &next.n_include;
	char(*items)[IFSELECT_NAME_MAX] = exclude ? next.exclude : next.include;
	const char *p = list;

	*n = 0;
	if (!exclude)
		next.is_auto = false;
	for (;;) {
		size_t k = strcspn(p, ",");

		if (!exclude && k == 4 && strncmp(p, "auto", 4) == 0) {
			next.is_auto = true;
		} else if (!ifselect_item_ok(p, k)) {
			snprintf(why, len, "item %zu: not an interface name or glob (1-%d bytes, no "
				 "'/', ':' or spaces)", *n + 1 + next.is_auto, IFSELECT_NAME_MAX - 1);
			return -EINVAL;
		} else if (*n == IFSELECT_MAX_ITEMS) {
			snprintf(why, len, "more than %d items", IFSELECT_MAX_ITEMS);
			return -EINVAL;
		} else {
			memcpy(items[*n], p, k);
			items[*n][k] = '\0';
			for (size_t i = 0; i < *n; i++)
				if (strcmp(items[i], items[*n]) == 0) {
					snprintf(why, len, "%s named twice", items[*n]);
					return -EINVAL;
				}
			(*n)++;
		}
		if (!p[k])
			break;
		p += k + 1;
	}
	*spec = next;
	return 0;
}

bool ifselect_is_virtual(const struct ifselect_link *l)
{
	if (l->loopback)
		return true;
	/* Hardware has no IFLA_LINKINFO; a bond or team stands for its slaves. */
	return l->kind[0] && strcmp(l->kind, "bond") && strcmp(l->kind, "team");
}

bool ifselect_match(const struct ifselect_spec *spec, const struct ifselect_link *l)
{
	for (size_t i = 0; i < spec->n_exclude; i++)
		if (fnmatch(spec->exclude[i], l->name, 0) == 0)
			return false;
	for (size_t i = 0; i < spec->n_include; i++)
		if (!is_glob(spec->include[i]) && strcmp(spec->include[i], l->name) == 0)
			return true; /* named explicitly: whatever it is */
	if (spec->is_auto && l->default_route && !l->loopback)
		return true;
	if (ifselect_is_virtual(l) || l->bond_slave)
		return false;
	for (size_t i = 0; i < spec->n_include; i++)
		if (is_glob(spec->include[i]) && fnmatch(spec->include[i], l->name, 0) == 0)
			return true;
	return false;
}
