/* A pod's "namespace/name", the one way logs, /v1/nodes, /metrics' labels
 * and the in-flight table print it: printable ASCII (anything else is '?':
 * it goes into JSON and metric labels as is), the namespace cut at
 * PODLABEL_NS_MAX and the whole at cap - 1 bytes. */
#ifndef NETSCHED_PODLABEL_H
#define NETSCHED_PODLABEL_H

#include <stddef.h>

#define PODLABEL_NS_MAX 63u		/* a namespace is a DNS label */
#define PODLABEL_NAME_MAX 253u		/* a pod's name a DNS subdomain */
#define PODLABEL_MAX (PODLABEL_NS_MAX + 1 + PODLABEL_NAME_MAX)

/* ns and name as received (not NUL-terminated; s NULL: empty) into out
 * (cap > 0; PODLABEL_MAX + 1 holds any valid pair whole). Returns out. */
const char *podlabel_format(const char *ns, size_t ns_len, const char *name, size_t name_len,
			    char *out, size_t cap);

#endif
