/* The scorer's settings: defaults, command-line flags and the YAML --config
 * file, all from one table (options.c) stating each option's value, bounds,
 * default and help once (common/cli.h). Flags win over the file. */
#ifndef NETSCHED_SCORER_OPTIONS_H
#define NETSCHED_SCORER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rules/filter.h"
#include "log.h"
#include "nodename.h"
#include "prom/prom.h"
#include "serve/tls.h"
#include "rules/policy.h"

#define SCORER_OPT_URL_MAX 256

struct scorer_options {
	char listen[SCORER_OPT_URL_MAX];
	char http_addr[64];
	uint16_t http_port;
	/* Plain-HTTP /healthz and /readyz only, for probes; "" = off. */
	char health_addr[64];
	uint16_t health_port;
	enum policy_kind policy;
	enum policy_direction direction;
	bool compact_scores;		/* --prioritize-reply compact */
	uint64_t max_drops_per_second;	/* POLICY_DROPS_IGNORED = off */
	struct filter_config filter;
	uint64_t stale_after_ms;
	uint64_t max_tracked_nodes;
	uint64_t max_body_bytes;
	uint64_t max_request_nodes;
	uint64_t connections_per_client;
	enum log_level log_level;
	/* The Prometheus fallback; prom.url empty = off. The Go NetworkTraffic
	 * plugin's argument names (prometheusAddress, networkInterface,
	 * timeRangeInMinutes) set prom.url, the device and the range. */
	struct prom_config prom;
	/* In-flight pods (inflight.h); max_pods 0 = not counted. */
	uint64_t inflight_max_pods;
	uint64_t inflight_estimate_bps;		/* the fallback's weight; 0: measured */
	unsigned inflight_penalty_pct;		/* an unknown pod's share of the free link */
	uint64_t inflight_hold_ms;
	uint64_t inflight_fade_ms;
	uint64_t inflight_expire_ms;
	uint64_t inflight_unstarted_ms;
	/* The pod watch that confirms in-flight pods (podwatch.h): a
	 * kubeconfig, else the pod's ServiceAccount when running in one. */
	char kubeconfig[1024];
	bool pod_watch;
	/* What the watch's pods teach (podindex.h, workload.h, podweight.h). */
	uint64_t max_pods;
	uint64_t max_workloads;
	uint64_t moves_max;		/* the rebalancer's moves held at once (moves.h) */
	uint64_t workload_half_life_ms;
	bool learned_filter;
	bool fit_filter;
	char key_file[256];	/* "" = reports need no signature */
	/* --derive-node-key: print this node's own key file (nodekey.h) and
	 * exit; "" = serve. */
	char derive_node_key[NODENAME_MAX_LEN + 1];
	struct tls_files tls;	/* cert "" = plain HTTP */
	char listen_cert_key[256]; /* PEM cert + key for a tls+tcp:// --listen */
	bool check_config;
	bool help;
};

/* Every option at its default. 0, or -EINVAL with err naming a default
 * that does not parse. */
int scorer_options_defaults(struct scorer_options *o, char *err, size_t errlen);

/* Applies a config file (if --config is given) and then the flags. Returns 0,
 * or -EINVAL with err set to one line naming the option and the problem. */
int scorer_options_parse(struct scorer_options *o, int argc, char **argv, char *err,
			 size_t errlen);

void scorer_options_usage(FILE *f);

#endif
