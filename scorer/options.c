#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hostport.h"
#include "scorer.h"
#include "units.h"

/* Handlers get the options as ctx; this names it. */
#define OPTS(ctx) ((struct scorer_options *)(ctx))

static int set_listen(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (strncmp(v, "tcp://", 6) && strncmp(v, "ipc://", 6) && strncmp(v, "tls+tcp://", 10)) {
		snprintf(why, len, "expected tcp://ADDR:PORT or ipc://PATH");
		return -EINVAL;
	}
	return cli_set_string(o->listen, sizeof(o->listen), v, why, len);
}

static int set_http(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (hostport_parse(v, o->http_addr, sizeof(o->http_addr), &o->http_port)) {
		snprintf(why, len, "expected ADDR:PORT, e.g. 0.0.0.0:8470 or [::]:8470");
		return -EINVAL;
	}
	return 0;
}

static int set_policy(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (policy_parse_kind(v, &o->policy)) {
		snprintf(why, len, "expected relative or utilization");
		return -EINVAL;
	}
	return 0;
}

static int set_direction(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (policy_parse_direction(v, &o->direction)) {
		snprintf(why, len, "expected rx, tx, both or max");
		return -EINVAL;
	}
	return 0;
}

static int set_max_utilization(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);
	size_t n = strlen(v);
	char digits[8];
	uint64_t pct;

	/* "80" or "80%"; 0 or "off" turns the rule off. */
	if (strcmp(v, "off") == 0) {
		o->filter.max_utilization_pct = 0;
		return 0;
	}
	if (n && v[n - 1] == '%')
		n--;
	if (n == 0 || n >= sizeof(digits))
		goto bad;
	memcpy(digits, v, n);
	digits[n] = '\0';
	if (units_parse_u64(digits, 100, &pct))
		goto bad;
	o->filter.max_utilization_pct = (unsigned)pct;
	return 0;
bad:
	snprintf(why, len, "expected a percentage of the link from 1 to 100, such as 80%%, or off");
	return -EINVAL;
}

static int set_bandwidth_filter(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0)
		o->filter.bandwidth = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0)
		o->filter.bandwidth = false;
	else {
		snprintf(why, len, "expected on or off");
		return -EINVAL;
	}
	return 0;
}

static int set_stale(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->stale_after_ms, v, 100, 24ULL * 3600 * 1000, why, len);
}

static int set_max_nodes(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_count(&OPTS(ctx)->max_tracked_nodes, v, 1000000, why, len);
}

static int set_max_request_nodes(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_count(&OPTS(ctx)->max_request_nodes, v, 1000000, why, len);
}

static int set_max_body(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);
	uint64_t n;

	if (units_parse_quantity(v, &n) || n < 1024 || n > (1ULL << 30)) {
		snprintf(why, len, "expected a size from 1Ki to 1Gi, such as 32Mi");
		return -EINVAL;
	}
	o->max_body_bytes = n;
	return 0;
}

static int set_log_level(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (log_parse_level(v, &o->log_level)) {
		snprintf(why, len, "expected error, warn, info or debug");
		return -EINVAL;
	}
	return 0;
}

static int set_prometheus(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) {
		snprintf(why, len, "expected an http:// or https:// URL");
		return -EINVAL;
	}
	return cli_set_string(o->prometheus, sizeof(o->prometheus), v, why, len);
}

static int set_network_interface(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	return cli_set_string(o->network_interface, sizeof(o->network_interface), v, why, len);
}

static int set_time_range(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_count(&OPTS(ctx)->time_range_minutes, v, 1440, why, len);
}

static int set_check_config(void *ctx, const char *v, char *why, size_t len)
{
	(void)v;
	(void)why;
	(void)len;
	OPTS(ctx)->check_config = true;
	return 0;
}

static int set_help(void *ctx, const char *v, char *why, size_t len)
{
	(void)v;
	(void)why;
	(void)len;
	OPTS(ctx)->help = true;
	return 0;
}

static const struct cli_opt opts[] = {
	{ "listen", CLI_VALUE, set_listen, "URL   where agents send reports (tcp://0.0.0.0:7470)" },
	{ "http", CLI_VALUE, set_http, "ADDR:PORT extender and status HTTP (0.0.0.0:8470)" },
	{ "policy", CLI_VALUE, set_policy, "NAME  relative | utilization (relative)" },
	{ "direction", CLI_VALUE, set_direction, "DIR   rx | tx | both | max (rx)" },
	{ "max-utilization", CLI_VALUE, set_max_utilization,
	  "PCT  filter out nodes above this share of their link, e.g. 80% (off)" },
	{ "bandwidth-filter", CLI_VALUE, set_bandwidth_filter,
	  "on|off  honour the pod's kubernetes.io/*-bandwidth annotations (on)" },
	{ "stale-after", CLI_VALUE, set_stale, "DUR   a node's report is ignored after this (6s)" },
	{ "max-nodes", CLI_VALUE, set_max_nodes, "N     nodes tracked at most (10000)" },
	{ "max-body", CLI_VALUE, set_max_body, "SIZE  largest extender request body (32Mi)" },
	{ "max-request-nodes", CLI_VALUE, set_max_request_nodes, "N     nodes in one request at most (10000)" },
	{ "log-level", CLI_VALUE, set_log_level, "LEVEL error | warn | info | debug (info)" },
	{ "prometheus", CLI_VALUE, set_prometheus, "URL   optional fallback for silent agents" },
	{ "check-config", CLI_FLAG, set_check_config, "      validate the options, print \"configuration OK\"" },
	{ "help", CLI_FLAG, set_help, "      print this help" },
	/* The Go plugin's names, in files only. */
	{ "prometheusAddress", CLI_FILE_ONLY, set_prometheus, NULL },
	{ "networkInterface", CLI_FILE_ONLY, set_network_interface, NULL },
	{ "timeRangeInMinutes", CLI_FILE_ONLY, set_time_range, NULL },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void scorer_options_defaults(struct scorer_options *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->listen, "tcp://0.0.0.0:7470");
	strcpy(o->http_addr, "0.0.0.0");
	o->http_port = 8470;
	o->policy = POLICY_RELATIVE;
	o->direction = POLICY_DIR_RX;
	o->filter.bandwidth = true;
	o->stale_after_ms = 6000;
	o->max_tracked_nodes = SCORER_DEFAULT_MAX_TRACKED_NODES;
	o->max_body_bytes = SCORER_DEFAULT_MAX_BODY_BYTES;
	o->max_request_nodes = SCORER_DEFAULT_MAX_NODES;
	o->log_level = LOG_LVL_INFO;
	strcpy(o->network_interface, "ens192");
	o->time_range_minutes = 5;
}

void scorer_options_usage(FILE *f)
{
	cli_usage(f, "netsched-scorer", opts, N_OPTS);
}

int scorer_options_parse(struct scorer_options *o, int argc, char **argv, char *err, size_t errlen)
{
	return cli_parse(opts, N_OPTS, o, argc, argv, err, errlen);
}
