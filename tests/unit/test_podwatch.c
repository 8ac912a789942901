/* The pod watch's thread (scorer/kube/podwatch.c) end to end against a real
 * HTTPS server (fake_apiserver.h): it lists, watches, applies what comes
 * to the in-flight table and says it is in sync; it stops promptly while a
 * watch is open; a refused request is retried, counted and out of sync.
 * The informer's every turn is in test_podinformer.c; this is the joint. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <curl/curl.h>

#include "common/clock.h"
#include "scorer/pods/inflight.h"
#include "scorer/kube/podwatch.h"
#include "tests/unit/fake_apiserver.h"

#define POD(uid, node) \
	"{\"metadata\":{\"uid\":\"" uid "\",\"namespace\":\"ns\",\"name\":\"" uid "\"," \
	"\"resourceVersion\":\"11\"},\"spec\":{\"nodeName\":\"" node "\"}}"

static struct fake_apiserver *fa;

struct watched {
	struct podwatch *w;
	struct inflight *in;
	uint64_t observed, errors;
};

static bool reached(void *arg)
{
	struct watched *x = arg;
	struct podinformer_stats st;
	struct inflight_stats is;

	podwatch_stats(x->w, &st);
	inflight_stats(x->in, &is);
	return is.observed >= x->observed && st.errors >= x->errors &&
	       (x->errors || (st.synced && is.confirming));
}

static struct podwatch *start(struct inflight *in, const char *token)
{
	struct podwatch_config c;
	struct kubeaccess a = { 0 };
	struct podwatch *w;
	char err[256];

	podwatch_defaults(&c);
	c.informer.backoff_min_ms = 20;
	c.informer.backoff_max_ms = 80;
	snprintf(a.server, sizeof(a.server), "%s", fa->url);
	snprintf(a.token, sizeof(a.token), "%s", token);
	a.ca.data = strdup(fa->cert);
	a.ca.len = strlen(fa->cert);
	w = podwatch_start(&c, &a, in, clock_mono_ns, err, sizeof(err));
	if (!w)
		fail_msg("podwatch_start: %s", err);
	assert_null(a.ca.data); /* taken over */
	return w;
}

static struct inflight *table(void)
{
	struct inflight_config ic = { .max_pods = 100, .max_nodes = 10,
				      .hold_ns = 70 * NS_PER_SEC, .fade_ns = 60 * NS_PER_SEC,
				      .expire_ns = 30 * NS_PER_SEC };
	struct inflight *in = inflight_create(&ic);

	assert_non_null(in);
	return in;
}

static void test_podwatch_sync(void **state)
{
	struct watched x = { .in = table(), .observed = 2 };
	struct podinformer_stats st;
	char path[1024], auth[256];

	(void)state;
	fake_apiserver_set(fa, false, 200, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":"
			   "\"10\"},\"items\":[" POD("a", "n1") "]}");
	fake_apiserver_set(fa, true, 200, "{\"type\":\"ADDED\",\"object\":" POD("b", "n2") "}\n");
	atomic_store(&fa->hold, true);
	x.w = start(x.in, "sa-token");
	assert_true(fake_apiserver_wait(reached, &x));
	podwatch_stats(x.w, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.events, 1);
	fake_apiserver_last(fa, path, sizeof(path), auth, sizeof(auth));
	assert_non_null(strstr(path, "watch=1&allowWatchBookmarks=true&resourceVersion=10&"
				     "timeoutSeconds=300&fieldSelector=spec.nodeName!=,status.phase!="
				     "Succeeded,status.phase!=Failed"));
	assert_string_equal(auth, "Bearer sa-token");
	/* Stops while the watch is open (the transfer is cut short). */
	podwatch_stop(x.w);
	atomic_store(&fa->hold, false);
	inflight_destroy(x.in);
}

static void test_podwatch_refused(void **state)
{
	struct watched x = { .in = table(), .errors = 3 };
	struct podinformer_stats st;

	(void)state;
	fake_apiserver_set(fa, false, 401, "{\"kind\":\"Status\",\"code\":401,\"message\":"
			   "\"Unauthorized\"}");
	x.w = start(x.in, "bad");
	/* Retried after a backoff, counted each time, never in sync. */
	assert_true(fake_apiserver_wait(reached, &x));
	podwatch_stats(x.w, &st);
	assert_false(st.synced);
	assert_int_equal(st.lists, 0);
	podwatch_stop(x.w);
	inflight_destroy(x.in);
	podwatch_stop(NULL);
	podwatch_stats(NULL, &st);
	assert_int_equal(st.errors, 0);
}

static int setup(void **state)
{
	(void)state;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	fa = fake_apiserver_start();
	return fa ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fake_apiserver_stop(fa);
	curl_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podwatch_sync),
		cmocka_unit_test(test_podwatch_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
