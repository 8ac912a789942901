/* What the rebalancer asks of the apiserver, over common/kubeclient.h:
 * the pods on a node, an eviction (policy/v1 where served, else
 * policy/v1beta1, as Kubernetes 1.20 serves it), an Event on a pod or a
 * node, and its Lease. Each reply is read whole up to a bound. Not
 * thread-safe (one kubeclient). */
#ifndef NETSCHED_REBALANCER_KUBEOPS_H
#define NETSCHED_REBALANCER_KUBEOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/kubeclient.h"
#include "lease.h"

struct kubeops {
	struct kubeclient *kc;		/* not owned */
	uint64_t timeout_ms;
	bool policy_v1;			/* the apiserver serves policy/v1 Evictions */
	const char *component;		/* "netsched-rebalancer" */
	const char *identity;		/* this replica, for Events */
};

/* Whether policy/v1 is served (GET /apis/policy/v1 lists "eviction"
 * under pods); sets ko->policy_v1. 0, or -errno with why. */
int kubeops_discover(struct kubeops *ko, char *why, size_t whylen);

/* The PodList of the pods bound to node, into out (at most max bytes).
 * 0 with *code, or -errno with why. */
int kubeops_node_pods(struct kubeops *ko, const char *node, size_t max, struct buf *out,
		      long *code, char *why, size_t whylen);

enum kubeops_eviction {
	KUBEOPS_EVICTED,	/* 200 or 201 */
	KUBEOPS_PDB,		/* 429: a PodDisruptionBudget refuses it now */
	KUBEOPS_GONE,		/* 404, or 409 (the UID changed) */
	KUBEOPS_FAILED,		/* anything else: why says */
};

/* Evicts ns/name if its UID is still uid. */
enum kubeops_eviction kubeops_evict(struct kubeops *ko, const char *ns, const char *name,
				    const char *uid, long *code, char *why, size_t whylen);

/* A core/v1 Event on a Pod (ns, name, uid) or, with kind "Node", on node
 * name (in namespace default, where Node events go). type "Normal" or
 * "Warning"; message is cut at 1024 bytes. 0 or -errno with why. */
int kubeops_event(struct kubeops *ko, const char *kind, const char *ns, const char *name,
		  const char *uid, const char *type, const char *reason, const char *message,
		  uint64_t unix_ns, char *why, size_t whylen);

/* GET the Lease: 0 with r filled (r->exists false on 404), or -errno. */
int kubeops_lease_get(struct kubeops *ko, const char *ns, const char *name,
		      struct lease_record *r, char *why, size_t whylen);
/* POST (create) or PUT (renew, take) it; 0 and *ok whether it was taken. */
int kubeops_lease_write(struct kubeops *ko, const char *ns, const char *name,
			const char *identity, uint64_t duration_s, const struct lease_record *r,
			enum lease_action a, uint64_t unix_ns, bool *ok, long *code, char *why,
			size_t whylen);

/* The first path segment-safe form of s (percent-escaped), for paths and
 * field selectors. */
void kubeops_escape(const char *s, char *out, size_t cap);

#endif
