#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hostport.h"
#include "nodename.h"
#include "traffic.h"
#include "units.h"

#define MAX_DURATION_MS (3600ULL * 1000)

static int set_node(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	if (nodename_check(v, strlen(v), why, len))
		return -EINVAL;
	return cli_set_string(o->node, sizeof(o->node), v, why, len);
}

static int set_interfaces(void *ctx, const char *v, char *why, size_t len)
{
	return ifselect_parse(&((struct agent_options *)ctx)->interfaces, v, false, why, len);
}

static int set_exclude(void *ctx, const char *v, char *why, size_t len)
{
	return ifselect_parse(&((struct agent_options *)ctx)->interfaces, v, true, why, len);
}

static int set_pod_interfaces(void *ctx, const char *v, char *why, size_t len)
{
	return podselect_parse(&((struct agent_options *)ctx)->pod_interfaces, v, why, len);
}

static int set_source(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	if (strcmp(v, "netlink") == 0)
		o->source = SAMPLER_NETLINK;
	else if (strcmp(v, "sysfs") == 0)
		o->source = SAMPLER_SYSFS;
	else {
		snprintf(why, len, "expected netlink or sysfs");
		return -EINVAL;
	}
	o->source_set = true;
	return 0;
}

static int set_scorer(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	char err[SENDER_URL_MAX + 128];

	if (sender_check_url(v, err, sizeof(err))) {
		snprintf(why, len, "expected tcp://HOST:PORT, tls+tcp://HOST:PORT or ipc://PATH");
		return -EINVAL;
	}
	if (o->n_scorers == SENDER_MAX_SCORERS) {
		snprintf(why, len, "more than %d scorers", SENDER_MAX_SCORERS);
		return -EINVAL;
	}
	if (cli_set_string(o->scorers[o->n_scorers], sizeof(o->scorers[0]), v, why, len))
		return -EINVAL;
	o->n_scorers++;
	return 0;
}

static int set_netns(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	if (!*v) {
		snprintf(why, len, "empty");
		return -EINVAL;
	}
	return cli_set_string(o->netns, sizeof(o->netns), v, why, len);
}

static int set_link_speed(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;
	const char *eq = strchr(v, '=');
	struct linkspeed_override ls;

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(ls.ifname) || memchr(v, '/', (size_t)(eq - v))) {
		snprintf(why, len, "expected IF=SPEED in bits per second, e.g. ens192=10G");
		return -EINVAL;
	}
	if (units_parse_quantity(eq + 1, &ls.bps) || ls.bps == 0 ||
	    ls.bps > TRAFFIC_MAX_BYTES_PER_SECOND * 8) {
		snprintf(why, len, "speed must be 1 to %llu bits per second, e.g. 10G or 25G",
			 TRAFFIC_MAX_BYTES_PER_SECOND * 8);
		return -EINVAL;
	}
	memcpy(ls.ifname, v, (size_t)(eq - v));
	ls.ifname[eq - v] = '\0';
	for (size_t i = 0; i < o->n_link_speeds; i++)
		if (strcmp(o->link_speeds[i].ifname, ls.ifname) == 0) {
			o->link_speeds[i] = ls;
			return 0;
		}
	if (o->n_link_speeds == REPORT_MAX_INTERFACES) {
		snprintf(why, len, "more than %u link speeds", REPORT_MAX_INTERFACES);
		return -EINVAL;
	}
	o->link_speeds[o->n_link_speeds++] = ls;
	return 0;
}

static int set_metrics(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	if (hostport_parse(v, o->metrics_addr, sizeof(o->metrics_addr), &o->metrics_port)) {
		snprintf(why, len, "expected ADDR:PORT, e.g. 0.0.0.0:9470 or [::]:9470");
		return -EINVAL;
	}
	return 0;
}

static int set_log_level(void *ctx, const char *v, char *why, size_t len)
{
	if (log_parse_level(v, &((struct agent_options *)ctx)->log_level)) {
		snprintf(why, len, "expected error, warn, info or debug");
		return -EINVAL;
	}
	return 0;
}

/* Where a typed option's value goes. */
#define AT(field) .offset = offsetof(struct agent_options, field), \
		  .size = sizeof(((struct agent_options *)0)->field)
#define DURATION(field) .type = CLI_DURATION, AT(field), .min = 100, .max = MAX_DURATION_MS

static const struct cli_opt opts[] = {
	{ .name = "node", .kind = CLI_VALUE, .arg = "NAME", .set = set_node,
	  .help = "this node's name; without it $NODE_NAME, then the host name" },
	{ .name = "interfaces", .kind = CLI_VALUE, .arg = "LIST", .set = set_interfaces,
	  .help = "auto | names | globs, e.g. auto,eth1 or ens*", .def = "auto" },
	{ .name = "exclude-interfaces", .kind = CLI_VALUE, .arg = "LIST", .set = set_exclude,
	  .help = "globs never measured, e.g. ens9*" },
	{ .name = "pod-interfaces", .kind = CLI_VALUE, .arg = "LIST", .set = set_pod_interfaces,
	  .help = "pods' host-side interfaces: auto (veths into other namespaces) | globs, "
		  "e.g. cali* | off", .def = "auto" },
	{ .name = "pods-reported", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(pods_reported), .max = REPORT_MAX_PODS,
	  .help = "the busiest pods each report lists by address; the rest summed", .def = "32" },
	{ .name = "pod-interval", .kind = CLI_VALUE, .arg = "DUR", DURATION(pod_interval_ms),
	  .help = "between readings of the pods' counters, from --sample-interval to half --window",
	  .def = "30s" },
	{ .name = "scorer", .kind = CLI_VALUE, .arg = "URL", .set = set_scorer,
	  .help = "where to send reports, repeatable, e.g. tcp://netsched-scorer:7470" },
	{ .name = "sample-interval", .kind = CLI_VALUE, .arg = "DUR", DURATION(sample_interval_ms),
	  .help = "between counter readings", .def = "1s" },
	{ .name = "window", .kind = CLI_VALUE, .arg = "DUR", DURATION(window_ms),
	  .help = "span of each report", .def = "60s" },
	{ .name = "report-interval", .kind = CLI_VALUE, .arg = "DUR", DURATION(report_interval_ms),
	  .help = "between reports", .def = "2s" },
	/* No default through the handler: given, it also turns off the
	 * fallback to sysfs. */
	{ .name = "source", .kind = CLI_VALUE, .arg = "NAME", .set = set_source,
	  .help = "netlink | sysfs; without it netlink, and sysfs if netlink fails" },
	{ .name = "netns", .kind = CLI_VALUE, .arg = "NAME|PATH", .set = set_netns,
	  .help = "read the counters of this network namespace" },
	{ .name = "link-speed", .kind = CLI_VALUE, .arg = "IF=SPEED", .set = set_link_speed,
	  .help = "link speed in bit/s, repeatable, e.g. ens192=10G" },
	{ .name = "scorer-ca", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(scorer_ca),
	  .help = "CA that tls+tcp:// scorers' certificates chain to" },
	{ .name = "key-file", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(key_file),
	  .help = "sign reports with the first key in this file" },
	{ .name = "metrics", .kind = CLI_VALUE, .arg = "ADDR:PORT", .set = set_metrics,
	  .help = "serve /metrics and /healthz; off unless given" },
	{ .name = "log-level", .kind = CLI_VALUE, .arg = "LEVEL", .set = set_log_level,
	  .help = "error | warn | info | debug", .def = "info" },
	{ .name = "once", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(once),
	  .help = "sample over one interval, print one JSON report, exit" },
	{ .name = "check-config", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(check_config),
	  .help = "check the options, print \"configuration OK\"" },
	{ .name = "help", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(help), .help = "this text" },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

int agent_options_defaults(struct agent_options *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	return cli_defaults(opts, N_OPTS, o, err, errlen);
}

void agent_options_usage(FILE *f)
{
	cli_usage(f, "netsched-agent", opts, N_OPTS);
}

static int default_node(struct agent_options *o, char *err, size_t errlen)
{
	const char *env = getenv("NODE_NAME");
	char host[NODENAME_MAX_LEN + 1];
	char why[128];

	if (o->node[0])
		return 0;
	if (env && *env) {
		if (set_node(o, env, why, sizeof(why))) {
			char shown[65];

			snprintf(err, errlen, "$NODE_NAME %s: %s",
				 log_printable(env, strlen(env), shown, sizeof(shown)), why);
			return -EINVAL;
		}
		return 0;
	}
	if (gethostname(host, sizeof(host)) || !host[0]) {
		snprintf(err, errlen, "--node: not given, $NODE_NAME unset and no host name");
		return -EINVAL;
	}
	host[sizeof(host) - 1] = '\0';
	/* As the kubelet does: a node is named by its host name in lowercase. */
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return set_node(o, host, err, errlen);
}

int agent_options_parse(struct agent_options *o, int argc, char **argv, char *err, size_t errlen)
{
	if (cli_parse(opts, N_OPTS, o, argc, argv, err, errlen))
		return -EINVAL;
	if (o->help)
		return 0;
	if (default_node(o, err, errlen))
		return -EINVAL;
	if (o->n_scorers == 0 && !o->once) {
		snprintf(err, errlen, "--scorer: at least one is required (or --once)");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->n_scorers; i++)
		if (!strncmp(o->scorers[i], "tls+tcp://", 10) && !o->scorer_ca[0]) {
			snprintf(err, errlen, "--scorer %s: tls+tcp:// needs --scorer-ca FILE to "
				 "verify the scorer", o->scorers[i]);
			return -EINVAL;
		}
	if (o->window_ms < o->sample_interval_ms) {
		snprintf(err, errlen, "--window %llums: shorter than --sample-interval %llums",
			 (unsigned long long)o->window_ms,
			 (unsigned long long)o->sample_interval_ms);
		return -EINVAL;
	}
	if (o->window_ms / o->sample_interval_ms > AGENT_MAX_WINDOW_SLOTS) {
		snprintf(err, errlen, "--window %llums: %llu samples of %llums, limit %u",
			 (unsigned long long)o->window_ms,
			 (unsigned long long)(o->window_ms / o->sample_interval_ms),
			 (unsigned long long)o->sample_interval_ms, AGENT_MAX_WINDOW_SLOTS);
		return -EINVAL;
	}
	/* Pods are read at a sample, and at least twice a window. */
	if (o->pod_interval_ms > o->window_ms / 2)
		o->pod_interval_ms = o->window_ms / 2;
	if (o->pod_interval_ms < o->sample_interval_ms)
		o->pod_interval_ms = o->sample_interval_ms;
	if (o->report_interval_ms < o->sample_interval_ms) {
		snprintf(err, errlen,
			 "--report-interval %llums: shorter than --sample-interval %llums",
			 (unsigned long long)o->report_interval_ms,
			 (unsigned long long)o->sample_interval_ms);
		return -EINVAL;
	}
	return 0;
}
