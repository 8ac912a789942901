/* netsched-inflight-cost: what counting in-flight pods costs the extender's
 * request path (scorer/pods/inflight.c), in-process, one thread:
 *  - the lookup prioritize and filter make for every requested node, for
 *    5,000 node names: with nothing in flight (one atomic read), with
 *    1,000 pods in flight on 500 nodes (one hash probe under a read lock),
 *    and the same for a pod asking again (its own share left out: a second
 *    probe on the nodes that have pods);
 *  - one assumption (a prioritize call records one pod, 8 tied nodes);
 *  - one fade/expiry pass over 10,000 tracked pods (at most every 100 ms).
 * Prints ns per operation and the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "scorer/pods/inflight.h"

#define NODES 5000
#define ROUNDS 200

static char names[NODES][24]; /* "node-" and any int: no truncation warning */

static double per_op(uint64_t t0, uint64_t ops)
{
	return (double)(clock_mono_ns() - t0) / (double)ops;
}

/* Every node looked up ROUNDS times for pod uid (NULL: for nobody). */
static double lookups(struct inflight *in, const char *uid)
{
	struct inflight_load l;
	uint64_t sum = 0, t0 = clock_mono_ns();

	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NODES; i++) {
			inflight_get(in, names[i], strlen(names[i]), uid, uid ? strlen(uid) : 0, &l);
			sum += l.milli_pods;
		}
	if (sum == 1) /* keep the loop */
		printf(" ");
	return per_op(t0, (uint64_t)ROUNDS * NODES);
}

int main(void)
{
	struct inflight_config cfg = {
		.max_pods = 10000, .max_nodes = 10000, .hold_ns = 70ULL * NS_PER_SEC,
		.fade_ns = 60ULL * NS_PER_SEC, .expire_ns = 30ULL * NS_PER_SEC,
	};
	struct inflight *in = inflight_create(&cfg);
	struct inflight_pod pod = { 1100, 1100, 0, 0, true, true, "bench/pod",
				    INFLIGHT_GUESSED };
	struct inflight_name tied[INFLIGHT_TIE_MAX] = { { NULL, 0, 0 } };
	uint64_t now = 1000ULL * NS_PER_SEC, t0;
	char uid[32];
	double empty, busy, asking, assume, tick;

	if (!in) {
		fprintf(stderr, "inflight_create failed\n");
		return 1;
	}
	for (int i = 0; i < NODES; i++)
		snprintf(names[i], sizeof(names[i]), "node-%05d", i);
	empty = lookups(in, NULL);
	for (int p = 0; p < 1000; p++) {
		struct inflight_name n = { names[(p * 7) % 500], strlen(names[(p * 7) % 500]), 0 };

		snprintf(uid, sizeof(uid), "pod-%d", p);
		inflight_assume(in, uid, strlen(uid), &pod, &n, 1, now);
	}
	busy = lookups(in, NULL);
	asking = lookups(in, "pod-7");
	t0 = clock_mono_ns();
	for (int p = 1000; p < 10000; p++) {
		for (unsigned k = 0; k < INFLIGHT_TIE_MAX; k++) {
			tied[k].s = names[(p + k * 13) % NODES];
			tied[k].len = strlen(tied[k].s);
		}
		snprintf(uid, sizeof(uid), "pod-%d", p);
		inflight_assume(in, uid, strlen(uid), &pod, tied, INFLIGHT_TIE_MAX, now);
	}
	assume = per_op(t0, 9000);
	now += 80ULL * NS_PER_SEC; /* every pod fading: the pass changes them all */
	t0 = clock_mono_ns();
	for (int r = 0; r < 20; r++)
		inflight_tick(in, now + (uint64_t)r * NS_PER_MS, true);
	tick = per_op(t0, 20);
	printf("inflight lookup, nothing in flight:          %6.1f ns per node (%.1f us per 5,000-node request)\n",
	       empty, empty * NODES / 1000);
	printf("inflight lookup, 1,000 pods on 500 nodes:    %6.1f ns per node (%.1f us per 5,000-node request)\n",
	       busy, busy * NODES / 1000);
	printf("inflight lookup, the same for a pod counted: %6.1f ns per node (%.1f us per 5,000-node request)\n",
	       asking, asking * NODES / 1000);
	printf("inflight assume, 8 tied nodes:               %6.1f ns per pod\n", assume);
	printf("inflight fade pass over 10,000 pods:         %6.1f us (at most every 100 ms)\n",
	       tick / 1000);
	inflight_destroy(in);
	return 0;
}
