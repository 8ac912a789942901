/* A pod's UID: the key in-flight pods are counted by (inflight.h). The
 * extender request (extreq.c) and the pod watch (kubepod.c) both read it
 * with kubepod_read_uid(): escapes decoded, 1..POD_UID_MAX bytes, no
 * control character. So a UID the scheduler's JSON encoder escaped is the
 * UID the watch confirms, and one the watch refuses is refused in the
 * request too. Kubernetes UIDs are 36-byte UUIDs. */
#ifndef NETSCHED_PODUID_H
#define NETSCHED_PODUID_H

#include <stddef.h>

#define POD_UID_MAX 64u

struct pod_uid {
	size_t len;		/* 0: none */
	char s[POD_UID_MAX];	/* not NUL-terminated */
};

#endif
