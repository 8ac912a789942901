/* The rebalancer's cycle and Lease (rebalancer/loop.c) against a fake
 * apiserver (HTTPS, fake_apiserver.h: pods, evictions, Events, the Lease)
 * and two fake scorer replicas (plain HTTP: /v1/pressure with a report
 * counter that moves on every read, /v1/moves recorded), with the clocks
 * the test sets:
 *  - a move: posted to both replicas, then the eviction; a PDB's 429 on the
 *    wanted pod releases it (held 1 s) and the next pod moves in the same
 *    cycle; Events name what was done;
 *  - a replica refusing the move: nothing is evicted, and the replica that
 *    took it is released;
 *  - dry run: nothing posted or evicted, the plan said once in Events
 *    however many cycles repeat it;
 *  - a pod list that fails: nothing moves;
 *  - the Lease: created, renewed, followed, taken over once unchanged for
 *    its duration by the test's clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "common/log.h"
#include "rebalancer/loop.h"
#include "tests/unit/fake_apiserver.h"

#define MB 1000000ULL
#define NOW_S 1800000000ULL

/* A scorer replica ------------------------------------------------------- */

struct replica {
	struct MHD_Daemon *d;
	unsigned port;
	unsigned move_status;
	atomic_ullong reports;
	pthread_mutex_t lock;
	char moves[8][600];
	unsigned n_moves;
};

static const char pressure_fmt[] =
	"{\"hot\":0.900,\"windowSeconds\":30,\"nodes\":["
	"{\"name\":\"n-cool\",\"fresh\":true,\"reports\":%llu,\"linkBytesPerSecond\":125000000,"
	"\"rxBytesPerSecond\":10000000,\"txBytesPerSecond\":20000000,"
	"\"inflightRxBytesPerSecond\":0,\"inflightTxBytesPerSecond\":0,\"heldForWorkloads\":0},"
	"{\"name\":\"n-hot\",\"fresh\":true,\"reports\":%llu,\"linkBytesPerSecond\":125000000,"
	"\"rxBytesPerSecond\":2000000,\"txBytesPerSecond\":118000000,"
	"\"inflightRxBytesPerSecond\":0,\"inflightTxBytesPerSecond\":0,\"heldForWorkloads\":0,"
	"\"pods\":[{\"namespace\":\"default\",\"name\":\"web-1\",\"uid\":\"u-web\","
	"\"workload\":\"default/ReplicaSet/web\",\"rxBytesPerSecond\":100000,\"txBytesPerSecond\":30000000},"
	"{\"namespace\":\"default\",\"name\":\"guarded-1\",\"uid\":\"u-guarded\","
	"\"workload\":\"default/ReplicaSet/guarded\",\"rxBytesPerSecond\":100000,\"txBytesPerSecond\":8000000}]}"
	"],\"hotNodesWithoutPods\":0}";

static enum MHD_Result scorer_answer(void *cls, struct MHD_Connection *c, const char *url,
				     const char *method, const char *version, const char *upload,
				     size_t *upload_size, void **con_cls)
{
	static int started;
	struct replica *r = cls;
	struct MHD_Response *resp;
	char body[4096];
	unsigned status = 200;
	enum MHD_Result ret;

	(void)version;
	if (strcmp(method, "POST") == 0) {
		if (!*con_cls) {
			*con_cls = &started;
			pthread_mutex_lock(&r->lock);
			if (r->n_moves < 8)
				r->moves[r->n_moves][0] = '\0';
			pthread_mutex_unlock(&r->lock);
			return MHD_YES;
		}
		if (*upload_size) {
			pthread_mutex_lock(&r->lock);
			if (r->n_moves < 8)
				strncat(r->moves[r->n_moves], upload,
					*upload_size < 599 - strlen(r->moves[r->n_moves]) ?
					*upload_size : 599 - strlen(r->moves[r->n_moves]));
			pthread_mutex_unlock(&r->lock);
			*upload_size = 0;
			return MHD_YES;
		}
		pthread_mutex_lock(&r->lock);
		if (r->n_moves < 8)
			r->n_moves++;
		status = r->move_status;
		pthread_mutex_unlock(&r->lock);
		snprintf(body, sizeof(body), status == 200 ? "{\"accepted\":true}" :
			 "{\"error\":\"unknown node n-cool (to): the scorer has no report from it\"}");
	} else if (strcmp(url, "/v1/pressure") == 0) {
		unsigned long long n = atomic_fetch_add(&r->reports, 1) + 1;

		snprintf(body, sizeof(body), pressure_fmt, n, n);
	} else {
		status = 404;
		snprintf(body, sizeof(body), "{}");
	}
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void replica_up(struct replica *r)
{
	const union MHD_DaemonInfo *info;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->move_status = 200;
	r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
				scorer_answer, r, MHD_OPTION_END);
	assert_non_null(r->d);
	info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
	r->port = info->port;
}

static void replica_down(struct replica *r)
{
	MHD_stop_daemon(r->d);
	pthread_mutex_destroy(&r->lock);
}

/* The world -------------------------------------------------------------- */

#define OWNED(ns, name, uid, kind) \
	"{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\",\"uid\":\"" uid "\"," \
	"\"creationTimestamp\":\"2026-11-27T20:00:00Z\",\"ownerReferences\":[{\"apiVersion\":" \
	"\"apps/v1\",\"kind\":\"" kind "\",\"name\":\"x\",\"uid\":\"o\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"n-hot\"}}"

static const char pod_list[] = "{\"kind\":\"PodList\",\"items\":["
	OWNED("default", "web-1", "u-web", "ReplicaSet") ","
	OWNED("default", "guarded-1", "u-guarded", "ReplicaSet") "]}";

struct world {
	struct fake_apiserver *fa;
	struct replica a, b;
	struct rebal_options o;
	struct kubeclient *kc;
	struct scorerclient *sc;
	struct rebal_metrics m;
	struct rebal_loop loop;
};

static uint64_t fake_unix_ns_value, fake_mono_ms_value;
static uint64_t fake_unix_ns(void) { return fake_unix_ns_value; }
static uint64_t fake_mono_ms(void) { return fake_mono_ms_value; }

static struct world *world_up(bool dry_run, bool leader_elect)
{
	struct world *w = calloc(1, sizeof(*w));
	struct kubeaccess a = { 0 };
	struct scorerclient_config sc = { 0 };
	char err[256];

	assert_non_null(w);
	w->fa = fake_apiserver_start();
	assert_non_null(w->fa);
	fake_apiserver_set(w->fa, false, 200, pod_list);
	fake_apiserver_route(w->fa, "POST", "/events", 201, "{}");
	fake_apiserver_route(w->fa, "POST", "/pods/web-1/eviction", 201, "{}");
	fake_apiserver_route(w->fa, "POST", "/pods/guarded-1/eviction", 429,
			     "{\"kind\":\"Status\",\"code\":429,\"message\":\"Cannot evict pod as it "
			     "would violate the pod's disruption budget.\"}");
	replica_up(&w->a);
	replica_up(&w->b);

	assert_int_equal(rebal_options_defaults(&w->o, err, sizeof(err)), 0);
	snprintf(w->o.scorer[0], REBAL_URL_MAX, "http://127.0.0.1:%u", w->a.port);
	snprintf(w->o.scorer[1], REBAL_URL_MAX, "http://127.0.0.1:%u", w->b.port);
	w->o.n_scorer = 2;
	w->o.decide.dry_run = dry_run;
	w->o.decide.min_age_s = 0;
	w->o.leader_elect = leader_elect;
	snprintf(w->o.identity, sizeof(w->o.identity), "r1");

	snprintf(a.server, sizeof(a.server), "%s", w->fa->url);
	snprintf(a.token, sizeof(a.token), "tok");
	a.ca.data = strdup(w->fa->cert);
	a.ca.len = strlen(w->fa->cert);
	w->kc = kubeclient_create(&a, 2000, err, sizeof(err));
	assert_non_null(w->kc);
	sc.urls = (const char (*)[256])w->o.scorer;
	sc.n_urls = w->o.n_scorer;
	sc.ca = sc.cert = sc.key = "";
	sc.timeout_ms = 3000;
	w->sc = scorerclient_create(&sc, err, sizeof(err));
	assert_non_null(w->sc);
	assert_int_equal(rebal_loop_init(&w->loop, &w->o, w->kc, w->sc, &w->m, err, sizeof(err)), 0);
	fake_unix_ns_value = NOW_S * 1000000000ULL;
	fake_mono_ms_value = 1000;
	w->loop.unix_ns = fake_unix_ns;
	w->loop.mono_ms = fake_mono_ms;
	return w;
}

static void world_down(struct world *w)
{
	rebal_loop_free(&w->loop);
	scorerclient_destroy(w->sc);
	kubeclient_destroy(w->kc);
	fake_apiserver_stop(w->fa);
	replica_down(&w->a);
	replica_down(&w->b);
	free(w);
}

static void cycles(struct world *w, int n)
{
	for (int i = 0; i < n; i++) {
		rebal_loop_cycle(&w->loop);
		fake_unix_ns_value += 10ULL * 1000000000ULL;
	}
}

/* Tests ------------------------------------------------------------------ */

static void test_loop_move_after_pdb(void **state)
{
	struct world *w = world_up(false, false);

	(void)state;
	cycles(w, 2);	/* 2 reports over of 3: nothing yet */
	assert_int_equal(fake_apiserver_count(w->fa, "eviction", NULL), 0);
	assert_int_equal(fake_apiserver_count(w->fa, "GET /api/v1/pods", NULL), 0);
	cycles(w, 1);
	/* The pods' facts were read for n-hot only. */
	assert_int_equal(fake_apiserver_count(w->fa, "GET /api/v1/pods", NULL), 1);
	/* guarded-1 (the smallest enough) first: its PDB says no. */
	assert_int_equal(fake_apiserver_count(w->fa, "POST /api/v1/namespaces/default/pods/guarded-1/eviction",
					      "\"uid\":\"u-guarded\""), 1);
	/* Then web-1, in the same cycle. */
	assert_int_equal(fake_apiserver_count(w->fa, "POST /api/v1/namespaces/default/pods/web-1/eviction",
					      "\"kind\":\"Eviction\""), 1);
	assert_int_equal(atomic_load(&w->m.evictions), 1);
	assert_int_equal(atomic_load(&w->m.pdb_refusals), 1);
	/* Both replicas: guarded-1 held, released, then web-1 held. */
	for (struct replica *r = &w->a; r <= &w->b; r++) {
		assert_int_equal(r->n_moves, 3);
		assert_non_null(strstr(r->moves[0], "\"pod\":\"guarded-1\""));
		assert_non_null(strstr(r->moves[0], "\"holdSeconds\":300}"));
		assert_non_null(strstr(r->moves[1], "\"pod\":\"guarded-1\""));
		assert_non_null(strstr(r->moves[1], "\"holdSeconds\":1}"));
		assert_string_equal(r->moves[2],
			"{\"namespace\":\"default\",\"pod\":\"web-1\",\"uid\":\"u-web\","
			"\"workload\":\"default/ReplicaSet/web\",\"from\":\"n-hot\",\"to\":\"n-cool\","
			"\"rxBytesPerSecond\":100000,\"txBytesPerSecond\":30000000,\"holdSeconds\":300}");
	}
	/* Events: the refusal and the move, each on the pod and the node. */
	assert_int_equal(fake_apiserver_count(w->fa, "POST /api/v1/namespaces/default/events",
					      "\"reason\":\"NetschedMoved\""), 2);
	assert_int_equal(fake_apiserver_count(w->fa, "/events",
					      "evicting default/web-1 (tx 30 MB/s) for n-cool; n-cool has 105 MB/s tx free"), 2);
	assert_int_equal(fake_apiserver_count(w->fa, "/events",
					      "\"involvedObject\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"name\":\"n-hot\"}"), 2);
	assert_int_equal(fake_apiserver_count(w->fa, "/events", "its PodDisruptionBudget refused"), 2);

	/* Next cycles: web-1's workload in cool-down, guarded-1 backed off,
	 * the node just relieved: nothing more. */
	cycles(w, 3);
	assert_int_equal(fake_apiserver_count(w->fa, "eviction", NULL), 2);
	assert_int_equal(atomic_load(&w->m.evictions), 1);
	assert_true(atomic_load(&w->m.outcomes[DECIDE_COOLDOWN]) + atomic_load(&w->m.outcomes[DECIDE_PDB]) >= 3);
	world_down(w);
}

static void test_loop_replica_refuses(void **state)
{
	struct world *w = world_up(false, false);

	(void)state;
	w->b.move_status = 400;
	cycles(w, 3);
	/* No eviction at all: a replica would not hold the node. */
	assert_int_equal(fake_apiserver_count(w->fa, "eviction", NULL), 0);
	assert_int_equal(atomic_load(&w->m.evictions), 0);
	assert_true(atomic_load(&w->m.scorer_errors) >= 1);
	/* The replica that took a move was released from it. */
	assert_true(w->a.n_moves >= 2);
	assert_non_null(strstr(w->a.moves[0], "\"holdSeconds\":300}"));
	assert_non_null(strstr(w->a.moves[1], "\"holdSeconds\":1}"));
	world_down(w);
}

static void test_loop_dry_run(void **state)
{
	struct world *w = world_up(true, false);

	(void)state;
	cycles(w, 5);
	assert_int_equal(atomic_load(&w->m.outcomes[DECIDE_DRY_RUN]), 3);
	assert_int_equal(atomic_load(&w->m.outcomes[DECIDE_NOT_DEBOUNCED]), 2);
	assert_int_equal(fake_apiserver_count(w->fa, "eviction", NULL), 0);
	assert_int_equal(w->a.n_moves + w->b.n_moves, 0);
	/* Said once, on the pod and the node, though planned three times. */
	assert_int_equal(fake_apiserver_count(w->fa, "/events", "\"reason\":\"NetschedWouldMove\""), 2);
	assert_int_equal(fake_apiserver_count(w->fa, "/events",
					      "dry run, would evict default/guarded-1 (tx 8 MB/s) for n-cool"), 2);
	/* Ten minutes on, the same plan is said again. */
	fake_unix_ns_value += 600ULL * 1000000000ULL;
	cycles(w, 1);
	assert_int_equal(fake_apiserver_count(w->fa, "/events", "\"reason\":\"NetschedWouldMove\""), 4);
	world_down(w);
}

static void test_loop_pod_list_fails(void **state)
{
	struct world *w = world_up(false, false);

	(void)state;
	fake_apiserver_set(w->fa, false, 500, "{\"kind\":\"Status\",\"code\":500}");
	cycles(w, 3);
	assert_int_equal(fake_apiserver_count(w->fa, "eviction", NULL), 0);
	assert_int_equal(w->a.n_moves, 0);
	assert_true(atomic_load(&w->m.apiserver_errors) >= 1);
	assert_int_equal(atomic_load(&w->m.outcomes[DECIDE_UNKNOWN_POD]), 1);
	world_down(w);
}

static void test_loop_lease(void **state)
{
	static const char held[] =
		"{\"kind\":\"Lease\",\"metadata\":{\"name\":\"netsched-rebalancer\",\"namespace\":"
		"\"netsched\",\"resourceVersion\":\"77\"},\"spec\":{\"holderIdentity\":\"r0\","
		"\"leaseDurationSeconds\":15,\"renewTime\":\"2026-11-27T21:00:00.000000Z\"}}";
	struct world *w = world_up(false, true);
	const char *lease = "/apis/coordination.k8s.io/v1/namespaces/netsched/leases";

	(void)state;
	/* None yet: created, held. */
	fake_apiserver_route(w->fa, "GET", "/leases/netsched-rebalancer", 404, "{}");
	fake_apiserver_route(w->fa, "POST", "/leases", 201, "{}");
	assert_true(rebal_loop_lead(&w->loop));
	assert_int_equal(fake_apiserver_count(w->fa, lease, "\"holderIdentity\":\"r1\""), 1);

	/* Another replica holds it: followed while its renewal is unchanged
	 * for less than 15 s by our clock, taken after. */
	fake_apiserver_route(w->fa, "GET", "/leases/netsched-rebalancer", 200, held);
	fake_apiserver_route(w->fa, "PUT", "/leases/netsched-rebalancer", 200, "{}");
	fake_mono_ms_value += 20000;	/* our own write is too old to lead on */
	assert_false(rebal_loop_lead(&w->loop));
	fake_mono_ms_value += 14999;
	assert_false(rebal_loop_lead(&w->loop));
	assert_int_equal(fake_apiserver_count(w->fa, "PUT", NULL), 0);
	fake_mono_ms_value += 1;
	assert_true(rebal_loop_lead(&w->loop));
	assert_int_equal(fake_apiserver_count(w->fa, "PUT /apis/coordination.k8s.io/v1/namespaces/netsched/leases/netsched-rebalancer",
					      "\"resourceVersion\":\"77\""), 1);

	/* Someone else won the race (409): not the leader. */
	fake_apiserver_route(w->fa, "PUT", "/leases/netsched-rebalancer", 409, "{}");
	fake_mono_ms_value += 20000;
	assert_false(rebal_loop_lead(&w->loop));
	fake_mono_ms_value += 15000;
	assert_false(rebal_loop_lead(&w->loop));
	world_down(w);
}

static int setup(void **state)
{
	(void)state;
	log_init("test");
	log_set_level(LOG_LVL_ERROR);
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_move_after_pdb),
		cmocka_unit_test(test_loop_replica_refuses),
		cmocka_unit_test(test_loop_dry_run),
		cmocka_unit_test(test_loop_pod_list_fails),
		cmocka_unit_test(test_loop_lease),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
