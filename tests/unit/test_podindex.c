/* The pod index and the join (scorer/pods/podindex.c): a report's pod entries
 * joined to the running pod bound to the reporting node that owns the
 * address, and every other case counted by why: an unknown address, one
 * on another node, a pod that does not run; an address reused by a new pod;
 * start-up left out of learning; pods below the agent's top N; a relist
 * sweeping pods deleted meanwhile; the
 * cluster's average per running pod; the bounds; the in-flight weight of
 * a measured pod giving way. Time by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/podindex.h"
#include "scorer/pods/workload.h"

#define T0 (1000ULL * NS_PER_SEC)
#define UNIX_MS 1800000000000ULL	/* the wall clock at T0 */
#define WINDOW_MS 10000u
/* A pod started at T0 - this has run long enough to be learned from at T0:
 * its start-up, then a window that may be half a window old. */
#define SETTLED_S (PODINDEX_STARTUP_NS / NS_PER_SEC + WINDOW_MS * 3 / 2 / 1000)

struct fx {
	struct workload *wl;
	struct inflight *in;
	struct podindex *x;
	uint64_t now;
	uint64_t nic_rx, nic_tx;	/* what reports' NIC counted (UINT64_MAX: the pods' sum) */
};

/* In flight: held 10 s, faded over 4 s; a pod running longer is never in
 * flight. */
#define HOLD_S 10u
#define FADE_S 4u
/* A node that sent no pod figures this long vouches for none (workload.h). */
#define SILENT_S 6u

static int setup_n(void **state, size_t max_pods)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct workload_config wc = { .max_workloads = 16, .half_life_ns = 600 * NS_PER_SEC,
				      .max_nodes = 16, .silent_ns = SILENT_S * NS_PER_SEC };
	struct inflight_config ic = { .max_pods = 16, .max_nodes = 8,
				      .hold_ns = HOLD_S * NS_PER_SEC,
				      .fade_ns = FADE_S * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };
	struct podindex_config xc = { .max_pods = max_pods, .max_nodes = 16,
				      .stale_ns = 6 * NS_PER_SEC };

	if (!f)
		return -1;
	f->in = inflight_create(&ic);
	xc.inflight = f->in;
	f->wl = workload_create(&wc);
	f->x = f->wl ? podindex_create(&xc, f->wl) : NULL;
	f->now = T0;
	f->nic_rx = f->nic_tx = UINT64_MAX;
	*state = f;
	return f->x ? 0 : -1;
}

static int setup(void **state)
{
	return setup_n(state, 64);
}

static int setup_small(void **state)
{
	return setup_n(state, 4);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	podindex_destroy(f->x);
	inflight_destroy(f->in);
	workload_destroy(f->wl);
	free(f);
	return 0;
}

static struct kubepod_str str(const char *s)
{
	return (struct kubepod_str){ s, s ? strlen(s) : 0 };
}

static struct report_ip ip(const char *text)
{
	struct report_ip a;

	assert_int_equal(report_ip_parse(text, &a), 0);
	return a;
}

/* Pod uid ("ns/name" = "shop/<uid>"), a replica of Deployment deploy
 * (NULL: a bare pod), on node, running since started_s seconds before T0
 * (< 0: not running), at address addr (NULL: none). */
static struct kubepod pod(const char *uid, const char *deploy, const char *node, int started_s,
			  const char *addr)
{
	static char rs[8][64];
	static unsigned next;
	struct kubepod p;

	memset(&p, 0, sizeof(p));
	p.uid.len = strlen(uid);
	memcpy(p.uid.s, uid, p.uid.len);
	p.ns = str("shop");
	p.name = str(uid);
	p.node = str(node);
	p.running = started_s >= 0;
	p.started_unix_s = started_s >= 0 ? (int64_t)(UNIX_MS / 1000) - started_s : 0;
	if (addr) {
		p.ips[0] = ip(addr);
		p.n_ips = 1;
	}
	if (deploy) {
		char *name = rs[next++ % 8];

		snprintf(name, 64, "%s-abc12", deploy);
		p.owner.kind = str("ReplicaSet");
		p.owner.name = str(name);
		p.owner.template_hash = str("abc12");
	}
	return p;
}

static void update(struct fx *f, const struct kubepod *p)
{
	podindex_update(f->x, p, f->now, UNIX_MS + (f->now - T0) / NS_PER_MS);
}

/* An entry: addr moved rx_per_s in and tx_per_s out over the window. */
static struct report_pod entry(const char *addr, uint64_t rx_per_s, uint64_t tx_per_s)
{
	struct report_pod t = { .n_ips = 1 };

	t.ips[0] = ip(addr);
	report_pod_count(&t, rx_per_s * WINDOW_MS / 1000, tx_per_s * WINDOW_MS / 1000, WINDOW_MS);
	return t;
}

/* The report's NIC: rx_per_s in and tx_per_s out (UINT64_MAX: what its
 * pods add up to, so nothing is scaled). */
static void nic_count(struct report *r, uint64_t rx_per_s, uint64_t tx_per_s)
{
	uint64_t rx = r->pods_rest.rx_bytes, tx = r->pods_rest.tx_bytes;

	for (uint32_t i = 0; i < r->n_pods; i++) {
		rx += r->pods[i].rx_bytes;
		tx += r->pods[i].tx_bytes;
	}
	report_iface_count(&r->ifaces[0], rx_per_s == UINT64_MAX ? rx : rx_per_s * WINDOW_MS / 1000,
			   tx_per_s == UINT64_MAX ? tx : tx_per_s * WINDOW_MS / 1000, WINDOW_MS);
}

/* Node's report listing t[0..n), the rest (rest_pods pods) moving
 * rest_rx_per_s in. */
static void join_seen(struct fx *f, const char *node, const struct report_pod *t, size_t n,
		      uint64_t rest_rx_per_s, uint32_t rest_pods)
{
	static struct report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "%s", node);
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "eth0");
	r.sample_interval_ms = 1000;
	r.has_pods = true;
	r.n_pods = (uint32_t)n;
	r.pods_seen = (uint32_t)n + rest_pods;
	memcpy(r.pods, t, n * sizeof(*t));
	report_pod_count(&r.pods_rest, rest_rx_per_s * WINDOW_MS / 1000, 0, WINDOW_MS);
	/* Its NIC counted at least what its pods moved: nothing is scaled
	 * (nic_join() tells otherwise). */
	nic_count(&r, f->nic_rx, f->nic_tx);
	podindex_join(f->x, &r, f->now);
}

static void join(struct fx *f, const char *node, const struct report_pod *t, size_t n,
		 uint64_t rest_rx_per_s)
{
	join_seen(f, node, t, n, rest_rx_per_s, rest_rx_per_s ? 1 : 0);
}

static struct podindex_stats stats(struct fx *f)
{
	struct podindex_stats st;

	podindex_stats(f->x, &st);
	return st;
}

static uint64_t learned_rx(struct fx *f, const char *deploy)
{
	struct workload_key k = { "shop", "Deployment", "" };
	struct workload_demand d;

	snprintf(k.name, sizeof(k.name), "%s", deploy);
	workload_tick(f->wl, f->now);
	return workload_demand_of(f->wl, &k, &d) ? d.rx_bytes_per_second : UINT64_MAX;
}

/* Each kind of entry, one report: matched, unknown, on another node, not
 * running; the matched pod is the node's top pod, with its workload. */
static void test_podindex_join_cases(void **state)
{
	struct fx *f = *state;
	struct kubepod a = pod("a", "web", "n1", SETTLED_S, "10.0.0.1");
	struct kubepod b = pod("b", "web", "n2", SETTLED_S, "10.0.0.2");
	struct kubepod c = pod("c", "web", "n1", -1, "10.0.0.3");
	struct report_pod t[] = {
		entry("10.0.0.1", 5000, 500),	/* a: matched */
		entry("10.0.0.9", 7000, 0),	/* nobody's */
		entry("10.0.0.2", 7000, 0),	/* b's, but b is on n2 */
		entry("10.0.0.3", 7000, 0),	/* c's, but c is pending */
	};
	struct podindex_top top[PODINDEX_TOP];
	struct podindex_stats st;

	(void)state;
	update(f, &a);
	update(f, &b);
	update(f, &c);
	st = stats(f);
	assert_int_equal(st.pods, 3);
	assert_int_equal(st.running, 2);
	assert_int_equal(st.nodes, 2);
	join(f, "n1", t, 4, 0);
	st = stats(f);
	assert_int_equal(st.matched, 1);
	assert_int_equal(st.unknown_ip, 1);
	assert_int_equal(st.wrong_node, 1);
	assert_int_equal(st.not_running, 1);
	assert_int_equal(podindex_node_top(f->x, "n1", 2, top), 1);
	assert_string_equal(top[0].pod, "shop/a");
	assert_string_equal(top[0].workload, "shop/Deployment/web");
	assert_int_equal(top[0].rx_bytes_per_second, 5000);
	assert_int_equal(top[0].tx_bytes_per_second, 500);
	assert_int_equal(learned_rx(f, "web"), 5000);
	/* A node no indexed pod is bound to: every entry unmatched. */
	join(f, "n3", t, 1, 0);
	assert_int_equal(stats(f).wrong_node, 2);
	assert_int_equal(podindex_node_top(f->x, "n3", 2, top), 0);
}

/* Addresses are reused: after a pod ends, its address is the next pod's;
 * a pod whose end was missed loses its address to the pod that started
 * after it; a pod that stops running owns nothing. */
static void test_podindex_reused_address(void **state)
{
	struct fx *f = *state;
	struct kubepod old = pod("old", "batch", "n1", 3600, "10.0.0.7");
	struct kubepod young = pod("young", "web", "n1", SETTLED_S, "10.0.0.7");
	struct report_pod t = entry("10.0.0.7", 9000, 0);
	struct podindex_top top[PODINDEX_TOP];

	(void)state;
	update(f, &old);
	join(f, "n1", &t, 1, 0);
	assert_int_equal(podindex_node_top(f->x, "n1", 2, top), 1);
	assert_string_equal(top[0].pod, "shop/old");
	/* Its deletion was missed: the younger pod claims the address. */
	update(f, &young);
	join(f, "n1", &t, 1, 0);
	assert_int_equal(podindex_node_top(f->x, "n1", 2, top), 1);
	assert_string_equal(top[0].pod, "shop/young");
	/* Deleted, then the young one stops: nobody runs there. */
	podindex_remove(f->x, "old", 3, f->now);
	young.running = false;
	update(f, &young);
	join(f, "n1", &t, 1, 0);
	assert_int_equal(stats(f).not_running, 1);
	assert_int_equal(stats(f).matched, 2);
	/* A pod moves to another address: the old one is free of it. */
	young = pod("young", "web", "n1", SETTLED_S, "10.0.0.8");
	update(f, &young);
	join(f, "n1", &t, 1, 0);
	assert_int_equal(stats(f).unknown_ip, 1);
}

/* Start-up is left out of learning: a pod is sampled once it has run
 * PODINDEX_STARTUP_NS and a window and a half (the agent's reading may be
 * half a window old), and only from a whole window (an interface younger
 * than the node's window started with its pod); its rate shows in the top
 * pods from the first report. IPv6 alone matches a dual-stack pod. */
static void test_podindex_startup(void **state)
{
	struct fx *f = *state;
	struct kubepod p = pod("p", "web", "n1", 1, "10.0.0.1");
	struct report_pod t = entry("fd00::1", 8000, 0);
	struct podindex_top top[PODINDEX_TOP];

	(void)state;
	p.ips[1] = ip("fd00::1");
	p.n_ips = 2;
	update(f, &p);
	join(f, "n1", &t, 1, 0);
	assert_int_equal(podindex_node_top(f->x, "n1", 2, top), 1);
	assert_int_equal(learned_rx(f, "web"), UINT64_MAX);
	f->now += (SETTLED_S - 2) * NS_PER_SEC;
	join(f, "n1", &t, 1, 0);
	assert_int_equal(learned_rx(f, "web"), UINT64_MAX);
	/* Old enough, but its interface is 4 s old: a window of its start. */
	f->now += NS_PER_SEC;
	t.covered_ms = 4000;
	join(f, "n1", &t, 1, 0);
	assert_int_equal(learned_rx(f, "web"), UINT64_MAX);
	t.covered_ms = WINDOW_MS - 1000; /* a sample short: whole */
	join(f, "n1", &t, 1, 0);
	assert_int_equal(learned_rx(f, "web"), 8000);
}

/* One reading of the agent, sampled once: the agent reads pods every
 * --pod-interval (at most half a window) and copies the reading into each
 * report until the next. Rows in order, on one pod (WINDOW_MS: 10 s). */
struct reading_case {
	const char *name;
	uint64_t after_ms;	/* since the previous row */
	uint64_t rx_per_s;
	uint64_t covered_ms;
	bool sampled;
	uint64_t age_ms;	/* of the workload's newest measurement, after */
};

static const struct reading_case reading_cases[] = {
	{ "a first reading", 0, 8000, WINDOW_MS, true, 0 },
	{ "the same reading in the next report", 2000, 8000, WINDOW_MS, false, 2000 },
	{ "copied until the next reading, under half a window", 2900, 8000, WINDOW_MS, false, 4900 },
	{ "new bytes: a new reading", 100, 8100, WINDOW_MS, true, 0 },
	{ "the same bytes over another time: a new reading", 2000, 8100, WINDOW_MS - 500, true, 0 },
	{ "the same again, in the next report", 2000, 8100, WINDOW_MS - 500, false, 2000 },
	{ "unchanged half a window after: read anew (idle)", 3000, 8100, WINDOW_MS - 500, true, 0 },
};

static void test_podindex_readings(void **state)
{
	struct fx *f = *state;
	struct kubepod p = pod("p", "web", "n1", SETTLED_S, "10.0.0.1");
	uint64_t before, samples = 0;
	struct workload_stats ws;
	struct workload_entry *e;

	update(f, &p);
	for (size_t i = 0; i < sizeof(reading_cases) / sizeof(reading_cases[0]); i++) {
		const struct reading_case *c = &reading_cases[i];
		struct report_pod t = entry("10.0.0.1", c->rx_per_s, 0);

		f->now += c->after_ms * NS_PER_MS;
		report_pod_count(&t, t.rx_bytes, 0, c->covered_ms);
		before = samples;
		join(f, "n1", &t, 1, 0);
		workload_stats(f->wl, &ws);
		samples = ws.samples;
		workload_tick(f->wl, f->now);
		assert_int_equal(workload_list(f->wl, f->now, &e), 1);
		if ((samples > before) != c->sampled || e[0].age_ns != c->age_ms * NS_PER_MS)
			fail_msg("%s: %s, age %llu ms; want %s, age %llu ms", c->name,
				 samples > before ? "sampled" : "not sampled",
				 (unsigned long long)(e[0].age_ns / NS_PER_MS),
				 c->sampled ? "sampled" : "not sampled", (unsigned long long)c->age_ms);
		free(e);
	}
}

/* The join tells the in-flight pods how long the agent measured each
 * listed pod of its node's window (WINDOW_MS): a pod in flight on that
 * node weighs the part the window does not hold yet. */
struct measured_case {
	const char *name;
	const char *inflight_on;	/* where prioritize assumed it */
	const char *bound_to;		/* the watch's node (the index's) */
	int started_s;			/* running since (< 0: not) */
	bool has_pods;			/* the agent measures pods */
	bool listed;			/* ... and lists this one (else: in the rest) */
	uint64_t covered_ms;
	uint32_t milli;			/* what it weighs after, on inflight_on */
};

static const struct measured_case measured_cases[] = {
	{ "measured for half a window: half the weight", "n1", "n1", 2, true, true,
	  WINDOW_MS / 2, 500 },
	{ "measured for a whole window: none", "n1", "n1", 2, true, true, WINDOW_MS, 0 },
	{ "a sample short of the window: whole, none", "n1", "n1", 2, true, true,
	  WINDOW_MS - 1000, 0 },
	{ "two samples short: a fifth left", "n1", "n1", 2, true, true, WINDOW_MS - 2000, 200 },
	{ "on another node than assumed: unchanged", "n2", "n1", 2, true, true, WINDOW_MS, 1000 },
	{ "unmeasured (no pod counters): unchanged", "n1", "n1", 2, false, false, WINDOW_MS,
	  1000 },
	{ "in the agent's rest, not listed: unchanged", "n1", "n1", 2, true, false, WINDOW_MS,
	  1000 },
	{ "not running: unchanged", "n1", "n1", -1, true, true, WINDOW_MS, 1000 },
	{ "running past the in-flight horizon: not asked", "n1", "n1", HOLD_S + FADE_S, true,
	  true, WINDOW_MS, 1000 },
};

static void test_podindex_inflight(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(measured_cases) / sizeof(measured_cases[0]); c++) {
		const struct measured_case *mc = &measured_cases[c];
		void *st = NULL;
		struct fx *f;
		struct kubepod p;
		struct report_pod t = entry("10.0.0.1", 8000, 0);
		struct inflight_name on = { mc->inflight_on, strlen(mc->inflight_on), 0 };
		struct inflight_pod w = { 1000, 1000, 0, 0, true, true, "shop/p", INFLIGHT_GUESSED };
		struct inflight_load l;

		print_message("case: %s\n", mc->name);
		assert_int_equal(setup(&st), 0);
		f = st;
		p = pod("p", "web", mc->bound_to, mc->started_s, "10.0.0.1");
		update(f, &p);
		assert_int_equal(inflight_assume(f->in, "p", 1, &w, &on, 1, f->now), 0);
		report_pod_count(&t, t.rx_bytes, 0, mc->covered_ms);
		if (!mc->has_pods) {
			static struct report r;

			memset(&r, 0, sizeof(r));
			snprintf(r.node, sizeof(r.node), "%s", mc->bound_to);
			r.n_ifaces = 1;
			report_iface_count(&r.ifaces[0], 0, 0, WINDOW_MS);
			podindex_join(f->x, &r, f->now);
		} else if (mc->listed) {
			join(f, mc->bound_to, &t, 1, 0);
		} else {
			join(f, mc->bound_to, &t, 0, 8000);
		}
		inflight_get(f->in, mc->inflight_on, 2, NULL, 0, &l);
		assert_int_equal(l.milli_pods, mc->milli);
		assert_int_equal(l.rx_bytes_per_second, 1000ULL * mc->milli / 1000);
		teardown(&st);
	}
}

/* A list without unmatched entries: running pods it leaves out (the
 * agent's top N holds the others) share the rest, if they are as many as
 * the agent counted in it. With an unmatched entry, or another count, the
 * rest may be anybody's: nothing is sampled from it. */
static void test_podindex_unlisted(void **state)
{
	struct fx *f = *state;
	struct kubepod heavy = pod("heavy", "big", "n1", SETTLED_S, "10.0.0.1");
	struct kubepod l1 = pod("l1", "light", "n1", SETTLED_S, "10.0.0.2");
	struct kubepod l2 = pod("l2", "light", "n1", SETTLED_S, "10.0.0.3");
	struct report_pod t[2] = { entry("10.0.0.1", 90000, 0), entry("10.0.0.99", 1, 0) };
	struct workload_stats ws;
	uint64_t samples;

	(void)state;
	update(f, &heavy);
	update(f, &l1);
	update(f, &l2);
	join_seen(f, "n1", t, 2, 600, 2);
	assert_int_equal(learned_rx(f, "light"), UINT64_MAX);
	/* The agent saw four: one more than the index runs. Not sampled. */
	join_seen(f, "n1", t, 1, 600, 3);
	assert_int_equal(learned_rx(f, "light"), UINT64_MAX);
	join_seen(f, "n1", t, 1, 600, 2);
	assert_int_equal(learned_rx(f, "big"), 90000);
	assert_int_equal(learned_rx(f, "light"), 300);
	/* The same reading in the next report: none of the three again. */
	workload_stats(f->wl, &ws);
	samples = ws.samples;
	f->now += NS_PER_SEC;
	join_seen(f, "n1", t, 1, 600, 2);
	workload_stats(f->wl, &ws);
	assert_int_equal(ws.samples, samples);
}

/* A relist: the pods it names stay, the others were deleted meanwhile
 * and go, with their workload's reference. */
static void test_podindex_relist(void **state)
{
	struct fx *f = *state;
	struct kubepod a = pod("a", "web", "n1", SETTLED_S, "10.0.0.1");
	struct kubepod b = pod("b", "db", "n2", SETTLED_S, "10.0.0.2");
	struct workload_stats ws;

	(void)state;
	update(f, &a);
	update(f, &b);
	podindex_list_begin(f->x);
	update(f, &a);
	podindex_list_end(f->x, f->now);
	assert_int_equal(stats(f).pods, 1);
	assert_int_equal(stats(f).nodes, 1);
	workload_stats(f->wl, &ws);
	assert_int_equal(ws.live, 1);
	assert_int_equal(ws.tracked, 2);
	/* An end without a begin sweeps nothing. */
	podindex_list_end(f->x, f->now);
	assert_int_equal(stats(f).pods, 1);
}

/* Pods moved from node to node, host-network pods never indexed, absurd
 * ones ignored and counted, unbound ones never indexed. */
static void test_podindex_updates(void **state)
{
	struct fx *f = *state;
	struct kubepod a = pod("a", NULL, "n1", SETTLED_S, "10.0.0.1");
	struct kubepod host = pod("h", NULL, "n1", SETTLED_S, "192.168.0.1");
	struct kubepod bad = pod("bad", NULL, "n1", SETTLED_S, NULL);
	struct kubepod loose = pod("loose", NULL, "n1", SETTLED_S, "10.0.0.5");
	struct report_pod t = entry("10.0.0.1", 100, 0);
	struct podindex_top top[PODINDEX_TOP];

	(void)state;
	update(f, &a);
	a.node = str("n2");
	update(f, &a);
	assert_int_equal(stats(f).nodes, 1);
	join(f, "n2", &t, 1, 0);
	assert_int_equal(podindex_node_top(f->x, "n2", 2, top), 1);
	assert_string_equal(top[0].workload, "shop/Pod/a");
	host.host_network = true;
	update(f, &host);
	snprintf(bad.absurd, sizeof(bad.absurd), "status.podIPs has 3 entries");
	update(f, &bad);
	loose.node = str(NULL);
	update(f, &loose);
	assert_int_equal(stats(f).pods, 1);
	assert_int_equal(stats(f).ignored, 1);
	/* Once host-network or absurd, an indexed pod leaves the index. */
	a.host_network = true;
	update(f, &a);
	assert_int_equal(stats(f).pods, 0);
	assert_int_equal(stats(f).nodes, 0);
	podindex_remove(f->x, "nobody", 6, f->now);
}

/* The cluster's average per running pod: the median over nodes heard from
 * lately of what each measured for its pods (listed, unmatched and the
 * rest) over the pod interfaces it measured. */
static void test_podindex_average(void **state)
{
	struct fx *f = *state;
	struct kubepod a = pod("a", "web", "n1", SETTLED_S, "10.0.0.1");
	struct kubepod b = pod("b", "web", "n1", SETTLED_S, "10.0.0.2");
	struct kubepod c = pod("c", "web", "n2", SETTLED_S, "10.0.1.1");
	struct kubepod d = pod("d", "web", "n2", -1, "10.0.1.2");
	struct report_pod t1[2] = { entry("10.0.0.1", 6000, 60), entry("10.0.0.2", 2000, 20) };
	struct report_pod t2 = entry("10.0.1.1", 1000, 10);
	struct podindex_stats st;

	(void)state;
	podindex_tick(f->x, f->now);
	assert_int_equal(stats(f).avg_pods, 0);
	update(f, &a);
	update(f, &b);
	update(f, &c);
	update(f, &d);
	join(f, "n1", t1, 2, 0);
	join(f, "n2", &t2, 1, 2000);
	podindex_tick(f->x, f->now);
	st = stats(f);
	assert_int_equal(st.avg_pods, 4);
	assert_int_equal(st.avg_rx_bytes_per_second, (6000 + 2000 + 1000 + 2000) / 4);
	assert_int_equal(st.avg_tx_bytes_per_second, (60 + 20 + 10) / 4);
	/* n1 falls silent: only n2 counts. */
	f->now += 5 * NS_PER_SEC;
	join(f, "n2", &t2, 1, 2000);
	f->now += 2 * NS_PER_SEC;
	podindex_tick(f->x, f->now);
	assert_int_equal(stats(f).avg_pods, 2);
	assert_int_equal(stats(f).avg_rx_bytes_per_second, 1500);
}


/* ------------------------------------------------- a node lying (issue 39) */

/* Node (addresses 10.net.0.k) runs count settled pods of Deployment
 * deploy, uids "<node>-<deploy>-<k>"; its agent says pod k moved rx[k] in
 * and rx[k] / 10 out, and its NIC counted nic_rx in and nic_rx / 10 out
 * (UINT64_MAX: what the pods add up to). */
static void node_says(struct fx *f, const char *node, unsigned net, const char *deploy,
		      const uint64_t *rx, size_t count, uint64_t nic_rx)
{
	struct report_pod t[16];
	char uid[64], addr[32];

	assert_true(count <= 16);
	for (size_t k = 0; k < count; k++) {
		struct kubepod p;

		snprintf(uid, sizeof(uid), "%s-%s-%zu", node, deploy, k);
		snprintf(addr, sizeof(addr), "10.%u.0.%zu", net, k + 1);
		p = pod(uid, deploy, node, SETTLED_S, addr);
		update(f, &p);
		t[k] = entry(addr, rx[k], rx[k] / 10);
	}
	f->nic_rx = nic_rx;
	f->nic_tx = nic_rx == UINT64_MAX ? UINT64_MAX : nic_rx / 10;
	join(f, node, t, count, 0);
	f->nic_rx = f->nic_tx = UINT64_MAX;
}

/* Seven honest nodes run 14 of web's 16 pods at 1000-1130 B/s; the liar
 * runs 2 and says x50. Whatever its NIC says, the learned figure stays
 * within what the other nodes measured (workload.h): at most 1130, where
 * it was 55,000. */
static void test_podindex_liar_x50(void **state)
{
	static const char *const honest[] = { "h1", "h2", "h3", "h4", "h5", "h6", "h7" };
	/* The liar's NIC: what its two pods really moved; then busy with
	 * the host's own traffic, so the NIC does not bind and the other
	 * nodes must. */
	static const uint64_t liar_nic[] = { 2200, 10000000 };

	(void)state;
	for (size_t c = 0; c < 2; c++) {
		struct fx *f;
		void *st;
		uint64_t lie[2] = { 55000, 55000 };

		assert_int_equal(setup(&st), 0);
		f = st;
		for (unsigned h = 0; h < 7; h++) {
			uint64_t rx[2] = { 1000 + 20 * h, 1010 + 20 * h };

			node_says(f, honest[h], h + 1, "web", rx, 2, UINT64_MAX);
		}
		node_says(f, "liar", 99, "web", lie, 2, liar_nic[c]);
		print_message("liar's NIC %llu B/s: web learned %llu B/s\n",
			      (unsigned long long)liar_nic[c], (unsigned long long)learned_rx(f, "web"));
		assert_true(learned_rx(f, "web") >= 1000);
		assert_true(learned_rx(f, "web") <= 1130);
		teardown(&st);
	}
}

/* A one-pod workload on the liar, x500: held to what its node's NIC
 * counted. On a node whose link speed is unknown and whose NIC claims
 * 57 GB/s too: held to the cluster's fastest known link (10 Gb/s here). */
static void test_podindex_liar_x500_unknown_link(void **state)
{
	struct fx *f = *state;
	uint64_t lie = 500 * 2000000ULL, huge = 57000000000ULL;

	node_says(f, "liar", 99, "solo", &lie, 1, 2200000);
	assert_true(learned_rx(f, "solo") <= 2200000);
	podindex_set_link_ceiling(f->x, 1250000000);
	node_says(f, "liar2", 98, "big", &huge, 1, huge);
	print_message("one pod at 57 GB/s on a node of unknown link: learned %llu B/s\n",
		      (unsigned long long)learned_rx(f, "big"));
	assert_true(learned_rx(f, "big") <= 1250000000);
}

/* The liar holds 7 of 16 pods and says 0 (under half: clipped), beside two
 * honest nodes: the figure is what honest pods measured (their range). */
static void test_podindex_liar_zero(void **state)
{
	struct fx *f = *state;
	uint64_t zero[7] = { 0 }, h1[5] = { 1000, 1000, 1000, 1000, 1000 };
	uint64_t h2[4] = { 1000, 1000, 1000, 1000 };

	node_says(f, "h1", 1, "web", h1, 5, UINT64_MAX);
	node_says(f, "h2", 2, "web", h2, 4, UINT64_MAX);
	node_says(f, "liar", 99, "web", zero, 7, UINT64_MAX);
	assert_int_equal(learned_rx(f, "web"), 1000);
}

/* The cluster's average per pod: three honest nodes' pods at 8000 B/s.
 * The liar claims 4,096 idle pods, then pods at 57 GB/s on a link no one
 * knows: the average stays 8000 (was 11, then 14 GB/s). */
static void test_podindex_liar_average(void **state)
{
	struct fx *f = *state;
	uint64_t rx[2] = { 8000, 8000 }, huge = 57000000000ULL;
	struct report_pod t[1];
	struct kubepod p = pod("l", "lie", "liar", SETTLED_S, "10.99.0.1");

	for (unsigned h = 0; h < 3; h++) {
		char node[8];

		snprintf(node, sizeof(node), "h%u", h + 1);
		node_says(f, node, h + 1, "web", rx, 2, UINT64_MAX);
	}
	update(f, &p);
	t[0] = entry("10.99.0.1", 0, 0);
	join_seen(f, "liar", t, 1, 0, 4095);
	podindex_tick(f->x, f->now);
	assert_int_equal(stats(f).avg_rx_bytes_per_second, 8000);
	t[0] = entry("10.99.0.1", huge, 0);
	join_seen(f, "liar", t, 1, 0, 0);
	podindex_tick(f->x, f->now);
	assert_int_equal(stats(f).avg_rx_bytes_per_second, 8000);
	assert_int_equal(stats(f).avg_nodes, 4);
}

/* Two chatty pods on one node: A sends B 5 MB/s, which both pods' counters
 * show and the NIC never sees (it counted 100 kB/s each way). Their
 * workload does not look heavy: at most the NIC's 100 kB/s. */
static void test_podindex_same_node_traffic(void **state)
{
	struct fx *f = *state;
	struct kubepod a = pod("a", "chat", "n1", SETTLED_S, "10.0.0.1");
	struct kubepod b = pod("b", "chat", "n1", SETTLED_S, "10.0.0.2");
	struct report_pod t[2] = { entry("10.0.0.1", 0, 5000000), entry("10.0.0.2", 5000000, 0) };
	struct workload_key k = { "shop", "Deployment", "chat" };
	struct workload_demand d;

	update(f, &a);
	update(f, &b);
	f->nic_rx = f->nic_tx = 100000;
	join(f, "n1", t, 2, 0);
	workload_tick(f->wl, f->now);
	assert_true(workload_demand_of(f->wl, &k, &d));
	assert_true(d.rx_bytes_per_second <= 100000);
	assert_true(d.tx_bytes_per_second <= 100000);
	assert_int_equal(stats(f).nic_scaled, 1);
}

/* The liar goes silent: its samples stop counting SILENT_S after its last
 * pod figures, not over half-lives (10 min here). solo rested on it
 * alone: no longer learned. web rests on h1 alone again. A node that keeps
 * reporting keeps vouching for the pods that left it. */
static void test_podindex_liar_silent(void **state)
{
	struct fx *f = *state;
	uint64_t lie[2] = { 9000, 9000 }, real[2] = { 1000, 1100 }, solo = 7000;
	struct workload_entry *e = NULL;
	long n;

	node_says(f, "h1", 1, "web", real, 2, UINT64_MAX);
	node_says(f, "liar", 99, "web", lie, 2, UINT64_MAX);
	node_says(f, "liar", 98, "solo", &solo, 1, UINT64_MAX);
	assert_int_equal(learned_rx(f, "solo"), 7000);
	n = workload_list(f->wl, f->now, &e);
	assert_int_equal(n, 2);
	assert_int_equal(e[1].n_sources, 2);	/* shop/Deployment/web: h1, liar */
	free(e);
	/* h1 keeps reporting (its pod 1 has left); the liar says nothing. */
	podindex_remove(f->x, "h1-web-1", 8, f->now);
	for (unsigned s = 0; s < SILENT_S + 1; s++) {
		f->now += NS_PER_SEC;
		node_says(f, "h1", 1, "web", real, 1, UINT64_MAX);
	}
	assert_int_equal(learned_rx(f, "solo"), UINT64_MAX);
	assert_int_equal(learned_rx(f, "web"), 1100);
	n = workload_list(f->wl, f->now, &e);
	assert_int_equal(n, 2);
	assert_int_equal(e[1].n_sources, 1);
	assert_int_equal(e[1].sources[0].pods, 2);
	free(e);
}

/* Bounds: max_pods pods, the next one counted and not indexed. */
static void test_podindex_full(void **state)
{
	struct fx *f = *state;
	char uid[16], addr[24];

	(void)state;
	for (int i = 0; i < 5; i++) {
		struct kubepod p;

		snprintf(uid, sizeof(uid), "p%d", i);
		snprintf(addr, sizeof(addr), "10.0.0.%d", i + 1);
		p = pod(uid, NULL, "n1", SETTLED_S, addr);
		update(f, &p);
	}
	assert_int_equal(stats(f).pods, 4);
	assert_int_equal(stats(f).full, 1);
	podindex_remove(f->x, "p0", 2, f->now);
	{
		struct kubepod p = pod("p4", NULL, "n1", SETTLED_S, "10.0.0.5");

		update(f, &p);
	}
	assert_int_equal(stats(f).pods, 4);
	assert_null(podindex_create(&(struct podindex_config){ 0, 1, 1, NULL }, f->wl));
	assert_null(podindex_create(&(struct podindex_config){ 1, 1, 1, NULL }, NULL));
	podindex_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_podindex_join_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_reused_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_startup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_readings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_unlisted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_relist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_updates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_average, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_full, setup_small, teardown),
		cmocka_unit_test(test_podindex_liar_x50),
		cmocka_unit_test_setup_teardown(test_podindex_liar_x500_unknown_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_liar_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_liar_average, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_same_node_traffic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_podindex_liar_silent, setup, teardown),
		cmocka_unit_test(test_podindex_inflight),
	};
	return cmocka_run_group_tests_name("podindex", tests, NULL, NULL);
}
