/* Reading a kube-scheduler ExtenderArgs request: which nodes it asks about,
 * in which mode, and the pod's bandwidth annotations, over the JSON layer
 * (json.h).
 *
 * Nothing is copied: names and node objects point into the body, which must
 * outlive the request. The parse is strict and bounded:
 *  - exactly one JSON value, an object, and nothing but whitespace after it,
 *    with the grammar checked as json.h says;
 *  - top-level and object keys match case-insensitively (ASCII) after
 *    unescaping, and the last duplicate wins, as Go's encoding/json does
 *    (Go's extra folds of U+212A and U+017F are not honoured);
 *  - at most limits->max_json_tokens tokens and limits->max_nodes nodes;
 *  - node names follow common/nodename.h (DNS subdomains, 1..253 bytes),
 *    which never need an escape, so a name with a backslash, a control
 *    byte or invalid UTF-8 is refused rather than unescaped or echoed.
 * The walk is iterative: nesting depth costs no stack. */
#ifndef NETSCHED_EXTREQ_H
#define NETSCHED_EXTREQ_H

#include <stddef.h>

#include "parse/kubepod.h"
#include "parse/bwannot.h"
#include "membudget.h"
#include "nodename.h"
#include "parse/poduid.h"

/* Bounds on one request; the scorer's --max-request-nodes sets max_nodes. */
struct extreq_limits {
	size_t max_nodes;		/* more nodes in one request -> -E2BIG */
	size_t max_json_tokens;		/* more JSON tokens -> -E2BIG */
	struct membudget *budget;	/* tokens' memory; no room -> -EBUSY; NULL: none */
};

#define EXTREQ_DEFAULT_MAX_JSON_TOKENS (4u * 1024u * 1024u)

enum extreq_mode {
	EXTREQ_NAMES,	/* "NodeNames": [...]  (nodeCacheCapable: true) */
	EXTREQ_FULL,	/* "Nodes": {"items": [...]}  (nodeCacheCapable: false) */
};

struct extreq_node {
	const char *name;	/* into the body, exactly as received */
	size_t name_len;
	const char *raw;	/* full mode: the node object's bytes as received; else NULL */
	size_t raw_len;
};

/* A pod annotation's value: the JSON string's contents as received (escapes
 * not decoded), or NULL when the pod does not carry it. */
struct extreq_str {
	const char *s;
	size_t len;
};

struct extreq {
	enum extreq_mode mode;
	size_t n;
	struct extreq_node *nodes;	/* n entries, in request order; owned */
	struct extreq_str pod_namespace;	/* Pod.metadata.namespace, for logs */
	struct extreq_str pod_name;		/* Pod.metadata.name, for logs */
	struct pod_uid pod_uid;			/* Pod.metadata.uid: in-flight pods */
	/* Its bandwidth annotations (bwannot.h: the first key of each
	 * direction it carries) and the keys they came from (NULL: none). */
	struct extreq_str ingress_bandwidth;
	struct extreq_str egress_bandwidth;
	const struct bwannot_key *ingress_key, *egress_key;
	/* Its controller and pod-template-hash, for its workload
	 * (workload.h); absurd ones are left out (owner zeroed) and
	 * owner_absurd says why: they never fail the request. */
	struct kubepod_owner owner;
	char owner_absurd[KUBEPOD_ABSURD_MAX];
};

/* Parses len bytes of body (need not be NUL-terminated). Returns 0 and fills
 * *rq, which the caller releases with extreq_free(); or -EINVAL (not a valid
 * ExtenderArgs), -E2BIG (over a limit) or -ENOMEM, with *rq untouched and err
 * holding one line that says what is wrong and where (a JSON path or a byte
 * offset, the count and the limit), never echoing the input. */
int extreq_parse(const char *body, size_t len, const struct extreq_limits *limits,
		 struct extreq *rq, char *err, size_t errlen);

/* Frees what extreq_parse() allocated; accepts a zeroed struct. */
void extreq_free(struct extreq *rq);

/* ---- ExtenderPreemptionArgs (the preempt verb) ----
 * {"Pod": {...}, "NodeNameToMetaVictims": {"node": {"Pods": [{"UID": "..."}],
 * "NumPDBViolations": 0}}} with nodeCacheCapable: true; with false,
 * "NodeNameToVictims" holds whole Pods instead of {"UID"}. Exactly one of
 * the two is set. Every victim must carry a UID (the reply names victims by
 * it); names and limits as above. */

/* Longest JSON path a message names (a node name, a victim's index). */
#define EXTREQ_PATH_MAX 320u

/* A pod's metadata as read: the pod being placed, or a victim (whose name
 * and annotations only full mode carries). */
struct extreq_pod {
	struct extreq_str name, ns;
	struct pod_uid uid;
	struct extreq_str ingress, egress;	/* the bandwidth annotations */
	const struct bwannot_key *ingress_key, *egress_key; /* their keys; NULL: none */
};

struct extreq_candidate {
	const char *name;		/* into the body */
	size_t name_len;
	struct extreq_pod *victims;	/* into extreq_preemption.victims */
	size_t n_victims;
	struct extreq_str pdb;		/* NumPDBViolations as received ("0" when absent) */
};

struct extreq_preemption {
	struct extreq pod;		/* the pod and the mode; no nodes */
	size_t n;
	struct extreq_candidate *candidates;	/* n, in request order; owned */
	struct extreq_pod *victims;		/* owned */
};

/* As extreq_parse(), for the preempt verb; release with
 * extreq_preemption_free(). */
int extreq_parse_preemption(const char *body, size_t len, const struct extreq_limits *limits,
			    struct extreq_preemption *out, char *err, size_t errlen);
void extreq_preemption_free(struct extreq_preemption *p);

#endif
