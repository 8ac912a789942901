/* The choice a kube-scheduler makes from a prioritize reply, for unit
 * tests that run bursts through the extender: the best score, then among
 * ties the node with the fewest pods so far (as its resource-spreading
 * plugins do for pods with requests), then the first. Header-only: each
 * test is one translation unit. */
#ifndef NETSCHED_TEST_FAKE_SCHEDULER_H
#define NETSCHED_TEST_FAKE_SCHEDULER_H

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "scorer/serve/reply.h"

/* The index in names[0..n) of the node the scheduler takes from reply
 * out (a HostPriorityList naming some of them, each once; a node it leaves
 * out scores 0, as in the scheduler), counted in placed[]; every node's
 * score into scores[] (may be NULL). Frees the reply's body. */
static inline int fake_scheduler_pick(struct reply *out, const char *const *names, size_t n,
				      unsigned *placed, int *scores)
{
	struct json j = { 0 };
	char err[128];
	int best = -1, *got = calloc(n, sizeof(*got));

	assert_non_null(got);
	assert_int_equal(out->status, 200);
	assert_int_equal(json_parse(&j, out->body, out->len, 4096, err, sizeof(err)), 0);
	assert_true(j.t[0].size >= 0 && j.t[0].size <= (int)n);
	/* The elements are objects: token 1 is the first, json_skip() the next. */
	for (int m = 0, o = 1; m < j.t[0].size; m++, o = json_skip(&j, o)) {
		size_t hl, sl;
		const char *host = json_text(&j, json_member(&j, o, "Host", false), &hl);
		const char *score = json_text(&j, json_member(&j, o, "Score", false), &sl);
		int idx = -1;

		for (size_t i = 0; i < n && idx < 0; i++)
			if (strlen(names[i]) == hl && memcmp(names[i], host, hl) == 0)
				idx = (int)i;
		if (idx < 0)
			fail_msg("unknown node %.*s in a reply", (int)hl, host);
		got[idx] = atoi(score);
	}
	for (size_t i = 0; i < n; i++) {
		if (scores)
			scores[i] = got[i];
		if (best < 0 || got[i] > got[best] || (got[i] == got[best] && placed[i] < placed[best]))
			best = (int)i;
	}
	json_free(&j);
	free(got);
	free(out->body);
	placed[best]++;
	return best;
}

#endif
