/* The rebalancer's settings: defaults, command-line flags and the YAML
 * --config file from one table (options.c, common/cli.h). Flags win over
 * the file. */
#ifndef NETSCHED_REBALANCER_OPTIONS_H
#define NETSCHED_REBALANCER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/log.h"
#include "decide.h"
#include "lease.h"
#include "nudge.h"

#define REBAL_URLS_MAX 4u
#define REBAL_URL_MAX 256u
#define REBAL_PATH_MAX 1024u

struct rebal_options {
	/* The scorers, tried in order (--scorer URL[,URL...]). */
	char scorer[REBAL_URLS_MAX][REBAL_URL_MAX];
	size_t n_scorer;
	/* A DNS name resolving to every scorer replica (a headless
	 * Service's): moves are posted to each; "" = to each --scorer URL. */
	char scorer_replicas[REBAL_URL_MAX];
	char scorer_ca[REBAL_PATH_MAX];
	char scorer_cert[REBAL_PATH_MAX];
	char scorer_key[REBAL_PATH_MAX];
	uint64_t scorer_timeout_ms;
	char kubeconfig[REBAL_PATH_MAX];
	uint64_t interval_ms;
	uint64_t hold_ms;		/* holdSeconds posted with each move */
	struct decide_config decide;
	struct nudge_config nudge;	/* nudge.h: a label the scheduler reacts to */
	/* Leader election. */
	bool leader_elect;
	char lease_name[REBAL_URL_MAX];
	char lease_namespace[DECIDE_NS_MAX];
	uint64_t lease_duration_ms;
	char identity[LEASE_ID_MAX];	/* "" until set: POD_NAME, else the hostname */
	char metrics_addr[64];		/* "" = off */
	uint16_t metrics_port;
	enum log_level log_level;
	bool once;			/* one cycle, then exit (tests, a manual look) */
	bool check_config;
	bool help;
	/* Scratch for the typed rows that feed decide (cli.h stores u64). */
	uint64_t min_age_ms, cooldown_ms, node_cooldown_ms, pdb_backoff_ms;
	uint64_t nudge_interval_ms, nudge_nodes;
	uint64_t debounce, per_cycle, per_hour, per_node, per_namespace, per_workload;
};

/* Every default. 0, or -EINVAL (a bug: a default that does not parse). */
int rebal_options_defaults(struct rebal_options *o, char *err, size_t errlen);
/* The config file, then the flags, then the checks across options; fills
 * o->decide and the identity. 0, or -EINVAL with err naming the option. */
int rebal_options_parse(struct rebal_options *o, int argc, char **argv, char *err,
			size_t errlen);
void rebal_options_usage(FILE *f);

#endif
