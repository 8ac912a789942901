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

static int set_sample_interval(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&((struct agent_options *)ctx)->sample_interval_ms, v, 100,
				MAX_DURATION_MS, why, len);
}

static int set_window(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&((struct agent_options *)ctx)->window_ms, v, 100,
				MAX_DURATION_MS, why, len);
}

static int set_report_interval(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&((struct agent_options *)ctx)->report_interval_ms, v, 100,
				MAX_DURATION_MS, why, len);
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

static int set_scorer_ca(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	return cli_set_string(o->scorer_ca, sizeof(o->scorer_ca), v, why, len);
}

static int set_key_file(void *ctx, const char *v, char *why, size_t len)
{
	struct agent_options *o = ctx;

	return cli_set_string(o->key_file, sizeof(o->key_file), v, why, len);
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

static int set_once(void *ctx, const char *v, char *why, size_t len)
{
	(void)v, (void)why, (void)len;
	((struct agent_options *)ctx)->once = true;
	return 0;
}

static int set_check_config(void *ctx, const char *v, char *why, size_t len)
{
	(void)v, (void)why, (void)len;
	((struct agent_options *)ctx)->check_config = true;
	return 0;
}

static int set_help(void *ctx, const char *v, char *why, size_t len)
{
	(void)v, (void)why, (void)len;
	((struct agent_options *)ctx)->help = true;
	return 0;
}

static const struct cli_opt opts[] = {
	{ "node", CLI_VALUE, set_node, "NAME  this node's name ($NODE_NAME, then the host name)" },
	{ "interfaces", CLI_VALUE, set_interfaces, "LIST  auto | names | globs, e.g. auto,eth1 or "
						     "ens* (auto)" },
	{ "exclude-interfaces", CLI_VALUE, set_exclude, "LIST  globs never measured, e.g. "
							"ens9*" },
	{ "scorer", CLI_VALUE, set_scorer, "URL  where to send reports, repeatable "
					     "(tcp://netsched-scorer:7470)" },
	{ "sample-interval", CLI_VALUE, set_sample_interval, "DUR  between counter readings (1s)" },
	{ "window", CLI_VALUE, set_window, "DUR  span of each report (60s)" },
	{ "report-interval", CLI_VALUE, set_report_interval, "DUR  between reports (2s)" },
	{ "source", CLI_VALUE, set_source, "NAME  netlink | sysfs (netlink, sysfs if it fails)" },
	{ "netns", CLI_VALUE, set_netns, "NAME|PATH  read the counters of this network namespace" },
	{ "link-speed", CLI_VALUE, set_link_speed, "IF=SPEED  link speed in bit/s, repeatable "
						     "(ens192=10G)" },
	{ "scorer-ca", CLI_VALUE, set_scorer_ca, "FILE  CA that tls+tcp:// scorers' certificates "
						   "chain to" },
	{ "key-file", CLI_VALUE, set_key_file, "FILE  sign reports with the first key in this file" },
	{ "metrics", CLI_VALUE, set_metrics, "ADDR:PORT  serve /metrics and /healthz (off)" },
	{ "log-level", CLI_VALUE, set_log_level, "LEVEL  error | warn | info | debug (info)" },
	{ "once", CLI_FLAG, set_once, "  sample over one interval, print one JSON report, exit" },
	{ "check-config", CLI_FLAG, set_check_config, "  check the options, print "
						       "\"configuration OK\"" },
	{ "help", CLI_FLAG, set_help, "  this text" },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void agent_options_defaults(struct agent_options *o)
{
	memset(o, 0, sizeof(*o));
	o->sample_interval_ms = 1000;
	o->window_ms = 60000;
	o->report_interval_ms = 2000;
	o->log_level = LOG_LVL_INFO;
	o->interfaces.is_auto = true;
	o->source = SAMPLER_NETLINK;
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
			snprintf(err, errlen, "$NODE_NAME %.64s: %s", env, why);
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
	if (o->report_interval_ms < o->sample_interval_ms) {
		snprintf(err, errlen,
			 "--report-interval %llums: shorter than --sample-interval %llums",
			 (unsigned long long)o->report_interval_ms,
			 (unsigned long long)o->sample_interval_ms);
		return -EINVAL;
	}
	return 0;
}
