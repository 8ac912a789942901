/* netsched-agent: reads this node's NIC byte counters from the kernel, keeps
 * a sliding window of them and pushes it to every scorer. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "buf.h"
#include "clock.h"
#include "file.h"
#include "keyfile.h"
#include "log.h"
#include "httpd.h"
#include "netns.h"
#include "nl.h"
#include "options.h"
#include "report.h"
#include "reportjson.h"
#include "sampler.h"
#include "sender.h"
#include "sigblock.h"

#define EXIT_USAGE 2
/* A CA bundle: a few certificates, a few KB; the system bundle is 200 KB. */
#define AGENT_CA_MAX_BYTES (1024u * 1024u)

static volatile sig_atomic_t stop_signal, hup_signal;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hup_signal = 1;
	else
		stop_signal = sig;
}

/* Sleeps until the monotonic deadline or a stop signal. */
static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / NS_PER_SEC),
			       .tv_nsec = (long)(deadline_ns % NS_PER_SEC) };

	while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Opens the counter source, inside --netns when given, and comes back:
 * reports must leave from the namespace where the scorers are reachable.
 * Netlink unless it fails (or --source sysfs). */
static int open_source(struct agent_options *o, struct nl **nl, bool *sysfs_ok, char *err,
		       size_t errlen)
{
	char why[256];
	int saved = -1, rc = 0;

	*nl = NULL;
	*sysfs_ok = true;
	if (o->netns[0]) {
		rc = netns_enter(o->netns, &saved, err, errlen);
		if (rc)
			return rc;
		if (netns_remount_sysfs(why, sizeof(why))) {
			log_warn("agent", "%s: netns %s: %s; link speeds unknown and no sysfs source",
				 o->node, o->netns, why);
			*sysfs_ok = false;
		}
	}
	if (o->source == SAMPLER_NETLINK) {
		*nl = nl_open(podselect_enabled(&o->pod_interfaces), why, sizeof(why));
		if (*nl)
			nl_set_node(*nl, o->node);
		if (!*nl && o->source_set) {
			snprintf(err, errlen, "%s", why);
			rc = -EIO;
		} else if (!*nl) {
			log_warn("agent", "%s: %s; falling back to sysfs", o->node, why);
			o->source = SAMPLER_SYSFS;
		}
	}
	if (!rc && o->source == SAMPLER_SYSFS && !*sysfs_ok) {
		snprintf(err, errlen, "--source sysfs: /sys does not show netns %s", o->netns);
		rc = -EIO;
	}
	if (saved >= 0 && netns_leave(saved)) {
		snprintf(err, errlen, "netns: cannot return to the agent's namespace: %s",
			 strerror(errno));
		rc = -EIO;
	}
	if (rc) {
		nl_close(*nl);
		*nl = NULL;
	}
	return rc;
}

static void report_build(struct report *r, const struct agent_options *o,
			 struct sampler *sm, uint64_t instance, uint64_t seq, uint64_t now,
			 uint64_t span_ms)
{
	uint64_t end = clock_unix_ms();

	memset(r, 0, sizeof(*r));
	memcpy(r->node, o->node, sizeof(r->node));
	r->instance_id = instance;
	r->seq = seq;
	r->window_end_unix_ms = end;
	r->window_start_unix_ms = end > span_ms ? end - span_ms : 0;
	r->sample_interval_ms = (uint32_t)o->sample_interval_ms;
	sampler_fill(sm, now, r);
}

static int print_once(const struct report *r)
{
	struct buf b;
	int rc = 0;

	buf_init(&b, 64 * 1024);
	reportjson_write(&b, r);
	buf_puts(&b, "\n");
	if (buf_failed(&b) || fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout))
		rc = -EIO;
	buf_free(&b);
	return rc;
}

/* The signing key, re-read when its file changes (a rotated Secret). */
struct signer {
	const char *path;	/* NULL: reports go unsigned */
	struct keyfile keys;
	uint64_t next_check_ns;
};


/* Why keys cannot sign this node's reports ("" when they can): a file of
 * master keys is the scorer's, and another node's own key would only get
 * every report refused. */
static const char *signer_problem(const struct keyfile *keys, const char *node, char *why,
				  size_t len)
{
	why[0] = '\0';
	if (!keyfile_signing_key(keys))
		snprintf(why, len, "holds only master keys, which belong to the scorer: a node "
			 "gets its own key file from netsched-scorer --derive-node-key");
	else if (keys->node[0] && strcmp(keys->node, node))
		snprintf(why, len, "is node %s's own key; this agent reports as %s, and a node's "
			 "key signs for that node alone", keys->node, node);
	return why;
}

static void signer_refresh(struct signer *sg, const char *node, uint64_t now)
{
	uint32_t was = sg->path ? keyfile_signing_key(&sg->keys)->id : 0;
	struct keyfile before;
	char err[256];
	int rc;

	if (!sg->path || now < sg->next_check_ns)
		return;
	sg->next_check_ns = now + FILE_RELOAD_CHECK_NS;
	before = sg->keys;
	rc = keyfile_reload(sg->path, &sg->keys, err, sizeof(err));
	if (rc > 0 && signer_problem(&sg->keys, node, err, sizeof(err))[0]) {
		sg->keys = before;	/* keep signing with what works */
		rc = -EINVAL;
	}
	OPENSSL_cleanse(&before, sizeof(before));
	if (rc < 0)
		log_error("agent", "%s: key file changed but cannot be used: %s; still signing "
			  "with key %08x", node, err, was);
	else if (rc > 0 && keyfile_signing_key(&sg->keys)->id != was)
		log_info("agent", "%s: now signing with key %08x", node,
			 keyfile_signing_key(&sg->keys)->id);
}

static void send_report(struct sender *snd, struct signer *sg, const struct report *r)
{
	uint8_t wire[REPORT_MAX_BYTES];
	size_t len;
	int rc = report_encode_signed(r, sg->path ? keyfile_signing_key(&sg->keys) : NULL, wire,
				      sizeof(wire), &len);

	if (rc) {
		char why[256];

		/* Our own report breaking our own limits is a bug worth shouting
		 * about, with the limit it broke (at most once a report). */
		if (report_validate(r, why, sizeof(why)) == 0)
			snprintf(why, sizeof(why), "%s", strerror(-rc));
		log_error("agent", "%s: report %llu not encoded: %s", r->node,
			  (unsigned long long)r->seq, why);
		return;
	}
	sender_send(snd, wire, len);
}

/* --once: two readings one interval apart, printed as one JSON report. */
static int run_once(const struct agent_options *o, struct sampler *sm, uint64_t instance)
{
	static struct report r;
	uint64_t now;

	sampler_tick(sm, clock_mono_ns());
	/* Said so that whoever measures alongside knows where the interval
	 * begins (a loaded machine may start us late). */
	log_info("agent", "%s: --once: first reading taken, the second in %u ms", o->node,
		 (unsigned)o->sample_interval_ms);
	sleep_until(clock_mono_ns() + o->sample_interval_ms * NS_PER_MS);
	if (stop_signal)
		return 0;
	now = clock_mono_ns();
	sampler_tick(sm, now);
	report_build(&r, o, sm, instance, 1, now, o->sample_interval_ms);
	return print_once(&r) ? 1 : 0;
}

static void run_loop(const struct agent_options *o, struct sampler *sm, struct sender *snd,
		     struct signer *sg, struct agent_httpd *met, uint64_t instance)
{
	static struct report r;
	const uint64_t interval_ns = o->sample_interval_ms * NS_PER_MS;
	const uint64_t report_ns = o->report_interval_ms * NS_PER_MS;
	uint64_t seq = 0, now = clock_mono_ns();
	uint64_t next_sample = now, next_report = now + report_ns;

	while (!stop_signal) {
		sleep_until(next_sample);
		if (stop_signal)
			break;
		now = clock_mono_ns();
		if (hup_signal) {
			/* SIGHUP's default action would end the agent without a word. */
			hup_signal = 0;
			log_info("agent", "%s: SIGHUP: checking the key file now; SIGTERM stops the "
				 "agent", o->node);
			sg->next_check_ns = 0;
		}
		sampler_tick(sm, now);
		if (now >= next_report) {
			report_build(&r, o, sm, instance, ++seq, now, o->window_ms);
			signer_refresh(sg, o->node, now);
			send_report(snd, sg, &r);
			agent_httpd_publish(met, &r, sm, snd);
			next_report += report_ns;
			if (next_report <= now) /* we fell behind: skip, never burst */
				next_report = now + report_ns;
		}
		next_sample += interval_ns;
		if (next_sample <= now)
			next_sample = now + interval_ns;
	}
	log_info("agent", "%s: %s: stopping after %llu reports", o->node, strsignal(stop_signal),
		 (unsigned long long)seq);
}

int main(int argc, char **argv)
{
	static struct agent_options o;
	static struct sampler sm;
	static struct signer sg;
	struct sampler_config cfg;
	const char *urls[SENDER_MAX_SCORERS];
	struct sender *snd = NULL;
	struct agent_httpd *met = NULL;
	struct nl *nl = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t sigs;
	uint64_t instance;
	bool sysfs_ok;
	char err[512];
	int rc = 1;

	log_init("netsched-agent");
	if (agent_options_defaults(&o, err, sizeof(err)) ||
	    agent_options_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "netsched-agent: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.help) {
		agent_options_usage(stdout);
		return 0;
	}
	if (o.key_file[0]) {
		if (keyfile_load(o.key_file, &sg.keys, err, sizeof(err))) {
			fprintf(stderr, "netsched-agent: --key-file %s\n", err);
			return EXIT_USAGE;
		}
		if (signer_problem(&sg.keys, o.node, err, sizeof(err))[0]) {
			fprintf(stderr, "netsched-agent: --key-file %s %s\n", o.key_file, err);
			return EXIT_USAGE;
		}
		sg.path = o.key_file;
	}
	/* NNG reads the CA when it dials: a missing file fails here with its
	 * name, and a FIFO or device is refused instead of hanging start-up. */
	if (o.scorer_ca[0] && file_check_readable(o.scorer_ca, AGENT_CA_MAX_BYTES, err, sizeof(err))) {
		fprintf(stderr, "netsched-agent: --scorer-ca %s\n", err);
		return EXIT_USAGE;
	}
	if (o.check_config) {
		printf("configuration OK\n");
		return 0;
	}
	log_set_level(o.log_level);
	/* From here a stalled stderr reader never stalls sampling. */
	if (log_start())
		fprintf(stderr, "netsched-agent: no log writer thread; logging in place\n");
	if (getrandom(&instance, sizeof(instance), 0) != sizeof(instance))
		instance = clock_mono_ns() ^ ((uint64_t)getpid() << 32);

	if (open_source(&o, &nl, &sysfs_ok, err, sizeof(err))) {
		log_error("agent", "%s: %s", o.node, err);
		log_stop();
		return 1;
	}
	cfg = (struct sampler_config){
		.node = o.node,
		.spec = o.interfaces,
		.source = o.source,
		.interval_ns = o.sample_interval_ms * NS_PER_MS,
		.window_ns = (o.once ? o.sample_interval_ms : o.window_ms) * NS_PER_MS,
		/* What happened since the previous report. */
		.recent_ns = (o.once ? o.sample_interval_ms : o.report_interval_ms) * NS_PER_MS,
		.speeds = o.link_speeds,
		.n_speeds = o.n_link_speeds,
		.sysfs_root = "/sys/class/net",
		.route4 = "/proc/net/route",
		.route6 = "/proc/net/ipv6_route",
		.sysfs_speed = sysfs_ok,
		.pods = {
			.spec = o.pod_interfaces,
			/* --once reads pods at both of its readings. */
			.interval_ns = (o.once ? o.sample_interval_ms : o.pod_interval_ms) * NS_PER_MS,
			.reported = (uint32_t)o.pods_reported,
		},
	};
	if (o.source == SAMPLER_SYSFS && podselect_enabled(&o.pod_interfaces))
		log_warn("agent", "%s: pods' interfaces are measured over netlink only; with sysfs "
			 "they are not (--pod-interfaces off says so quietly)", o.node);
	if (sampler_init(&sm, nl, &cfg)) {
		log_error("agent", "%s: cannot set up the sampler", o.node);
		goto out;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.once) {
		rc = run_once(&o, &sm, instance);
		goto out;
	}

	/* NNG's and libmicrohttpd's threads inherit this mask, so the signals
	 * reach the main thread and interrupt its sleep; unblocked right after. */
	sigblock_stops(&sigs);
	for (size_t i = 0; i < o.n_scorers; i++)
		urls[i] = o.scorers[i];
	snd = sender_create(urls, o.n_scorers, o.scorer_ca[0] ? o.scorer_ca : NULL, err,
			    sizeof(err));
	if (snd && o.metrics_addr[0])
		met = agent_httpd_start(o.metrics_addr, o.metrics_port, err, sizeof(err));
	pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
	if (!snd || (o.metrics_addr[0] && !met)) {
		log_error("agent", "%s: %s", o.node, err);
		goto out;
	}
	log_info("agent", "%s: sampling every %llu ms over %s%s%s, reporting a %llu ms window "
		 "every %llu ms to %zu scorer(s) as instance %016llx", o.node,
		 (unsigned long long)o.sample_interval_ms,
		 o.source == SAMPLER_NETLINK ? "netlink" : "sysfs",
		 o.netns[0] ? " in netns " : "", o.netns, (unsigned long long)o.window_ms,
		 (unsigned long long)o.report_interval_ms, o.n_scorers, (unsigned long long)instance);
	if (met)
		log_info("agent", "%s: metrics on http://%s:%u/metrics", o.node, o.metrics_addr,
			 agent_httpd_port(met));
	if (sg.path)
		log_info("agent", "%s: signing reports with %s key %08x from %s", o.node,
			 sg.keys.node[0] ? "its own" : "the shared", keyfile_signing_key(&sg.keys)->id,
			 sg.path);
	run_loop(&o, &sm, snd, &sg, met, instance);
	rc = 0;
out:
	agent_httpd_stop(met);
	sender_destroy(snd);
	sampler_free(&sm);
	nl_close(nl);
	log_stop();
	return rc;
}
