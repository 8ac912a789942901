/* The pod watch ends a move's reservation (scorer/kube/podinformer.c with
 * scorer/pods/moves.c): a pod of the moved workload bound to the move's
 * destination lands it; one bound elsewhere, or of another workload, or
 * the moved pod itself, does not. Events fed to the informer as the
 * apiserver would send them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "scorer/kube/podinformer.h"
#include "scorer/pods/inflight.h"
#include "scorer/pods/moves.h"

#define T0 (1000ULL * NS_PER_SEC)
#define UNIX_MS 1790000000000ULL

static uint64_t now_ns = T0;
static uint64_t fake_mono(void) { return now_ns; }
static uint64_t fake_unix(void) { return UNIX_MS + (now_ns - T0) / NS_PER_MS; }

/* A replica of Deployment shop/<deploy> named uid, bound to node. */
#define REPLICA(uid, deploy, node) \
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"" uid "\",\"namespace\":\"shop\"," \
	"\"name\":\"" uid "\",\"resourceVersion\":\"11\",\"labels\":{\"pod-template-hash\":\"abc12\"}," \
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"" deploy "-abc12\",\"uid\":\"rs\"," \
	"\"controller\":true}]},\"spec\":{\"nodeName\":\"" node "\"}}}\n"

static void test_watch_lands_reservation(void **state)
{
	static const char page[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
				   "{\"resourceVersion\":\"10\"},\"items\":[]}";
	static const char events[] = REPLICA("moved", "web", "b")	/* the pod itself */
				     REPLICA("other", "db", "b")	/* another workload */
				     REPLICA("elsewhere", "web", "c");	/* another node */
	static const char lands[] = REPLICA("replacement", "web", "b");
	struct inflight_config ic = { .max_pods = 100, .max_nodes = 10, .hold_ns = 70 * NS_PER_SEC,
				      .fade_ns = 60 * NS_PER_SEC, .expire_ns = 30 * NS_PER_SEC };
	struct movereq rq = { .ns = "shop", .pod = "moved", .uid = "moved",
				    .workload = "shop/Deployment/web", .from = "a", .to = "b",
				    .rx_bytes_per_second = 1000, .hold_s = 300 };
	struct inflight *in = inflight_create(&ic);
	struct moves *m = moves_create(8);
	struct podinformer_config c;
	struct podinformer_request req;
	struct podinformer *pi;
	struct moves_stats st;

	(void)state;
	assert_non_null(in);
	assert_non_null(m);
	podinformer_defaults(&c);
	pi = podinformer_create(&c, "https://api.test:6443", in, fake_mono, fake_unix, 1);
	assert_non_null(pi);
	podinformer_set_moves(pi, m);
	assert_int_equal(moves_put(m, &rq, now_ns), 0);
	now_ns += NS_PER_SEC;
	assert_int_equal(podinformer_next(pi, &req), 0);
	podinformer_status(pi, 200);
	assert_true(podinformer_body(pi, page, strlen(page)));
	assert_int_equal(podinformer_end(pi, 0, NULL), 0);
	assert_int_equal(podinformer_next(pi, &req), 0);
	podinformer_status(pi, 200);
	assert_true(podinformer_body(pi, events, strlen(events)));
	moves_stats(m, now_ns, &st);
	assert_int_equal(st.landed, 0);
	assert_int_equal(st.reservations, 1);
	assert_true(podinformer_body(pi, lands, strlen(lands)));
	moves_stats(m, now_ns, &st);
	assert_int_equal(st.landed, 1);
	assert_int_equal(st.reservations, 0);
	assert_int_equal(st.holds, 1);
	podinformer_destroy(pi);
	moves_destroy(m);
	inflight_destroy(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_lands_reservation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
