/* netsched-rebalancer: moves pods off a link that stays saturated, only
 * where the scorer says the replacement has room, only through the
 * Eviction API, and only while holding the Lease. Dry run by default.
 *
 * main: the options, the files they name, the clients, /metrics, and the
 * timer that looks at the Lease and runs a cycle every --interval
 * (loop.h), until SIGTERM or SIGINT. */
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
#include "common/kubeaccess.h"
#include "common/kubeclient.h"
#include "common/log.h"
#include "common/metricsd.h"
#include "loop.h"
#include "metrics.h"
#include "options.h"
#include "scorerclient.h"

#define EXIT_USAGE 2
#define MOD "rebalancer"

struct rebal {
	struct rebal_options o;
	struct kubeclient *kc;
	struct scorerclient *sc;
	struct rebal_metrics metrics;
	struct rebal_loop loop;
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

	if (access_for(&r->o, &access, err, errlen))
		return -EINVAL;
	r->kc = kubeclient_create(&access, 2000, err, errlen);
	kubeaccess_free(&access);
	if (!r->kc)
		return -EINVAL;
	kubeclient_set_user_agent(r->kc, "netsched-rebalancer");
	r->sc = scorerclient_create(&sc, err, errlen);
	if (!r->sc)
		return -EINVAL;
	return rebal_loop_init(&r->loop, &r->o, r->kc, r->sc, &r->metrics, err, errlen);
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
			atomic_store(&r.metrics.leader, rebal_loop_lead(&r.loop));
			next_lease = now + step_ms;
		}
		if (now >= next_cycle) {
			next_cycle = now + r.o.interval_ms;
			if (atomic_load(&r.metrics.leader)) {
				rebal_loop_cycle(&r.loop);
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
	rebal_loop_free(&r.loop);
	log_stop();
	curl_global_cleanup();
	return rc;
}
