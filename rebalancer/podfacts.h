/* What the apiserver says about the pods on a hot node, for the decision's
 * protections: read from a PodList (GET /api/v1/pods?fieldSelector=
 * spec.nodeName=NODE) and joined to the scorer's pods of that node by
 * namespace and name (and UID when both have one: a pod recreated under
 * the same name is another pod).
 *
 * Read per pod: metadata.namespace, name, uid, creationTimestamp,
 * deletionTimestamp, the kubernetes.io/config.mirror annotation, the
 * ownerReference with controller: true (its kind), spec.priority, and
 * whether spec.volumes has an emptyDir or a hostPath. A pod item that
 * cannot be read is an error naming it: the protections must never be
 * guessed. */
#ifndef NETSCHED_REBALANCER_PODFACTS_H
#define NETSCHED_REBALANCER_PODFACTS_H

#include <stddef.h>

#include "decide.h"

/* A node's PodList, at most: 110 pods (the kubelet's default) of a few KiB
 * each fit many times over. */
#define PODFACTS_BODY_MAX (16u * 1024u * 1024u)
#define PODFACTS_MAX_ITEMS 4096u

/* Fills the facts of every pod of n that the PodList in js names (known
 * true), leaving the others unknown. 0, or -EINVAL / -E2BIG / -ENOMEM with
 * err naming the item and the field; n's facts are then all unknown. */
int podfacts_join(const char *js, size_t len, struct decide_node *n, char *err, size_t errlen);

struct json;
/* js[0..len), at most max_bytes and max_tokens, parsed into doc as a
 * PodList; its items array's token in *items. 0, or -E2BIG, a parse error
 * or -EINVAL (not a PodList) with err set and doc left empty. The caller
 * frees doc after a 0 (json_free). Shared by podfacts and pending. */
int podfacts_podlist(struct json *doc, const char *js, size_t len, size_t max_bytes,
		     size_t max_tokens, int *items, char *err, size_t errlen);

/* "2026-11-27T21:00:00Z" (RFC 3339, UTC or an offset, fractions ignored)
 * -> Unix seconds; -EINVAL otherwise. */
int podfacts_parse_time(const char *s, size_t len, uint64_t *out);

#endif
