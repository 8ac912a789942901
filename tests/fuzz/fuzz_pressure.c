/* libFuzzer: what the rebalancer reads from outside, the way it reads it:
 * the scorer's /v1/pressure (pressure.h) and a node's PodList from the
 * apiserver (podfacts.h), then the decision over what parsed (decide.h),
 * three reports in a row so every rule is reached. Whatever parses keeps
 * the bounds: names sorted and unique, terminated within their buffers, at
 * most 32 pods a node; the plan names nodes, pods and destinations of the
 * snapshot, never the source as its own destination, and sentences stay
 * terminated. The same bytes are read as the PodList of a node whose pods
 * are the corpus's names. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rebalancer/decide.h"
#include "rebalancer/podfacts.h"
#include "rebalancer/pressure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void check_snapshot(const struct decide_snapshot *s)
{
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct decide_node *n = &s->nodes[i];

		check(memchr(n->name, '\0', sizeof(n->name)) && n->name[0]);
		check(i == 0 || strcmp(s->nodes[i - 1].name, n->name) < 0);
		check(n->n_pods <= DECIDE_PODS_PER_NODE);
		for (size_t k = 0; k < n->n_pods; k++) {
			const struct decide_pod *p = &n->pods[k];

			check(memchr(p->namespace, '\0', sizeof(p->namespace)));
			check(memchr(p->name, '\0', sizeof(p->name)));
			check(memchr(p->uid, '\0', sizeof(p->uid)));
			check(memchr(p->workload, '\0', sizeof(p->workload)));
			check(!p->known);
		}
	}
}

static void decide_on(struct decide_snapshot *s)
{
	struct decide_config cfg;
	struct decide_memory m;
	struct decide_outcome *out;
	size_t n;

	decide_config_defaults(&cfg);
	cfg.dry_run = false;
	cfg.min_age_s = 0;
	if (decide_memory_init(&m))
		return;
	out = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*out));
	if (!out)
		goto cleanup;
	s->now_s = 1800000000;
	for (int r = 0; r < 3; r++) {
		for (size_t i = 0; i < s->n_nodes; i++) {
			s->nodes[i].reports++;
			for (size_t k = 0; k < s->nodes[i].n_pods; k++) {
				/* Known, movable pods: the plan's deepest path. */
				s->nodes[i].pods[k].known = true;
				s->nodes[i].pods[k].owner = DECIDE_OWNER_REPLICASET;
			}
		}
		if (decide_observe(&m, &cfg, s))
			goto cleanup;
	}
	n = decide_plan(&cfg, &m, s, out, s->n_nodes);
	check(n <= s->n_nodes);
	for (size_t k = 0; k < n; k++) {
		const struct decide_outcome *o = &out[k];

		check(o->node < s->n_nodes);
		check(o->pod == SIZE_MAX || o->pod < s->nodes[o->node].n_pods);
		check(o->dest == SIZE_MAX || (o->dest < s->n_nodes && o->dest != o->node));
		check((o->reason == DECIDE_MOVE) == (o->dest != SIZE_MAX));
		check(memchr(o->sentence, '\0', sizeof(o->sentence)));
		decide_record_move(&m, s, o, s->now_s);
	}
	n = decide_plan(&cfg, &m, s, out, s->n_nodes);
	check(n <= s->n_nodes);
cleanup:
	free(out);
	decide_memory_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[][2] = {
		{ "default", "web-a" }, { "default", "db-0" }, { "kube-system", "etcd-n" },
	};
	struct decide_snapshot s = { 0 };
	struct decide_pod pods[3];
	struct decide_node n;
	char err[512];

	if (pressure_parse((const char *)data, size, &s, err, sizeof(err)) == 0) {
		check_snapshot(&s);
		decide_on(&s);
		decide_snapshot_free(&s);
	} else {
		check(s.nodes == NULL && s.n_nodes == 0);
		check(memchr(err, '\0', sizeof(err)));
	}

	memset(&n, 0, sizeof(n));
	memset(pods, 0, sizeof(pods));
	for (size_t i = 0; i < 3; i++) {
		strcpy(pods[i].namespace, names[i][0]);
		strcpy(pods[i].name, names[i][1]);
	}
	n.pods = pods;
	n.n_pods = 3;
	if (podfacts_join((const char *)data, size, &n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < 3; i++) {
			check(memchr(pods[i].uid, '\0', sizeof(pods[i].uid)));
			check(pods[i].owner <= DECIDE_OWNER_OTHER);
		}
	} else {
		for (size_t i = 0; i < 3; i++)
			check(!pods[i].known);
	}
	return 0;
}
