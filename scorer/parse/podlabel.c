#include "parse/podlabel.h"

#include <stdio.h>

#include "log.h"

const char *podlabel_format(const char *ns, size_t ns_len, const char *name, size_t name_len,
			    char *out, size_t cap)
{
	char n[PODLABEL_NS_MAX + 1], p[PODLABEL_NAME_MAX + 1];

	snprintf(out, cap, "%s/%s", log_printable(ns, ns_len, n, sizeof(n)),
		 log_printable(name, name_len, p, sizeof(p)));
	return out;
}
