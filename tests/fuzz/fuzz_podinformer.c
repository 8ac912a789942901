/* libFuzzer: the pod watch's informer (scorer/kube/podinformer.h) fed what an
 * apiserver could send. The first two bytes choose how the rest arrives:
 * the size of each read (1 to 256 bytes) and the status of the second
 * answer; up to the first NUL byte the rest is a list page, after it what
 * the informer's next request gets (a watch stream once the page was a
 * whole list, else the list again), cut into those reads. Whatever comes, it must keep its bounds: a request
 * path that fits, a wait within backoff_max_ms, counters that only add up,
 * never more pods in flight than the table holds, never more pods in the
 * pod index (podindex.h) than it holds nor workloads than the model holds,
 * and nothing leaked. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/podindex.h"
#include "scorer/kube/podinformer.h"
#include "scorer/pods/podweight.h"
#include "scorer/pods/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static uint64_t t_ns = 1000 * NS_PER_SEC;
static uint64_t mono(void) { return t_ns; }
static uint64_t wall(void) { return 1790000000000ULL + t_ns / NS_PER_MS; }

static const long statuses[] = { 200, 200, 200, 200, 410, 500, 403, 0 };

/* One request, the body cut into reads of chunk bytes. */
static void exchange(struct podinformer *pi, const uint8_t *p, size_t n, size_t chunk, long code,
		     const struct podinformer_config *c)
{
	struct podinformer_request req;
	uint64_t wait;

	if (podinformer_next(pi, &req))
		return;
	check(strlen(req.path) < sizeof(req.path));
	check(strncmp(req.path, "/api/v1/pods?", 13) == 0);
	if (code)
		podinformer_status(pi, code);
	for (size_t at = 0; code && at < n;) {
		size_t k = n - at < chunk ? n - at : chunk;

		if (!podinformer_body(pi, (const char *)p + at, k))
			break;
		at += k;
	}
	t_ns += NS_PER_MS;
	wait = podinformer_end(pi, code ? 0 : -EIO, code ? NULL : "fuzzed transport error");
	check(wait <= c->backoff_max_ms);
	t_ns += wait * NS_PER_MS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inflight_config ic = { .max_pods = 64, .max_nodes = 16, .hold_ns = 70 * NS_PER_SEC,
				      .fade_ns = 60 * NS_PER_SEC, .expire_ns = 30 * NS_PER_SEC };
	struct podinformer_config c;
	struct podinformer_stats before, after;
	struct workload_config wc = { .max_workloads = 8, .half_life_ns = 60 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = 32, .max_nodes = 8, .stale_ns = 6 * NS_PER_SEC };
	struct podweight weights = { .cfg = { .doubt_pct = 10 } };
	struct inflight_stats is;
	struct podindex_stats xs;
	struct workload_stats ws;
	struct inflight *in;
	struct podinformer *pi = NULL;
	const uint8_t *second;
	size_t chunk, first;
	long code;

	if (size < 2)
		return 0;
	log_set_level(LOG_LVL_ERROR); /* lines cost time, not coverage */
	chunk = (size_t)data[0] + 1;
	code = statuses[data[1] % (sizeof(statuses) / sizeof(statuses[0]))];
	data += 2;
	size -= 2;
	podinformer_defaults(&c);
	c.max_page_bytes = 16 * 1024;
	c.max_event_bytes = 4 * 1024;
	c.page_pods = 20;
	in = inflight_create(&ic);
	weights.workloads = workload_create(&wc);
	weights.pods = weights.workloads ? podindex_create(&xc, weights.workloads) : NULL;
	pi = in && weights.pods ? podinformer_create(&c, "https://fuzz:6443", in, mono, wall, 1) :
				  NULL;
	if (!pi)
		goto out;
	podinformer_set_index(pi, weights.pods, &weights);
	second = memchr(data, '\0', size);
	first = second ? (size_t)(second - data) : size;
	second = second ? second + 1 : data;
	exchange(pi, data, first, chunk, 200, &c);
	podinformer_stats(pi, &before);
	exchange(pi, second, size - (size_t)(second - data), chunk, code, &c);
	podinformer_stats(pi, &after);
	check(after.lists >= before.lists && after.watches >= before.watches);
	check(after.events >= before.events && after.errors >= before.errors);
	check(after.events <= before.events + size / 8 + 1);
	exchange(pi, (const uint8_t *)"", 0, 1, 200, &c);
	inflight_stats(in, &is);
	check(is.pods <= ic.max_pods);
	podindex_stats(weights.pods, &xs);
	check(xs.pods <= xc.max_pods && xs.running <= xs.pods && xs.nodes <= xc.max_nodes);
	workload_tick(weights.workloads, t_ns);
	workload_stats(weights.workloads, &ws);
	check(ws.tracked <= wc.max_workloads && ws.live <= ws.tracked);
	check(ws.live <= xs.pods);
out:
	podinformer_destroy(pi);
	podindex_destroy(weights.pods);
	workload_destroy(weights.workloads);
	inflight_destroy(in);
	return 0;
}
