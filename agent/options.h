/* The agent's settings: defaults, flags and the YAML --config file, through
 * one option table (common/cli.h). Flags win over the file. */
#ifndef NETSCHED_AGENT_OPTIONS_H
#define NETSCHED_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ifselect.h"
#include "linkspeed.h"
#include "log.h"
#include "podselect.h"
#include "report.h"
#include "sampler.h"
#include "sender.h"

struct agent_options {
	char node[NODENAME_MAX_LEN + 1];
	struct ifselect_spec interfaces;
	struct podselect_spec pod_interfaces;
	uint64_t pods_reported;	/* pods listed by address in each report */
	uint64_t pod_interval_ms;	/* between readings of the pods' counters */
	enum sampler_source source;
	bool source_set;	/* --source given: no automatic fallback */
	size_t n_scorers;
	char scorers[SENDER_MAX_SCORERS][SENDER_URL_MAX];
	uint64_t sample_interval_ms;
	uint64_t window_ms;
	uint64_t report_interval_ms;
	char netns[256];
	char key_file[256];	/* "" = unsigned reports */
	char scorer_ca[256];	/* CA for tls+tcp:// scorers */
	char metrics_addr[64];	/* "" = no metrics endpoint */
	uint16_t metrics_port;
	size_t n_link_speeds;
	struct linkspeed_override link_speeds[REPORT_MAX_INTERFACES];
	enum log_level log_level;
	bool once;
	bool check_config;
	bool help;
};

/* The most sample intervals one window may hold (an hour of 1 s samples). */
#define AGENT_MAX_WINDOW_SLOTS 3600u

/* Every option at its default (the option table's). 0, or -EINVAL with err
 * naming a default that does not parse. */
int agent_options_defaults(struct agent_options *o, char *err, size_t errlen);

/* Applies the config file and the flags, fills the node name from
 * $NODE_NAME or the host name when unset, and checks the options against
 * each other. Returns 0, or -EINVAL with err set to one line naming the
 * option and the problem. */
int agent_options_parse(struct agent_options *o, int argc, char **argv, char *err,
			size_t errlen);

void agent_options_usage(FILE *f);

#endif
