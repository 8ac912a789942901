/* The rebalancer's decision (decide.h): debounce, the pod, the destination,
 * the limits, and a sentence for each. */
#include "decide.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

static const char *const reason_names[DECIDE_REASON_COUNT] = {
	[DECIDE_MOVE] = "move",
	[DECIDE_DRY_RUN] = "dry_run",
	[DECIDE_NOT_DEBOUNCED] = "not_debounced",
	[DECIDE_STALE] = "stale",
	[DECIDE_NO_PODS] = "no_pods",
	[DECIDE_UNKNOWN_POD] = "unknown_pod",
	[DECIDE_PROTECTED] = "protected",
	[DECIDE_EXCLUDED] = "excluded",
	[DECIDE_TOO_YOUNG] = "too_young",
	[DECIDE_PDB] = "pdb",
	[DECIDE_COOLDOWN] = "cooldown",
	[DECIDE_LIMITS] = "limits",
	[DECIDE_NO_DESTINATION] = "no_destination",
};

const char *decide_reason_name(enum decide_reason r)
{
	return (unsigned)r < DECIDE_REASON_COUNT ? reason_names[r] : "unknown";
}

static const char *dir_name(enum decide_dir d)
{
	return d == DECIDE_RX ? "rx" : "tx";
}

void decide_config_defaults(struct decide_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->hot = 0.90;
	cfg->margin = 0.10;
	cfg->debounce = 3;
	cfg->dry_run = true;
	cfg->min_age_s = 300;
	cfg->allow_local_storage = false;
	cfg->protect_priority = 2000000000;
	cfg->cooldown_s = 600;
	cfg->node_cooldown_s = 120;
	cfg->pdb_backoff_s = 300;
	cfg->max_per_cycle = 3;
	cfg->max_per_hour = 30;
	cfg->max_per_node = 4;
	cfg->max_per_namespace = 10;
	cfg->max_per_workload = 2;
	snprintf(cfg->exclude[0], DECIDE_NS_MAX, "kube-system");
	cfg->n_exclude = 1;
}

int decide_config_check(const struct decide_config *cfg, char *err, size_t errlen)
{
	if (!(cfg->hot >= 0.05 && cfg->hot <= 1.0)) {
		snprintf(err, errlen, "hot threshold %.3f is outside [0.05, 1.0]", cfg->hot);
		return -EINVAL;
	}
	if (!(cfg->margin >= 0.0 && cfg->margin < cfg->hot)) {
		snprintf(err, errlen, "margin %.3f must be >= 0 and below the hot threshold %.3f",
			 cfg->margin, cfg->hot);
		return -EINVAL;
	}
	if (cfg->debounce < 1 || cfg->debounce > 1000) {
		snprintf(err, errlen, "debounce %u reports is outside [1, 1000]", cfg->debounce);
		return -EINVAL;
	}
	if (cfg->max_per_hour > DECIDE_MOVES_KEPT / 2) {
		/* The ring must hold every move of the last hour with room. */
		snprintf(err, errlen, "max moves per hour %u is above %u", cfg->max_per_hour,
			 DECIDE_MOVES_KEPT / 2);
		return -EINVAL;
	}
	if (cfg->n_include > DECIDE_NAMESPACES_MAX || cfg->n_exclude > DECIDE_NAMESPACES_MAX) {
		snprintf(err, errlen, "more than %u namespaces in a list", DECIDE_NAMESPACES_MAX);
		return -EINVAL;
	}
	return 0;
}

int decide_memory_init(struct decide_memory *m)
{
	memset(m, 0, sizeof(*m));
	m->moves = calloc(DECIDE_MOVES_KEPT, sizeof(*m->moves));
	m->backoff = calloc(DECIDE_BACKOFF_KEPT, sizeof(*m->backoff));
	if (!m->moves || !m->backoff) {
		decide_memory_free(m);
		return -ENOMEM;
	}
	return 0;
}

void decide_memory_free(struct decide_memory *m)
{
	free(m->nodes);
	free(m->moves);
	free(m->backoff);
	memset(m, 0, sizeof(*m));
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct decide_node *)a)->name, ((const struct decide_node *)b)->name);
}

int decide_snapshot_sort(struct decide_snapshot *s)
{
	if (s->n_nodes > DECIDE_NODES_MAX)
		return -EINVAL;
	if (s->n_nodes > 1)
		qsort(s->nodes, s->n_nodes, sizeof(*s->nodes), node_cmp);
	for (size_t i = 1; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i - 1].name, s->nodes[i].name) == 0)
			return -EINVAL;
	return 0;
}

void decide_snapshot_free(struct decide_snapshot *s)
{
	for (size_t i = 0; i < s->n_nodes; i++)
		free(s->nodes[i].pods);
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}

static int memnode_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct decide_node_memory *)elem)->name);
}

static const struct decide_node_memory *memory_node(const struct decide_memory *m,
						    const char *name)
{
	if (!m->nodes)
		return NULL;
	return bsearch(name, m->nodes, m->n_nodes, sizeof(*m->nodes), memnode_cmp);
}

/* rate >= hot x link, in doubles: rates are below 2^53 in practice, and a
 * link of 0 is never over. */
static bool over(uint64_t rate, uint64_t link, double hot)
{
	return link > 0 && (double)rate >= hot * (double)link;
}

int decide_observe(struct decide_memory *m, const struct decide_config *cfg,
		   const struct decide_snapshot *s)
{
	struct decide_node_memory *next = NULL;

	/* Memory is found by name in sorted order (decide_snapshot_sort()). */
	for (size_t i = 1; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i - 1].name, s->nodes[i].name) >= 0)
			return -EINVAL;
	if (s->n_nodes > 0) {
		next = calloc(s->n_nodes, sizeof(*next));
		if (!next)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct decide_node *n = &s->nodes[i];
		const struct decide_node_memory *old = memory_node(m, n->name);
		struct decide_node_memory *nm = &next[i];

		memcpy(nm->name, n->name, sizeof(nm->name));
		nm->reports = n->reports;
		if (!n->fresh || n->link == 0)
			continue;	/* counts start again */
		if (old && n->reports == old->reports) {
			/* No new report since the last look: the same figures
			 * again are not another report over. */
			nm->over[0] = old->over[0];
			nm->over[1] = old->over[1];
			continue;
		}
		for (int d = 0; d < 2; d++) {
			unsigned before = (old && n->reports > old->reports) ? old->over[d] : 0;

			/* Under: nm->over[d] stays 0 (calloc), the count starts again. */
			if (over(n->rate[d], n->link, cfg->hot))
				nm->over[d] = before < 1000000 ? before + 1 : before;
		}
	}
	free(m->nodes);
	m->nodes = next;
	m->n_nodes = s->n_nodes;
	return 0;
}

/* Moves planned earlier in this cycle, for the limits and the room they
 * take on destinations. */
struct cycle {
	const struct decide_outcome *planned;
	size_t n;
	const struct decide_snapshot *s;
	/* Per node, what this cycle's plans add to it ([RX], [TX]); NULL:
	 * summed from planned[] on each look (no memory for the table). */
	uint64_t (*added)[2];
};

static const struct decide_pod *planned_pod(const struct cycle *c, size_t i)
{
	const struct decide_outcome *o = &c->planned[i];

	return &c->s->nodes[o->node].pods[o->pod];
}

static uint64_t pod_rate(const struct decide_pod *p, int d)
{
	return d == DECIDE_RX ? p->rx : p->tx;
}

/* Sentence pieces ------------------------------------------------------ */

static void say(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t cap, const char *fmt, ...)
{
	size_t used = strnlen(buf, cap);
	va_list ap;

	if (used + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, cap - used, fmt, ap);
	va_end(ap);
}

static void rate_str(char *buf, size_t cap, uint64_t bps)
{
	units_format_bytes_rate(buf, cap, (double)bps);
}

/* "node-3: tx 118 MB/s is 94% of 125 MB/s" */
static void say_pressure(char *buf, size_t cap, const struct decide_node *n, int d)
{
	char r[32], l[32];

	rate_str(r, sizeof(r), n->rate[d]);
	rate_str(l, sizeof(l), n->link);
	say(buf, cap, "%s: %s %s is %.0f%% of %s", n->name, dir_name(d), r,
	    100.0 * (double)n->rate[d] / (double)n->link, l);
}

static void say_pod(char *buf, size_t cap, const struct decide_pod *p, int d)
{
	char r[32];

	rate_str(r, sizeof(r), pod_rate(p, d));
	if (p->name[0])
		say(buf, cap, "%s/%s (%s %s)", p->namespace, p->name, dir_name(d), r);
	else
		say(buf, cap, "an unnamed pod (%s %s)", dir_name(d), r);
}

/* Checks on one candidate pod ------------------------------------------ */

static bool listed(const char (*list)[DECIDE_NS_MAX], size_t n, const char *ns)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], ns) == 0)
			return true;
	return false;
}

static const char *owner_words(enum decide_owner o)
{
	switch (o) {
	case DECIDE_OWNER_NONE: return "a bare pod (no controller would recreate it)";
	case DECIDE_OWNER_DAEMONSET: return "a DaemonSet pod";
	case DECIDE_OWNER_OTHER: return "owned by a controller other than a ReplicaSet, StatefulSet or Job";
	default: return NULL;
	}
}

/* Whether p is protected; why in buf. */
static enum decide_reason check_kind(const struct decide_config *cfg, const struct decide_pod *p,
				     uint64_t now_s, char *buf, size_t cap)
{
	const char *ow;

	if (!p->known || !p->name[0] || !p->namespace[0]) {
		say(buf, cap, " is not in the apiserver's pod list");
		return DECIDE_UNKNOWN_POD;
	}
	if (p->mirror) {
		say(buf, cap, " is a static pod (its mirror is all the apiserver has)");
		return DECIDE_PROTECTED;
	}
	ow = owner_words(p->owner);
	if (ow) {
		say(buf, cap, " is %s", ow);
		return DECIDE_PROTECTED;
	}
	if (p->priority >= cfg->protect_priority) {
		say(buf, cap, " has priority %lld (protected from %lld)", (long long)p->priority,
		    (long long)cfg->protect_priority);
		return DECIDE_PROTECTED;
	}
	if (p->deleting) {
		say(buf, cap, " is being deleted");
		return DECIDE_PROTECTED;
	}
	if (p->local_storage && !cfg->allow_local_storage) {
		say(buf, cap, " has local storage (emptyDir or hostPath; not allowed)");
		return DECIDE_PROTECTED;
	}
	if ((cfg->n_include > 0 && !listed(cfg->include, cfg->n_include, p->namespace)) ||
	    listed(cfg->exclude, cfg->n_exclude, p->namespace)) {
		say(buf, cap, ": namespace %s is excluded", p->namespace);
		return DECIDE_EXCLUDED;
	}
	if (p->created_s > now_s || now_s - p->created_s < cfg->min_age_s) {
		say(buf, cap, " is %llu s old (minimum %llu s)",
		    (unsigned long long)(p->created_s > now_s ? 0 : now_s - p->created_s),
		    (unsigned long long)cfg->min_age_s);
		return DECIDE_TOO_YOUNG;
	}
	return DECIDE_MOVE;
}

static enum decide_reason check_backoff(const struct decide_config *cfg,
					const struct decide_memory *m, const struct decide_pod *p,
					uint64_t now_s, char *buf, size_t cap)
{
	for (size_t i = 0; i < m->backoff_len; i++) {
		const struct decide_backoff *b = &m->backoff[i];

		if (b->at_s + cfg->pdb_backoff_s > now_s && b->at_s <= now_s &&
		    p->uid[0] && strcmp(b->uid, p->uid) == 0) {
			say(buf, cap, ": its PodDisruptionBudget refused an eviction %llu s ago "
			    "(tried again after %llu s)", (unsigned long long)(now_s - b->at_s),
			    (unsigned long long)cfg->pdb_backoff_s);
			return DECIDE_PDB;
		}
	}
	return DECIDE_MOVE;
}

/* What the memory and this cycle hold against the move: cool-downs, then
 * limits. */
struct tally {
	unsigned node, ns, workload, total;
	uint64_t workload_last, node_last;	/* latest move's time, or 0 */
	bool workload_seen, node_seen;
};

static void count_record(struct tally *t, const char *ns, const char *wl, const char *from,
			 const struct decide_pod *p, const char *src, uint64_t at_s)
{
	t->total++;
	if (strcmp(ns, p->namespace) == 0)
		t->ns++;
	if (p->workload[0] && strcmp(wl, p->workload) == 0) {
		t->workload++;
		if (!t->workload_seen || at_s > t->workload_last)
			t->workload_last = at_s;
		t->workload_seen = true;
	}
	if (strcmp(from, src) == 0) {
		t->node++;
		if (!t->node_seen || at_s > t->node_last)
			t->node_last = at_s;
		t->node_seen = true;
	}
}

static enum decide_reason check_limits(const struct decide_config *cfg,
				       const struct decide_memory *m, const struct cycle *c,
				       const struct decide_node *src, const struct decide_pod *p,
				       uint64_t now_s, char *buf, size_t cap)
{
	struct tally hour = { 0 };
	unsigned cycle_moves = 0;

	for (size_t i = 0; i < m->moves_len; i++) {
		const struct decide_move_record *r = &m->moves[i];

		if (r->at_s > now_s || now_s - r->at_s >= DECIDE_LIMIT_WINDOW_S)
			continue;
		count_record(&hour, r->namespace, r->workload, r->from, p, src->name, r->at_s);
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct decide_pod *q;

		if (c->planned[i].reason != DECIDE_MOVE && c->planned[i].reason != DECIDE_DRY_RUN)
			continue;
		q = planned_pod(c, i);
		cycle_moves++;
		count_record(&hour, q->namespace, q->workload, c->s->nodes[c->planned[i].node].name,
			     p, src->name, now_s);
	}
	if (hour.workload_seen && now_s - hour.workload_last < cfg->cooldown_s) {
		say(buf, cap, ": workload %s moved %llu s ago (cool-down %llu s)", p->workload,
		    (unsigned long long)(now_s - hour.workload_last),
		    (unsigned long long)cfg->cooldown_s);
		return DECIDE_COOLDOWN;
	}
	if (hour.node_seen && now_s - hour.node_last < cfg->node_cooldown_s) {
		say(buf, cap, ": %s was relieved %llu s ago (cool-down %llu s)", src->name,
		    (unsigned long long)(now_s - hour.node_last),
		    (unsigned long long)cfg->node_cooldown_s);
		return DECIDE_COOLDOWN;
	}
	if (cycle_moves >= cfg->max_per_cycle) {
		say(buf, cap, ": %u moves this cycle already (limit %u per cycle)", cycle_moves,
		    cfg->max_per_cycle);
		return DECIDE_LIMITS;
	}
	if (hour.total >= cfg->max_per_hour) {
		say(buf, cap, ": %u moves in the last hour (limit %u)", hour.total,
		    cfg->max_per_hour);
		return DECIDE_LIMITS;
	}
	if (hour.node >= cfg->max_per_node) {
		say(buf, cap, ": %u moves off %s in the last hour (limit %u per node)", hour.node,
		    src->name, cfg->max_per_node);
		return DECIDE_LIMITS;
	}
	if (hour.ns >= cfg->max_per_namespace) {
		say(buf, cap, ": %u moves in namespace %s in the last hour (limit %u per namespace)",
		    hour.ns, p->namespace, cfg->max_per_namespace);
		return DECIDE_LIMITS;
	}
	if (p->workload[0] && hour.workload >= cfg->max_per_workload) {
		say(buf, cap, ": %u moves of workload %s in the last hour (limit %u per workload)",
		    hour.workload, p->workload, cfg->max_per_workload);
		return DECIDE_LIMITS;
	}
	return DECIDE_MOVE;
}

/* The destination --------------------------------------------------------- */

/* What node j carries in direction d counting in flight and this cycle's
 * plans to it. */
static uint64_t load_on(const struct cycle *c, size_t j, int d)
{
	const struct decide_node *n = &c->s->nodes[j];
	uint64_t v = units_add_sat(n->rate[d], n->inflight[d]);

	if (c->added)
		return units_add_sat(v, c->added[j][d]);
	for (size_t i = 0; i < c->n; i++)
		if (c->planned[i].dest == j)
			v = units_add_sat(v, pod_rate(planned_pod(c, i), d));
	return v;
}

static size_t find_destination(const struct decide_config *cfg, const struct cycle *c,
			       size_t src, const struct decide_pod *p, int d, uint64_t *free_out)
{
	double cap_frac = cfg->hot - cfg->margin;
	size_t best = SIZE_MAX;
	double best_after = 0;

	for (size_t j = 0; j < c->s->n_nodes; j++) {
		const struct decide_node *n = &c->s->nodes[j];
		double after[2];
		bool fits = true;

		if (j == src || !n->fresh || n->link == 0)
			continue;
		for (int k = 0; k < 2; k++) {
			after[k] = (double)units_add_sat(load_on(c, j, k), pod_rate(p, k)) /
				   (double)n->link;
			if (after[k] > cap_frac)
				fits = false;
		}
		if (!fits)
			continue;
		if (best == SIZE_MAX || after[d] < best_after) {
			best = j;
			best_after = after[d];
		}
	}
	if (best != SIZE_MAX) {
		uint64_t load = load_on(c, best, d), link = c->s->nodes[best].link;

		*free_out = load < link ? link - load : 0;
	}
	return best;
}

/* The candidates' order -------------------------------------------------- */

struct cand_order {
	const struct decide_pod *pods;
	int d;
	uint64_t excess;	/* rate - what keeps the node under hot; > 0 */
};

/* Pods that are enough first (smallest first), then the others (largest
 * first); ties by name so the choice is the same every time. */
static int cand_cmp(const struct cand_order *o, size_t a, size_t b)
{
	uint64_t ra = pod_rate(&o->pods[a], o->d), rb = pod_rate(&o->pods[b], o->d);
	bool ea = ra >= o->excess, eb = rb >= o->excess;
	int c;

	if (ea != eb)
		return ea ? -1 : 1;
	if (ra != rb)
		return (ea ? ra < rb : ra > rb) ? -1 : 1;
	c = strcmp(o->pods[a].namespace, o->pods[b].namespace);
	return c ? c : strcmp(o->pods[a].name, o->pods[b].name);
}

static void order_candidates(const struct cand_order *o, size_t *idx, size_t n)
{
	/* Insertion sort: at most DECIDE_PODS_PER_NODE pods are considered. */
	for (size_t i = 1; i < n; i++) {
		size_t v = idx[i], j = i;

		while (j > 0 && cand_cmp(o, v, idx[j - 1]) < 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
}

/* One node ---------------------------------------------------------------- */

static void plan_node(const struct decide_config *cfg, const struct decide_memory *m,
		      const struct cycle *c, size_t i, int d, unsigned reports_over,
		      struct decide_outcome *o)
{
	const struct decide_node *n = &c->s->nodes[i];
	uint64_t now_s = c->s->now_s;
	size_t idx[DECIDE_PODS_PER_NODE], n_idx = 0;
	struct cand_order ord;
	double keep = cfg->hot * (double)n->link;
	char first_why[DECIDE_SENTENCE_MAX] = "";
	enum decide_reason first_reason = DECIDE_NO_PODS;
	size_t first_pod = SIZE_MAX;

	memset(o, 0, sizeof(*o));
	o->node = i;
	o->dir = (enum decide_dir)d;
	o->reports_over = reports_over;
	o->pod = SIZE_MAX;
	o->dest = SIZE_MAX;
	say_pressure(o->sentence, sizeof(o->sentence), n, d);
	if (!n->fresh) {
		o->reason = DECIDE_STALE;
		say(o->sentence, sizeof(o->sentence), "; its figures are stale, nothing moves");
		return;
	}
	if (reports_over < cfg->debounce) {
		o->reason = DECIDE_NOT_DEBOUNCED;
		say(o->sentence, sizeof(o->sentence), " for %u of %u reports; waiting",
		    reports_over, cfg->debounce);
		return;
	}
	say(o->sentence, sizeof(o->sentence), " for %u reports", reports_over);

	for (size_t k = 0; k < n->n_pods && n_idx < DECIDE_PODS_PER_NODE; k++)
		if (pod_rate(&n->pods[k], d) > 0)
			idx[n_idx++] = k;
	/* The smallest pod "enough" leaves the node strictly under hot x link. */
	ord.pods = n->pods;
	ord.d = d;
	ord.excess = (double)n->rate[d] >= keep ? (uint64_t)((double)n->rate[d] - keep) + 1 : 1;
	order_candidates(&ord, idx, n_idx);

	for (size_t k = 0; k < n_idx; k++) {
		const struct decide_pod *p = &n->pods[idx[k]];
		char why[DECIDE_SENTENCE_MAX] = "";
		enum decide_reason r;
		uint64_t free_bps = 0;
		size_t dest = SIZE_MAX;

		r = check_kind(cfg, p, now_s, why, sizeof(why));
		if (r == DECIDE_MOVE)
			r = check_backoff(cfg, m, p, now_s, why, sizeof(why));
		if (r == DECIDE_MOVE)
			r = check_limits(cfg, m, c, n, p, now_s, why, sizeof(why));
		if (r == DECIDE_MOVE) {
			dest = find_destination(cfg, c, i, p, d, &free_bps);
			if (dest == SIZE_MAX) {
				char pr[32];

				rate_str(pr, sizeof(pr), pod_rate(p, d));
				say(why, sizeof(why), ": no fresh node stays at or under %.0f%% of "
				    "its link with its %s %s (in flight counted)",
				    100.0 * (cfg->hot - cfg->margin), dir_name(d), pr);
				r = DECIDE_NO_DESTINATION;
			}
		}
		if (r == DECIDE_MOVE) {
			char fr[32];

			o->reason = cfg->dry_run ? DECIDE_DRY_RUN : DECIDE_MOVE;
			o->pod = idx[k];
			o->dest = dest;
			rate_str(fr, sizeof(fr), free_bps);
			say(o->sentence, sizeof(o->sentence), "; %s ",
			    cfg->dry_run ? "dry run, would evict" : "evicting");
			say_pod(o->sentence, sizeof(o->sentence), p, d);
			say(o->sentence, sizeof(o->sentence), " for %s; %s has %s %s free",
			    c->s->nodes[dest].name, c->s->nodes[dest].name, fr, dir_name(d));
			return;
		}
		if (first_pod == SIZE_MAX) {
			first_pod = idx[k];
			first_reason = r;
			memcpy(first_why, why, sizeof(why));
		}
	}
	o->reason = first_reason;
	o->pod = first_pod;
	if (first_pod == SIZE_MAX) {
		say(o->sentence, sizeof(o->sentence),
		    "; no pod on it with %s traffic is known to the scorer", dir_name(d));
		return;
	}
	say(o->sentence, sizeof(o->sentence), "; not moving ");
	say_pod(o->sentence, sizeof(o->sentence), &n->pods[first_pod], d);
	say(o->sentence, sizeof(o->sentence), "%s", first_why);
	if (n_idx > 1)
		say(o->sentence, sizeof(o->sentence), " (nor any of its %zu other pods)", n_idx - 1);
}

bool decide_wants_facts(const struct decide_config *cfg, const struct decide_memory *m,
			const struct decide_node *n)
{
	const struct decide_node_memory *nm = memory_node(m, n->name);

	if (!nm || !n->fresh || n->link == 0 || n->n_pods == 0)
		return false;
	for (int d = 0; d < 2; d++)
		if (over(n->rate[d], n->link, cfg->hot) && nm->over[d] >= cfg->debounce)
			return true;
	return false;
}

size_t decide_plan(const struct decide_config *cfg, const struct decide_memory *m,
		   const struct decide_snapshot *s, struct decide_outcome *out, size_t cap)
{
	struct cycle c = { .planned = out, .n = 0, .s = s };
	size_t total = 0;

	/* Without it every destination looked at sums every plan so far:
	 * 250 moves among 5,000 nodes took 0.1 s. */
	if (s->n_nodes > 0)
		c.added = calloc(s->n_nodes, sizeof(*c.added));

	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct decide_node *n = &s->nodes[i];
		const struct decide_node_memory *nm = memory_node(m, n->name);
		bool ov[2];
		int d;

		if (n->link == 0)
			continue;
		ov[0] = over(n->rate[0], n->link, cfg->hot);
		ov[1] = over(n->rate[1], n->link, cfg->hot);
		if (!ov[0] && !ov[1])
			continue;
		/* The hotter direction; one move per node per cycle. When only
		 * that one is debounced but the other is hotter, the
		 * debounced one is the one to act on. */
		d = (!ov[0] || (ov[1] && n->rate[1] > n->rate[0])) ? DECIDE_TX : DECIDE_RX;
		if (nm && n->fresh && nm->over[d] < cfg->debounce && ov[!d] &&
		    nm->over[!d] >= cfg->debounce)
			d = !d;
		if (total < cap) {
			const struct decide_outcome *o = &out[total];

			plan_node(cfg, m, &c, i, d, nm ? nm->over[d] : 0, &out[total]);
			c.n = total + 1;
			if (c.added && o->dest != SIZE_MAX) {
				const struct decide_pod *p = &n->pods[o->pod];

				c.added[o->dest][DECIDE_RX] = units_add_sat(c.added[o->dest][DECIDE_RX], p->rx);
				c.added[o->dest][DECIDE_TX] = units_add_sat(c.added[o->dest][DECIDE_TX], p->tx);
			}
		}
		total++;
	}
	free(c.added);
	return total;
}

void decide_record_move(struct decide_memory *m, const struct decide_snapshot *s,
			const struct decide_outcome *o, uint64_t now_s)
{
	struct decide_move_record *r;
	const struct decide_pod *p;

	if (!m->moves || (o->reason != DECIDE_MOVE && o->reason != DECIDE_DRY_RUN) ||
	    o->pod == SIZE_MAX || o->node >= s->n_nodes ||
	    o->pod >= s->nodes[o->node].n_pods)
		return;
	p = &s->nodes[o->node].pods[o->pod];
	r = &m->moves[m->moves_next];
	memset(r, 0, sizeof(*r));
	r->at_s = now_s;
	memcpy(r->namespace, p->namespace, sizeof(r->namespace));
	memcpy(r->workload, p->workload, sizeof(r->workload));
	memcpy(r->from, s->nodes[o->node].name, sizeof(r->from));
	m->moves_next = (m->moves_next + 1) % DECIDE_MOVES_KEPT;
	if (m->moves_len < DECIDE_MOVES_KEPT)
		m->moves_len++;
}

void decide_record_pdb_refusal(struct decide_memory *m, const char *uid, uint64_t now_s)
{
	struct decide_backoff *b;

	if (!m->backoff || !uid || !uid[0])
		return;
	b = &m->backoff[m->backoff_next];
	b->at_s = now_s;
	snprintf(b->uid, sizeof(b->uid), "%s", uid);
	m->backoff_next = (m->backoff_next + 1) % DECIDE_BACKOFF_KEPT;
	if (m->backoff_len < DECIDE_BACKOFF_KEPT)
		m->backoff_len++;
}
