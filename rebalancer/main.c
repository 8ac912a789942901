/* netsched-rebalancer: moves pods off a link that stays saturated, only
 * where the scorer says the replacement has room, only through the
 * Eviction API, and only while holding the Lease. Dry run by default.
 *
 * Each cycle (--interval): read the scorer's /v1/pressure, count the
 * reports each node was over the threshold (decide.h), read the apiserver's
 * facts about the pods of the nodes hot long enough, plan, and act: log
 * every outcome with its numbers; for a move, POST /v1/moves to the scorer
 * (the hold on the source, the reservation on the destination), then evict;
 * a PodDisruptionBudget's 429 backs that pod off and the node's next pod is
 * tried in the same cycle; an Event on the pod and the node says what was
 * done, or would be, or why not (once per node while that stays so). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/kubeaccess.h"
#include "common/kubeclient.h"
#include "common/log.h"
#include "common/metricsd.h"
#include "decide.h"
#include "kubeops.h"
#include "lease.h"
#include "metrics.h"
#include "options.h"
#include "podfacts.h"
#include "pressure.h"
#include "scorerclient.h"

#define EXIT_USAGE 2
#define MOD "rebalancer"
/* A node's outcome is said again as an Event after this long unchanged. */
#define EVENT_REPEAT_S 600u
#define EVENT_SLOTS 4096u
/* Pods of one node tried in one cycle after PDB refusals, at most. */
#define PDB_RETRIES 3

struct said {
	uint64_t key;		/* hash of the node's name, or 0 */
	uint64_t at_s;
	enum decide_reason reason;
	char pod[DECIDE_POD_MAX];
};

struct rebal {
	struct rebal_options o;
	struct kubeclient *kc;
	struct kubeops ko;
	struct scorerclient *sc;
	struct decide_memory mem;
	struct rebal_metrics metrics;
	struct lease_state lease;
	struct said *said;	/* EVENT_SLOTS, by node */
	struct buf body;	/* replies, reused */
};

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* /metrics on the HTTP thread: the counters are atomics. */
static void render_metrics(void *ctx, const struct metricsd_counters *c, struct buf *b)
{
	(void)c;
	rebal_metrics_render(ctx, b);
}

static int access_for(const struct rebal_options *o, struct kubeaccess *a, char *err,
		      size_t errlen)
{
	if (o->kubeconfig[0])
		return kubeaccess_kubeconfig(a, o->kubeconfig, err, errlen);
	return kubeaccess_in_cluster(a, KUBEACCESS_SA_DIR, err, errlen);
}

/* The files libcurl opens later, read now (start-up and --check-config), so
 * a missing one, or a FIFO, is named at once; and the apiserver access. */
static int check_files(const struct rebal_options *o, char *err, size_t errlen)
{
	const struct { const char *opt, *path; } f[] = {
		{ "--scorer-ca", o->scorer_ca }, { "--scorer-cert", o->scorer_cert },
		{ "--scorer-key", o->scorer_key },
	};
	struct kubeaccess a = { 0 };
	char why[512];
	int rc;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!f[i].path[0])
			continue;
		rc = file_check_readable(f[i].path, KUBEACCESS_FILE_MAX, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s: %s", f[i].opt, why);
			return rc;
		}
	}
	rc = access_for(o, &a, why, sizeof(why));
	if (rc == 0)
		rc = kubeaccess_check_files(&a, why, sizeof(why));
	kubeaccess_free(&a);
	if (rc)
		snprintf(err, errlen, "%s: %s", o->kubeconfig[0] ? "--kubeconfig" : "apiserver access",
			 why);
	return rc;
}

/* Whether the node's outcome is news: another reason or pod than the last
 * Event said, or the same for EVENT_REPEAT_S. Remembers it. */
static bool news(struct rebal *r, const struct decide_node *n, const struct decide_outcome *o,
		 uint64_t now_s)
{
	uint64_t key = hash_fnv1a(n->name, strlen(n->name)) | 1;
	struct said *s = &r->said[key % EVENT_SLOTS];
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

static void events(struct rebal *r, const struct decide_node *n, const struct decide_pod *p,
		   const char *type, const char *reason, const char *message)
{
	char why[256];
	uint64_t now = unix_ns();

	if (p && p->name[0] &&
	    kubeops_event(&r->ko, "Pod", p->namespace, p->name, p->uid, type, reason, message, now,
			  why, sizeof(why))) {
		atomic_fetch_add(&r->metrics.apiserver_errors, 1);
		log_warn(MOD, "Event on pod %s/%s: %s", p->namespace, p->name, why);
	}
	if (kubeops_event(&r->ko, "Node", "", n->name, NULL, type, reason, message, now, why,
			  sizeof(why))) {
		atomic_fetch_add(&r->metrics.apiserver_errors, 1);
		log_warn(MOD, "Event on node %s: %s", n->name, why);
	}
}

/* The apiserver's facts about the pods of every node hot long enough. */
static void read_facts(struct rebal *r, struct decide_snapshot *s)
{
	for (size_t i = 0; i < s->n_nodes; i++) {
		struct decide_node *n = &s->nodes[i];
		char why[512] = "";
		long code = 0;

		if (!decide_wants_facts(&r->o.decide, &r->mem, n))
			continue;
		if (kubeops_node_pods(&r->ko, n->name, PODFACTS_BODY_MAX, &r->body, &code, why,
				      sizeof(why)) ||
		    code != 200) {
			atomic_fetch_add(&r->metrics.apiserver_errors, 1);
			if (code == 0)
				log_warn(MOD, "%s: cannot list its pods (%s): none of them moves this "
					 "cycle", n->name, why);
			else
				log_warn(MOD, "%s: cannot list its pods (the apiserver answered %ld): "
					 "none of them moves this cycle", n->name, code);
			continue;
		}
		if (podfacts_join(r->body.data, r->body.len, n, why, sizeof(why))) {
			atomic_fetch_add(&r->metrics.apiserver_errors, 1);
			log_warn(MOD, "%s: its PodList: %s: none of its pods moves this cycle", n->name,
				 why);
		}
	}
}

/* POST /v1/moves for o, held hold_s, to every scorer replica (a move lives
 * in each replica's memory, and the scheduler may ask any of them). 0 when
 * every replica that answered took it and one at least did; *accepted says
 * how many took it, whatever the result. */
static int post_move(struct rebal *r, const struct decide_snapshot *s,
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
	rc = scorerclient_post_all(r->sc, r->o.scorer_replicas, "/v1/moves", body.data, body.len,
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
		atomic_fetch_add(&r->metrics.scorer_errors, 1);
cleanup:
	buf_free(&body);
	return rc;
}

/* Acts on one outcome. Returns true when a PDB refused the eviction (the
 * node's plan is made again with that pod backed off). */
static bool act(struct rebal *r, struct decide_snapshot *s, const struct decide_outcome *o)
{
	const struct decide_node *n = &s->nodes[o->node];
	const struct decide_pod *p = o->pod < n->n_pods ? &n->pods[o->pod] : NULL;
	enum kubeops_eviction ev;
	char why[256], msg[DECIDE_SENTENCE_MAX + 384];
	unsigned took = 0;
	long code = 0;

	atomic_fetch_add(&r->metrics.outcomes[o->reason], 1);
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
	if (post_move(r, s, o, r->o.hold_ms / 1000, &took)) {
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
		atomic_fetch_add(&r->metrics.evictions, 1);
		decide_record_move(&r->mem, s, o, s->now_s);
		/* What the scorer now reserves there, for this cycle's next plans. */
		s->nodes[o->dest].inflight[DECIDE_RX] += p->rx;
		s->nodes[o->dest].inflight[DECIDE_TX] += p->tx;
		log_info(MOD, "%s: evicted", o->sentence);
		news(r, n, o, s->now_s);
		events(r, n, p, "Normal", "NetschedMoved", o->sentence);
		return false;
	case KUBEOPS_PDB:
		atomic_fetch_add(&r->metrics.pdb_refusals, 1);
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
		atomic_fetch_add(&r->metrics.apiserver_errors, 1);
		log_warn(MOD, "%s: the eviction failed: %s", o->sentence, why);
		return false;
	}
	return false;
}

static void cycle(struct rebal *r)
{
	struct decide_snapshot s = { 0 };
	struct decide_outcome *out = NULL;
	bool *retry = NULL;
	char path[64], why[1024];
	const char *url = "";
	unsigned long moved;
	long code = 0;
	size_t n, hot = 0;

	snprintf(path, sizeof(path), "/v1/pressure?hot=%.3f", r->o.decide.hot);
	if (scorerclient_get(r->sc, path, PRESSURE_BODY_MAX, &r->body, &code, &url, why,
			     sizeof(why))) {
		atomic_fetch_add(&r->metrics.scorer_errors, 1);
		log_warn(MOD, "no scorer answered %s: %s; nothing moves this cycle", path, why);
		return;
	}
	if (code != 200) {
		atomic_fetch_add(&r->metrics.scorer_errors, 1);
		log_warn(MOD, "the scorer %s answered %ld to %s: %.*s; nothing moves this cycle", url,
			 code, path, (int)(r->body.len < 300 ? r->body.len : 300),
			 r->body.data ? r->body.data : "");
		return;
	}
	s.now_s = unix_ns() / 1000000000u;
	if (pressure_parse(r->body.data ? r->body.data : "", r->body.len, &s, why, sizeof(why))) {
		atomic_fetch_add(&r->metrics.scorer_errors, 1);
		log_warn(MOD, "the scorer %s's %s: %s; nothing moves this cycle", url, path, why);
		return;
	}
	if (decide_observe(&r->mem, &r->o.decide, &s)) {
		log_warn(MOD, "out of memory counting reports; nothing moves this cycle");
		goto cleanup;
	}
	read_facts(r, &s);
	out = calloc(s.n_nodes ? s.n_nodes : 1, sizeof(*out));
	retry = calloc(s.n_nodes ? s.n_nodes : 1, sizeof(*retry));
	if (!out || !retry) {
		log_warn(MOD, "out of memory planning; nothing moves this cycle");
		goto cleanup;
	}
	moved = atomic_load(&r->metrics.evictions);
	n = decide_plan(&r->o.decide, &r->mem, &s, out, s.n_nodes);
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
		struct decide_config again_cfg = r->o.decide;
		unsigned long done = atomic_load(&r->metrics.evictions) - moved;
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
	atomic_store(&r->metrics.hot_nodes, hot);
cleanup:
	free(out);
	free(retry);
	decide_snapshot_free(&s);
}

/* One look at the Lease; returns whether this replica leads now. */
static bool lead(struct rebal *r)
{
	struct lease_record rec;
	enum lease_action a;
	uint64_t now_ms = clock_mono_ns() / 1000000u, dur = r->o.lease_duration_ms / 1000;
	char why[512];
	long code = 0;
	bool ok = false, was = lease_is_leader(&r->lease, dur, now_ms);

	if (!r->o.leader_elect)
		return true;
	if (kubeops_lease_get(&r->ko, r->o.lease_namespace, r->o.lease_name, &rec, why,
			      sizeof(why))) {
		log_warn(MOD, "Lease %s/%s: %s", r->o.lease_namespace, r->o.lease_name, why);
		goto out;
	}
	a = lease_judge(&r->lease, &rec, r->o.identity, dur, now_ms);
	if (a == LEASE_FOLLOW)
		goto out;
	if (kubeops_lease_write(&r->ko, r->o.lease_namespace, r->o.lease_name, r->o.identity, dur,
				&rec, a, unix_ns(), &ok, &code, why, sizeof(why)))
		log_warn(MOD, "Lease %s/%s: %s", r->o.lease_namespace, r->o.lease_name, why);
	else if (!ok && code != 409)
		log_warn(MOD, "Lease %s/%s: the apiserver answered %ld", r->o.lease_namespace,
			 r->o.lease_name, code);
	lease_wrote(&r->lease, a, ok, now_ms);
	if (ok && a != LEASE_RENEW)
		log_info(MOD, "%s holds Lease %s/%s now%s%s", r->o.identity, r->o.lease_namespace,
			 r->o.lease_name, rec.holder[0] ? ", taken over from " : "", rec.holder);
out:
	now_ms = clock_mono_ns() / 1000000u;
	if (was && !lease_is_leader(&r->lease, dur, now_ms))
		log_warn(MOD, "%s lost Lease %s/%s: acting no more", r->o.identity,
			 r->o.lease_namespace, r->o.lease_name);
	return lease_is_leader(&r->lease, dur, now_ms);
}

static int start(struct rebal *r, char *err, size_t errlen)
{
	struct kubeaccess access = { 0 };
	struct scorerclient_config sc = {
		.urls = (const char (*)[256])r->o.scorer,
		.n_urls = r->o.n_scorer,
		.ca = r->o.scorer_ca,
		.cert = r->o.scorer_cert,
		.key = r->o.scorer_key,
		.timeout_ms = r->o.scorer_timeout_ms,
	};
	char why[512];

	if (access_for(&r->o, &access, err, errlen))
		return -EINVAL;
	r->kc = kubeclient_create(&access, 2000, err, errlen);
	kubeaccess_free(&access);
	if (!r->kc)
		return -EINVAL;
	kubeclient_set_user_agent(r->kc, "netsched-rebalancer");
	r->ko = (struct kubeops){ r->kc, 10000, false, "netsched-rebalancer", r->o.identity };
	if (kubeops_discover(&r->ko, why, sizeof(why)))
		log_warn(MOD, "apiserver %s: %s; evictions use policy/v1beta1",
			 kubeclient_server(r->kc), why);
	r->sc = scorerclient_create(&sc, err, errlen);
	if (!r->sc)
		return -EINVAL;
	if (decide_memory_init(&r->mem)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->said = calloc(EVENT_SLOTS, sizeof(*r->said));
	if (!r->said) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	buf_init(&r->body, PRESSURE_BODY_MAX);
	atomic_store(&r->metrics.dry_run, r->o.decide.dry_run);
	return 0;
}

int main(int argc, char **argv)
{
	static struct rebal r;	/* large: the options' buffers */
	struct metricsd *httpd = NULL;
	sigset_t sigs;
	char err[1024];
	uint64_t next_cycle = 0, next_lease = 0, step_ms;
	int rc = 1;

	log_init("netsched-rebalancer");
	if (rebal_options_defaults(&r.o, err, sizeof(err))) {
		fprintf(stderr, "netsched-rebalancer: %s\n", err);
		return EXIT_USAGE;
	}
	if (rebal_options_parse(&r.o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "netsched-rebalancer: %s\n", err);
		return EXIT_USAGE;
	}
	if (r.o.help) {
		rebal_options_usage(stdout);
		return 0;
	}
	log_set_level(r.o.log_level);
	if (check_files(&r.o, err, sizeof(err))) {
		fprintf(stderr, "netsched-rebalancer: %s\n", err);
		return EXIT_USAGE;
	}
	if (r.o.check_config) {
		printf("configuration OK\n");
		return 0;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "netsched-rebalancer: libcurl cannot start\n");
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (log_start())
		fprintf(stderr, "netsched-rebalancer: logging in place (no writer thread)\n");
	if (start(&r, err, sizeof(err))) {
		log_error(MOD, "%s", err);
		goto out;
	}
	if (r.o.metrics_addr[0]) {
		httpd = metricsd_start(r.o.metrics_addr, r.o.metrics_port, "--metrics-listen",
				       render_metrics, &r.metrics, err, sizeof(err));
		if (!httpd) {
			log_error(MOD, "%s", err);
			goto out;
		}
	}
	log_info(MOD, "%s: %s every %llu ms, scorer %s%s, hot %.0f%% for %u reports, margin %.0f%%%s",
		 r.o.identity, r.o.decide.dry_run ? "dry run (moves nothing)" : "moving pods",
		 (unsigned long long)r.o.interval_ms, r.o.scorer[0], r.o.n_scorer > 1 ? ",..." : "",
		 100 * r.o.decide.hot, r.o.decide.debounce, 100 * r.o.decide.margin,
		 r.o.leader_elect ? ", leader election on" : "");
	/* The Lease is looked at three times per duration (client-go's
	 * renew period is about two thirds of it); cycles run on time. */
	step_ms = r.o.lease_duration_ms / 3;
	for (;;) {
		uint64_t now = clock_mono_ns() / 1000000u, wait_ms;
		struct timespec ts;
		int sig;

		if (now >= next_lease) {
			atomic_store(&r.metrics.leader, lead(&r));
			next_lease = now + step_ms;
		}
		if (now >= next_cycle) {
			next_cycle = now + r.o.interval_ms;
			if (atomic_load(&r.metrics.leader)) {
				cycle(&r);
				atomic_fetch_add(&r.metrics.cycles, 1);
				atomic_store(&r.metrics.last_cycle_unix, unix_ns() / 1000000000u);
				if (r.o.once)
					break;
			} else {
				log_debug(MOD, "%s: not the leader; watching", r.o.identity);
			}
		}
		now = clock_mono_ns() / 1000000u;
		wait_ms = (next_lease < next_cycle ? next_lease : next_cycle);
		wait_ms = wait_ms > now ? wait_ms - now : 0;
		ts.tv_sec = (time_t)(wait_ms / 1000);
		ts.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			log_info(MOD, "%s: stopping", strsignal(sig));
			break;
		}
	}
	rc = 0;
out:
	metricsd_stop(httpd);
	scorerclient_destroy(r.sc);
	kubeclient_destroy(r.kc);
	decide_memory_free(&r.mem);
	free(r.said);
	buf_free(&r.body);
	log_stop();
	curl_global_cleanup();
	return rc;
}
