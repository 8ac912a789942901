/* The agent's HTTP endpoint (agent/httpd.c) on 127.0.0.1, asked over real
 * sockets with libcurl, one row per request: /metrics from what was
 * published, /healthz, an unknown path, and a request with a body answered
 * 405 at once (its body never read); and an address that is not one. Its
 * behaviour under hostile clients is tests/integration/test_connections.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <curl/curl.h>

#include "agent/httpd.h"
#include "common/buf.h"

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	buf_append(arg, data, size * n);
	return size * n;
}

struct row {
	const char *name;
	const char *method;
	const char *path;
	const char *body;	/* NULL: none */
	long status;
	const char *in_body;
};

static const struct row rows[] = {
	{ "metrics, from the published report", "GET", "/metrics", NULL, 200,
	  "netsched_agent_receive_bytes_per_second{interface=\"eth0\"} 4242\n" },
	{ "metrics counts the endpoint's own closes", "GET", "/metrics", NULL, 200,
	  "netsched_agent_http_connections_reclaimed_total{reason=\"idle\"} 0\n" },
	{ "healthz", "GET", "/healthz", NULL, 200, "ok\n" },
	{ "HEAD", "HEAD", "/healthz", NULL, 200, "" },
	{ "an unknown path", "GET", "/nope", NULL, 404, "try /metrics or /healthz" },
	{ "another method", "DELETE", "/metrics", NULL, 405, "use GET" },
	{ "a body, answered before it is read", "POST", "/metrics", "0123456789", 405,
	  "without a body" },
};

static void test_agent_httpd_rows(void **state)
{
	struct agent_httpd *h;
	struct report r;
	char err[256];

	(void)state;
	h = agent_httpd_start("127.0.0.1", 0, err, sizeof(err));
	if (!h)
		fail_msg("agent_httpd_start: %s", err);
	memset(&r, 0, sizeof(r));
	r.n_ifaces = 1;
	strcpy(r.ifaces[0].name, "eth0");
	r.ifaces[0].traffic.rx.average = 4242;
	agent_httpd_publish(h, &r, NULL, NULL);
	agent_httpd_publish(NULL, &r, NULL, NULL);	/* no endpoint: nothing */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *row = &rows[i];
		CURL *c = curl_easy_init();
		struct buf body;
		char url[128];
		long status = 0;
		CURLcode cc;

		assert_non_null(c);
		buf_init(&body, 1 << 20);
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", agent_httpd_port(h), row->path);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
		if (!strcmp(row->method, "HEAD"))
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		else if (row->body)
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, row->body);
		else
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, row->method);
		cc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		buf_append(&body, "", 1);
		if (cc != CURLE_OK || status != row->status || !strstr(body.data, row->in_body))
			fail_msg("%s: %s %s: %s, status %ld, want %ld with \"%s\"; got:\n%s", row->name,
				 row->method, row->path, curl_easy_strerror(cc), status, row->status,
				 row->in_body, body.data);
		buf_free(&body);
		curl_easy_cleanup(c);
	}
	agent_httpd_stop(h);
	agent_httpd_stop(NULL);
	assert_null(agent_httpd_start("localhost", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "not an IP address"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_httpd_rows),
	};
	return cmocka_run_group_tests_name("agent_httpd", tests, NULL, NULL);
}
