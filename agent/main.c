/* netsched-agent: reads this node's NIC byte counters from the kernel, keeps
 * a sliding window of them and pushes it to every scorer. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "buf.h"
#include "clock.h"
#include "linkspeed.h"
#include "log.h"
#include "netns.h"
#include "nl.h"
#include "options.h"
#include "report.h"
#include "reportjson.h"
#include "sampler.h"
#include "sender.h"

#define EXIT_USAGE 2

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
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

/* The netlink socket is opened inside --netns, then we come back: reports
 * must leave from the namespace where the scorers are reachable. */
static struct nl *open_source(const struct agent_options *o, char *err, size_t errlen)
{
	struct nl *nl;
	int saved;

	if (!o->netns[0])
		return nl_open(err, errlen);
	if (netns_enter(o->netns, &saved, err, errlen))
		return NULL;
	nl = nl_open(err, errlen);
	if (netns_leave(saved)) {
		snprintf(err, errlen, "netns: cannot return to the agent's namespace: %s",
			 strerror(errno));
		nl_close(nl);
		return NULL;
	}
	return nl;
}

static void report_build(struct report *r, const struct agent_options *o,
			 const struct sampler *sm, uint64_t instance, uint64_t seq, uint64_t now)
{
	uint64_t end = clock_unix_ms();

	memset(r, 0, sizeof(*r));
	memcpy(r->node, o->node, sizeof(r->node));
	r->instance_id = instance;
	r->seq = seq;
	r->window_end_unix_ms = end;
	r->window_start_unix_ms = end > o->window_ms ? end - o->window_ms : 0;
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

static void send_report(struct sender *snd, const struct report *r)
{
	uint8_t wire[REPORT_MAX_BYTES];
	size_t len;
	int rc = report_encode(r, wire, sizeof(wire), &len);

	if (rc) {
		/* Our own report breaking our own limits is a bug worth shouting about. */
		log_error("agent", "%s: report %llu not encoded: %s", r->node,
			  (unsigned long long)r->seq, strerror(-rc));
		return;
	}
	sender_send(snd, wire, len);
}

int main(int argc, char **argv)
{
	static struct agent_options o;
	static struct sampler sm;
	static struct report r;
	uint64_t speeds[REPORT_MAX_INTERFACES] = { 0 };
	const char *urls[SENDER_MAX_SCORERS];
	uint64_t instance, seq = 0, interval_ns, window_ns, now, next_sample, next_report;
	struct sender *snd = NULL;
	struct nl *nl = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t sigs;
	char err[512];
	int rc = 1;

	log_init("netsched-agent");
	agent_options_defaults(&o);
	if (agent_options_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "netsched-agent: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.help) {
		agent_options_usage(stdout);
		return 0;
	}
	if (o.check_config) {
		printf("configuration OK\n");
		return 0;
	}
	log_set_level(o.log_level);

	for (size_t i = 0; i < o.n_interfaces; i++) {
		speeds[i] = agent_options_link_speed(&o, o.interfaces[i]);
		/* /sys shows the namespace it was mounted in, not --netns. */
		if (!speeds[i] && !o.netns[0])
			speeds[i] = linkspeed_read("/sys/class/net", o.interfaces[i]);
	}
	interval_ns = o.sample_interval_ms * NS_PER_MS;
	window_ns = o.once ? interval_ns : o.window_ms * NS_PER_MS;
	if (getrandom(&instance, sizeof(instance), 0) != sizeof(instance))
		instance = clock_mono_ns() ^ ((uint64_t)getpid() << 32);

	nl = open_source(&o, err, sizeof(err));
	if (!nl) {
		log_error("agent", "%s: %s", o.node, err);
		return 1;
	}
	if (sampler_init(&sm, nl, o.node, (const char (*)[REPORT_MAX_IFNAME_LEN + 1])o.interfaces,
			 speeds, o.n_interfaces, interval_ns, window_ns)) {
		log_error("agent", "%s: cannot set up %zu interfaces", o.node, o.n_interfaces);
		goto out;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.once) {
		sampler_tick(&sm, clock_mono_ns());
		sleep_until(clock_mono_ns() + interval_ns);
		now = clock_mono_ns();
		sampler_tick(&sm, now);
		report_build(&r, &o, &sm, instance, 1, now);
		r.window_start_unix_ms = r.window_end_unix_ms - o.sample_interval_ms;
		rc = stop_signal ? 0 : print_once(&r) ? 1 : 0;
		goto out;
	}

	/* NNG's threads inherit this mask, so the signals reach the main thread
	 * and interrupt its sleep; unblocked again right after. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	for (size_t i = 0; i < o.n_scorers; i++)
		urls[i] = o.scorers[i];
	snd = sender_create(urls, o.n_scorers, err, sizeof(err));
	pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
	if (!snd) {
		log_error("agent", "%s: %s", o.node, err);
		goto out;
	}
	log_info("agent", "%s: measuring %zu interface(s)%s%s every %llu ms, reporting a %llu ms "
		 "window every %llu ms to %zu scorer(s)", o.node, o.n_interfaces,
		 o.netns[0] ? " in netns " : "", o.netns, (unsigned long long)o.sample_interval_ms,
		 (unsigned long long)o.window_ms, (unsigned long long)o.report_interval_ms,
		 o.n_scorers);

	now = clock_mono_ns();
	next_sample = now;
	next_report = now + o.report_interval_ms * NS_PER_MS;
	while (!stop_signal) {
		sleep_until(next_sample);
		if (stop_signal)
			break;
		now = clock_mono_ns();
		sampler_tick(&sm, now);
		if (now >= next_report) {
			report_build(&r, &o, &sm, instance, ++seq, now);
			send_report(snd, &r);
			next_report += o.report_interval_ms * NS_PER_MS;
			if (next_report <= now) /* we fell behind: skip, never burst */
				next_report = now + o.report_interval_ms * NS_PER_MS;
		}
		next_sample += interval_ns;
		if (next_sample <= now)
			next_sample = now + interval_ns;
	}
	log_info("agent", "%s: %s: stopping after %llu reports", o.node, strsignal(stop_signal),
		 (unsigned long long)seq);
	rc = 0;
out:
	sender_destroy(snd);
	sampler_free(&sm);
	nl_close(nl);
	return rc;
}
