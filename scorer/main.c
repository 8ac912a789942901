/* netsched-scorer: holds the latest traffic window of every node and answers
 * kube-scheduler extender calls from memory. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "bearertoken.h"
#include "reports/anchor.h"
#include "clock.h"
#include "errmsg.h"
#include "fdlimit.h"
#include "file.h"
#include "serve/http.h"
#include "pods/inflight.h"
#include "pods/moves.h"
#include "reports/ingest.h"
#include "keyfile.h"
#include "log.h"
#include "options.h"
#include "pods/podindex.h"
#include "kube/podwatch.h"
#include "prom/prom.h"
#include "scorer.h"
#include "scratch.h"
#include "sigblock.h"
#include "nodekey.h"
#include "serve/tls.h"
#include "nodes/table.h"
#include "nodes/view.h"
#include "worker.h"
#include "pods/workload.h"

#define EXIT_USAGE 2

/* Fades and expiries of in-flight pods, off the request path. */
static uint64_t inflight_round(void *ctx)
{
	inflight_tick(ctx, clock_mono_ns(), false);
	return INFLIGHT_TICK_NS / NS_PER_MS;
}

/* The fastest known link among fresh nodes. */
struct fastest {
	uint64_t now_ns, stale_after_ns, link;
};

static void add_to_fastest(const struct table_node *n, void *ctx)
{
	struct fastest *f = ctx;

	if (table_node_age_ns(n, f->now_ns) <= f->stale_after_ns &&
	    n->traffic.link_bytes_per_second > f->link)
		f->link = n->traffic.link_bytes_per_second;
}

/* The learned demands and the cluster's average per pod, recomputed off
 * the request path; and request buffers no request took for a while go
 * back to the kernel (scratch.h). */
#define LEARN_TICK_MS 1000u
static uint64_t learn_round(void *ctx)
{
	struct scorer *s = ctx;
	uint64_t now = clock_mono_ns();
	struct fastest f = { .now_ns = now, .stale_after_ns = s->view.stale_after_ns };

	scratch_trim(now);
	view_reference_refresh(&s->view, now);
	/* What a pod on a node of unknown link counts at most: an unknown
	 * link is unknown, not infinite (podindex.h, inflight.h). */
	table_each(s->view.table, add_to_fastest, &f);
	podindex_set_link_ceiling(s->view.weights.pods, f.link);
	inflight_set_link_ceiling(s->view.inflight, f.link);
	moves_tick(s->view.moves, now);
	if (s->view.weights.pods) {
		podindex_tick(s->view.weights.pods, now);
		workload_tick(s->view.weights.workloads, now);
	}
	return LEARN_TICK_MS;
}

/* Where the pod watch reaches the apiserver: --kubeconfig, else the pod's
 * ServiceAccount. 0; -ENOENT: neither (not in a pod, no --kubeconfig);
 * other -errno: access is configured but broken (err says how). */
static int pod_watch_access(const struct scorer_options *o, struct kubeaccess *a, char *err,
			    size_t errlen)
{
	if (o->kubeconfig[0])
		return kubeaccess_kubeconfig(a, o->kubeconfig, err, errlen);
	return kubeaccess_in_cluster(a, KUBEACCESS_SA_DIR, err, errlen);
}

/* Files another library opens later (NNG the report port's certificate,
 * libcurl the pod watch's and Prometheus's CA and token): read now, so a
 * missing file fails start-up and --check-config with its name, and a FIFO
 * or device is refused instead of hanging a thread (common/file.h). The key
 * file, the HTTPS files and the config were read by their own loaders. */
static int check_files(const struct scorer_options *o, const struct kubeaccess *access,
		       char *err, size_t errlen)
{
	char why[512], tok[BEARERTOKEN_FILE_MAX];
	int rc;

	if (o->listen_cert_key[0] &&
	    file_check_readable(o->listen_cert_key, TLS_MAX_PEM_BYTES, why, sizeof(why)))
		return errmsg(err, errlen, -EINVAL, "--listen-cert-key %s", why);
	if (o->prom.url[0] && o->prom.ca_file[0] &&
	    file_check_readable(o->prom.ca_file, KUBEACCESS_FILE_MAX, why, sizeof(why)))
		return errmsg(err, errlen, -EINVAL, "--prometheus-ca-file %s", why);
	if (o->prom.url[0] && o->prom.token_file[0]) {
		rc = bearertoken_read(o->prom.token_file, tok, sizeof(tok), why, sizeof(why));
		explicit_bzero(tok, sizeof(tok));
		if (rc)
			return errmsg(err, errlen, rc, "--prometheus-token-file %s", why);
	}
	if (access && kubeaccess_check_files(access, why, sizeof(why)))
		return errmsg(err, errlen, -EINVAL, "pod watch (%s): %s", access->origin, why);
	return 0;
}

int main(int argc, char **argv)
{
	static struct scorer s;
	static struct ingest_config reports;
	struct scorer_options o;
	struct ingest *in = NULL;
	struct http_server *http = NULL, *health = NULL;
	struct worker *ticker = NULL, *learner = NULL;
	struct kubeaccess access;
	int watch_rc = -ENOENT;
	char err[512], watch_err[512] = "";
	sigset_t sigs;
	int sig, rc = 1;

	log_init("netsched-scorer");
	/* Request bodies and token arrays (up to 64 MiB) come and go with
	 * every request. A fixed mmap threshold keeps each in its own
	 * mapping: freed memory goes back to the kernel at once and realloc()
	 * grows by remapping, never holding the old and the new copy. glibc's
	 * default threshold rises after the first large free, and such
	 * buffers then sat in the heap: peak RSS went 100 MiB over the
	 * request memory budget (tests/integration/test_memory.sh). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (scorer_options_defaults(&o, err, sizeof(err)) ||
	    scorer_options_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "netsched-scorer: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.help) {
		scorer_options_usage(stdout);
		return 0;
	}
	if (o.key_file[0] && keyfile_load(o.key_file, &reports.keys, err, sizeof(err))) {
		fprintf(stderr, "netsched-scorer: --key-file %s\n", err);
		return EXIT_USAGE;
	}
	if (reports.keys.node[0]) {
		fprintf(stderr, "netsched-scorer: --key-file %s: node %s's own key file; the scorer's "
			"holds master keys (\"master HEX\") and, while agents move to them, shared "
			"keys\n", o.key_file, reports.keys.node);
		return EXIT_USAGE;
	}
	if (o.derive_node_key[0]) {
		char text[1024];

		rc = nodekey_file(&reports.keys, o.derive_node_key, text, sizeof(text), err, sizeof(err));
		if (!rc)
			fputs(text, stdout);
		else
			fprintf(stderr, "netsched-scorer: --derive-node-key %s: %s\n", o.derive_node_key, err);
		OPENSSL_cleanse(text, sizeof(text));
		return rc ? EXIT_USAGE : 0;
	}
	reports.key_file = o.key_file[0] ? o.key_file : NULL;
	if (o.tls.cert[0]) {
		struct tls_pems pems;

		if (tls_load(&o.tls, &pems, err, sizeof(err))) {
			fprintf(stderr, "netsched-scorer: --tls-cert/--tls-key: %s\n", err);
			return EXIT_USAGE;
		}
		tls_free(&pems);
	}
	if (o.inflight_max_pods && o.pod_watch) {
		watch_rc = pod_watch_access(&o, &access, watch_err, sizeof(watch_err));
		/* Named but unusable is a mistake to stop on; absent is a choice. */
		if (watch_rc && watch_rc != -ENOENT) {
			fprintf(stderr, "netsched-scorer: pod watch: %s\n", watch_err);
			return EXIT_USAGE;
		}
	}
	if (check_files(&o, watch_rc ? NULL : &access, err, sizeof(err))) {
		if (!watch_rc)
			kubeaccess_free(&access);
		fprintf(stderr, "netsched-scorer: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.check_config) {
		if (!watch_rc)
			kubeaccess_free(&access);
		printf("configuration OK\n");
		return 0;
	}
	log_set_level(o.log_level);
	/* From here a stalled stderr reader never stalls a request. */
	if (log_start())
		fprintf(stderr, "netsched-scorer: no log writer thread; logging in place\n");

	s.view.policy = o.policy;
	s.view.direction = o.direction;
	s.fit_filter = o.fit_filter;
	s.compact_scores = o.compact_scores;
	s.view.max_drops_per_second = o.max_drops_per_second;
	s.filter = o.filter;
	s.view.stale_after_ns = o.stale_after_ms * NS_PER_MS;
	/* Every live agent reports well within stale-after, so after that long
	 * without any fresh node, waiting longer would not bring data: say
	 * ready and let the scheduler have (neutral) answers. */
	s.view.warmup_ns = s.view.stale_after_ns;
	s.limits.max_body_bytes = o.max_body_bytes;
	s.limits.request.max_nodes = o.max_request_nodes;
	s.limits.connections_per_client = (unsigned)o.connections_per_client;
	s.limits.request.max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS;
	/* Sized before the Prometheus fallback starts taking from it. */
	http_request_budget(&s);
	s.now_ns = clock_mono_ns;
	s.view.started_mono_ns = clock_mono_ns();
	reports.started_unix_ms = clock_unix_ms();
	reports.anchors = anchors_create(o.max_tracked_nodes);
	if (!reports.anchors) {
		log_error("scorer", "cannot allocate room for %llu agent clocks",
			  (unsigned long long)o.max_tracked_nodes);
		goto out;
	}
	s.view.table = table_create(o.max_tracked_nodes);
	if (!s.view.table) {
		log_error("scorer", "cannot allocate a table of %llu nodes",
			  (unsigned long long)o.max_tracked_nodes);
		goto out;
	}
	/* A stale node scores neutral anyway: it may give its place to a new one. */
	table_evict_after(s.view.table, s.view.stale_after_ns);
	table_filter(s.view.table, &s.filter, s.view.direction);
	table_resync_after(s.view.table, s.view.stale_after_ns);
	s.view.moves = moves_create(o.moves_max);
	if (!s.view.moves) {
		log_error("scorer", "cannot allocate room for %llu moves",
			  (unsigned long long)o.moves_max);
		goto out;
	}
	if (o.inflight_max_pods) {
		struct inflight_config ic = {
			.max_pods = o.inflight_max_pods,
			.max_nodes = o.max_tracked_nodes,
			.hold_ns = o.inflight_hold_ms * NS_PER_MS,
			.fade_ns = o.inflight_fade_ms * NS_PER_MS,
			.expire_ns = o.inflight_expire_ms * NS_PER_MS,
			.unstarted_ns = o.inflight_unstarted_ms * NS_PER_MS,
		};

		s.view.inflight = inflight_create(&ic);
		if (!s.view.inflight) {
			log_error("scorer", "cannot allocate in-flight room for %llu pods",
				  (unsigned long long)o.inflight_max_pods);
			goto out;
		}
		s.view.weights.cfg = (struct podweight_config){
			.doubt_pct = o.inflight_penalty_pct,
			.estimate_bytes_per_second = o.inflight_estimate_bps / 8,
			.learned_filter = o.learned_filter,
		};
		log_info("scorer", "in-flight pods: up to %llu, each weighs its declared bandwidth, "
			 "else its workload's learned demand, else %s%llu b/s and %u%% of its node's "
			 "free link, for %llu ms, then fades over %llu ms",
			 (unsigned long long)o.inflight_max_pods,
			 o.inflight_estimate_bps ? "" : "the cluster's average per pod (",
			 (unsigned long long)o.inflight_estimate_bps, o.inflight_penalty_pct,
			 (unsigned long long)o.inflight_hold_ms, (unsigned long long)o.inflight_fade_ms);
	}
	if (s.view.inflight && !watch_rc) {
		struct workload_config wc = {
			.max_workloads = o.max_workloads,
			.half_life_ns = o.workload_half_life_ms * NS_PER_MS,
			/* The pod index's node ids; a node silent as long as
			 * its report is ignored vouches for nothing. */
			.max_nodes = o.max_tracked_nodes,
			.silent_ns = s.view.stale_after_ns,
		};
		struct podindex_config xc = {
			.max_pods = o.max_pods,
			.max_nodes = o.max_tracked_nodes,
			.stale_ns = s.view.stale_after_ns,
			.inflight = s.view.inflight,
		};

		s.view.weights.workloads = workload_create(&wc);
		s.view.weights.pods = s.view.weights.workloads ? podindex_create(&xc, s.view.weights.workloads) : NULL;
		if (!s.view.weights.pods) {
			log_error("scorer", "cannot allocate room for %llu pods and %llu workloads",
				  (unsigned long long)o.max_pods, (unsigned long long)o.max_workloads);
			goto out;
		}
	}

	/* Threads inherit this mask, so only sigwait() below sees the signals. */
	sigblock_stops(&sigs);
	signal(SIGPIPE, SIG_IGN);

	if (s.view.inflight) {
		ticker = worker_start("in-flight fades", inflight_round, s.view.inflight, 0, err,
				      sizeof(err));
		if (!ticker) {
			log_error("scorer", "%s", err);
			goto out;
		}
	}
	learner = worker_start("learning", learn_round, &s, 0, err, sizeof(err));
	if (!learner) {
		log_error("scorer", "%s", err);
		goto out;
	}
	if ((o.prom.url[0] || !watch_rc) && curl_global_init(CURL_GLOBAL_DEFAULT)) {
		log_error("scorer", "libcurl cannot initialise");
		goto out;
	}
	if (s.view.inflight && !watch_rc) {
		struct podwatch_config pc;

		podwatch_defaults(&pc);
		pc.index = s.view.weights.pods;
		pc.weights = &s.view.weights;
		pc.moves = s.view.moves;
		log_info("scorer", "pod watch: confirming in-flight pods through %s; an assumption "
			 "never bound is dropped after %llu ms", access.origin,
			 (unsigned long long)o.inflight_expire_ms);
		s.podwatch = podwatch_start(&pc, &access, s.view.inflight, s.now_ns, err, sizeof(err));
		if (!s.podwatch) {
			log_error("scorer", "%s", err);
			goto out;
		}
	} else if (s.view.inflight) {
		/* Nothing can confirm an assumption: each counts where
		 * prioritize put it until it fades. */
		log_warn("scorer", "no pod watch (%s): in-flight assumptions are not confirmed "
			 "or moved, they fade after %llu ms; pods other schedulers place are not "
			 "counted", o.pod_watch ? watch_err : "--pod-watch off",
			 (unsigned long long)(o.inflight_hold_ms + o.inflight_fade_ms));
	}
	if (o.prom.url[0]) {
		/* A fallback refreshed every 15 s whose data expired after the
		 * agents' 6 s would flicker between data and neutral: it keeps
		 * its data for two refreshes and a timeout, or --stale-after
		 * if that is longer. */
		o.prom.max_age_ms = 2 * o.prom.refresh_ms + o.prom.timeout_ms;
		if (o.prom.max_age_ms < o.stale_after_ms)
			o.prom.max_age_ms = o.stale_after_ms;
		o.prom.max_nodes = o.max_tracked_nodes;
		o.prom.budget = &s.request_memory;
		s.view.prom = prom_start(&o.prom, &s.counters, s.now_ns, err, sizeof(err));
		if (!s.view.prom) {
			log_error("scorer", "%s", err);
			goto out;
		}
	}
	/* Report connections get what the open-file limit leaves HTTP
	 * (ingest.h): raised to the hard limit first. */
	fdlimit_raise();
	reports.table = s.view.table;
	reports.pods = s.view.weights.pods;
	reports.counters = &s.counters;
	reports.now_ns = s.now_ns;
	reports.stale_after_ns = s.view.stale_after_ns;
	reports.fd_reserve = HTTP_FD_RESERVE;
	in = ingest_start(&reports, o.listen, o.listen_cert_key, err, sizeof(err));
	if (!in) {
		log_error("scorer", "%s", err);
		goto out;
	}
	http = http_start(&s, o.http_addr, o.http_port, &o.tls, !o.health_addr[0], err, sizeof(err));
	if (!http) {
		log_error("scorer", "%s", err);
		goto out;
	}
	if (o.health_addr[0]) {
		health = http_start_health(&s, o.health_addr, o.health_port, err, sizeof(err));
		if (!health) {
			log_error("scorer", "--health-listen: %s", err);
			goto out;
		}
		log_info("scorer", "probes and status: GET /healthz, /readyz, /metrics and /v1/nodes on "
			 "http://%s:%u (not on the extender's port)", o.health_addr, http_port(health));
	}
	if (reports.keys.n)
		log_info("scorer", "accepting only reports signed with the %zu key(s) in %s: %zu "
			 "master(s) deriving each node's own, %zu shared", reports.keys.n, o.key_file,
			 reports.keys.n_master, reports.keys.n_shared);
	if (reports.keys.n_shared)
		log_warn("scorer", "%s holds %zu shared report key(s): a node holding one can report "
			 "as any other node. Per-node keys (master keys and --derive-node-key) keep "
			 "each node to its own name: docs/operating.md, \"Signed reports\"",
			 o.key_file, reports.keys.n_shared);
	else
		log_warn("scorer", "no --key-file: reports are not authenticated, and anyone who "
			 "reaches %s can set any node's traffic and steer scheduling", o.listen);
	log_info("scorer", "ready: reports on %s, extender on http%s://%s:%u, policy %s, direction %s, "
		 "%s prioritize replies, stale after %llu ms, up to %llu nodes",
		 o.listen, o.tls.cert[0] ? "s" : "", o.http_addr, http_port(http),
		 policy_kind_name(o.policy), policy_direction_name(o.direction),
		 o.compact_scores ? "compact" : "full", (unsigned long long)o.stale_after_ms,
		 (unsigned long long)o.max_tracked_nodes);

	while (sigwait(&sigs, &sig) == 0 && sig == SIGHUP)
		log_info("scorer", "%s: ignored: keys and certificates are re-read when their files "
			 "change; SIGTERM stops the scorer", strsignal(sig));
	log_info("scorer", "%s: stopping", strsignal(sig));
	rc = 0;
out:
	http_stop(health);
	http_stop(http);
	ingest_stop(in);
	podwatch_stop(s.podwatch);
	worker_stop(ticker);
	worker_stop(learner);
	prom_stop(s.view.prom);
	inflight_destroy(s.view.inflight);
	podindex_destroy(s.view.weights.pods);
	workload_destroy(s.view.weights.workloads);
	table_destroy(s.view.table);
	moves_destroy(s.view.moves);
	anchors_destroy(reports.anchors);
	scratch_trim(UINT64_MAX);
	if (!watch_rc)
		kubeaccess_free(&access); /* empty once podwatch_start() took it */
	log_stop();
	return rc;
}
