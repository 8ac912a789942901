/* libFuzzer: the nudge's reader and decision over outside bytes: the bytes
 * read as the apiserver's PodList of pending pods (pending.h), and as the
 * scorer's /v1/pressure (pressure.h) seen twice, the first time with every
 * node's figures stale (no room), then as they are, with the pods that
 * parsed (nudge.h). Whatever parses keeps the bounds: at most the cap of
 * pods kept, each named within its buffers and declaring something; the
 * picks name nodes and pods that exist, distinct nodes, no more than the
 * config allows, each with as much room now as at its base at least. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rebalancer/nudge.h"
#include "rebalancer/pending.h"
#include "rebalancer/pressure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)
#define CAP 8u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nudge_pod pods[CAP];
	struct pending_counts c;
	struct decide_snapshot s = { 0 };
	struct nudge_config cfg;
	struct nudge_memory m = { 0 };
	struct nudge_pick picks[NUDGE_NODES_MAX];
	size_t n_pods = 0, n;
	char err[512];
	bool look;

	if (pending_parse((const char *)data, size, pods, CAP, &c, err, sizeof(err)) == 0) {
		check(c.kept <= CAP);
		for (size_t i = 0; i < c.kept; i++) {
			check(memchr(pods[i].namespace, '\0', sizeof(pods[i].namespace)));
			check(memchr(pods[i].name, '\0', sizeof(pods[i].name)));
			check(pods[i].namespace[0] && pods[i].name[0]);
			check(pods[i].ask[DECIDE_RX] || pods[i].ask[DECIDE_TX]);
		}
		n_pods = c.kept;
	} else {
		check(c.kept == 0);
		check(memchr(err, '\0', sizeof(err)));
	}
	if (pressure_parse((const char *)data, size, &s, err, sizeof(err)))
		return 0;
	nudge_config_defaults(&cfg);
	s.now_s = 1800000000;
	{
		bool *fresh = calloc(s.n_nodes ? s.n_nodes : 1, sizeof(*fresh));

		if (!fresh)
			goto cleanup;
		for (size_t i = 0; i < s.n_nodes; i++) {
			fresh[i] = s.nodes[i].fresh;
			s.nodes[i].fresh = false;
		}
		look = true;
		if (nudge_observe(&m, &cfg, &s, &look) == 0)
			check(!look);
		for (size_t i = 0; i < s.n_nodes; i++)
			s.nodes[i].fresh = fresh[i];
		free(fresh);
	}
	s.now_s++;
	if (nudge_observe(&m, &cfg, &s, &look))
		goto cleanup;
	n = nudge_plan(&cfg, &m, &s, pods, n_pods, picks, NUDGE_NODES_MAX);
	check(n <= cfg.max_nodes);
	for (size_t k = 0; k < n; k++) {
		check(picks[k].node < s.n_nodes && picks[k].pod < n_pods);
		check(picks[k].free >= picks[k].base);
		check(picks[k].free == nudge_free(&s.nodes[picks[k].node], picks[k].dir));
		for (size_t j = 0; j < k; j++)
			check(picks[j].node != picks[k].node);
	}
	nudge_looked(&m, &s);
	check(nudge_observe(&m, &cfg, &s, &look) != 0 || !look);
cleanup:
	nudge_memory_free(&m);
	decide_snapshot_free(&s);
	return 0;
}
