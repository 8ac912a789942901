#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hostport.h"
#include "units.h"

#define HOUR_MS (3600ULL * 1000)
#define DAY_MS (24 * HOUR_MS)

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

static int set_health_listen(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (hostport_parse(v, o->health_addr, sizeof(o->health_addr), &o->health_port)) {
		snprintf(why, len, "expected ADDR:PORT, e.g. 0.0.0.0:8471 or [::]:8471");
		return -EINVAL;
	}
	return 0;
}

static int set_client_names(void *ctx, const char *v, char *why, size_t len)
{
	return tls_client_names_parse(v, &OPTS(ctx)->tls.client_names, why, len);
}

static int set_policy(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (policy_parse_kind(v, &o->policy)) {
		snprintf(why, len, "expected relative, utilization or pressure");
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

static int set_prioritize_reply(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (strcmp(v, "full") && strcmp(v, "compact")) {
		snprintf(why, len, "expected full or compact");
		return -EINVAL;
	}
	o->compact_scores = !strcmp(v, "compact");
	return 0;
}

static int set_drop_threshold(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (strcmp(v, "off") == 0) {
		o->max_drops_per_second = POLICY_DROPS_IGNORED;
		return 0;
	}
	if (units_parse_u64(v, 1000000000, &o->max_drops_per_second)) {
		snprintf(why, len, "expected packets a second from 0 (any drop) to 1000000000, or off");
		return -EINVAL;
	}
	return 0;
}

/* "80" or "80%" from 0 to 100 into *out; "off" is 0. 0 or -EINVAL. */
static int parse_pct(const char *v, unsigned *out)
{
	size_t n = strlen(v);
	char digits[8];
	uint64_t pct;

	if (strcmp(v, "off") == 0) {
		*out = 0;
		return 0;
	}
	if (n && v[n - 1] == '%')
		n--;
	if (n == 0 || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, v, n);
	digits[n] = '\0';
	if (units_parse_u64(digits, 100, &pct))
		return -EINVAL;
	*out = (unsigned)pct;
	return 0;
}

static int set_max_utilization(void *ctx, const char *v, char *why, size_t len)
{
	/* 0 or "off" turns the rule off. */
	if (parse_pct(v, &OPTS(ctx)->filter.max_utilization_pct)) {
		snprintf(why, len, "expected a percentage of the link from 1 to 100, such as 80%%, "
			 "or off");
		return -EINVAL;
	}
	return 0;
}

static int set_filter_margin(void *ctx, const char *v, char *why, size_t len)
{
	uint64_t pct;

	if (units_parse_u64(v, 100, &pct)) {
		snprintf(why, len, "expected percentage points of the link from 0 to 100, such as 10");
		return -EINVAL;
	}
	OPTS(ctx)->filter.margin_pct = (unsigned)pct;
	return 0;
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
	return cli_set_string(o->prom.url, sizeof(o->prom.url), v, why, len);
}

static int set_prom_string(char *dst, size_t cap, const char *v, char *why, size_t len)
{
	if (!promquery_safe(v, cap - 1)) {
		snprintf(why, len, "1-%zu bytes without quotes, backslashes or control characters",
			 cap - 1);
		return -EINVAL;
	}
	return cli_set_string(dst, cap, v, why, len);
}

/* networkInterface (the Go plugin's): one exact device name. */
static int set_network_interface(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	for (const char *c = v; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_')) {
			snprintf(why, len, "expected an interface name such as ens192 (use "
				 "prometheus-device for a regex)");
			return -EINVAL;
		}
	return set_prom_string(p->query.device, sizeof(p->query.device), v, why, len);
}

static int set_prom_device(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	return set_prom_string(p->query.device, sizeof(p->query.device), v, why, len);
}

static int set_time_range(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;
	uint64_t minutes;

	if (cli_set_count(&minutes, v, 1440, why, len))
		return -EINVAL;
	snprintf(p->query.range, sizeof(p->query.range), "%um", (unsigned)minutes);
	return 0;
}

static int set_prom_range(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;
	uint64_t ms;

	if (cli_set_duration(&ms, v, 1000, DAY_MS, why, len))
		return -EINVAL;
	/* Whole seconds, in minutes where they are whole (the default reads 1m). */
	if (ms % 60000 == 0)
		snprintf(p->query.range, sizeof(p->query.range), "%um", (unsigned)(ms / 60000));
	else
		snprintf(p->query.range, sizeof(p->query.range), "%us", (unsigned)(ms / 1000));
	return 0;
}

static int set_prom_preset(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	if (promquery_parse_preset(v, &p->query.preset) || p->query.preset == PROMQUERY_CUSTOM) {
		snprintf(why, len, "expected kube-prometheus, go-plugin or node-uname (or give "
			 "prometheus-query)");
		return -EINVAL;
	}
	return 0;
}

static int set_prom_query(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	if (!strstr(v, "$metric")) {
		snprintf(why, len, "must contain $metric (run for the receive and the transmit "
			 "counter), e.g. sum by (node) (rate($metric{device=~\"$device\"}[$range]))");
		return -EINVAL;
	}
	if (strstr(v, "sum_over_time")) {
		snprintf(why, len, "sum_over_time of a counter ranks nodes by traffic since boot; "
			 "use rate() or irate()");
		return -EINVAL;
	}
	p->query.preset = PROMQUERY_CUSTOM;
	return cli_set_string(p->query.custom, sizeof(p->query.custom), v, why, len);
}

static int set_prom_node_label(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	return set_prom_string(p->query.node_label, sizeof(p->query.node_label), v, why, len);
}

static int set_prom_function(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	if (strcmp(v, "rate") && strcmp(v, "irate")) {
		snprintf(why, len, "expected rate or irate");
		return -EINVAL;
	}
	p->query.irate = strcmp(v, "irate") == 0;
	return 0;
}

static int set_bits_rate(uint64_t *dst, const char *v, char *why, size_t len)
{
	uint64_t n;

	/* 1 Tb/s per pod is more than any NIC carries: a typo, not a weight. */
	if (units_parse_quantity(v, &n) || n > 1000000000000ULL) {
		snprintf(why, len, "expected bits per second from 0 to 1T, such as 10M or 1G");
		return -EINVAL;
	}
	*dst = n;
	return 0;
}

static int set_inflight_estimate(void *ctx, const char *v, char *why, size_t len)
{
	return set_bits_rate(&OPTS(ctx)->inflight_estimate_bps, v, why, len);
}

/* A share of the node's free link, "10%" or "10"; 0 or off: no doubt. A
 * rate ("10M", the old form) is refused: it vanishes on fast links. */
static int set_inflight_penalty(void *ctx, const char *v, char *why, size_t len)
{
	if (parse_pct(v, &OPTS(ctx)->inflight_penalty_pct)) {
		snprintf(why, len, "expected a share of the node's free link from 0 to 100, such as "
			 "10%%, or off (a rate such as 10M is no longer taken: it vanishes on fast "
			 "links)");
		return -EINVAL;
	}
	return 0;
}

static int set_inflight_max_pods(void *ctx, const char *v, char *why, size_t len)
{
	/* 0 is allowed here: it turns in-flight counting off. */
	if (units_parse_u64(v, 1000000, &OPTS(ctx)->inflight_max_pods)) {
		snprintf(why, len, "expected a count from 0 (off) to 1000000");
		return -EINVAL;
	}
	return 0;
}

/* Where a typed option's value goes. */
#define AT(field) .offset = offsetof(struct scorer_options, field), \
		  .size = sizeof(((struct scorer_options *)0)->field)

/* Every option once: its value, what it does and its default. */
static const struct cli_opt opts[] = {
	{ .name = "listen", .kind = CLI_VALUE, .arg = "URL", .set = set_listen,
	  .help = "where agents send reports", .def = "tcp://0.0.0.0:7470" },
	{ .name = "http", .kind = CLI_VALUE, .arg = "ADDR:PORT", .set = set_http,
	  .help = "extender and status HTTP", .def = "0.0.0.0:8470" },
	{ .name = "health-listen", .kind = CLI_VALUE, .arg = "ADDR:PORT", .set = set_health_listen,
	  .help = "plain HTTP, read-only: /healthz, /readyz, /metrics, /v1/nodes, "
		  "/v1/workloads (then not on --http); "
		  "off unless given" },
	{ .name = "policy", .kind = CLI_VALUE, .arg = "NAME", .set = set_policy,
	  .help = "relative | utilization | pressure", .def = "relative" },
	{ .name = "direction", .kind = CLI_VALUE, .arg = "DIR", .set = set_direction,
	  .help = "fit: each direction against what the pod moves that way; rx | tx | both | max: "
		  "every pod by that figure of the node (the Go plugin's view)", .def = "fit" },
	/* The scheduler decodes every entry of a prioritize reply; a uniform
	 * offset changes no choice it makes, and a host left out scores 0. */
	{ .name = "prioritize-reply", .kind = CLI_VALUE, .arg = "FORM", .set = set_prioritize_reply,
	  .help = "full: every host and its score; compact: scores less the lowest, hosts at 0 left "
		  "out (the same choices, less for the scheduler to read)", .def = "full" },
	/* What a NIC counts without any load (frames for an unknown VLAN or
	 * protocol, an active-backup bond's idle port) is far below 10 packets
	 * a second; a queue that overflows drops thousands. */
	{ .name = "drop-threshold", .kind = CLI_VALUE, .arg = "N", .set = set_drop_threshold,
	  .help = "pressure: a node dropping over N packets/s scores 0; 0 = any, off = never",
	  .def = "10" },
	{ .name = "max-utilization", .kind = CLI_VALUE, .arg = "PCT", .set = set_max_utilization,
	  .help = "filter out nodes above this share of their link, e.g. 80%", .def = "off" },
	{ .name = "filter-margin", .kind = CLI_VALUE, .arg = "PCT", .set = set_filter_margin,
	  .help = "a node over --max-utilization passes again at or below it minus this",
	  .def = "10" },
	{ .name = "filter-hold", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(filter.hold_ms), .min = 0, .max = DAY_MS,
	  .help = "... and after being filtered at least this long", .def = "30s" },
	{ .name = "bandwidth-filter", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH,
	  AT(filter.bandwidth), .help = "honour the pod's kubernetes.io/*-bandwidth annotations",
	  .def = "on" },
	{ .name = "stale-after", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(stale_after_ms), .min = 100, .max = DAY_MS,
	  .help = "a node's report is ignored after this", .def = "6s" },
	{ .name = "max-nodes", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(max_tracked_nodes), .max = 1000000, .help = "nodes tracked at most", .def = "10000" },
	{ .name = "max-body", .kind = CLI_VALUE, .arg = "SIZE", .set = set_max_body,
	  .help = "largest extender request body", .def = "32Mi" },
	{ .name = "max-request-nodes", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(max_request_nodes), .max = 1000000, .help = "nodes in one request at most",
	  .def = "10000" },
	{ .name = "connections-per-client", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(connections_per_client), .max = 256,
	  .help = "HTTP connections one client address may hold",
	  .def = "32" },
	{ .name = "log-level", .kind = CLI_VALUE, .arg = "LEVEL", .set = set_log_level,
	  .help = "error | warn | info | debug", .def = "info" },
	{ .name = "listen-cert-key", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(listen_cert_key), .help = "PEM certificate and key for a tls+tcp:// --listen" },
	{ .name = "tls-cert", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(tls.cert),
	  .help = "serve HTTPS with this PEM certificate (chain)" },
	{ .name = "tls-key", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(tls.key),
	  .help = "its PEM private key" },
	{ .name = "tls-client-ca", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(tls.client_ca), .help = "require client certificates signed by this CA (mTLS)" },
	/* A CA signs whatever it is asked to: the name is what says the
	 * holder is the scheduler. The default is the name deploy/ issues. */
	{ .name = "client-names", .kind = CLI_VALUE, .arg = "LIST", .set = set_client_names,
	  .help = "with --tls-client-ca: answer only certificates whose CN or a DNS name is in this "
		  "comma-separated list", .def = "netsched-scheduler" },
	{ .name = "inflight-estimate", .kind = CLI_VALUE, .arg = "BW", .set = set_inflight_estimate,
	  .help = "what a just-placed pod of unknown demand weighs, per direction; 0 = the "
		  "cluster's measured average per running pod", .def = "0" },
	/* One step of the 0..10 score: see scorer/pods/podweight.h. */
	{ .name = "inflight-penalty", .kind = CLI_VALUE, .arg = "PCT", .set = set_inflight_penalty,
	  .help = "share of its node's free link a just-placed pod of unknown demand takes besides",
	  .def = "10%" },
	{ .name = "inflight-hold", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(inflight_hold_ms), .min = 0, .max = HOUR_MS,
	  .help = "a bound pod weighs fully this long: start-up + the agents' --window",
	  .def = "70s" },
	{ .name = "inflight-fade", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(inflight_fade_ms), .min = 0, .max = HOUR_MS, .help = "then fades to nothing over this",
	  .def = "60s" },
	{ .name = "inflight-expire", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(inflight_expire_ms), .min = 100, .max = HOUR_MS,
	  .help = "with a pod watch, an assumption never bound is dropped after this", .def = "30s" },
	/* Longer than a burst's image pulls on a warm node, shorter than the
	 * hold: inflight.h, "never starts". */
	{ .name = "inflight-unstarted", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(inflight_unstarted_ms), .min = 1000, .max = HOUR_MS,
	  .help = "a pod bound this long that has not started weighs nothing until it does",
	  .def = "25s" },
	{ .name = "inflight-max-pods", .kind = CLI_VALUE, .arg = "N", .set = set_inflight_max_pods,
	  .help = "pods counted in flight at most; 0 = off", .def = "10000" },
	{ .name = "pod-watch", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH, AT(pod_watch),
	  .help = "confirm in-flight pods from the apiserver: in a pod its ServiceAccount, else "
		  "--kubeconfig", .def = "on" },
	{ .name = "kubeconfig", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(kubeconfig),
	  .help = "reach the apiserver with this kubeconfig (outside a cluster)" },
	/* Kubernetes supports 150,000 pods in a cluster. */
	{ .name = "max-pods", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT, AT(max_pods),
	  .max = 16000000, .help = "pods the pod watch indexes to join their traffic",
	  .def = "150000" },
	{ .name = "max-workloads", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(max_workloads), .max = 50000, .help = "workloads whose demand is learned at most",
	  .def = "10000" },
	/* MOVES_MAX_MAX (moves.h): a move is ~1.1 KB. */
	{ .name = "moves-max", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT, AT(moves_max),
	  .max = 65536, .help = "moves the rebalancer may announce at once (POST /v1/moves): each "
	  "holds its pod's workload off its node and reserves room on the other", .def = "4096" },
	{ .name = "workload-half-life", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(workload_half_life_ms), .min = 1000, .max = DAY_MS,
	  .help = "a pod's measurement weighs half as much after this", .def = "10m" },
	{ .name = "fit-filter", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH,
	  AT(fit_filter), .help = "leave out the nodes a pod of declared or learned demand would "
	  "push over their link, while another node has room for it", .def = "on" },
	{ .name = "learned-filter", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH,
	  AT(learned_filter), .help = "the bandwidth filter holds a pod that declares nothing to "
	  "its workload's learned demand", .def = "off" },
	{ .name = "key-file", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(key_file),
	  .help = "accept only reports signed with a key in this file (a Secret): each node's own, "
		  "derived from its master keys, or (weaker) shared keys" },
	{ .name = "derive-node-key", .kind = CLI_VALUE, .arg = "NODE", .type = CLI_STRING,
	  AT(derive_node_key), .help = "print NODE's own report key file, derived from the master "
	  "key in --key-file, and exit (a provisioning step puts it on that node)" },
	{ .name = "prometheus", .kind = CLI_VALUE, .arg = "URL", .set = set_prometheus,
	  .help = "optional fallback for silent agents" },
	{ .name = "prometheus-preset", .kind = CLI_VALUE, .arg = "NAME", .set = set_prom_preset,
	  .help = "kube-prometheus | go-plugin | node-uname", .def = "kube-prometheus" },
	{ .name = "prometheus-query", .kind = CLI_VALUE, .arg = "PROMQL", .set = set_prom_query,
	  .help = "custom: $metric, $device, $range replaced; by prometheus-node-label" },
	{ .name = "prometheus-node-label", .kind = CLI_VALUE, .arg = "LABEL",
	  .set = set_prom_node_label, .help = "the node label of a custom query", .def = "instance" },
	{ .name = "prometheus-device", .kind = CLI_VALUE, .arg = "REGEX", .set = set_prom_device,
	  .help = "node_exporter devices to count", .def = "eth[0-9]+|en[a-z0-9]+|bond[0-9]+" },
	{ .name = "prometheus-range", .kind = CLI_VALUE, .arg = "DUR", .set = set_prom_range,
	  .help = "rate() range, at least 4 scrape intervals", .def = "1m" },
	{ .name = "prometheus-function", .kind = CLI_VALUE, .arg = "rate|irate",
	  .set = set_prom_function, .help = "rate() or irate()", .def = "rate" },
	{ .name = "prometheus-refresh", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(prom.refresh_ms), .min = 100, .max = HOUR_MS, .help = "between queries", .def = "15s" },
	{ .name = "prometheus-timeout", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(prom.timeout_ms), .min = 10, .max = 60 * 1000, .help = "whole request deadline",
	  .def = "2s" },
	{ .name = "prometheus-connect-timeout", .kind = CLI_VALUE, .arg = "DUR",
	  .type = CLI_DURATION, AT(prom.connect_timeout_ms), .min = 10, .max = 60 * 1000,
	  .help = "connect deadline", .def = "500ms" },
	{ .name = "prometheus-token-file", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(prom.token_file), .help = "bearer token, re-read every query" },
	{ .name = "prometheus-ca-file", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(prom.ca_file), .help = "CA bundle for https" },
	{ .name = "prometheus-insecure-skip-verify", .kind = CLI_VALUE, .arg = "true|false",
	  .type = CLI_SWITCH, AT(prom.insecure), .help = "skip TLS verification", .def = "false" },
	{ .name = "check-config", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(check_config),
	  .help = "validate the options, print \"configuration OK\"" },
	{ .name = "help", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(help), .help = "print this help" },
	/* The Go plugin's names, in files only. */
	{ .name = "prometheusAddress", .kind = CLI_FILE_ONLY, .set = set_prometheus },
	{ .name = "networkInterface", .kind = CLI_FILE_ONLY, .set = set_network_interface },
	{ .name = "timeRangeInMinutes", .kind = CLI_FILE_ONLY, .set = set_time_range },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

int scorer_options_defaults(struct scorer_options *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	return cli_defaults(opts, N_OPTS, o, err, errlen);
}

void scorer_options_usage(FILE *f)
{
	cli_usage(f, "netsched-scorer", opts, N_OPTS);
}

int scorer_options_parse(struct scorer_options *o, int argc, char **argv, char *err, size_t errlen)
{
	if (cli_parse(opts, N_OPTS, o, argc, argv, err, errlen))
		return -EINVAL;
	if (!o->tls.cert[0] != !o->tls.key[0]) {
		snprintf(err, errlen, "--%s: HTTPS needs both --tls-cert and --tls-key",
			 o->tls.cert[0] ? "tls-key" : "tls-cert");
		return -EINVAL;
	}
	if (!strncmp(o->listen, "tls+tcp://", 10) != !!o->listen_cert_key[0]) {
		snprintf(err, errlen, "--listen-cert-key: %s", o->listen_cert_key[0] ?
			 "only for a tls+tcp:// --listen" :
			 "a tls+tcp:// --listen needs a certificate and key (one PEM file)");
		return -EINVAL;
	}
	if (o->derive_node_key[0] && !o->key_file[0]) {
		snprintf(err, errlen, "--derive-node-key: needs --key-file with the master key");
		return -EINVAL;
	}
	if (o->tls.client_ca[0] && !o->tls.cert[0]) {
		snprintf(err, errlen, "--tls-client-ca: client certificates need HTTPS "
			 "(--tls-cert and --tls-key)");
		return -EINVAL;
	}
	return 0;
}
