/* Reading what the apiserver says about pods: a PodList page, one watch
 * event, or a Status error, over the JSON layer (json.h).
 *
 * Only what in-flight accounting and the pod index need is read: a pod's
 * UID, namespace and name, the node it is bound to, its bandwidth
 * annotations, whether it has finished, when it was scheduled; and for the
 * pod index (podindex.h) whether it runs, since when, its IP addresses and
 * its controller (the ownerReference with controller: true, and the
 * pod-template-hash label), which make its workload (workload.h). Nothing
 * is copied but the UIDs (poduid.h) and the addresses (proto/report.h's
 * report_ip, the form the agents' reports carry them in): strings
 * point into the text, which must outlive the result. Everything from the apiserver is
 * bounded here like any other input: UIDs, node names and resource versions
 * have a fixed maximum length, and a value of the wrong type is an error
 * that names the field, never a crash or a guess. */
#ifndef NETSCHED_KUBEPOD_H
#define NETSCHED_KUBEPOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/bwannot.h"
#include "json.h"
#include "parse/poduid.h"
#include "report.h"

/* Resource versions and continue tokens are opaque strings; etcd's are
 * decimal numbers, continue tokens base64 of a small JSON. */
#define KUBEPOD_RV_MAX 64u
#define KUBEPOD_CONTINUE_MAX 4096u

/* A string as received (escapes not decoded); s NULL when absent. */
struct kubepod_str {
	const char *s;
	size_t len;
};

/* A pod's controller: kind and name of its ownerReference with
 * controller: true (kind s NULL: none, a bare pod), and the
 * pod-template-hash label a Deployment's ReplicaSet stamps on its pods.
 * Kinds are identifiers of up to KUBEPOD_KIND_MAX bytes, names DNS
 * subdomains (nodename.h's rule), the hash a label value (up to 63 bytes);
 * none has an escape. */
#define KUBEPOD_KIND_MAX 63u
#define KUBEPOD_LABEL_VALUE_MAX 63u
/* More ownerReferences than this is not a pod any controller made. */
#define KUBEPOD_MAX_OWNER_REFS 16u
/* Container statuses read for started, at most (a pod has a few). */
#define KUBEPOD_MAX_CONTAINERS 64u
/* A container's state object read at most: {"waiting": {"reason": ...,
 * "message": ...}} with a long message is a few hundred bytes. */
#define KUBEPOD_STATE_MAX 4096u
struct kubepod_owner {
	struct kubepod_str kind;
	struct kubepod_str name;
	struct pod_uid uid;
	struct kubepod_str template_hash;
};

/* A pod has one address per family at most (the apiserver validates
 * status.podIPs so). */
#define KUBEPOD_MAX_IPS 2u

/* Why a pod's addresses or controller cannot be trusted, for a log line. */
#define KUBEPOD_ABSURD_MAX 160u

struct kubepod {
	struct pod_uid uid;
	struct kubepod_str ns;
	struct kubepod_str name;
	struct kubepod_str node;	/* spec.nodeName; absent or empty: not bound */
	/* Its bandwidth annotations (bwannot.h: the first key of each
	 * direction it carries) and the keys they came from (NULL: none). */
	struct kubepod_str ingress;
	struct kubepod_str egress;
	const struct bwannot_key *ingress_key, *egress_key;
	struct kubepod_str rv;		/* metadata.resourceVersion */
	/* status.phase Succeeded or Failed, or metadata.deletionTimestamp set:
	 * its traffic is ending (a terminating pod is deleted only when its
	 * kubelet says it stopped). */
	bool finished;
	/* When it was bound, Unix seconds: the PodScheduled condition's
	 * lastTransitionTime, else its creationTimestamp (a pod created with
	 * spec.nodeName set); 0 when neither is readable. */
	int64_t scheduled_unix_s;

	/* For the pod index (podindex.h). These never fail the read: a pod
	 * whose addresses or owner references make no sense still counts in
	 * flight; absurd[0] then says why, and the index leaves it out. */
	bool running;			/* status.phase Running */
	/* Running, and a container of it has started (containerStatuses[]:
	 * started or ready true, or state.running; no statuses at all: the
	 * phase alone). A pod bound that never starts (a bad image, a crash
	 * loop, a missing Secret) is not: inflight.h stops counting it. */
	bool started;
	/* Why a container waits (state.waiting.reason of the first that
	 * does: ImagePullBackOff, CrashLoopBackOff...), for logs; s NULL:
	 * none said. */
	struct kubepod_str waiting;
	/* spec.hostNetwork: its address is its node's, its traffic the
	 * node's own, never a pod interface's. */
	bool host_network;
	/* Since when it runs, Unix seconds: the Ready condition's
	 * lastTransitionTime when Ready is True, else status.startTime; 0
	 * when neither is readable. */
	int64_t started_unix_s;
	unsigned n_ips;			/* status.podIPs, and podIP */
	struct report_ip ips[KUBEPOD_MAX_IPS];
	struct kubepod_owner owner;
	char absurd[KUBEPOD_ABSURD_MAX];
};

enum kubepod_event_type {
	KUBEPOD_ADDED,
	KUBEPOD_MODIFIED,
	KUBEPOD_DELETED,
	KUBEPOD_BOOKMARK,	/* only object.metadata.resourceVersion is meaningful */
	KUBEPOD_ERROR,		/* object is a Status: see status */
};

/* A Status object (a failed request's body, or a watch ERROR event).
 * Reason and message are only for logs: escapes are kept, as received. */
struct kubepod_status {
	int64_t code;			/* HTTP code it stands for; 410: resource version expired */
	struct kubepod_str reason;	/* "Expired", "Forbidden", ... */
	struct kubepod_str message;
};

struct kubepod_event {
	enum kubepod_event_type type;
	struct kubepod pod;		/* ADDED, MODIFIED, DELETED, BOOKMARK */
	struct kubepod_status status;	/* ERROR */
};

/* One page of a pod list. items[] is walked with kubepod_list_item(). */
struct kubepod_list {
	struct kubepod_str rv;		/* the list's resourceVersion: watch from here */
	struct kubepod_str cont;	/* metadata.continue: absent or empty on the last page */
	int items;			/* the items array's token */
	int n;				/* how many items */
};

/* Each returns 0, or -EINVAL with err saying which field is wrong and how,
 * never echoing the input. */

/* What the readers below read of a pod lies in containers that open less
 * than KUBEPOD_DEPTH levels below the pod object (the deepest:
 * metadata.ownerReferences[i], status.conditions[i], status.podIPs[i]), so
 * a document holding a pod at depth d may be parsed with the containers
 * from d + KUBEPOD_DEPTH opaque (json_parse_shallow()): its containers'
 * specs, volumes and managed fields are then checked but not tokenized. */
#define KUBEPOD_DEPTH 4u

/* Pod object obj of doc into *p. */
int kubepod_read(const struct json *doc, int obj, struct kubepod *p, char *err, size_t errlen);

/* A watch event: the whole document is {"type": ..., "object": {...}}. */
int kubepod_read_event(const struct json *doc, struct kubepod_event *ev, char *err,
		       size_t errlen);

/* Member "uid" of object md (the metadata at path, for messages; fold:
 * the key matched ASCII case-insensitively, as Go decodes struct fields)
 * into *out, by the rule of poduid.h; absent or null: out->len 0. */
int kubepod_read_uid(const struct json *doc, int md, const char *path, bool fold,
		     struct pod_uid *out, char *err, size_t errlen);

/* The controller and pod-template-hash of metadata object md (path for
 * messages; fold: keys matched as Go decodes struct fields) into *out
 * (zeroed first). -EINVAL with why when they are absurd: more than
 * KUBEPOD_MAX_OWNER_REFS references, more than one controller, a
 * controller without a kind or a name, anything of the wrong type or over
 * its bound; *out is then zeroed. Absent: 0 with kind.s NULL. */
int kubepod_read_owner(const struct json *doc, int md, const char *path, bool fold,
		       struct kubepod_owner *out, char *why, size_t whylen);

/* A PodList page: the whole document. */
int kubepod_read_list(const struct json *doc, struct kubepod_list *l, char *err, size_t errlen);

/* The next item's token: start with at = -1, then pass what it returned. */
int kubepod_list_item(const struct json *doc, const struct kubepod_list *l, int at);

/* A Status object, the whole document (an error reply's body). */
int kubepod_read_status(const struct json *doc, struct kubepod_status *st, char *err,
			size_t errlen);

/* RFC 3339 time as Kubernetes writes it ("2026-11-23T09:25:18Z", an offset
 * instead of Z, fractional seconds ignored) into Unix seconds. 0 or -EINVAL. */
int kubepod_parse_time(const char *s, size_t len, int64_t *out);

#endif
