#include "pods/inflight.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "log.h"
#include "slotindex.h"
#include "units.h"

/* A weight's share of itself while it fades, in 1/65536ths. */
#define FULL 65536u
#define NONE (-1)

/* Pods and nodes sit in fixed arrays allocated at creation, found by
 * their slot indexes (slotindex.h): by uid and by name. The pods' queue
 * holds the unconfirmed assumptions, oldest first: the ones that give way
 * when the slots are full. Nothing grows after inflight_create(). */
struct ipod {
	int32_t live_at;		/* its place in inflight.live, while used */
	bool bound;
	uint8_t uid_len;
	uint8_t n;			/* nodes it is counted on */
	bool unknown_rx, unknown_tx;	/* its demand is a guess (inflight_pod) */
	uint8_t basis;			/* enum inflight_basis */
	/* The watch says a container of it started (bound pods only); held
	 * back as not started once (counted, logged). */
	bool started, held;
	char waiting[32];		/* why not, as the watch said ("" none) */
	char uid[POD_UID_MAX];
	char label[INFLIGHT_LABEL_MAX + 1];
	int32_t nodes[INFLIGHT_TIE_MAX];
	uint64_t t0_ns;			/* bound, or assumed while unconfirmed */
	uint64_t assumed_ns;
	uint64_t w_rx, w_tx;		/* full weight, bytes per second */
	uint64_t r_rx, r_tx;		/* reserved, bytes per second */
	/* What the agents' window has measured of it (inflight_measured()):
	 * the share of its weight left, FULL when unmeasured, only ever
	 * lower; and the figures it came from, for /v1/nodes. */
	uint32_t measured_f;
	uint32_t measured_ms, window_ms;
	struct inflight_load share;	/* what it adds to each of its nodes now */
};

struct inode {
	uint32_t refs;			/* pods counted on it; 0 = free slot */
	uint16_t len;
	char name[NODENAME_MAX_LEN + 1];
	struct inflight_load sum;
};

struct inflight {
	pthread_rwlock_t lock;
	struct inflight_config cfg;
	struct ipod *pods;
	/* The used slots, st.pods of them, in no order: the tick and the
	 * listing visit these, not every slot. The tick's pass over all
	 * 10,000 slots (3 MB, cold by the next tick) held the write lock
	 * 105-110 us every INFLIGHT_TICK_NS whether 0 or 1,000 pods were in
	 * flight; over the live ones, 1 and 20 us. */
	int32_t *live;
	struct slotindex pod_ix;	/* by uid; queued: the unconfirmed assumptions */
	struct inode *nodes;
	struct slotindex node_ix;	/* by name */
	struct inflight_stats st;	/* counters and pods; nodes, confirming filled on read */
	atomic_size_t tracked;		/* st.pods, read without the lock */
	_Atomic uint64_t ceiling;	/* the fastest known link; 0: none */
	struct log_limit log;		/* pods held back: a line a second */
	_Atomic uint64_t next_tick_ns;
	atomic_bool confirming;
};

/* The scorer's one string hash (hash.h), cut to the 32 bits a slot keeps:
 * a node name's is then the node table's too, so a request's lookup in
 * both hashes each name once (namekey.h). */
static uint32_t hash(const char *s, size_t len)
{
	return (uint32_t)hash_fnv1a(s, len);
}

/* What in holds, whole or as far as inflight_create() got (calloc'd). */
static void free_parts(struct inflight *in)
{
	free(in->pods);
	free(in->live);
	free(in->nodes);
	slotindex_fini(&in->pod_ix);
	slotindex_fini(&in->node_ix);
	free(in);
}

struct inflight *inflight_create(const struct inflight_config *cfg)
{
	struct inflight *in;

	if (!cfg->max_pods || !cfg->max_nodes || cfg->max_pods > (1u << 24) ||
	    cfg->max_nodes > (1u << 24))
		return NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->cfg = *cfg;
	in->pods = calloc(cfg->max_pods, sizeof(*in->pods));
	in->live = malloc(cfg->max_pods * sizeof(*in->live));
	in->nodes = calloc(cfg->max_nodes, sizeof(*in->nodes));
	if (!in->pods || !in->live || !in->nodes ||
	    slotindex_init(&in->pod_ix, cfg->max_pods, SLOTINDEX_TOUCH) ||
	    slotindex_init(&in->node_ix, cfg->max_nodes, SLOTINDEX_TOUCH))
		goto out_free;
	if (pthread_rwlock_init(&in->lock, NULL))
		goto out_free;
	/* Every page touched now, not by the first burst's assumptions on
	 * the request path: a first touch costs prioritize twice the time
	 * (bench/inflight_cost.c). */
	memset(in->pods, 0, cfg->max_pods * sizeof(*in->pods));
	memset(in->nodes, 0, cfg->max_nodes * sizeof(*in->nodes));
	return in;

out_free:
	free_parts(in);
	return NULL;
}

void inflight_destroy(struct inflight *in)
{
	if (!in)
		return;
	pthread_rwlock_destroy(&in->lock);
	free_parts(in);
}

/* ------------------------------------------------------------ the indexes */

static const void *pod_uid(const void *in, int32_t i, size_t *len)
{
	*len = ((const struct inflight *)in)->pods[i].uid_len;
	return ((const struct inflight *)in)->pods[i].uid;
}

static const void *node_name(const void *in, int32_t i, size_t *len)
{
	*len = ((const struct inflight *)in)->nodes[i].len;
	return ((const struct inflight *)in)->nodes[i].name;
}

static int32_t find_pod(const struct inflight *in, const char *uid, size_t len, uint32_t h)
{
	return slotindex_find(&in->pod_ix, h, uid, len, pod_uid, in);
}

static int32_t find_node(const struct inflight *in, const char *name, size_t len, uint32_t h)
{
	return slotindex_find(&in->node_ix, h, name, len, node_name, in);
}

static void pod_free(struct inflight *in, int32_t i);

/* Makes room by dropping the oldest unconfirmed assumption: a pod the
 * apiserver has confirmed is never dropped for one it has not, and a flood
 * of made-up pods replaces itself rather than keep real ones out. false
 * when there is none. */
static bool displace_oldest(struct inflight *in)
{
	int32_t i = slotindex_oldest(&in->pod_ix);

	if (i == NONE)
		return false;
	in->st.displaced++;
	pod_free(in, i);
	return true;
}

/* A reference to the node named name, created if new; NONE when the node
 * slots are all taken. */
static int32_t node_ref(struct inflight *in, const char *name, size_t len)
{
	uint32_t h = hash(name, len);
	int32_t i = find_node(in, name, len, h);
	struct inode *n;

	if (i == NONE) {
		/* A displaced pod may take the last reference to a node. */
		while (slotindex_full(&in->node_ix))
			if (!displace_oldest(in))
				return NONE;
		i = slotindex_take(&in->node_ix, h);
		n = &in->nodes[i];
		memset(n, 0, sizeof(*n));
		memcpy(n->name, name, len);
		n->len = (uint16_t)len;
	}
	in->nodes[i].refs++;
	return i;
}

static void node_unref(struct inflight *in, int32_t i)
{
	struct inode *n = &in->nodes[i];

	if (--n->refs)
		return;
	slotindex_put(&in->node_ix, i);
}

/* --------------------------------------------------------------- weights */

static uint64_t mul_div(uint64_t v, uint64_t num, uint64_t den)
{
	unsigned __int128 r = (unsigned __int128)v * num / den;

	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* How much of its weight pod p still carries at now: all of it for
 * hold_ns from t0, then linearly less over fade_ns. */
static uint32_t factor(const struct inflight *in, const struct ipod *p, uint64_t now)
{
	uint64_t since = now > p->t0_ns ? now - p->t0_ns : 0;

	if (since < in->cfg.hold_ns)
		return FULL;
	since -= in->cfg.hold_ns;
	if (since >= in->cfg.fade_ns)
		return 0;
	return FULL - (uint32_t)mul_div(since, FULL, in->cfg.fade_ns);
}

/* The hold and fade's share f, never more than what the agents' window
 * has not measured yet. */
static uint32_t unmeasured(const struct ipod *p, uint32_t f)
{
	return f < p->measured_f ? f : p->measured_f;
}

/* A bound pod none of whose containers has started weighs nothing once
 * unstarted_ns passed since its binding, whoever placed it (inflight.h:
 * "never starts"). */
static bool held_back(const struct inflight *in, const struct ipod *p, uint64_t now)
{
	if (!p->bound || p->started)
		return false;
	return in->cfg.unstarted_ns && now > p->t0_ns && now - p->t0_ns >= in->cfg.unstarted_ns;
}

/* The share left at now. */
static uint32_t factor_now(const struct inflight *in, const struct ipod *p, uint64_t now)
{
	return held_back(in, p, now) ? 0 : unmeasured(p, factor(in, p, now));
}

/* Its share on each of its nodes at factor f: its weight split evenly
 * among tied nodes; what it holds from the bandwidth filter, and the doubt
 * of a guessed demand, whole on each (see the header). */
static struct inflight_load share_at(const struct ipod *p, uint32_t f)
{
	uint64_t k = p->n ? p->n : 1;
	uint32_t whole = (uint32_t)mul_div(1000, f, FULL);
	struct inflight_load l = {
		.rx_bytes_per_second = mul_div(p->w_rx, f, FULL) / k,
		.tx_bytes_per_second = mul_div(p->w_tx, f, FULL) / k,
		.reserved_rx_bytes_per_second = mul_div(p->r_rx, f, FULL),
		.reserved_tx_bytes_per_second = mul_div(p->r_tx, f, FULL),
		.milli_pods = (uint32_t)(whole / k),
	};

	/* A pod still counted is never rounded down to nothing. */
	if (f && !whole)
		whole = 1;
	if (f && !l.milli_pods)
		l.milli_pods = 1;
	l.unknown_rx_milli = p->unknown_rx ? whole : 0;
	l.unknown_tx_milli = p->unknown_tx ? whole : 0;
	return l;
}

/* a + b (saturating), or a - b: the exact inverse for b that was added,
 * a saturated sum staying where it is rather than wrap, never below 0. */
static uint64_t rate_op(uint64_t a, uint64_t b, bool add)
{
	return add ? units_add_sat(a, b) : a > b ? a - b : 0;
}

/* The same for the counts, which do not saturate. */
static uint32_t count_op(uint32_t a, uint32_t b, bool add)
{
	return add ? a + b : b < a ? a - b : 0;
}

/* Adds l to sum, or takes it out again. */
static inline void load_apply(struct inflight_load *sum, const struct inflight_load *l, bool add)
{
	sum->rx_bytes_per_second = rate_op(sum->rx_bytes_per_second, l->rx_bytes_per_second, add);
	sum->tx_bytes_per_second = rate_op(sum->tx_bytes_per_second, l->tx_bytes_per_second, add);
	sum->reserved_rx_bytes_per_second =
		rate_op(sum->reserved_rx_bytes_per_second, l->reserved_rx_bytes_per_second, add);
	sum->reserved_tx_bytes_per_second =
		rate_op(sum->reserved_tx_bytes_per_second, l->reserved_tx_bytes_per_second, add);
	sum->milli_pods = count_op(sum->milli_pods, l->milli_pods, add);
	sum->unknown_rx_milli = count_op(sum->unknown_rx_milli, l->unknown_rx_milli, add);
	sum->unknown_tx_milli = count_op(sum->unknown_tx_milli, l->unknown_tx_milli, add);
}

static void load_add(struct inflight_load *sum, const struct inflight_load *l)
{
	load_apply(sum, l, true);
}

static void load_sub(struct inflight_load *sum, const struct inflight_load *l)
{
	load_apply(sum, l, false);
}

/* Sets p's share to what it weighs at factor f, on every node it is on. */
static void pod_set_share(struct inflight *in, struct ipod *p, uint32_t f)
{
	struct inflight_load l = share_at(p, f);

	for (unsigned k = 0; k < p->n; k++) {
		struct inode *n = &in->nodes[p->nodes[k]];

		load_sub(&n->sum, &p->share);
		load_add(&n->sum, &l);
	}
	p->share = l;
}

/* Takes p off its nodes (its share and its references). */
static void pod_detach(struct inflight *in, struct ipod *p)
{
	pod_set_share(in, p, 0);
	for (unsigned k = 0; k < p->n; k++)
		node_unref(in, p->nodes[k]);
	p->n = 0;
	memset(&p->share, 0, sizeof(p->share));
}

static uint64_t at_most(uint64_t v, uint64_t cap)
{
	return v < cap ? v : cap;
}

/* No pod counts more than the cluster's fastest known link, whatever path
 * it came by and whatever its nodes' links (unknown ones included). */
static void ceiling_cap(struct inflight *in, struct ipod *p)
{
	uint64_t c = atomic_load_explicit(&in->ceiling, memory_order_relaxed);

	if (!c)
		return;
	p->w_rx = at_most(p->w_rx, c);
	p->w_tx = at_most(p->w_tx, c);
	p->r_rx = at_most(p->r_rx, c);
	p->r_tx = at_most(p->r_tx, c);
}

/* Puts p on nodes[0..n) with full share; false (p on no node) when the
 * node slots ran out. Duplicate names count once. */
static bool pod_attach(struct inflight *in, struct ipod *p, const struct inflight_name *nodes,
		       size_t n, uint64_t now)
{
	ceiling_cap(in, p);
	if (n > INFLIGHT_TIE_MAX)
		n = INFLIGHT_TIE_MAX;
	p->n = 0;
	for (size_t k = 0; k < n; k++) {
		int32_t idx = node_ref(in, nodes[k].s, nodes[k].len);
		bool dup = false;

		if (idx == NONE) {
			for (unsigned j = 0; j < p->n; j++)
				node_unref(in, p->nodes[j]);
			p->n = 0;
			return false;
		}
		for (unsigned j = 0; j < p->n && !dup; j++)
			dup = p->nodes[j] == idx;
		if (dup)
			node_unref(in, idx);
		else
			p->nodes[p->n++] = idx;
	}
	memset(&p->share, 0, sizeof(p->share));
	pod_set_share(in, p, factor_now(in, p, now));
	return true;
}

/* What p weighs, and holds from the bandwidth filter; each counts at most
 * cap bytes a second (0: no cap), so a made-up pod declaring 400G makes a
 * node no fuller than its link: it fades below it as fast as a real pod's
 * would. */
static void pod_weights(struct ipod *p, const struct inflight_pod *pod, uint64_t cap)
{
	p->w_rx = pod->rx_bytes_per_second;
	p->w_tx = pod->tx_bytes_per_second;
	p->r_rx = pod->reserve_rx_bytes_per_second;
	p->r_tx = pod->reserve_tx_bytes_per_second;
	if (cap) {
		p->w_rx = p->w_rx < cap ? p->w_rx : cap;
		p->w_tx = p->w_tx < cap ? p->w_tx : cap;
		p->r_rx = p->r_rx < cap ? p->r_rx : cap;
		p->r_tx = p->r_tx < cap ? p->r_tx : cap;
	}
	p->unknown_rx = pod->unknown_rx;
	p->unknown_tx = pod->unknown_tx;
	p->basis = (uint8_t)pod->basis;
	/* Else keep the label it has (the watch may not send one). It ends
	 * up in logs and JSON. */
	if (pod->label)
		log_printable(pod->label, strnlen(pod->label, INFLIGHT_LABEL_MAX), p->label,
			      sizeof(p->label));
}

/* Nothing of it measured (yet, or any more: it went elsewhere). */
static void measure_reset(struct ipod *p)
{
	p->measured_f = FULL;
	p->measured_ms = 0;
	p->window_ms = 0;
}

static int32_t pod_alloc(struct inflight *in, const char *uid, size_t len, uint32_t h)
{
	int32_t i;
	struct ipod *p;

	if (slotindex_full(&in->pod_ix) && !displace_oldest(in))
		return NONE;
	i = slotindex_take(&in->pod_ix, h);
	p = &in->pods[i];
	memset(p, 0, sizeof(*p));
	p->measured_f = FULL;
	p->uid_len = (uint8_t)len;
	memcpy(p->uid, uid, len);
	p->live_at = (int32_t)in->st.pods;
	in->live[in->st.pods] = i;
	in->st.pods++;
	atomic_store(&in->tracked, in->st.pods);
	return i;
}

static void pod_free(struct inflight *in, int32_t i)
{
	struct ipod *p = &in->pods[i];

	pod_detach(in, p);
	slotindex_put(&in->pod_ix, i);
	in->st.pods--;
	/* The last live slot takes its place. */
	in->live[p->live_at] = in->live[in->st.pods];
	in->pods[in->live[p->live_at]].live_at = p->live_at;
	atomic_store(&in->tracked, in->st.pods);
}

/* ------------------------------------------------------------------ time */

/* Counts (once) and says (a line a second) that bound pod p has not
 * started: it weighs nothing until it does. */
static void hold_back(struct inflight *in, struct ipod *p, uint64_t now)
{
	const struct inode *n = p->n ? &in->nodes[p->nodes[0]] : NULL;

	if (p->held)
		return;
	p->held = true;
	in->st.unstarted++;
	if (!p->assumed_ns)
		return; /* never weighed: nothing to say */
	log_limited(&in->log, now, 1000000000ULL, LOG_LVL_INFO, "inflight",
		    "pod %s bound to %.*s %llu s ago has not started%s%s%s: it weighs nothing there "
		    "until it does (--inflight-unstarted %llu s)", p->label[0] ? p->label : p->uid,
		    n ? (int)n->len : 0, n ? n->name : "",
		    (unsigned long long)((now - p->t0_ns) / 1000000000ULL),
		    p->waiting[0] ? " (" : "", p->waiting, p->waiting[0] ? ")" : "",
		    (unsigned long long)(in->cfg.unstarted_ns / 1000000000ULL));
}

static void tick_locked(struct inflight *in, uint64_t now)
{
	bool confirming = atomic_load(&in->confirming);

	/* Backwards: a freed pod's place takes the last live one, already
	 * visited. */
	for (size_t k = in->st.pods; k-- > 0;) {
		int32_t i = in->live[k];
		struct ipod *p = &in->pods[i];
		uint32_t f;

		if (!p->bound && confirming && now >= p->assumed_ns &&
		    now - p->assumed_ns >= in->cfg.expire_ns) {
			in->st.expired++;
			pod_free(in, i);
			continue;
		}
		/* A pod measured whole stays, weighing nothing, until its
		 * fade ends: a later event of the watch must find it, not
		 * observe it anew at its whole weight. */
		f = factor(in, p, now);
		if (!f) {
			in->st.faded++;
			pod_free(in, i);
		} else if (held_back(in, p, now)) {
			hold_back(in, p, now);
			pod_set_share(in, p, 0);
		} else if (f != FULL || p->measured_f != FULL || (p->bound && !p->started)) {
			pod_set_share(in, p, unmeasured(p, f));
		}
	}
	atomic_store(&in->next_tick_ns, now + INFLIGHT_TICK_NS);
}

static void maybe_tick_locked(struct inflight *in, uint64_t now)
{
	if (now >= atomic_load(&in->next_tick_ns))
		tick_locked(in, now);
}

void inflight_tick(struct inflight *in, uint64_t now_ns, bool force)
{
	if (!in)
		return;
	if (!force && now_ns < atomic_load_explicit(&in->next_tick_ns, memory_order_relaxed))
		return;
	pthread_rwlock_wrlock(&in->lock);
	if (force)
		tick_locked(in, now_ns);
	else
		maybe_tick_locked(in, now_ns);
	pthread_rwlock_unlock(&in->lock);
}

void inflight_set_link_ceiling(struct inflight *in, uint64_t bytes_per_second)
{
	if (in)
		atomic_store(&in->ceiling, bytes_per_second);
}

void inflight_set_confirming(struct inflight *in, bool on)
{
	atomic_store(&in->confirming, on);
}

/* ----------------------------------------------------------- the changes */

static bool valid_name(const char *s, size_t len, size_t max)
{
	return s && len && len <= max;
}

/* The largest known link among a prediction's nodes (0: none known): a
 * tied node with a smaller link is full at its own link either way. */
static uint64_t widest_link(const struct inflight_name *nodes, size_t n)
{
	uint64_t widest = 0;

	for (size_t k = 0; k < n && k < INFLIGHT_TIE_MAX; k++)
		if (nodes[k].link_bytes_per_second > widest)
			widest = nodes[k].link_bytes_per_second;
	return widest;
}

int inflight_assume(struct inflight *in, const char *uid, size_t uid_len,
		    const struct inflight_pod *pod, const struct inflight_name *nodes, size_t n,
		    uint64_t now_ns)
{
	uint32_t h;
	int32_t i;
	struct ipod *p;
	int rc = 0;

	if (!valid_name(uid, uid_len, POD_UID_MAX) || n == 0)
		return -EINVAL;
	for (size_t k = 0; k < n && k < INFLIGHT_TIE_MAX; k++)
		if (!valid_name(nodes[k].s, nodes[k].len, NODENAME_MAX_LEN))
			return -EINVAL;
	h = hash(uid, uid_len);
	pthread_rwlock_wrlock(&in->lock);
	i = find_pod(in, uid, uid_len, h);
	if (i != NONE && in->pods[i].bound) {
		rc = -EALREADY;
		goto out;
	}
	if (i == NONE)
		i = pod_alloc(in, uid, uid_len, h);
	if (i == NONE) {
		in->st.cap_hits++;
		rc = -ENOSPC;
		goto out;
	}
	/* Out of the queue while it attaches, so it never gives way to
	 * itself; back in as the newest. */
	slotindex_dequeue(&in->pod_ix, i);
	p = &in->pods[i];
	pod_detach(in, p);
	pod_weights(p, pod, widest_link(nodes, n));
	measure_reset(p);
	p->t0_ns = now_ns;
	p->assumed_ns = now_ns;
	if (!pod_attach(in, p, nodes, n, now_ns)) {
		pod_free(in, i);
		in->st.cap_hits++;
		rc = -ENOSPC;
		goto out;
	}
	slotindex_enqueue(&in->pod_ix, i);
	in->st.assumed++;
out:
	pthread_rwlock_unlock(&in->lock);
	return rc;
}

int inflight_bound(struct inflight *in, const char *uid, size_t uid_len, const char *node,
		   size_t node_len, const struct inflight_pod *pod, uint64_t bound_ns,
		   uint64_t now_ns)
{
	struct inflight_binding b = { uid, uid_len, { node, node_len, 0 }, bound_ns, true, NULL };

	return inflight_bound_run(in, &b, pod, now_ns);
}

/* What the watch says of p's containers, kept. */
static void set_run(struct ipod *p, const struct inflight_binding *b)
{
	p->started = b->started;
	if (b->waiting)
		log_printable(b->waiting, strnlen(b->waiting, sizeof(p->waiting) - 1), p->waiting,
			      sizeof(p->waiting));
	else
		p->waiting[0] = '\0';
}

int inflight_bound_run(struct inflight *in, const struct inflight_binding *b,
		       const struct inflight_pod *pod, uint64_t now_ns)
{
	const struct inflight_name name = b->node;
	const char *uid = b->uid, *node = b->node.s;
	size_t uid_len = b->uid_len, node_len = b->node.len;
	uint64_t bound_ns = b->bound_ns;
	uint32_t h;
	int32_t i;
	struct ipod *p;
	bool here = false;
	int rc = 0;

	if (!valid_name(uid, uid_len, POD_UID_MAX) ||
	    !valid_name(node, node_len, NODENAME_MAX_LEN))
		return -EINVAL;
	if (bound_ns > now_ns)
		bound_ns = now_ns;
	h = hash(uid, uid_len);
	pthread_rwlock_wrlock(&in->lock);
	i = find_pod(in, uid, uid_len, h);
	if (i == NONE) {
		/* Bound long enough ago that its traffic is measured: nothing
		 * to count (a watch's first list sees every running pod). */
		if (now_ns - bound_ns >= in->cfg.hold_ns + in->cfg.fade_ns)
			goto out;
		i = pod_alloc(in, uid, uid_len, h);
		if (i == NONE) {
			in->st.cap_hits++;
			rc = -ENOSPC;
			goto out;
		}
		in->st.observed++;
	} else {
		p = &in->pods[i];
		for (unsigned k = 0; k < p->n && !here; k++)
			here = in->nodes[p->nodes[k]].len == node_len &&
			       memcmp(in->nodes[p->nodes[k]].name, node, node_len) == 0;
		if (p->bound && here) {
			/* A repeated event: only whether it started is new. */
			if (p->started != b->started) {
				set_run(p, b);
				pod_set_share(in, p, factor_now(in, p, now_ns));
			}
			goto out;
		}
		if (here)
			in->st.confirmed++;
		else
			in->st.moved++;
	}
	slotindex_dequeue(&in->pod_ix, i);
	p = &in->pods[i];
	pod_detach(in, p);
	/* What it declares counts at most its node's link (and, unknown, the
	 * fastest known: pod_attach()). */
	pod_weights(p, pod, name.link_bytes_per_second);
	if (!here)
		measure_reset(p); /* measured on the node it left, if at all */
	p->bound = true;
	set_run(p, b);
	p->t0_ns = bound_ns;
	if (!pod_attach(in, p, &name, 1, now_ns)) {
		pod_free(in, i);
		in->st.cap_hits++;
		rc = -ENOSPC;
	} else if (held_back(in, p, now_ns)) {
		hold_back(in, p, now_ns);
	}
out:
	pthread_rwlock_unlock(&in->lock);
	return rc;
}

/* Whether p is counted on node idx alone. */
static bool only_on(const struct ipod *p, int32_t idx)
{
	return p->n == 1 && p->nodes[0] == idx;
}

size_t inflight_measured(struct inflight *in, const char *node, size_t node_len,
			 uint64_t window_ms, const struct inflight_measure *m, size_t n,
			 uint64_t now_ns)
{
	size_t gave = 0;
	int32_t idx;

	if (!in || !n || !window_ms || atomic_load_explicit(&in->tracked, memory_order_relaxed) == 0 ||
	    !valid_name(node, node_len, NODENAME_MAX_LEN))
		return 0;
	pthread_rwlock_wrlock(&in->lock);
	idx = find_node(in, node, node_len, hash(node, node_len));
	for (size_t k = 0; idx != NONE && k < n; k++) {
		uint64_t ms = m[k].measured_ms < window_ms ? m[k].measured_ms : window_ms;
		uint32_t f = (uint32_t)(FULL - mul_div(ms, FULL, window_ms));
		int32_t i;
		struct ipod *p;

		if (!valid_name(m[k].uid, m[k].uid_len, POD_UID_MAX) || !ms)
			continue;
		i = find_pod(in, m[k].uid, m[k].uid_len, hash(m[k].uid, m[k].uid_len));
		if (i == NONE)
			continue;
		p = &in->pods[i];
		/* Tied on several nodes: wait for the watch to say which. */
		if (!only_on(p, idx) || f >= p->measured_f)
			continue;
		if (!f)
			in->st.measured++;
		p->measured_f = f;
		p->measured_ms = (uint32_t)ms;
		p->window_ms = window_ms < UINT32_MAX ? (uint32_t)window_ms : UINT32_MAX;
		pod_set_share(in, p, factor_now(in, p, now_ns));
		gave++;
	}
	pthread_rwlock_unlock(&in->lock);
	return gave;
}

uint64_t inflight_horizon_ns(const struct inflight *in)
{
	return in ? in->cfg.hold_ns + in->cfg.fade_ns : 0;
}

void inflight_drop(struct inflight *in, const char *uid, size_t uid_len)
{
	int32_t i;
	uint32_t h;

	if (!valid_name(uid, uid_len, POD_UID_MAX))
		return;
	h = hash(uid, uid_len);
	pthread_rwlock_wrlock(&in->lock);
	i = find_pod(in, uid, uid_len, h);
	if (i != NONE) {
		pod_free(in, i);
		in->st.dropped++;
	}
	pthread_rwlock_unlock(&in->lock);
}

/* ------------------------------------------------------------- the reads */

/* The pod uid's slot, when uid is one (NULL: no exception, or unknown). */
static const struct ipod *excepted(const struct inflight *in, const char *uid, size_t uid_len)
{
	int32_t k;

	if (!uid || !valid_name(uid, uid_len, POD_UID_MAX))
		return NULL;
	k = find_pod(in, uid, uid_len, hash(uid, uid_len));
	return k == NONE ? NULL : &in->pods[k];
}

/* Takes p's share out of *load when p is counted on node i. */
static void exclude(const struct ipod *p, int32_t i, struct inflight_load *load)
{
	for (unsigned m = 0; p && m < p->n; m++)
		if (p->nodes[m] == i) {
			load_sub(load, &p->share);
			return;
		}
}

static void copy_load(size_t i, const struct inflight_load *load, void *ctx)
{
	(void)i;
	*(struct inflight_load *)ctx = *load;
}

bool inflight_get(struct inflight *in, const char *node, size_t len, const char *except_uid,
		  size_t except_len, struct inflight_load *out)
{
	struct namekey key;

	memset(out, 0, sizeof(*out));
	if (!valid_name(node, len, NODENAME_MAX_LEN))
		return false;
	key = namekey_of(node, len);
	return inflight_get_each(in, &key, 1, except_uid, except_len, copy_load, out) == 1;
}

size_t inflight_get_each(struct inflight *in, const struct namekey *keys, size_t n,
			 const char *except_uid, size_t except_len,
			 void (*fn)(size_t i, const struct inflight_load *load, void *ctx), void *ctx)
{
	const struct ipod *except;
	size_t found = 0;

	if (!in || atomic_load_explicit(&in->tracked, memory_order_relaxed) == 0)
		return 0;
	pthread_rwlock_rdlock(&in->lock);
	except = excepted(in, except_uid, except_len);
	for (size_t k = 0; k < n; k++) {
		int32_t i = find_node(in, keys[k].s, keys[k].len, (uint32_t)keys[k].hash);
		struct inflight_load load;

		if (i == NONE)
			continue;
		load = in->nodes[i].sum;
		exclude(except, i, &load);
		fn(k, &load, ctx);
		found++;
	}
	pthread_rwlock_unlock(&in->lock);
	return found;
}

void inflight_stats(struct inflight *in, struct inflight_stats *out)
{
	pthread_rwlock_rdlock(&in->lock);
	*out = in->st;
	out->nodes = in->node_ix.used;
	pthread_rwlock_unlock(&in->lock);
	out->confirming = atomic_load(&in->confirming);
}

const char *inflight_basis_name(enum inflight_basis b)
{
	return b == INFLIGHT_DECLARED ? "declared" : b == INFLIGHT_LEARNED ? "learned" : "guessed";
}

static int by_node_label(const void *a, const void *b)
{
	const struct inflight_entry *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : strcmp(x->label, y->label);
}

long inflight_list(struct inflight *in, struct inflight_entry **out)
{
	struct inflight_entry *e;
	size_t n = 0, cap;

	pthread_rwlock_rdlock(&in->lock);
	cap = in->st.pods * INFLIGHT_TIE_MAX;
	e = calloc(cap ? cap : 1, sizeof(*e));
	if (!e) {
		pthread_rwlock_unlock(&in->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->st.pods; i++) {
		const struct ipod *p = &in->pods[in->live[i]];

		for (unsigned k = 0; k < p->n && n < cap; k++, n++) {
			const struct inode *nd = &in->nodes[p->nodes[k]];

			memcpy(e[n].node, nd->name, nd->len);
			memcpy(e[n].label, p->label, sizeof(e[n].label));
			e[n].bound = p->bound;
			e[n].load = p->share;
			e[n].basis = (enum inflight_basis)p->basis;
			e[n].measured_ms = p->measured_ms;
			e[n].window_ms = p->window_ms;
		}
	}
	pthread_rwlock_unlock(&in->lock);
	qsort(e, n, sizeof(*e), by_node_label);
	*out = e;
	return (long)n;
}
