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

static int set_health_listen(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	if (hostport_parse(v, o->health_addr, sizeof(o->health_addr), &o->health_port)) {
		snprintf(why, len, "expected ADDR:PORT, e.g. 0.0.0.0:8471 or [::]:8471");
		return -EINVAL;
	}
	return 0;
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

static int set_filter_hold(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->filter.hold_ms, v, 0, 24ULL * 3600 * 1000, why, len);
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

static int set_per_client(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_count(&OPTS(ctx)->connections_per_client, v, 256, why, len);
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

	if (cli_set_duration(&ms, v, 1000, 24ULL * 3600 * 1000, why, len))
		return -EINVAL;
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

static int set_prom_refresh(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->prom.refresh_ms, v, 100, 3600 * 1000, why, len);
}

static int set_prom_timeout(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->prom.timeout_ms, v, 10, 60 * 1000, why, len);
}

static int set_prom_connect_timeout(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->prom.connect_timeout_ms, v, 10, 60 * 1000, why, len);
}

static int set_prom_token_file(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	return cli_set_string(p->token_file, sizeof(p->token_file), v, why, len);
}

static int set_prom_ca_file(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	return cli_set_string(p->ca_file, sizeof(p->ca_file), v, why, len);
}

static int set_prom_insecure(void *ctx, const char *v, char *why, size_t len)
{
	struct prom_config *p = &OPTS(ctx)->prom;

	if (strcmp(v, "true") == 0)
		p->insecure = true;
	else if (strcmp(v, "false") == 0)
		p->insecure = false;
	else {
		snprintf(why, len, "expected true or false");
		return -EINVAL;
	}
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

static int set_inflight_penalty(void *ctx, const char *v, char *why, size_t len)
{
	return set_bits_rate(&OPTS(ctx)->inflight_penalty_bps, v, why, len);
}

static int set_inflight_hold(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->inflight_hold_ms, v, 0, 3600 * 1000, why, len);
}

static int set_inflight_fade(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->inflight_fade_ms, v, 0, 3600 * 1000, why, len);
}

static int set_inflight_expire(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_duration(&OPTS(ctx)->inflight_expire_ms, v, 100, 3600 * 1000, why, len);
}

static int set_kubeconfig(void *ctx, const char *v, char *why, size_t len)
{
	return cli_set_string(OPTS(ctx)->kubeconfig, sizeof(OPTS(ctx)->kubeconfig), v, why, len);
}

static int set_pod_watch(void *ctx, const char *v, char *why, size_t len)
{
	if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0)
		OPTS(ctx)->pod_watch = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0)
		OPTS(ctx)->pod_watch = false;
	else {
		snprintf(why, len, "\"%s\" is not on or off", v);
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

static int set_key_file(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	return cli_set_string(o->key_file, sizeof(o->key_file), v, why, len);
}

static int set_listen_cert_key(void *ctx, const char *v, char *why, size_t len)
{
	struct scorer_options *o = OPTS(ctx);

	return cli_set_string(o->listen_cert_key, sizeof(o->listen_cert_key), v, why, len);
}

static int set_tls_cert(void *ctx, const char *v, char *why, size_t len)
{
	struct tls_files *t = &OPTS(ctx)->tls;

	return cli_set_string(t->cert, sizeof(t->cert), v, why, len);
}

static int set_tls_key(void *ctx, const char *v, char *why, size_t len)
{
	struct tls_files *t = &OPTS(ctx)->tls;

	return cli_set_string(t->key, sizeof(t->key), v, why, len);
}

static int set_tls_client_ca(void *ctx, const char *v, char *why, size_t len)
{
	struct tls_files *t = &OPTS(ctx)->tls;

	return cli_set_string(t->client_ca, sizeof(t->client_ca), v, why, len);
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
	{ "health-listen", CLI_VALUE, set_health_listen,
	  "ADDR:PORT plain HTTP, /healthz and /readyz only, for probes under HTTPS (off)" },
	{ "policy", CLI_VALUE, set_policy, "NAME  relative | utilization | pressure (relative)" },
	{ "direction", CLI_VALUE, set_direction, "DIR   rx | tx | both | max (rx)" },
	{ "drop-threshold", CLI_VALUE, set_drop_threshold,
	  "N    pressure: a node dropping over N packets/s scores 0; 0 = any, off = never (10)" },
	{ "max-utilization", CLI_VALUE, set_max_utilization,
	  "PCT  filter out nodes above this share of their link, e.g. 80% (off)" },
	{ "filter-margin", CLI_VALUE, set_filter_margin,
	  "PCT  a node over --max-utilization passes again at or below it minus this (10)" },
	{ "filter-hold", CLI_VALUE, set_filter_hold,
	  "DUR  ... and after being filtered at least this long (30s)" },
	{ "bandwidth-filter", CLI_VALUE, set_bandwidth_filter,
	  "on|off  honour the pod's kubernetes.io/*-bandwidth annotations (on)" },
	{ "stale-after", CLI_VALUE, set_stale, "DUR   a node's report is ignored after this (6s)" },
	{ "max-nodes", CLI_VALUE, set_max_nodes, "N     nodes tracked at most (10000)" },
	{ "max-body", CLI_VALUE, set_max_body, "SIZE  largest extender request body (32Mi)" },
	{ "max-request-nodes", CLI_VALUE, set_max_request_nodes, "N     nodes in one request at most (10000)" },
	{ "connections-per-client", CLI_VALUE, set_per_client,
	  "N     HTTP connections one client address may hold (32)" },
	{ "log-level", CLI_VALUE, set_log_level, "LEVEL error | warn | info | debug (info)" },
	{ "listen-cert-key", CLI_VALUE, set_listen_cert_key,
	  "FILE  PEM certificate and key for a tls+tcp:// --listen" },
	{ "tls-cert", CLI_VALUE, set_tls_cert, "FILE  serve HTTPS with this PEM certificate (chain)" },
	{ "tls-key", CLI_VALUE, set_tls_key, "FILE  its PEM private key" },
	{ "tls-client-ca", CLI_VALUE, set_tls_client_ca,
	  "FILE  require client certificates signed by this CA (mTLS)" },
	{ "inflight-estimate", CLI_VALUE, set_inflight_estimate,
	  "BW   what a just-placed pod without a bandwidth annotation adds, per direction (0)" },
	{ "inflight-penalty", CLI_VALUE, set_inflight_penalty,
	  "BW   what every just-placed pod adds besides, so bursts spread (10M)" },
	{ "inflight-hold", CLI_VALUE, set_inflight_hold,
	  "DUR  a bound pod weighs fully this long: start-up + the agents' --window (70s)" },
	{ "inflight-fade", CLI_VALUE, set_inflight_fade, "DUR  then fades to nothing over this (60s)" },
	{ "inflight-expire", CLI_VALUE, set_inflight_expire,
	  "DUR  with a pod watch, an assumption never bound is dropped after this (30s)" },
	{ "inflight-max-pods", CLI_VALUE, set_inflight_max_pods,
	  "N     pods counted in flight at most; 0 = off (10000)" },
	{ "pod-watch", CLI_VALUE, set_pod_watch,
	  "on|off  confirm in-flight pods from the apiserver: in a pod its ServiceAccount, "
	  "else --kubeconfig (on)" },
	{ "kubeconfig", CLI_VALUE, set_kubeconfig,
	  "FILE  reach the apiserver with this kubeconfig (outside a cluster)" },
	{ "key-file", CLI_VALUE, set_key_file,
	  "FILE  accept only reports signed with a key in this file (a Secret)" },
	{ "prometheus", CLI_VALUE, set_prometheus, "URL   optional fallback for silent agents" },
	{ "prometheus-preset", CLI_VALUE, set_prom_preset,
	  "NAME  kube-prometheus | go-plugin | node-uname (kube-prometheus)" },
	{ "prometheus-query", CLI_VALUE, set_prom_query,
	  "PROMQL  custom: $metric, $device, $range replaced; by prometheus-node-label" },
	{ "prometheus-node-label", CLI_VALUE, set_prom_node_label,
	  "LABEL  the node label of a custom query (instance)" },
	{ "prometheus-device", CLI_VALUE, set_prom_device,
	  "REGEX  node_exporter devices to count (eth[0-9]+|en[a-z0-9]+|bond[0-9]+)" },
	{ "prometheus-range", CLI_VALUE, set_prom_range,
	  "DUR  rate() range, at least 4 scrape intervals (1m)" },
	{ "prometheus-function", CLI_VALUE, set_prom_function, "rate|irate  (rate)" },
	{ "prometheus-refresh", CLI_VALUE, set_prom_refresh, "DUR  between queries (15s)" },
	{ "prometheus-timeout", CLI_VALUE, set_prom_timeout, "DUR  whole request deadline (2s)" },
	{ "prometheus-connect-timeout", CLI_VALUE, set_prom_connect_timeout,
	  "DUR  connect deadline (500ms)" },
	{ "prometheus-token-file", CLI_VALUE, set_prom_token_file,
	  "FILE  bearer token, re-read every query" },
	{ "prometheus-ca-file", CLI_VALUE, set_prom_ca_file, "FILE  CA bundle for https" },
	{ "prometheus-insecure-skip-verify", CLI_VALUE, set_prom_insecure,
	  "true|false  skip TLS verification (false)" },
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
	o->max_drops_per_second = POLICY_DEFAULT_DROP_THRESHOLD;
	o->filter.bandwidth = true;
	o->filter.margin_pct = FILTER_DEFAULT_MARGIN_PCT;
	o->filter.hold_ms = FILTER_DEFAULT_HOLD_MS;
	o->stale_after_ms = 6000;
	o->max_tracked_nodes = SCORER_DEFAULT_MAX_TRACKED_NODES;
	o->max_body_bytes = SCORER_DEFAULT_MAX_BODY_BYTES;
	o->max_request_nodes = SCORER_DEFAULT_MAX_NODES;
	o->connections_per_client = SCORER_DEFAULT_CONNECTIONS_PER_CLIENT;
	o->log_level = LOG_LVL_INFO;
	o->prom.query.preset = PROMQUERY_KUBE_PROMETHEUS;
	strcpy(o->prom.query.device, "eth[0-9]+|en[a-z0-9]+|bond[0-9]+");
	strcpy(o->prom.query.range, "1m");
	strcpy(o->prom.query.node_label, "instance");
	o->prom.refresh_ms = 15000;
	o->prom.timeout_ms = 2000;
	o->prom.connect_timeout_ms = 500;
	o->inflight_max_pods = 10000;
	o->inflight_estimate_bps = 0;
	o->inflight_penalty_bps = 10000000;
	o->inflight_hold_ms = 70000;
	o->inflight_fade_ms = 60000;
	o->inflight_expire_ms = 30000;
	o->pod_watch = true;
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
	if (o->tls.client_ca[0] && !o->tls.cert[0]) {
		snprintf(err, errlen, "--tls-client-ca: client certificates need HTTPS "
			 "(--tls-cert and --tls-key)");
		return -EINVAL;
	}
	return 0;
}
