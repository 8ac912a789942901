/* The rebalancer's cycle and its look at the Lease (loop.h). */
#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "podfacts.h"
#include "pressure.h"

#define MOD "rebalancer"
/* A node's outcome is said again as an Event after this long unchanged. */
#define EVENT_REPEAT_S 600u
#define EVENT_SLOTS 4096u
/* Pods of one node tried in one cycle after PDB refusals, at most. */
#define PDB_RETRIES 3

struct rebal_said {
	uint64_t key;		/* hash of the node's name, or 0 */
	uint64_t at_s;
	enum decide_reason reason;
	char pod[DECIDE_POD_MAX];
};



static uint64_t real_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t real_mono_ms(void)
{
	return clock_mono_ns() / 1000000u;
}

int rebal_loop_init(struct rebal_loop *r, const struct rebal_options *o, struct kubeclient *kc,
		    struct scorerclient *sc, struct rebal_metrics *m, char *err, size_t errlen)
{
	char why[512];

	*r = (struct rebal_loop){
		.o = o,
		.ko = { kc, 10000, false, "netsched-rebalancer", o->identity },
		.sc = sc,
		.metrics = m,
		.unix_ns = real_unix_ns,
		.mono_ms = real_mono_ms,
	};
	if (kubeops_discover(&r->ko, why, sizeof(why)))
		log_warn(MOD, "apiserver %s: %s; evictions use policy/v1beta1",
			 kubeclient_server(kc), why);
	r->said = calloc(EVENT_SLOTS, sizeof(*r->said));
	if (!r->said || decide_memory_init(&r->mem) ||
	    nudge_run_init(&r->nudge, &o->nudge, kc, m)) {
		nudge_run_free(&r->nudge);
		free(r->said);
		r->said = NULL;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	buf_init(&r->body, PRESSURE_BODY_MAX);
	atomic_store(&m->dry_run, o->decide.dry_run);
	return 0;
}

void rebal_loop_free(struct rebal_loop *r)
{
	decide_memory_free(&r->mem);
	nudge_run_free(&r->nudge);
	free(r->said);
	buf_free(&r->body);
	memset(r, 0, sizeof(*r));
}

/* Whether the node's outcome is news: another reason or pod than the last
 * Event said, or the same for EVENT_REPEAT_S. Remembers it. */
static bool news(struct rebal_loop *r, const struct decide_node *n, const struct decide_outcome *o,
		 uint64_t now_s)
{
	uint64_t key = hash_fnv1a(n->name, strlen(n->name)) | 1;
	struct rebal_said *s = &r->said[key % EVENT_SLOTS];
	const char *pod = o->pod < n->n_pods ? n->pods[o->pod].name : "";

	if (s->key == key && s->reason == o->reason && strcmp(s->pod, pod) == 0 &&
	    now_s - s->at_s < EVENT_REPEAT_S)
		return false;
	s->key = key;
	s->reason = o->reason;
	s->at_s = now_s;
	snprintf(s->pod, sizeof(s->pod), "%s", pod);
	return true;
}

static void events(struct rebal_loop *r, const struct decide_node *n, const struct decide_pod *p,
		   const char *type, const char *reason, const char *message)
{
	char why[256];
	uint64_t now = r->unix_ns();

	if (p && p->name[0] &&
	    kubeops_event(&r->ko, "Pod", p->namespace, p->name, p->uid, type, reason, message, now,
			  why, sizeof(why))) {
		atomic_fetch_add(&r->metrics->apiserver_errors, 1);
		log_warn(MOD, "Event on pod %s/%s: %s", p->namespace, p->name, why);
	}
	if (kubeops_event(&r->ko, "Node", "", n->name, NULL, type, reason, message, now, why,
			  sizeof(why))) {
		atomic_fetch_add(&r->metrics->apiserver_errors, 1);
		log_warn(MOD, "Event on node %s: %s", n->name, why);
	}
}

/* The apiserver's facts about the pods of every node hot long enough. */
static void read_facts(struct rebal_loop *r, struct decide_snapshot *s)
{
	for (size_t i = 0; i < s->n_nodes; i++) {
		struct decide_node *n = &s->nodes[i];
		char why[512] = "";
		long code = 0;

		if (!decide_wants_facts(&r->o->decide, &r->mem, n))
			continue;
		if (kubeops_node_pods(&r->ko, n->name, PODFACTS_BODY_MAX, &r->body, &code, why,
				      sizeof(why)) ||
		    code != 200) {
			atomic_fetch_add(&r->metrics->apiserver_errors, 1);
			if (code == 0)
				log_warn(MOD, "%s: cannot list its pods (%s): none of them moves this "
					 "cycle", n->name, why);
			else
				log_warn(MOD, "%s: cannot list its pods (the apiserver answered %ld): "
					 "none of them moves this cycle", n->name, code);
			continue;
		}
		if (podfacts_join(r->body.data, r->body.len, n, why, sizeof(why))) {
			atomic_fetch_add(&r->metrics->apiserver_errors, 1);
			log_warn(MOD, "%s: its PodList: %s: none of its pods moves this cycle", n->name,
				 why);
		}
	}
}

/* POST /v1/moves for o, held hold_s, to every scorer replica (a move lives
 * in each replica's memory, and the scheduler may ask any of them). 0 when
 * every replica that answered took it and one at least did; *accepted says
 * how many took it, whatever the result. */
static int post_move(struct rebal_loop *r, const struct decide_snapshot *s,
		     const struct decide_outcome *o, uint64_t hold_s, unsigned *accepted)
{
	const struct decide_node *n = &s->nodes[o->node];
	const struct decide_pod *p = &n->pods[o->pod];
	struct scorerclient_all all;
	struct buf body;
	int rc;

	*accepted = 0;
	buf_init(&body, 4096);
	buf_puts(&body, "{\"namespace\":");
	buf_json_cstr(&body, p->namespace);
	buf_puts(&body, ",\"pod\":");
	buf_json_cstr(&body, p->name);
	buf_puts(&body, ",\"uid\":");
	buf_json_cstr(&body, p->uid);
	buf_puts(&body, ",\"workload\":");
	buf_json_cstr(&body, p->workload);
	buf_puts(&body, ",\"from\":");
	buf_json_cstr(&body, n->name);
	buf_puts(&body, ",\"to\":");
	buf_json_cstr(&body, s->nodes[o->dest].name);
	buf_printf(&body, ",\"rxBytesPerSecond\":%llu,\"txBytesPerSecond\":%llu,\"holdSeconds\":%llu}",
		   (unsigned long long)p->rx, (unsigned long long)p->tx,
		   (unsigned long long)hold_s);
	if (buf_failed(&body)) {
		log_warn(MOD, "%s: the move of %s/%s does not fit the contract's 4 KiB body", n->name,
			 p->namespace, p->name);
		rc = -E2BIG;
		goto cleanup;
	}
	rc = scorerclient_post_all(r->sc, r->o->scorer_replicas, "/v1/moves", body.data, body.len,
				   &all);
	*accepted = all.accepted;
	if (rc || all.accepted == 0 || all.refused > 0) {
		log_warn(MOD, "%s: the move of %s/%s (held %llu s): %u of %u scorer replicas took it, "
			 "%u refused, %u did not answer (%s)%s", n->name, p->namespace, p->name,
			 (unsigned long long)hold_s, all.accepted, all.replicas, all.refused,
			 all.unreachable, all.why, hold_s > 1 ? ": not evicting" : "");
		rc = -EIO;
	} else if (all.unreachable) {
		log_warn(MOD, "%s: the move of %s/%s: %u of %u scorer replicas took it, %u did not "
			 "answer (%s)", n->name, p->namespace, p->name, all.accepted, all.replicas,
			 all.unreachable, all.why);
	}
	if (rc || all.unreachable)
		atomic_fetch_add(&r->metrics->scorer_errors, 1);
cleanup:
	buf_free(&body);
	return rc;
}

/* Acts on one outcome. Returns true when a PDB refused the eviction (the
 * node's plan is made again with that pod backed off). */
static bool act(struct rebal_loop *r, struct decide_snapshot *s, const struct decide_outcome *o)
{
	const struct decide_node *n = &s->nodes[o->node];
	const struct decide_pod *p = o->pod < n->n_pods ? &n->pods[o->pod] : NULL;
	enum kubeops_eviction ev;
	char why[256], msg[DECIDE_SENTENCE_MAX + 384];
	unsigned took = 0;
	long code = 0;

	atomic_fetch_add(&r->metrics->outcomes[o->reason], 1);
	switch (o->reason) {
	case DECIDE_NOT_DEBOUNCED:
		log_debug(MOD, "%s", o->sentence);
		return false;
	case DECIDE_DRY_RUN:
		/* Not remembered as a move: nothing moved, so no cool-down
		 * or limit may say it did; the plan is said again each cycle
		 * (an Event only when it changes). */
		log_info(MOD, "%s", o->sentence);
		if (news(r, n, o, s->now_s))
			events(r, n, p, "Normal", "NetschedWouldMove", o->sentence);
		return false;
	case DECIDE_MOVE:
		break;
	default:
		log_info(MOD, "%s", o->sentence);
		if (news(r, n, o, s->now_s))
			events(r, n, p, "Warning", "NetschedMoveRefused", o->sentence);
		return false;
	}
	if (post_move(r, s, o, r->o->hold_ms / 1000, &took)) {
		if (took)
			post_move(r, s, o, 1, &took);	/* release where it was taken */
		return false;
	}
	ev = kubeops_evict(&r->ko, p->namespace, p->name, p->uid, &code, why, sizeof(why));
	if (ev != KUBEOPS_EVICTED)
		/* The pod stays: the same move again, held one second,
		 * replaces the hold and the reservation (the contract: a
		 * second move for a UID replaces the first), so neither the
		 * source nor the destination is held for a move not made. */
		post_move(r, s, o, 1, &took);
	switch (ev) {
	case KUBEOPS_EVICTED:
		atomic_fetch_add(&r->metrics->evictions, 1);
		decide_record_move(&r->mem, s, o, s->now_s);
		/* What the scorer now reserves there, for this cycle's next plans. */
		s->nodes[o->dest].inflight[DECIDE_RX] += p->rx;
		s->nodes[o->dest].inflight[DECIDE_TX] += p->tx;
		log_info(MOD, "%s: evicted", o->sentence);
		news(r, n, o, s->now_s);
		events(r, n, p, "Normal", "NetschedMoved", o->sentence);
		return false;
	case KUBEOPS_PDB:
		atomic_fetch_add(&r->metrics->pdb_refusals, 1);
		decide_record_pdb_refusal(&r->mem, p->uid, s->now_s);
		snprintf(msg, sizeof(msg), "%s: its PodDisruptionBudget refused the eviction (%s); "
			 "trying another pod", o->sentence, why);
		log_info(MOD, "%s", msg);
		events(r, n, p, "Warning", "NetschedMoveRefused", msg);
		return true;
	case KUBEOPS_GONE:
		log_info(MOD, "%s: the pod is gone or was replaced (%ld %s)", o->sentence, code, why);
		return false;
	case KUBEOPS_FAILED:
		atomic_fetch_add(&r->metrics->apiserver_errors, 1);
		log_warn(MOD, "%s: the eviction failed: %s", o->sentence, why);
		return false;
	}
	return false;
}

void rebal_loop_cycle(struct rebal_loop *r)
{
	struct decide_snapshot s = { 0 };
	struct decide_outcome *out = NULL;
	bool *retry = NULL;
	char path[64], why[1024];
	const char *url = "";
	unsigned long moved;
	long code = 0;
	size_t n, hot = 0;

	snprintf(path, sizeof(path), "/v1/pressure?hot=%.3f", r->o->decide.hot);
	if (scorerclient_get(r->sc, path, PRESSURE_BODY_MAX, &r->body, &code, &url, why,
			     sizeof(why))) {
		atomic_fetch_add(&r->metrics->scorer_errors, 1);
		log_warn(MOD, "no scorer answered %s: %s; nothing moves this cycle", path, why);
		return;
	}
	if (code != 200) {
		atomic_fetch_add(&r->metrics->scorer_errors, 1);
		log_warn(MOD, "the scorer %s answered %ld to %s: %.*s; nothing moves this cycle", url,
			 code, path, (int)(r->body.len < 300 ? r->body.len : 300),
			 r->body.data ? r->body.data : "");
		return;
	}
	s.now_s = r->unix_ns() / 1000000000u;
	if (pressure_parse(r->body.data ? r->body.data : "", r->body.len, &s, why, sizeof(why))) {
		atomic_fetch_add(&r->metrics->scorer_errors, 1);
		log_warn(MOD, "the scorer %s's %s: %s; nothing moves this cycle", url, path, why);
		return;
	}
	if (decide_observe(&r->mem, &r->o->decide, &s)) {
		log_warn(MOD, "out of memory counting reports; nothing moves this cycle");
		goto cleanup;
	}
	nudge_run_cycle(&r->nudge, &s);
	read_facts(r, &s);
	out = calloc(s.n_nodes ? s.n_nodes : 1, sizeof(*out));
	retry = calloc(s.n_nodes ? s.n_nodes : 1, sizeof(*retry));
	if (!out || !retry) {
		log_warn(MOD, "out of memory planning; nothing moves this cycle");
		goto cleanup;
	}
	moved = atomic_load(&r->metrics->evictions);
	n = decide_plan(&r->o->decide, &r->mem, &s, out, s.n_nodes);
	for (size_t k = 0; k < n; k++) {
		if (out[k].reason != DECIDE_NOT_DEBOUNCED && out[k].reason != DECIDE_STALE)
			hot++;
		retry[out[k].node] = act(r, &s, &out[k]);
	}
	/* A PDB refused a pod: the same nodes again, that pod now backed
	 * off, the moves made meanwhile counted (the hourly limits and
	 * cool-downs from memory, the reservations in the snapshot, and the
	 * per-cycle limit less what this cycle moved already). */
	for (int t = 0; t < PDB_RETRIES; t++) {
		struct decide_config again_cfg = r->o->decide;
		unsigned long done = atomic_load(&r->metrics->evictions) - moved;
		bool again = false;

		again_cfg.max_per_cycle = done >= again_cfg.max_per_cycle ?
			0 : again_cfg.max_per_cycle - (unsigned)done;
		n = decide_plan(&again_cfg, &r->mem, &s, out, s.n_nodes);
		for (size_t k = 0; k < n; k++) {
			size_t node = out[k].node;

			if (!retry[node])
				continue;
			retry[node] = act(r, &s, &out[k]);
			again |= retry[node];
		}
		if (!again)
			break;
	}
	atomic_store(&r->metrics->hot_nodes, hot);
cleanup:
	free(out);
	free(retry);
	decide_snapshot_free(&s);
}

/* One look at the Lease; returns whether this replica leads now. */
bool rebal_loop_lead(struct rebal_loop *r)
{
	struct lease_record rec;
	enum lease_action a;
	uint64_t now_ms = r->mono_ms(), dur = r->o->lease_duration_ms / 1000;
	char why[512];
	long code = 0;
	bool ok = false, was = lease_is_leader(&r->lease, dur, now_ms);

	if (!r->o->leader_elect)
		return true;
	if (kubeops_lease_get(&r->ko, r->o->lease_namespace, r->o->lease_name, &rec, why,
			      sizeof(why))) {
		log_warn(MOD, "Lease %s/%s: %s", r->o->lease_namespace, r->o->lease_name, why);
		goto out;
	}
	a = lease_judge(&r->lease, &rec, r->o->identity, dur, now_ms);
	if (a == LEASE_FOLLOW)
		goto out;
	if (kubeops_lease_write(&r->ko, r->o->lease_namespace, r->o->lease_name, r->o->identity, dur,
				&rec, a, r->unix_ns(), &ok, &code, why, sizeof(why)))
		log_warn(MOD, "Lease %s/%s: %s", r->o->lease_namespace, r->o->lease_name, why);
	else if (!ok && code != 409)
		log_warn(MOD, "Lease %s/%s: the apiserver answered %ld", r->o->lease_namespace,
			 r->o->lease_name, code);
	lease_wrote(&r->lease, a, ok, now_ms);
	if (ok && a != LEASE_RENEW)
		log_info(MOD, "%s holds Lease %s/%s now%s%s", r->o->identity, r->o->lease_namespace,
			 r->o->lease_name, rec.holder[0] ? ", taken over from " : "", rec.holder);
out:
	now_ms = r->mono_ms();
	if (was && !lease_is_leader(&r->lease, dur, now_ms))
		log_warn(MOD, "%s lost Lease %s/%s: acting no more", r->o->identity,
			 r->o->lease_namespace, r->o->lease_name);
	return lease_is_leader(&r->lease, dur, now_ms);
}

