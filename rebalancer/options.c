/* The rebalancer's options, once each (options.h). */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/hostport.h"
#include "common/nodename.h"

#define OPTS(ctx) ((struct rebal_options *)(ctx))

static int set_scorer(void *ctx, const char *v, char *why, size_t len)
{
	struct rebal_options *o = OPTS(ctx);
	char list[REBAL_URLS_MAX][REBAL_URL_MAX];
	size_t n = 0;
	const char *p = v;

	while (*p) {
		size_t l = strcspn(p, ",");

		if (n == REBAL_URLS_MAX) {
			snprintf(why, len, "more than %u scorers", REBAL_URLS_MAX);
			return -EINVAL;
		}
		if (l == 0 || l >= REBAL_URL_MAX ||
		    (strncmp(p, "http://", 7) && strncmp(p, "https://", 8))) {
			snprintf(why, len, "expected http(s)://HOST:PORT[,...], each under %u bytes",
				 REBAL_URL_MAX);
			return -EINVAL;
		}
		memcpy(list[n], p, l);
		list[n][l] = '\0';
		for (size_t t = l; t > 0 && list[n][t - 1] == '/'; t--)
			list[n][t - 1] = '\0';	/* paths are appended */
		n++;
		p += l + (p[l] == ',');
		if (p[-1] == ',' && !*p) {
			snprintf(why, len, "a trailing comma");
			return -EINVAL;
		}
	}
	if (n == 0) {
		snprintf(why, len, "expected at least one URL");
		return -EINVAL;
	}
	memcpy(o->scorer, list, sizeof(list));
	o->n_scorer = n;
	return 0;
}

static int set_fraction(double *dst, const char *v, double lo, double hi, char *why, size_t len)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi)) {
		snprintf(why, len, "expected a fraction of the link from %.2f to %.2f (0.90 is 90%%)",
			 lo, hi);
		return -EINVAL;
	}
	*dst = d;
	return 0;
}

static int set_hot(void *ctx, const char *v, char *why, size_t len)
{
	return set_fraction(&OPTS(ctx)->decide.hot, v, 0.05, 1.0, why, len);
}

static int set_margin(void *ctx, const char *v, char *why, size_t len)
{
	return set_fraction(&OPTS(ctx)->decide.margin, v, 0.0, 0.95, why, len);
}

static int set_nudge_step(void *ctx, const char *v, char *why, size_t len)
{
	return set_fraction(&OPTS(ctx)->nudge.step, v, 0.01, 1.0, why, len);
}

static int set_priority(void *ctx, const char *v, char *why, size_t len)
{
	char *end;
	long long p;

	errno = 0;
	p = strtoll(v, &end, 10);
	if (errno || end == v || *end || p < -2147483648LL || p > 2147483647LL) {
		snprintf(why, len, "expected a pod priority (a 32-bit integer)");
		return -EINVAL;
	}
	OPTS(ctx)->decide.protect_priority = p;
	return 0;
}

static int set_ns_list(char (*list)[DECIDE_NS_MAX], size_t *n, const char *v, char *why,
		       size_t len)
{
	const char *p = v;
	size_t k = 0;

	while (*p) {
		size_t l = strcspn(p, ",");

		if (k == DECIDE_NAMESPACES_MAX || l == 0 || l >= DECIDE_NS_MAX) {
			snprintf(why, len, "expected up to %u namespaces, comma-separated",
				 DECIDE_NAMESPACES_MAX);
			return -EINVAL;
		}
		memcpy(list[k], p, l);
		list[k][l] = '\0';
		k++;
		p += l + (p[l] == ',');
	}
	*n = k;
	return 0;
}

static int set_namespaces(void *ctx, const char *v, char *why, size_t len)
{
	return set_ns_list(OPTS(ctx)->decide.include, &OPTS(ctx)->decide.n_include, v, why, len);
}

static int set_exclude(void *ctx, const char *v, char *why, size_t len)
{
	return set_ns_list(OPTS(ctx)->decide.exclude, &OPTS(ctx)->decide.n_exclude, v, why, len);
}

/* true or on, false or off: the values the options' help shows. */
static int set_bool(bool *d, const char *v, char *why, size_t len)
{
	if (!strcmp(v, "true") || !strcmp(v, "on"))
		*d = true;
	else if (!strcmp(v, "false") || !strcmp(v, "off"))
		*d = false;
	else {
		snprintf(why, len, "expected true or false");
		return -EINVAL;
	}
	return 0;
}

static int set_dry_run(void *ctx, const char *v, char *why, size_t len)
{
	return set_bool(&OPTS(ctx)->decide.dry_run, v, why, len);
}

static int set_local_storage(void *ctx, const char *v, char *why, size_t len)
{
	return set_bool(&OPTS(ctx)->decide.allow_local_storage, v, why, len);
}

static int set_metrics(void *ctx, const char *v, char *why, size_t len)
{
	struct rebal_options *o = OPTS(ctx);

	if (!*v || !strcmp(v, "off")) {
		o->metrics_addr[0] = '\0';
		return 0;
	}
	if (hostport_parse(v, o->metrics_addr, sizeof(o->metrics_addr), &o->metrics_port)) {
		snprintf(why, len, "expected ADDR:PORT or off");
		return -EINVAL;
	}
	return 0;
}

static int set_identity(void *ctx, const char *v, char *why, size_t len)
{
	if (!*v || strlen(v) >= LEASE_ID_MAX || strpbrk(v, "\"\\")) {
		snprintf(why, len, "expected a name of 1 to %u bytes", LEASE_ID_MAX - 1);
		return -EINVAL;
	}
	return cli_set_string(OPTS(ctx)->identity, sizeof(OPTS(ctx)->identity), v, why, len);
}

static int set_log_level(void *ctx, const char *v, char *why, size_t len)
{
	if (log_parse_level(v, &OPTS(ctx)->log_level)) {
		snprintf(why, len, "expected error, warn, info or debug");
		return -EINVAL;
	}
	return 0;
}

#define AT(field) .offset = offsetof(struct rebal_options, field), \
		  .size = sizeof(((struct rebal_options *)0)->field)
#define MIN_MS 1000u
#define DAY_MS (24u * 3600u * 1000u)

static const struct cli_opt opts[] = {
	{ .name = "scorer", .kind = CLI_VALUE, .arg = "URL[,URL]", .set = set_scorer,
	  .help = "the scorers' extender listener, first that answers", .def = "http://127.0.0.1:8470" },
	{ .name = "scorer-replicas", .kind = CLI_VALUE, .arg = "NAME", .type = CLI_STRING,
	  AT(scorer_replicas), .help = "a name resolving to every scorer replica (a headless "
	  "Service): moves go to each, reached as the first --scorer's host (default: each --scorer)" },
	{ .name = "scorer-ca", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(scorer_ca),
	  .help = "CA that signed the scorer's certificate (https)" },
	{ .name = "scorer-cert", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(scorer_cert), .help = "client certificate for the scorer (mTLS)" },
	{ .name = "scorer-key", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING,
	  AT(scorer_key), .help = "its key" },
	{ .name = "scorer-timeout", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(scorer_timeout_ms), .min = 100, .max = 60000, .help = "whole request deadline",
	  .def = "5s" },
	{ .name = "kubeconfig", .kind = CLI_VALUE, .arg = "FILE", .type = CLI_STRING, AT(kubeconfig),
	  .help = "apiserver access; default: the pod's ServiceAccount" },
	{ .name = "interval", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(interval_ms), .min = 1000, .max = DAY_MS, .help = "time between cycles", .def = "10s" },
	{ .name = "dry-run", .kind = CLI_VALUE, .arg = "true|false", .set = set_dry_run,
	  .help = "say what would move, move nothing", .def = "true" },
	{ .name = "hot", .kind = CLI_VALUE, .arg = "FRACTION", .set = set_hot,
	  .help = "a direction's share of the link that is hot", .def = "0.90" },
	{ .name = "margin", .kind = CLI_VALUE, .arg = "FRACTION", .set = set_margin,
	  .help = "a destination stays at or under hot minus this", .def = "0.10" },
	{ .name = "debounce", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT, AT(debounce),
	  .max = 1000, .help = "consecutive distinct reports over hot before a move", .def = "3" },
	{ .name = "min-age", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION, AT(min_age_ms),
	  .min = 0, .max = DAY_MS, .help = "younger pods never move", .def = "5m" },
	{ .name = "allow-local-storage", .kind = CLI_VALUE, .arg = "true|false",
	  .set = set_local_storage, .help = "pods with emptyDir or hostPath may move",
	  .def = "false" },
	{ .name = "protect-priority", .kind = CLI_VALUE, .arg = "N", .set = set_priority,
	  .help = "pods at this priority or above never move", .def = "2000000000" },
	{ .name = "namespaces", .kind = CLI_VALUE, .arg = "LIST", .set = set_namespaces,
	  .help = "only these namespaces' pods move (default: all)" },
	{ .name = "exclude-namespaces", .kind = CLI_VALUE, .arg = "LIST", .set = set_exclude,
	  .help = "these namespaces' pods never move", .def = "kube-system" },
	{ .name = "cooldown", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(cooldown_ms), .min = 0, .max = DAY_MS, .help = "a workload moved is not moved again before",
	  .def = "10m" },
	{ .name = "node-cooldown", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(node_cooldown_ms), .min = 0, .max = DAY_MS,
	  .help = "a relieved node is not a source again before", .def = "2m" },
	{ .name = "pdb-backoff", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(pdb_backoff_ms), .min = 0, .max = DAY_MS,
	  .help = "a pod its PDB refused is not tried again before", .def = "5m" },
	{ .name = "hold", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION, AT(hold_ms),
	  .min = MIN_MS, .max = 3600u * 1000u,
	  .help = "the scorer holds the source and reserves the destination this long", .def = "5m" },
	{ .name = "max-moves-per-cycle", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(per_cycle), .max = 1000, .help = "moves in one cycle", .def = "3" },
	{ .name = "max-moves-per-hour", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(per_hour), .max = DECIDE_MOVES_KEPT / 2, .help = "moves in any hour (the global rate)",
	  .def = "30" },
	{ .name = "max-moves-per-node", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(per_node), .max = 1000, .help = "moves off one node in an hour", .def = "4" },
	{ .name = "max-moves-per-namespace", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(per_namespace), .max = 1000, .help = "moves in one namespace in an hour", .def = "10" },
	{ .name = "max-moves-per-workload", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(per_workload), .max = 1000, .help = "moves of one workload's pods in an hour",
	  .def = "2" },
	{ .name = "nudge", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH, AT(nudge.on),
	  .help = "label a node that gained room for a pod netsched refused, so the scheduler "
	  "tries it again at once (" NUDGE_LABEL ")", .def = "on" },
	{ .name = "nudge-step", .kind = CLI_VALUE, .arg = "FRACTION", .set = set_nudge_step,
	  .help = "a node's free room must grow by this share of its link before pending pods "
	  "are looked at", .def = "0.05" },
	{ .name = "nudge-interval", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(nudge_interval_ms), .min = 1000, .max = 3600u * 1000u,
	  .help = "time between two nudges, at least", .def = "10s" },
	{ .name = "nudge-max-nodes", .kind = CLI_VALUE, .arg = "N", .type = CLI_COUNT,
	  AT(nudge_nodes), .max = NUDGE_NODES_MAX, .help = "nodes labelled per nudge", .def = "3" },
	{ .name = "leader-elect", .kind = CLI_VALUE, .arg = "on|off", .type = CLI_SWITCH,
	  AT(leader_elect), .help = "act only while holding the Lease", .def = "on" },
	{ .name = "lease-name", .kind = CLI_VALUE, .arg = "NAME", .type = CLI_STRING, AT(lease_name),
	  .help = "the coordination.k8s.io/v1 Lease", .def = "netsched-rebalancer" },
	{ .name = "lease-namespace", .kind = CLI_VALUE, .arg = "NS", .type = CLI_STRING,
	  AT(lease_namespace), .help = "its namespace", .def = "netsched" },
	{ .name = "lease-duration", .kind = CLI_VALUE, .arg = "DUR", .type = CLI_DURATION,
	  AT(lease_duration_ms), .min = 2000, .max = 600000,
	  .help = "a holder silent this long loses the Lease", .def = "15s" },
	{ .name = "identity", .kind = CLI_VALUE, .arg = "NAME", .set = set_identity,
	  .help = "holder identity (default: $POD_NAME, else the hostname)" },
	{ .name = "metrics-listen", .kind = CLI_VALUE, .arg = "ADDR:PORT", .set = set_metrics,
	  .help = "/metrics and /healthz (off: none)", .def = "0.0.0.0:8472" },
	{ .name = "log-level", .kind = CLI_VALUE, .arg = "LEVEL", .set = set_log_level,
	  .help = "error, warn, info or debug", .def = "info" },
	{ .name = "once", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(once),
	  .help = "run one cycle and exit" },
	{ .name = "check-config", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(check_config),
	  .help = "validate the options, print \"configuration OK\"" },
	{ .name = "help", .kind = CLI_FLAG, .type = CLI_SWITCH, AT(help), .help = "print this help" },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

int rebal_options_defaults(struct rebal_options *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	decide_config_defaults(&o->decide);
	nudge_config_defaults(&o->nudge);
	return cli_defaults(opts, N_OPTS, o, err, errlen);
}

void rebal_options_usage(FILE *f)
{
	cli_usage(f, "netsched-rebalancer", opts, N_OPTS);
}

int rebal_options_parse(struct rebal_options *o, int argc, char **argv, char *err, size_t errlen)
{
	struct decide_config *d = &o->decide;
	const char *pod;

	if (cli_parse(opts, N_OPTS, o, argc, argv, err, errlen))
		return -EINVAL;
	d->debounce = (unsigned)o->debounce;
	d->min_age_s = o->min_age_ms / 1000;
	d->cooldown_s = o->cooldown_ms / 1000;
	d->node_cooldown_s = o->node_cooldown_ms / 1000;
	d->pdb_backoff_s = o->pdb_backoff_ms / 1000;
	d->max_per_cycle = (unsigned)o->per_cycle;
	d->max_per_hour = (unsigned)o->per_hour;
	d->max_per_node = (unsigned)o->per_node;
	d->max_per_namespace = (unsigned)o->per_namespace;
	d->max_per_workload = (unsigned)o->per_workload;
	if (decide_config_check(d, err, errlen))
		return -EINVAL;
	o->nudge.min_interval_s = o->nudge_interval_ms / 1000;
	o->nudge.max_nodes = (unsigned)o->nudge_nodes;
	if (nudge_config_check(&o->nudge, err, errlen))
		return -EINVAL;
	if (!o->scorer_cert[0] != !o->scorer_key[0]) {
		snprintf(err, errlen, "--%s: a client certificate needs both --scorer-cert and "
			 "--scorer-key", o->scorer_cert[0] ? "scorer-key" : "scorer-cert");
		return -EINVAL;
	}
	if (!o->lease_name[0] || !o->lease_namespace[0]) {
		snprintf(err, errlen, "--lease-name and --lease-namespace must not be empty");
		return -EINVAL;
	}
	if (!o->identity[0]) {
		pod = getenv("POD_NAME");
		if (pod && *pod && strlen(pod) < sizeof(o->identity))
			snprintf(o->identity, sizeof(o->identity), "%s", pod);
		else if (gethostname(o->identity, sizeof(o->identity) - 1))
			snprintf(o->identity, sizeof(o->identity), "netsched-rebalancer");
	}
	return 0;
}
