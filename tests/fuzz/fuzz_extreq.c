/* libFuzzer: the scheduler's extender request (extreq_parse) and, when it
 * parses, both verbs (ext_filter, ext_prioritize) against a small scorer on
 * a fake clock: a busy node, an idle one, a stale one, one without a link
 * speed. Traps when a successful parse breaks the header's promises, when
 * tighter limits turn it into anything but -E2BIG, when a verb does not
 * answer 200, or when a reply is not what the protocol needs: the filter
 * reply must parse as ExtenderArgs again and keep a subsequence of the
 * requested names; the prioritize reply is one {"Host","Score"} per
 * requested node, in order, with scores 0..10. The same bytes go to the
 * preempt verb (fuzz_preemption()). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proto/report.h"
#include "scorer/serve/extender.h"
#include "scorer/parse/extreq.h"
#include "common/json.h"
#include "scorer/rules/policy.h"
#include "scorer/serve/reply.h"
#include "scorer/scorer.h"
#include "tests/unit/fake_scorer.h"

#define START_NS (1000ULL * 1000000000ULL)
#define STALE_NS (6ULL * 1000000000ULL)
#define MAX_NODES 10000 /* --max-request-nodes's default: fake_scorer.h's limit */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct scorer *scorer;

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

/* node receives rx and sends tx bytes per second over a 10 s window on a
 * link of link_bps (0 = unknown), reported age_ns ago. */
static void feed(const char *node, uint64_t rx, uint64_t tx, uint64_t link_bps, uint64_t age_ns)
{
	struct report r = fake_report(node, rx, tx, link_bps);

	check(report_validate(&r, NULL, 0) == 0);
	check(table_apply(scorer->view.table, &r, fake_now - age_ns) == TABLE_APPLIED);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("fuzz_extreq");
	log_set_level(LOG_LVL_ERROR);
	scorer = fake_scorer_new(16, START_NS, STALE_NS);
	if (!scorer)
		abort();
	/* The captured and synthetic fixtures' names, and a one-letter one. */
	feed("node-a", 117000000, 3000000, 1000000000, 0);	/* 1 Gb/s link, ~94% busy rx */
	feed("node-b", 1000, 2000, 10000000000ULL, 1000000000);	/* 10 Gb/s, idle */
	feed("node-c", 50000000, 50000000, 1000000000, 10 * STALE_NS);	/* stale */
	check(fake_feed(scorer, "gpu-node-1", 400000000, fake_now) == TABLE_APPLIED); /* link unknown */
	feed("gpu-node-2", 0, 1200000000, 10000000000ULL, 0);	/* tx-heavy */
	feed("a", 5, 5, 1000, 0);
	return 0;
}

/* Whether p[0..n) lies inside body[0..len). */
static bool inside(const char *p, size_t n, const char *body, size_t len)
{
	return p >= body && n <= len && (size_t)(p - body) <= len - n;
}

static void check_request(const struct extreq *rq, const char *body, size_t len)
{
	const struct extreq_str *strs[] = { &rq->pod_namespace, &rq->pod_name,
					    &rq->ingress_bandwidth, &rq->egress_bandwidth };

	check(rq->n <= MAX_NODES);
	check(rq->pod_uid.len <= POD_UID_MAX);
	check(rq->nodes != NULL);
	for (size_t i = 0; i < rq->n; i++) {
		const struct extreq_node *nd = &rq->nodes[i];

		check(nd->name_len >= 1 && nd->name_len <= NODENAME_MAX_LEN);
		check(inside(nd->name, nd->name_len, body, len));
		for (size_t k = 0; k < nd->name_len; k++)
			check(nd->name[k] != '\\' && (unsigned char)nd->name[k] >= 0x20);
		if (rq->mode == EXTREQ_FULL) {
			check(nd->raw && inside(nd->raw, nd->raw_len, body, len));
			check(nd->raw_len >= 2 && nd->raw[0] == '{' && nd->raw[nd->raw_len - 1] == '}');
			check(inside(nd->name, nd->name_len, nd->raw, nd->raw_len));
		} else {
			check(!nd->raw && !nd->raw_len);
		}
	}
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		check(!strs[i]->s || inside(strs[i]->s, strs[i]->len, body, len));
}

/* The filter reply is itself an ExtenderArgs (Nodes or NodeNames set, the
 * other null) whose nodes are the kept ones: a subsequence of the request. */
static void check_filter(const struct extreq *rq, const struct reply *out)
{
	struct extreq_limits lim = { .max_nodes = MAX_NODES,
				     .max_json_tokens = EXTREQ_DEFAULT_MAX_JSON_TOKENS };
	struct extreq kept;
	char err[256];
	size_t j = 0;

	check(out->status == 200 && out->body && out->len == strlen(out->body));
	check(extreq_parse(out->body, out->len, &lim, &kept, err, sizeof(err)) == 0);
	check(kept.mode == rq->mode && kept.n <= rq->n);
	for (size_t i = 0; i < kept.n; i++) {
		while (j < rq->n && (rq->nodes[j].name_len != kept.nodes[i].name_len ||
				     memcmp(rq->nodes[j].name, kept.nodes[i].name, kept.nodes[i].name_len)))
			j++;
		check(j < rq->n);
		if (rq->mode == EXTREQ_FULL)
			check(kept.nodes[i].raw_len == rq->nodes[j].raw_len &&
			      !memcmp(kept.nodes[i].raw, rq->nodes[j].raw, rq->nodes[j].raw_len));
		j++;
	}
	extreq_free(&kept);
}

/* Whether token i is a string exactly n bytes of s. */
static bool tok_is(const struct json *d, int i, const char *s, size_t n)
{
	size_t len = 0;
	const char *text = json_text(d, i, &len);

	return json_type(d, i) == JSMN_STRING && len == n && !memcmp(text, s, n);
}

/* [{"Host":"name","Score":N}, ...]: 5 tokens per node, through the same
 * strict JSON layer the scorer reads with. */
static void check_prioritize(const struct extreq *rq, const struct reply *out)
{
	struct json d;
	char err[200];

	check(out->status == 200 && out->body && out->len == strlen(out->body));
	check(json_parse(&d, out->body, out->len, 1 + 5 * rq->n, err, sizeof(err)) == 0);
	check(d.n == (int)(1 + 5 * rq->n));
	check(json_type(&d, 0) == JSMN_ARRAY && (size_t)d.t[0].size == rq->n);
	for (size_t i = 0; i < rq->n; i++) {
		int o = 1 + 5 * (int)i;
		size_t len = 0;
		const char *score = json_text(&d, o + 4, &len);

		check(json_type(&d, o) == JSMN_OBJECT && d.t[o].size == 2);
		check(tok_is(&d, o + 1, "Host", 4));
		check(tok_is(&d, o + 2, rq->nodes[i].name, rq->nodes[i].name_len));
		check(tok_is(&d, o + 3, "Score", 5));
		check(json_type(&d, o + 4) == JSMN_PRIMITIVE);
		check((len == 1 && score[0] >= '0' && score[0] <= '9') ||
		      (len == 2 && score[0] == '1' && score[1] == '0'));
	}
	json_free(&d);
}

/* Tighter limits only ever turn a success into -E2BIG (and the token
 * array's growth up to its limit is taken on small inputs too). */
static void check_tight(const struct extreq *rq, const char *body, size_t len)
{
	struct extreq_limits lim = { .max_nodes = 8, .max_json_tokens = 64 };
	struct extreq small;
	char err[256];
	int rc = extreq_parse(body, len, &lim, &small, err, sizeof(err));

	if (rc) {
		check(rc == -E2BIG);
		return;
	}
	check(small.n == rq->n && small.mode == rq->mode);
	for (size_t i = 0; i < small.n; i++)
		check(small.nodes[i].name == rq->nodes[i].name &&
		      small.nodes[i].name_len == rq->nodes[i].name_len &&
		      small.nodes[i].raw == rq->nodes[i].raw &&
		      small.nodes[i].raw_len == rq->nodes[i].raw_len);
	extreq_free(&small);
}

/* Each verb once per scorer setting: policies, directions and filter rules
 * take different branches on the same request. */
static const struct {
	enum policy_kind policy;
	enum policy_direction dir;
	struct filter_config filter;
} settings[] = {
	{ POLICY_RELATIVE, POLICY_DIR_RX, { .max_utilization_pct = 0, .bandwidth = true } },
	{ POLICY_UTILIZATION, POLICY_DIR_MAX, { .max_utilization_pct = 80, .bandwidth = true } },
	{ POLICY_UTILIZATION, POLICY_DIR_BOTH, { .max_utilization_pct = 50, .bandwidth = false } },
	{ POLICY_PRESSURE, POLICY_DIR_MAX,
	  { .max_utilization_pct = 80, .bandwidth = true, .margin_pct = 10, .hold_ms = 30000 } },
};

/* The preempt verb on the same bytes: when they parse as
 * ExtenderPreemptionArgs, every candidate's name is a node name inside the
 * body and its victims are counted within the array; the verb answers 200
 * with a reply that is JSON and names no node that was not a candidate,
 * under every setting. */
static void fuzz_preemption(const char *body, size_t size)
{
	struct extreq_preemption p;
	size_t victims = 0;
	char err[256];
	int rc;

	memset(err, 0x55, sizeof(err));
	rc = extreq_parse_preemption(body, size, &scorer->limits.request, &p, err, sizeof(err));
	if (rc) {
		check(rc == -EINVAL || rc == -E2BIG);
		check(memchr(err, '\0', sizeof(err)) && err[0]);
		return;
	}
	for (size_t i = 0; i < p.n; i++) {
		const struct extreq_candidate *c = &p.candidates[i];

		check(c->name >= body && c->name + c->name_len <= body + size);
		check(c->victims == p.victims + victims && c->pdb.len > 0);
		victims += c->n_victims;
		for (size_t v = 0; v < c->n_victims; v++)
			check(c->victims[v].uid.len > 0 && c->victims[v].uid.len <= POD_UID_MAX);
	}
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		struct reply out;
		struct json j;
		int map;

		scorer->filter = settings[i].filter;
		memset(&out, 0, sizeof(out));
		ext_preempt(scorer, body, size, &out);
		check(out.status == 200 && out.body);
		check(json_parse(&j, out.body, out.len, 1u << 22, err, sizeof(err)) == 0);
		map = json_member(&j, 0, "NodeNameToMetaVictims", false);
		check(json_type(&j, map) == JSMN_OBJECT && j.t[map].size <= (int)p.n);
		json_free(&j);
		free(out.body);
	}
	extreq_preemption_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	struct extreq rq;
	char err[256];
	int rc;

	fuzz_preemption(body, size);
	memset(err, 0x55, sizeof(err));
	rc = extreq_parse(body, size, &scorer->limits.request, &rq, err, sizeof(err));
	if (rc) {
		check(rc == -EINVAL || rc == -E2BIG);
		check(memchr(err, '\0', sizeof(err)) && err[0]);
		return 0;
	}
	check_request(&rq, body, size);
	check_tight(&rq, body, size);
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		struct reply out;

		scorer->view.policy = settings[i].policy;
		scorer->view.direction = settings[i].dir;
		scorer->filter = settings[i].filter;

		memset(&out, 0, sizeof(out));
		ext_filter(scorer, body, size, &out);
		check_filter(&rq, &out);
		free(out.body);

		memset(&out, 0, sizeof(out));
		ext_prioritize(scorer, body, size, &out);
		check_prioritize(&rq, &out);
		free(out.body);
	}
	extreq_free(&rq);
	return 0;
}
