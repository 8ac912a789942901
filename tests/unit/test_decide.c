/* The rebalancer's decision (rebalancer/decide.c) as a row table: each row
 * is a cluster seen over a few reports (a hot source node-3 with its pods,
 * destinations beside it) and what the rebalancer remembers (moves made,
 * pods a PDB refused); it names the outcome, the pod, the destination and
 * the words of the sentence. Then the rules that need several nodes or
 * cycles: the per-cycle limit, room on a destination shared within a
 * cycle, the hotter direction, a scorer restart, memory of moves made;
 * and the configuration's checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rebalancer/decide.h"

#define MB 1000000ULL
#define LINK (125 * MB)		/* 1 Gb/s in bytes per second */
#define NOW 1800000000ULL	/* Unix seconds */

struct prow {
	const char *name;
	uint64_t tx, rx;
	enum decide_owner owner;
	const char *ns;		/* NULL: "default" */
	const char *workload;	/* NULL: ns + "/" + the name's first word */
	uint64_t age_s;		/* 0: an hour */
	int64_t priority;
	bool mirror, deleting, local, unknown;
};

struct nrow {
	const char *name;
	uint64_t tx, rx;
	uint64_t in_tx, in_rx;
	bool stale;
	uint64_t link;		/* 0: LINK */
};

struct hrow {			/* a move made ago_s before now */
	uint64_t ago_s;
	const char *ns, *workload, *from;
};

enum knob {
	K_NONE, K_DRY_RUN, K_LOCAL_OK, K_INCLUDE_OTHER, K_NODE1, K_NS1, K_WL1, K_HOUR1, K_NO_EXCLUDE,
};

struct row {
	const char *what;
	enum knob knob;
	/* The source's tx at each report (0 ends; none: 118 MB/s three times). */
	uint64_t seq[8];
	bool same_counter;	/* the scorer got no new report between looks */
	struct nrow src;	/* name "node-3" unless set */
	struct prow pods[6];
	struct nrow others[3];	/* none: node-5 at tx 64 MB/s, rx 10 MB/s */
	struct hrow hist[3];
	const char *backoff_pod;	/* a pod a PDB refused */
	uint64_t backoff_ago_s;
	/* What comes out: no outcome at all when want_none. */
	bool want_none;
	enum decide_reason want;
	const char *want_pod;	/* NULL: none */
	const char *want_dest;	/* NULL: none */
	const char *want_text;	/* in the sentence */
};

#define WEB { "web-a", 30 * MB, 100000, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false }
#define SRC { "node-3", 118 * MB, 2 * MB, 0, 0, false, 0 }

static const struct row rows[] = {
	/* Hot or not. */
	{ "hot for 3 reports: the pod moves to the node with room", K_NONE, {0}, false, SRC,
	  { WEB }, {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5",
	  "node-3: tx 118 MB/s is 94% of 125 MB/s for 3 reports; evicting default/web-a "
	  "(tx 30 MB/s) for node-5; node-5 has 61 MB/s tx free" },
	{ "dry run: the same plan, not acted on", K_DRY_RUN, {0}, false, SRC, { WEB }, {{0}}, {{0}},
	  NULL, 0, false, DECIDE_DRY_RUN, "web-a", "node-5",
	  "for 3 reports; dry run, would evict default/web-a (tx 30 MB/s) for node-5" },
	{ "2 reports over of 3: waits", K_NONE, { 118 * MB, 118 * MB }, false, SRC, { WEB },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_NOT_DEBOUNCED, NULL, NULL,
	  "node-3: tx 118 MB/s is 94% of 125 MB/s for 2 of 3 reports; waiting" },
	{ "a spike: over, under, over, over is 2, not 3", K_NONE,
	  { 118 * MB, 50 * MB, 118 * MB, 118 * MB }, false, SRC, { WEB }, {{0}}, {{0}}, NULL, 0,
	  false, DECIDE_NOT_DEBOUNCED, NULL, NULL, "for 2 of 3 reports" },
	{ "one report seen on 5 looks counts once", K_NONE,
	  { 118 * MB, 118 * MB, 118 * MB, 118 * MB, 118 * MB }, true, SRC, { WEB }, {{0}}, {{0}},
	  NULL, 0, false, DECIDE_NOT_DEBOUNCED, NULL, NULL, "for 1 of 3 reports" },
	{ "exactly at the threshold is over", K_NONE, { 112500000, 112500000, 112500000 }, false,
	  SRC, { WEB }, {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5",
	  "tx 112 MB/s is 90% of 125 MB/s for 3 reports" },
	{ "just under the threshold: nothing to say", K_NONE, { 112499999, 112499999, 112499999 },
	  false, SRC, { WEB }, {{0}}, {{0}}, NULL, 0, true, 0, NULL, NULL, NULL },
	{ "stale figures: nothing moves", K_NONE, {0}, false,
	  { "node-3", 118 * MB, 2 * MB, 0, 0, true, 0 }, { WEB }, {{0}}, {{0}}, NULL, 0, false,
	  DECIDE_STALE, NULL, NULL, "node-3: tx 118 MB/s is 94% of 125 MB/s; its figures are stale" },
	{ "unknown link speed: never hot", K_NONE, {0}, false,
	  { "node-3", 118 * MB, 2 * MB, 0, 0, false, 1 }, { WEB }, {{0}}, {{0}}, NULL, 0, true, 0,
	  NULL, NULL, NULL },
	{ "hot in rx: the rx rate chooses", K_NONE, {0}, false,
	  { "node-3", 1 * MB, 120 * MB, 0, 0, false, 0 },
	  { { "web-a", 0, 30 * MB, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5",
	  "node-3: rx 120 MB/s is 96% of 125 MB/s for 3 reports; evicting default/web-a (rx 30 MB/s)" },

	/* The destination. */
	{ "in flight to the destination is counted", K_NONE, {0}, false, SRC, { WEB },
	  { { "node-5", 64 * MB, 10 * MB, 10 * MB, 0, false, 0 } }, {{0}}, NULL, 0, false,
	  DECIDE_NO_DESTINATION, "web-a", NULL,
	  "not moving default/web-a (tx 30 MB/s): no fresh node stays at or under 80% of its link "
	  "with its tx 30 MB/s (in flight counted)" },
	{ "a destination left at exactly hot - margin fits", K_NONE, {0}, false, SRC, { WEB },
	  { { "node-5", 70 * MB, 10 * MB, 0, 0, false, 0 } }, {{0}}, NULL, 0, false, DECIDE_MOVE,
	  "web-a", "node-5", "node-5 has 55 MB/s tx free" },
	{ "the destination's other direction counts too", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 30 * MB, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  { { "node-5", 10 * MB, 80 * MB, 0, 0, false, 0 } }, {{0}}, NULL, 0, false,
	  DECIDE_NO_DESTINATION, "web-a", NULL, "no fresh node" },
	{ "a stale node is no destination", K_NONE, {0}, false, SRC, { WEB },
	  { { "node-5", 0, 0, 0, 0, true, 0 } }, {{0}}, NULL, 0, false, DECIDE_NO_DESTINATION,
	  "web-a", NULL, "no fresh node" },
	{ "the node with the most room wins", K_NONE, {0}, false, SRC, { WEB },
	  { { "node-5", 64 * MB, 10 * MB, 0, 0, false, 0 }, { "node-6", 20 * MB, 10 * MB, 0, 0, false, 0 },
	    { "node-7", 40 * MB, 0, 0, 0, false, 0 } }, {{0}}, NULL, 0, false, DECIDE_MOVE,
	  "web-a", "node-6", "node-6 has 105 MB/s tx free" },

	/* Which pod. */
	{ "the smallest pod that is enough", K_NONE, {0}, false, SRC,
	  { WEB, { "api-b", 8 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false },
	    { "log-c", 4 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "api-b", "node-5", "evicting default/api-b (tx 8 MB/s)" },
	{ "none is enough: the largest", K_NONE, {0}, false, SRC,
	  { { "log-c", 3 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false },
	    { "api-b", 5 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false },
	    { "idle-d", 0, 9 * MB, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "api-b", "node-5", "evicting default/api-b (tx 5 MB/s)" },
	{ "the wanted pod protected: the next one moves", K_NONE, {0}, false, SRC,
	  { WEB, { "ds-x", 8 * MB, 0, DECIDE_OWNER_DAEMONSET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5", "evicting default/web-a" },
	{ "the wanted pod has no room anywhere: a smaller one moves", K_NONE, {0}, false, SRC,
	  { { "big-a", 60 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false },
	    { "api-b", 8 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  { { "node-5", 80 * MB, 0, 0, 0, false, 0 } }, {{0}}, NULL, 0, false, DECIDE_MOVE, "api-b",
	  "node-5", "evicting default/api-b (tx 8 MB/s)" },
	{ "no pod known on the node", K_NONE, {0}, false, SRC, {{0}}, {{0}}, {{0}}, NULL, 0, false,
	  DECIDE_NO_PODS, NULL, NULL, "no pod on it with tx traffic is known to the scorer" },
	{ "a pod the apiserver does not list", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, true } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_UNKNOWN_POD, "web-a", NULL,
	  "default/web-a (tx 30 MB/s) is not in the apiserver's pod list" },

	/* Protected kinds. */
	{ "DaemonSet pod", K_NONE, {0}, false, SRC,
	  { { "ds-x", 30 * MB, 0, DECIDE_OWNER_DAEMONSET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "ds-x", NULL, "is a DaemonSet pod" },
	{ "bare pod", K_NONE, {0}, false, SRC,
	  { { "bare-x", 30 * MB, 0, DECIDE_OWNER_NONE, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "bare-x", NULL, "is a bare pod" },
	{ "mirror of a static pod", K_NONE, {0}, false, SRC,
	  { { "etcd-x", 30 * MB, 0, DECIDE_OWNER_OTHER, NULL, NULL, 0, 0, true, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "etcd-x", NULL, "is a static pod" },
	{ "another controller kind", K_NONE, {0}, false, SRC,
	  { { "cr-x", 30 * MB, 0, DECIDE_OWNER_OTHER, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "cr-x", NULL,
	  "owned by a controller other than a ReplicaSet, StatefulSet or Job" },
	{ "system-critical priority", K_NONE, {0}, false, SRC,
	  { { "dns-x", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 2000000000, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "dns-x", NULL,
	  "has priority 2000000000 (protected from 2000000000)" },
	{ "priority just under system-critical moves", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 1999999999, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5", "evicting" },
	{ "being deleted", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, true, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "web-a", NULL, "is being deleted" },
	{ "local storage, not allowed", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, true, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "web-a", NULL, "has local storage" },
	{ "local storage, allowed", K_LOCAL_OK, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, true, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5", "evicting" },
	{ "StatefulSet pod moves", K_NONE, {0}, false, SRC,
	  { { "db-0", 30 * MB, 0, DECIDE_OWNER_STATEFULSET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "db-0", "node-5", "evicting default/db-0" },
	{ "Job pod moves", K_NONE, {0}, false, SRC,
	  { { "shuffle-x", 30 * MB, 0, DECIDE_OWNER_JOB, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "shuffle-x", "node-5", "evicting" },
	{ "every pod protected: the wanted one's reason", K_NONE, {0}, false, SRC,
	  { { "ds-x", 8 * MB, 0, DECIDE_OWNER_DAEMONSET, NULL, NULL, 0, 0, false, false, false, false },
	    { "bare-y", 30 * MB, 0, DECIDE_OWNER_NONE, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_PROTECTED, "ds-x", NULL,
	  "not moving default/ds-x (tx 8 MB/s) is a DaemonSet pod (nor any of its 1 other pods)" },
	{ "excluded namespace (kube-system by default)", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, "kube-system", NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_EXCLUDED, "web-a", NULL, "namespace kube-system is excluded" },
	{ "no exclusions: kube-system's pod moves", K_NO_EXCLUDE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, "kube-system", NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5", "evicting kube-system/web-a" },
	{ "a namespace outside the include list", K_INCLUDE_OTHER, {0}, false, SRC, { WEB }, {{0}},
	  {{0}}, NULL, 0, false, DECIDE_EXCLUDED, "web-a", NULL, "namespace default is excluded" },
	{ "too young", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 60, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_TOO_YOUNG, "web-a", NULL, "is 60 s old (minimum 300 s)" },
	{ "exactly the minimum age moves", K_NONE, {0}, false, SRC,
	  { { "web-a", 30 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 300, 0, false, false, false, false } },
	  {{0}}, {{0}}, NULL, 0, false, DECIDE_MOVE, "web-a", "node-5", "evicting" },

	/* PDBs, cool-downs, limits. */
	{ "a PDB refused it 100 s ago", K_NONE, {0}, false, SRC, { WEB }, {{0}}, {{0}}, "web-a", 100,
	  false, DECIDE_PDB, "web-a", NULL,
	  "its PodDisruptionBudget refused an eviction 100 s ago (tried again after 300 s)" },
	{ "a PDB refused it 300 s ago: tried again", K_NONE, {0}, false, SRC, { WEB }, {{0}}, {{0}},
	  "web-a", 300, false, DECIDE_MOVE, "web-a", "node-5", "evicting" },
	{ "a PDB refused the wanted pod: another moves", K_NONE, {0}, false, SRC,
	  { WEB, { "api-b", 20 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0, false, false, false, false } },
	  {{0}}, {{0}}, "api-b", 10, false, DECIDE_MOVE, "web-a", "node-5", "evicting default/web-a" },
	{ "workload moved 100 s ago: cool-down", K_NONE, {0}, false, SRC, { WEB }, {{0}},
	  { { 100, "default", "default/web", "node-9" } }, NULL, 0, false, DECIDE_COOLDOWN, "web-a",
	  NULL, "workload default/web moved 100 s ago (cool-down 600 s)" },
	{ "workload moved 600 s ago: moves again", K_NONE, {0}, false, SRC, { WEB }, {{0}},
	  { { 600, "default", "default/web", "node-9" } }, NULL, 0, false, DECIDE_MOVE, "web-a",
	  "node-5", "evicting" },
	{ "node relieved 60 s ago: cool-down", K_NONE, {0}, false, SRC, { WEB }, {{0}},
	  { { 60, "other", "other/batch", "node-3" } }, NULL, 0, false, DECIDE_COOLDOWN, "web-a",
	  NULL, "node-3 was relieved 60 s ago (cool-down 120 s)" },
	{ "limit per node", K_NODE1, {0}, false, SRC, { WEB }, {{0}},
	  { { 200, "other", "other/batch", "node-3" } }, NULL, 0, false, DECIDE_LIMITS, "web-a", NULL,
	  "1 moves off node-3 in the last hour (limit 1 per node)" },
	{ "limit per namespace", K_NS1, {0}, false, SRC, { WEB }, {{0}},
	  { { 200, "default", "default/api", "node-9" } }, NULL, 0, false, DECIDE_LIMITS, "web-a",
	  NULL, "1 moves in namespace default in the last hour (limit 1 per namespace)" },
	{ "limit per workload", K_WL1, {0}, false, SRC, { WEB }, {{0}},
	  { { 700, "default", "default/web", "node-9" } }, NULL, 0, false, DECIDE_LIMITS, "web-a",
	  NULL, "1 moves of workload default/web in the last hour (limit 1 per workload)" },
	{ "the global rate", K_HOUR1, {0}, false, SRC, { WEB }, {{0}},
	  { { 700, "other", "other/batch", "node-9" } }, NULL, 0, false, DECIDE_LIMITS, "web-a", NULL,
	  "1 moves in the last hour (limit 1)" },
	{ "moves older than an hour do not count", K_HOUR1, {0}, false, SRC, { WEB }, {{0}},
	  { { 3600, "default", "default/web", "node-3" } }, NULL, 0, false, DECIDE_MOVE, "web-a",
	  "node-5", "evicting" },
};

static void tune(struct decide_config *cfg, enum knob k)
{
	cfg->dry_run = false;
	switch (k) {
	case K_DRY_RUN: cfg->dry_run = true; break;
	case K_LOCAL_OK: cfg->allow_local_storage = true; break;
	case K_INCLUDE_OTHER:
		snprintf(cfg->include[0], DECIDE_NS_MAX, "batch");
		cfg->n_include = 1;
		break;
	case K_NODE1: cfg->max_per_node = 1; break;
	case K_NS1: cfg->max_per_namespace = 1; break;
	case K_WL1: cfg->max_per_workload = 1; break;
	case K_HOUR1: cfg->max_per_hour = 1; break;
	case K_NO_EXCLUDE: cfg->n_exclude = 0; break;
	case K_NONE: break;
	}
}

static void fill_node(struct decide_node *n, const struct nrow *r)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", r->name);
	n->fresh = !r->stale;
	n->link = r->link == 1 ? 0 : r->link ? r->link : LINK;
	n->rate[DECIDE_TX] = r->tx;
	n->rate[DECIDE_RX] = r->rx;
	n->inflight[DECIDE_TX] = r->in_tx;
	n->inflight[DECIDE_RX] = r->in_rx;
}

static void fill_pod(struct decide_pod *p, const struct prow *r)
{
	const char *ns = r->ns ? r->ns : "default";
	size_t stem = strcspn(r->name, "-");

	memset(p, 0, sizeof(*p));
	snprintf(p->namespace, sizeof(p->namespace), "%s", ns);
	snprintf(p->name, sizeof(p->name), "%s", r->name);
	snprintf(p->uid, sizeof(p->uid), "uid-%s", r->name);
	if (r->workload)
		snprintf(p->workload, sizeof(p->workload), "%s", r->workload);
	else
		snprintf(p->workload, sizeof(p->workload), "%s/%.*s", ns, (int)stem, r->name);
	p->tx = r->tx;
	p->rx = r->rx;
	p->known = !r->unknown;
	p->owner = r->owner;
	p->mirror = r->mirror;
	p->priority = r->priority;
	p->deleting = r->deleting;
	p->local_storage = r->local;
	p->created_s = NOW - (r->age_s ? r->age_s : 3600);
}

/* The row's cluster as one snapshot, the source's tx set to tx. */
static void build(struct decide_snapshot *s, const struct row *r, uint64_t reports, uint64_t tx)
{
	static const struct nrow dflt = { "node-5", 64 * MB, 10 * MB, 0, 0, false, 0 };
	size_t n_others = 0, n_pods = 0;

	while (n_others < 3 && r->others[n_others].name)
		n_others++;
	while (n_pods < 6 && r->pods[n_pods].name)
		n_pods++;
	memset(s, 0, sizeof(*s));
	s->now_s = NOW;
	s->n_nodes = 1 + (n_others ? n_others : 1);
	s->nodes = calloc(s->n_nodes, sizeof(*s->nodes));
	assert_non_null(s->nodes);
	fill_node(&s->nodes[0], &r->src);
	s->nodes[0].reports = reports;
	if (tx && r->src.tx >= r->src.rx)
		s->nodes[0].rate[DECIDE_TX] = tx;
	else if (tx)
		s->nodes[0].rate[DECIDE_RX] = tx;
	for (size_t i = 1; i < s->n_nodes; i++) {
		fill_node(&s->nodes[i], n_others ? &r->others[i - 1] : &dflt);
		s->nodes[i].reports = reports;
	}
	if (n_pods) {
		s->nodes[0].pods = calloc(n_pods, sizeof(struct decide_pod));
		assert_non_null(s->nodes[0].pods);
		for (size_t i = 0; i < n_pods; i++)
			fill_pod(&s->nodes[0].pods[i], &r->pods[i]);
		s->nodes[0].n_pods = n_pods;
	}
	assert_int_equal(decide_snapshot_sort(s), 0);
}

static size_t node_index(const struct decide_snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return i;
	fail_msg("no node %s", name);
	return SIZE_MAX;
}

static void run_row(const struct row *r)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[4];
	uint64_t seq[8] = { 0 };
	size_t n_seq = 0, n;

	decide_config_defaults(&cfg);
	tune(&cfg, r->knob);
	assert_int_equal(decide_memory_init(&m), 0);
	while (n_seq < 8 && r->seq[n_seq]) {
		seq[n_seq] = r->seq[n_seq];
		n_seq++;
	}
	if (n_seq == 0) {
		for (; n_seq < 3; n_seq++)
			seq[n_seq] = r->src.tx >= r->src.rx ? r->src.tx : r->src.rx;
	}
	for (size_t k = 0; k < n_seq; k++) {
		decide_snapshot_free(&s);
		build(&s, r, r->same_counter ? 7 : 7 + k, seq[k]);
		assert_int_equal(decide_observe(&m, &cfg, &s), 0);
	}
	for (size_t k = 0; k < 3 && r->hist[k].ns; k++) {
		/* A move recorded as decide_record_move() would: a one-pod
		 * snapshot naming its namespace, workload and source. */
		struct decide_pod p = { 0 };
		struct decide_node hn = { 0 };
		struct decide_snapshot hs = { &hn, 1, 0 };
		struct decide_outcome ho = { 0 };

		snprintf(p.namespace, sizeof(p.namespace), "%s", r->hist[k].ns);
		snprintf(p.workload, sizeof(p.workload), "%s", r->hist[k].workload);
		snprintf(hn.name, sizeof(hn.name), "%s", r->hist[k].from);
		hn.pods = &p;
		hn.n_pods = 1;
		decide_record_move(&m, &hs, &ho, NOW - r->hist[k].ago_s);
	}
	if (r->backoff_pod) {
		char uid[DECIDE_UID_MAX];

		snprintf(uid, sizeof(uid), "uid-%s", r->backoff_pod);
		decide_record_pdb_refusal(&m, uid, NOW - r->backoff_ago_s);
	}

	n = decide_plan(&cfg, &m, &s, out, 4);
	if (r->want_none) {
		assert_int_equal(n, 0);
		goto cleanup;
	}
	assert_int_equal(n, 1);
	if (out[0].reason != r->want)
		fail_msg("%s: reason %s, want %s: %s", r->what, decide_reason_name(out[0].reason),
			 decide_reason_name(r->want), out[0].sentence);
	assert_int_equal(out[0].node, node_index(&s, r->src.name));
	if (r->want_pod) {
		assert_true(out[0].pod < s.nodes[out[0].node].n_pods);
		assert_string_equal(s.nodes[out[0].node].pods[out[0].pod].name, r->want_pod);
	} else {
		assert_int_equal(out[0].pod, SIZE_MAX);
	}
	if (r->want_dest)
		assert_int_equal(out[0].dest, node_index(&s, r->want_dest));
	else
		assert_int_equal(out[0].dest, SIZE_MAX);
	if (!strstr(out[0].sentence, r->want_text))
		fail_msg("%s: sentence\n  %s\nlacks\n  %s", r->what, out[0].sentence, r->want_text);
cleanup:
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

static void test_decide_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row: %s\n", rows[i].what);
		run_row(&rows[i]);
	}
}

/* Several hot nodes ------------------------------------------------------ */

static void hot_node(struct decide_node *n, const char *name, uint64_t tx, const char *pod,
		     uint64_t pod_tx)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->fresh = true;
	n->link = LINK;
	n->rate[DECIDE_TX] = tx;
	if (pod) {
		struct prow pr = { pod, pod_tx, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0,
				   false, false, false, false };

		n->pods = calloc(1, sizeof(*n->pods));
		assert_non_null(n->pods);
		fill_pod(n->pods, &pr);
		n->n_pods = 1;
	}
}

static void observe_times(struct decide_memory *m, const struct decide_config *cfg,
			  struct decide_snapshot *s, unsigned times)
{
	for (unsigned k = 0; k < times; k++) {
		for (size_t i = 0; i < s->n_nodes; i++)
			s->nodes[i].reports++;
		assert_int_equal(decide_observe(m, cfg, s), 0);
	}
}

static void test_decide_cycle_limit(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[8];

	(void)state;
	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	cfg.max_per_cycle = 2;
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 5;
	s.nodes = calloc(5, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 10 * MB);
	hot_node(&s.nodes[1], "node-2", 118 * MB, "b-x", 10 * MB);
	hot_node(&s.nodes[2], "node-3", 118 * MB, "c-x", 10 * MB);
	hot_node(&s.nodes[3], "node-8", 0, NULL, 0);
	hot_node(&s.nodes[4], "node-9", 0, NULL, 0);
	assert_int_equal(decide_snapshot_sort(&s), 0);
	observe_times(&m, &cfg, &s, 3);

	assert_int_equal(decide_plan(&cfg, &m, &s, out, 8), 3);
	assert_int_equal(out[0].reason, DECIDE_MOVE);
	assert_int_equal(out[1].reason, DECIDE_MOVE);
	assert_int_equal(out[2].reason, DECIDE_LIMITS);
	assert_non_null(strstr(out[2].sentence, "2 moves this cycle already (limit 2 per cycle)"));
	/* Counting only (no room for outcomes) gives the same number. */
	assert_int_equal(decide_plan(&cfg, &m, &s, NULL, 0), 3);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* Two hot nodes, one destination with room for one move: the second plan
 * sees the first's reservation. */
static void test_decide_room_shared_in_a_cycle(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[4];

	(void)state;
	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 3;
	s.nodes = calloc(3, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 30 * MB);
	hot_node(&s.nodes[1], "node-2", 118 * MB, "b-x", 30 * MB);
	hot_node(&s.nodes[2], "node-9", 50 * MB, NULL, 0);	/* room for 50 MB/s */
	assert_int_equal(decide_snapshot_sort(&s), 0);
	observe_times(&m, &cfg, &s, 3);

	assert_int_equal(decide_plan(&cfg, &m, &s, out, 4), 2);
	assert_int_equal(out[0].reason, DECIDE_MOVE);
	assert_int_equal(out[0].dest, 2);
	assert_int_equal(out[1].reason, DECIDE_NO_DESTINATION);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* Over in both directions: the hotter is acted on, unless only the other
 * one has been over long enough. */
static void test_decide_direction(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[2];

	(void)state;
	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 2;
	s.nodes = calloc(2, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 114 * MB, "a-x", 10 * MB);
	s.nodes[0].pods[0].rx = 10 * MB;
	hot_node(&s.nodes[1], "node-9", 0, NULL, 0);
	observe_times(&m, &cfg, &s, 3);		/* tx over 3 times */
	s.nodes[0].rate[DECIDE_RX] = 120 * MB;	/* rx now hotter, but once */
	observe_times(&m, &cfg, &s, 1);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].dir, DECIDE_TX);
	assert_int_equal(out[0].reason, DECIDE_MOVE);
	observe_times(&m, &cfg, &s, 2);		/* rx 3 times too: the hotter wins */
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].dir, DECIDE_RX);
	assert_int_equal(out[0].reason, DECIDE_MOVE);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* The scorer restarted (its counter went back) or the node went stale:
 * the count starts again. A node gone from the snapshot is forgotten. */
static void test_decide_counts_restart(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[2];

	(void)state;
	decide_config_defaults(&cfg);
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 2;
	s.nodes = calloc(2, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 10 * MB);
	hot_node(&s.nodes[1], "node-9", 0, NULL, 0);
	s.nodes[0].reports = 1000;
	observe_times(&m, &cfg, &s, 3);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reason, DECIDE_DRY_RUN);

	s.nodes[0].reports = 2;			/* a new scorer */
	assert_int_equal(decide_observe(&m, &cfg, &s), 0);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reason, DECIDE_NOT_DEBOUNCED);
	assert_int_equal(out[0].reports_over, 1);

	observe_times(&m, &cfg, &s, 2);
	s.nodes[0].fresh = false;		/* stale once */
	observe_times(&m, &cfg, &s, 1);
	s.nodes[0].fresh = true;
	observe_times(&m, &cfg, &s, 1);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reports_over, 1);

	s.n_nodes = 1;				/* node-9 leaves */
	s.nodes[0].reports++;
	assert_int_equal(decide_observe(&m, &cfg, &s), 0);
	assert_int_equal(m.n_nodes, 1);
	assert_string_equal(m.nodes[0].name, "node-1");
	s.n_nodes = 2;
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* A move recorded puts its workload in cool-down and counts in the limits,
 * on the next cycle, from the next cycle's own snapshot. */
static void test_decide_record_move(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[2];

	(void)state;
	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	cfg.node_cooldown_s = 0;
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 2;
	s.nodes = calloc(2, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 10 * MB);
	hot_node(&s.nodes[1], "node-9", 0, NULL, 0);
	observe_times(&m, &cfg, &s, 3);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reason, DECIDE_MOVE);
	decide_record_move(&m, &s, &out[0], NOW);

	s.now_s = NOW + 10;
	observe_times(&m, &cfg, &s, 1);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reason, DECIDE_COOLDOWN);
	assert_non_null(strstr(out[0].sentence, "workload default/a moved 10 s ago (cool-down 600 s)"));

	/* A refusal is no move, even when it names the pod it wanted. */
	assert_int_equal(out[0].pod, 0);
	decide_record_move(&m, &s, &out[0], NOW + 10);
	assert_int_equal(m.moves_len, 1);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* An agent that lies (its node at 300% of its link, report after report)
 * moves only that node's own pods, one a cycle, and no more than the
 * per-node limit in an hour, even with no cool-down at all. */
static void test_decide_lying_node(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[3];
	unsigned moved = 0;

	(void)state;
	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	cfg.cooldown_s = 0;
	cfg.node_cooldown_s = 0;
	cfg.max_per_workload = 1000;
	cfg.max_per_namespace = 1000;
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 3;
	s.nodes = calloc(3, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "liar", 3 * LINK, NULL, 0);
	hot_node(&s.nodes[1], "honest", 0, "victim-x", 10 * MB);	/* under hot: never a source */
	hot_node(&s.nodes[2], "node-9", 0, NULL, 0);
	s.nodes[0].pods = calloc(DECIDE_PODS_PER_NODE, sizeof(struct decide_pod));
	assert_non_null(s.nodes[0].pods);
	for (unsigned k = 0; k < DECIDE_PODS_PER_NODE; k++) {
		char name[32];
		struct prow pr = { name, 1 * MB, 0, DECIDE_OWNER_REPLICASET, NULL, NULL, 0, 0,
				   false, false, false, false };

		snprintf(name, sizeof(name), "p%02u-x", k);
		fill_pod(&s.nodes[0].pods[k], &pr);
	}
	s.nodes[0].n_pods = DECIDE_PODS_PER_NODE;
	/* Unsorted, its memory could not be found: refused. */
	assert_int_equal(decide_observe(&m, &cfg, &s), -EINVAL);
	assert_int_equal(decide_snapshot_sort(&s), 0);
	for (unsigned cycle = 0; cycle < 20; cycle++) {
		size_t n;

		observe_times(&m, &cfg, &s, 1);
		n = decide_plan(&cfg, &m, &s, out, 3);
		assert_int_equal(n, 1);		/* the liar alone is over */
		assert_string_equal(s.nodes[out[0].node].name, "liar");
		if (out[0].reason == DECIDE_MOVE) {
			assert_string_not_equal(s.nodes[out[0].node].pods[out[0].pod].name, "victim-x");
			decide_record_move(&m, &s, &out[0], s.now_s);
			moved++;
		}
		s.now_s += 10;
	}
	assert_int_equal(moved, cfg.max_per_node);
	assert_int_equal(out[0].reason, DECIDE_LIMITS);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* The ring of moves keeps the newest; the rate limit still sees the hour. */
static void test_decide_ring(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome o = { 0 };

	(void)state;
	decide_config_defaults(&cfg);
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 1;
	s.nodes = calloc(1, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 10 * MB);
	for (unsigned i = 0; i < DECIDE_MOVES_KEPT + 10; i++)
		decide_record_move(&m, &s, &o, NOW - 7200 + i);
	assert_int_equal(m.moves_len, DECIDE_MOVES_KEPT);
	for (unsigned i = 0; i < DECIDE_BACKOFF_KEPT + 3; i++)
		decide_record_pdb_refusal(&m, "uid-x", NOW);
	assert_int_equal(m.backoff_len, DECIDE_BACKOFF_KEPT);
	decide_record_pdb_refusal(&m, "", NOW);	/* no uid: nothing to remember */
	assert_int_equal(m.backoff_len, DECIDE_BACKOFF_KEPT);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

/* Names at their longest keep the sentence whole and bounded. */
static void test_decide_long_names(void **state)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_snapshot s = { 0 };
	struct decide_outcome out[2];

	(void)state;
	decide_config_defaults(&cfg);
	assert_int_equal(decide_memory_init(&m), 0);
	s.now_s = NOW;
	s.n_nodes = 2;
	s.nodes = calloc(2, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-1", 118 * MB, "a-x", 10 * MB);
	hot_node(&s.nodes[1], "node-9", 0, NULL, 0);
	memset(s.nodes[0].name, 'n', DECIDE_NODE_MAX - 1);
	memset(s.nodes[1].name, 'o', DECIDE_NODE_MAX - 1);
	memset(s.nodes[0].pods[0].name, 'p', DECIDE_POD_MAX - 1);
	memset(s.nodes[0].pods[0].namespace, 'q', DECIDE_NS_MAX - 1);
	s.nodes[0].pods[0].created_s = 0;
	cfg.n_exclude = 0;
	observe_times(&m, &cfg, &s, 3);
	assert_int_equal(decide_plan(&cfg, &m, &s, out, 2), 1);
	assert_int_equal(out[0].reason, DECIDE_DRY_RUN);
	assert_true(strlen(out[0].sentence) < DECIDE_SENTENCE_MAX);
	assert_int_equal(strncmp(out[0].sentence, s.nodes[0].name, DECIDE_NODE_MAX - 1), 0);
	decide_snapshot_free(&s);
	decide_memory_free(&m);
}

static void test_decide_snapshot_sort(void **state)
{
	struct decide_snapshot s = { 0 };

	(void)state;
	s.n_nodes = 3;
	s.nodes = calloc(3, sizeof(*s.nodes));
	assert_non_null(s.nodes);
	hot_node(&s.nodes[0], "node-b", 0, NULL, 0);
	hot_node(&s.nodes[1], "node-a", 0, NULL, 0);
	hot_node(&s.nodes[2], "node-c", 0, NULL, 0);
	assert_int_equal(decide_snapshot_sort(&s), 0);
	assert_string_equal(s.nodes[0].name, "node-a");
	assert_string_equal(s.nodes[2].name, "node-c");
	snprintf(s.nodes[2].name, DECIDE_NODE_MAX, "node-a");
	assert_int_equal(decide_snapshot_sort(&s), -EINVAL);
	decide_snapshot_free(&s);
}

static void test_decide_config_check(void **state)
{
	static const struct {
		double hot, margin;
		unsigned debounce, per_hour;
		const char *want;	/* NULL: valid */
	} cases[] = {
		{ 0.90, 0.10, 3, 30, NULL },
		{ 0.04, 0.01, 3, 30, "hot threshold 0.040 is outside [0.05, 1.0]" },
		{ 1.01, 0.10, 3, 30, "hot threshold 1.010 is outside [0.05, 1.0]" },
		{ 0.90, 0.90, 3, 30, "margin 0.900 must be >= 0 and below the hot threshold 0.900" },
		{ 0.90, -0.1, 3, 30, "margin -0.100 must be >= 0" },
		{ 0.90, 0.10, 0, 30, "debounce 0 reports is outside [1, 1000]" },
		{ 0.90, 0.10, 3, 5000, "max moves per hour 5000 is above 2048" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct decide_config cfg;
		char err[160] = "";

		decide_config_defaults(&cfg);
		cfg.hot = cases[i].hot;
		cfg.margin = cases[i].margin;
		cfg.debounce = cases[i].debounce;
		cfg.max_per_hour = cases[i].per_hour;
		if (!cases[i].want) {
			assert_int_equal(decide_config_check(&cfg, err, sizeof(err)), 0);
			continue;
		}
		assert_int_equal(decide_config_check(&cfg, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].want))
			fail_msg("error '%s' lacks '%s'", err, cases[i].want);
	}
	assert_string_equal(decide_reason_name(DECIDE_PDB), "pdb");
	assert_string_equal(decide_reason_name(DECIDE_NO_DESTINATION), "no_destination");
	assert_string_equal(decide_reason_name(DECIDE_REASON_COUNT), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_rows),
		cmocka_unit_test(test_decide_cycle_limit),
		cmocka_unit_test(test_decide_room_shared_in_a_cycle),
		cmocka_unit_test(test_decide_direction),
		cmocka_unit_test(test_decide_counts_restart),
		cmocka_unit_test(test_decide_record_move),
		cmocka_unit_test(test_decide_lying_node),
		cmocka_unit_test(test_decide_ring),
		cmocka_unit_test(test_decide_long_names),
		cmocka_unit_test(test_decide_snapshot_sort),
		cmocka_unit_test(test_decide_config_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
