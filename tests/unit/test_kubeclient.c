/* The apiserver client (scorer/kube/kubeclient.c) against a real HTTPS server
 * (fake_apiserver.h): the status before the body, a body streamed and
 * ended by the handler, the bearer token (static, from a file read per
 * request, refused when unsafe), the CA as data or a file, insecure skip,
 * a client certificate, a peer the CA does not vouch for, deadlines,
 * cancellation, and paths over the bound. */
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

#include "common/kubeclient.h"
#include "tests/unit/fake_apiserver.h"

static struct fake_apiserver *fa;
static char dir[] = "/tmp/netsched-test-kubeclient.XXXXXX";

struct got {
	long code;
	int statuses;
	char body[4096];
	size_t len;
	size_t stop_after;	/* end the transfer once this much came; 0: never */
};

static void on_status(void *ctx, long code)
{
	struct got *g = ctx;

	g->code = code;
	g->statuses++;
}

static bool on_body(void *ctx, const char *p, size_t n)
{
	struct got *g = ctx;
	size_t k = n < sizeof(g->body) - 1 - g->len ? n : sizeof(g->body) - 1 - g->len;

	assert_int_equal(g->statuses, 1); /* the status always comes first */
	memcpy(g->body + g->len, p, k);
	g->len += k;
	g->body[g->len] = '\0';
	return !g->stop_after || g->len < g->stop_after;
}

static void path_in(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

static void put(const char *name, const char *content)
{
	char path[128];
	FILE *f;

	path_in(path, sizeof(path), name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

/* Access to the fake: its CA as PEM data, a static token. */
static struct kubeaccess access_to(const char *token)
{
	struct kubeaccess a = { 0 };

	snprintf(a.server, sizeof(a.server), "%s", fa->url);
	snprintf(a.token, sizeof(a.token), "%s", token);
	a.ca.data = strdup(fa->cert);
	assert_non_null(a.ca.data);
	a.ca.len = strlen(fa->cert);
	return a;
}

static struct kubeclient *client(struct kubeaccess *a)
{
	char err[256];
	struct kubeclient *kc = kubeclient_create(a, 2000, err, sizeof(err));

	assert_non_null(kc);
	assert_null(a->ca.data); /* taken over */
	return kc;
}

static int get(struct kubeclient *kc, const char *path, uint64_t timeout_ms, struct got *g,
	       char *why, size_t whylen)
{
	const struct kubeclient_handler h = { on_status, on_body, g };
	size_t stop_after = g->stop_after;

	memset(g, 0, sizeof(*g));
	g->stop_after = stop_after;
	return kubeclient_get(kc, path, timeout_ms, &h, why, whylen);
}

static void test_kubeclient_get(void **state)
{
	struct kubeaccess a = access_to("tok.1");
	struct kubeclient *kc = client(&a);
	struct got g = { 0 };
	char why[512], path[1024], auth[256];

	(void)state;
	assert_string_equal(kubeclient_server(kc), fa->url);
	fake_apiserver_set(fa, false, 200, "{\"kind\":\"PodList\"}");
	assert_int_equal(get(kc, "/api/v1/pods?limit=5", 5000, &g, why, sizeof(why)), 0);
	assert_int_equal(g.code, 200);
	assert_int_equal(g.statuses, 1);
	assert_string_equal(g.body, "{\"kind\":\"PodList\"}");
	fake_apiserver_last(fa, path, sizeof(path), auth, sizeof(auth));
	assert_string_equal(path, "/api/v1/pods?limit=5");
	assert_string_equal(auth, "Bearer tok.1");

	/* An error status, with its body. */
	fake_apiserver_set(fa, false, 403, "{\"kind\":\"Status\",\"code\":403}");
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	assert_int_equal(g.code, 403);
	assert_non_null(strstr(g.body, "\"code\":403"));

	/* A watch that stays open: the handler ends it, which is an answer. */
	g.stop_after = 5;
	fake_apiserver_set(fa, true, 200, "{\"type\":\"ADDED\"}\n");
	atomic_store(&fa->hold, true);
	assert_int_equal(get(kc, "/api/v1/pods?watch=1", 30000, &g, why, sizeof(why)), 0);
	assert_true(g.len >= 5);

	/* ... or its deadline does. */
	g.stop_after = 0;
	assert_int_equal(get(kc, "/api/v1/pods?watch=1", 300, &g, why, sizeof(why)), -ETIMEDOUT);
	assert_int_equal(g.code, 200);
	assert_non_null(strstr(why, "timed out after"));
	atomic_store(&fa->hold, false);

	/* A path longer than any the watch makes. */
	{
		static char longpath[20000];

		memset(longpath, 'a', sizeof(longpath) - 1);
		longpath[0] = '/';
		assert_int_equal(get(kc, longpath, 1000, &g, why, sizeof(why)), -E2BIG);
		assert_non_null(strstr(why, "more than the 16383 allowed"));
	}

	/* Cancelled: this and every later request end at once. */
	kubeclient_cancel(kc);
	assert_int_equal(get(kc, "/api/v1/pods", 1000, &g, why, sizeof(why)), -EINTR);
	kubeclient_destroy(kc);
	kubeclient_destroy(NULL);
}

/* POST and PUT carry their JSON body; the next GET is a GET again. */
static void test_kubeclient_request(void **state)
{
	static const char eviction[] = "{\"apiVersion\":\"policy/v1beta1\",\"kind\":\"Eviction\"}";
	struct kubeaccess a = access_to("tok.2");
	struct kubeclient *kc = client(&a);
	const struct kubeclient_handler h = { on_status, on_body, NULL };
	struct got g = { 0 };
	struct kubeclient_handler hg = h;
	char why[512], method[8], ctype[64], body[8192];

	(void)state;
	hg.ctx = &g;
	kubeclient_set_user_agent(kc, "netsched-rebalancer");
	fake_apiserver_set_other(fa, 429, "{\"kind\":\"Status\",\"code\":429}");
	assert_int_equal(kubeclient_request(kc, "POST", "/api/v1/namespaces/d/pods/p/eviction",
					    eviction, strlen(eviction), 5000, &hg, why, sizeof(why)), 0);
	assert_int_equal(g.code, 429);
	assert_non_null(strstr(g.body, "\"code\":429"));
	fake_apiserver_last_upload(fa, method, sizeof(method), ctype, sizeof(ctype), body,
				   sizeof(body));
	assert_string_equal(method, "POST");
	assert_string_equal(ctype, "application/json");
	assert_string_equal(body, eviction);

	memset(&g, 0, sizeof(g));
	fake_apiserver_set_other(fa, 200, "{}");
	assert_int_equal(kubeclient_request(kc, "PUT", "/apis/coordination.k8s.io/v1/x", "{\"a\":1}",
					    7, 5000, &hg, why, sizeof(why)), 0);
	fake_apiserver_last_upload(fa, method, sizeof(method), ctype, sizeof(ctype), body,
				   sizeof(body));
	assert_string_equal(method, "PUT");
	assert_string_equal(body, "{\"a\":1}");

	/* PATCH: a JSON merge patch (the rebalancer's node label), then the
	 * handle is a plain GET again. */
	memset(&g, 0, sizeof(g));
	assert_int_equal(kubeclient_request(kc, "PATCH", "/api/v1/nodes/n1",
					    "{\"metadata\":{}}", 15, 5000, &hg, why, sizeof(why)), 0);
	assert_int_equal(g.code, 200);
	fake_apiserver_last_upload(fa, method, sizeof(method), ctype, sizeof(ctype), body,
				   sizeof(body));
	assert_string_equal(method, "PATCH");
	assert_string_equal(ctype, "application/merge-patch+json");
	assert_string_equal(body, "{\"metadata\":{}}");

	memset(&g, 0, sizeof(g));
	fake_apiserver_set(fa, false, 200, "{\"kind\":\"PodList\"}");
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	fake_apiserver_last_upload(fa, method, sizeof(method), ctype, sizeof(ctype), body,
				   sizeof(body));
	assert_string_equal(method, "GET");
	assert_string_equal(body, "");

	assert_int_equal(kubeclient_request(kc, "DELETE", "/api/v1/pods", NULL, 0, 5000, &hg, why,
					    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "method DELETE is not one this client sends"));
	kubeclient_destroy(kc);
}

static void test_kubeclient_token_file(void **state)
{
	struct kubeaccess a = access_to("");
	struct kubeclient *kc;
	struct got g = { 0 };
	char why[512], path[1024], auth[256];

	(void)state;
	path_in(a.token_file, sizeof(a.token_file), "token");
	put("token", "rotated-1\n");
	kc = client(&a);
	fake_apiserver_set(fa, false, 200, "{}");
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	fake_apiserver_last(fa, path, sizeof(path), auth, sizeof(auth));
	assert_string_equal(auth, "Bearer rotated-1");
	/* Read again for every request. */
	put("token", "rotated-2");
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	fake_apiserver_last(fa, path, sizeof(path), auth, sizeof(auth));
	assert_string_equal(auth, "Bearer rotated-2");
	/* Refused before anything is sent. */
	put("token", "two\nlines");
	atomic_store(&fa->lists, 0);
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "token: byte 4 of the bearer token"));
	assert_int_equal(atomic_load(&fa->lists), 0);
	kubeclient_destroy(kc);
}

static void test_kubeclient_tls(void **state)
{
	char *other_cert, *other_key, why[512], ca_file[128];
	struct kubeaccess a;
	struct kubeclient *kc;
	struct got g = { 0 };

	(void)state;
	fake_apiserver_set(fa, false, 200, "{}");
	/* A CA that did not sign the server's certificate. */
	assert_int_equal(self_signed("someone-else", &other_cert, &other_key), 0);
	a = access_to("");
	free(a.ca.data);
	a.ca.data = other_cert;
	a.ca.len = strlen(other_cert);
	kc = client(&a);
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), -EIO);
	assert_int_equal(g.statuses, 0);
	assert_non_null(strstr(why, "certificate"));
	kubeclient_destroy(kc);
	free(other_key);

	/* The CA as a file, and a client certificate and key as files. */
	a = access_to("");
	free(a.ca.data);
	a.ca.data = NULL;
	put("ca.crt", fa->cert);
	put("client.crt", fa->cert);
	put("client.key", fa->key);
	path_in(ca_file, sizeof(ca_file), "ca.crt");
	snprintf(a.ca.file, sizeof(a.ca.file), "%s", ca_file);
	path_in(a.cert.file, sizeof(a.cert.file), "client.crt");
	path_in(a.key.file, sizeof(a.key.file), "client.key");
	kc = client(&a);
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	assert_int_equal(g.code, 200);
	kubeclient_destroy(kc);

	/* A client certificate as data; no CA but insecure-skip-tls-verify. */
	a = access_to("");
	free(a.ca.data);
	a.ca.data = NULL;
	a.insecure = true;
	a.cert.data = strdup(fa->cert);
	a.cert.len = strlen(fa->cert);
	a.key.data = strdup(fa->key);
	a.key.len = strlen(fa->key);
	kc = client(&a);
	assert_null(a.cert.data);
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), 0);
	assert_int_equal(g.code, 200);
	kubeclient_destroy(kc);

	/* Nobody listening. */
	a = access_to("");
	snprintf(a.server, sizeof(a.server), "https://127.0.0.1:1");
	kc = client(&a);
	assert_int_equal(get(kc, "/api/v1/pods", 5000, &g, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "127.0.0.1"));
	assert_int_equal(g.statuses, 0);
	kubeclient_destroy(kc);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir) || curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	fa = fake_apiserver_start();
	return fa ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	fake_apiserver_stop(fa);
	curl_global_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubeclient_get),
		cmocka_unit_test(test_kubeclient_request),
		cmocka_unit_test(test_kubeclient_token_file),
		cmocka_unit_test(test_kubeclient_tls),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
