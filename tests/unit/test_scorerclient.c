/* The rebalancer's requests to the scorers (rebalancer/scorerclient.c), on
 * real sockets against small HTTP servers (libmicrohttpd): the first scorer
 * that answers serves a read; a move is posted to every replica, given as
 * URLs or as a name resolving to their addresses (reached as the first
 * URL's host, which the server sees in Host); refusals and silent replicas
 * are counted apart; a reply over its bound is an error. */
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

#include <microhttpd.h>

#include "rebalancer/scorerclient.h"

struct replica {
	struct MHD_Daemon *d;
	unsigned port;
	unsigned status;
	const char *reply;
	atomic_uint posts;
	char host[128];
	char body[512];
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static int started;
	struct replica *r = cls;
	struct MHD_Response *resp;
	const char *host;
	enum MHD_Result ret;

	(void)url, (void)version;
	if (strcmp(method, "POST") == 0) {
		if (!*con_cls) {
			*con_cls = &started;
			r->body[0] = '\0';
			return MHD_YES;
		}
		if (*upload_size) {
			strncat(r->body, upload, *upload_size < sizeof(r->body) - strlen(r->body) - 1 ?
				*upload_size : sizeof(r->body) - strlen(r->body) - 1);
			*upload_size = 0;
			return MHD_YES;
		}
		atomic_fetch_add(&r->posts, 1);
	}
	host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	snprintf(r->host, sizeof(r->host), "%s", host ? host : "");
	resp = MHD_create_response_from_buffer(strlen(r->reply), (void *)r->reply,
					       MHD_RESPMEM_PERSISTENT);
	ret = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void up(struct replica *r, unsigned status, const char *reply)
{
	const union MHD_DaemonInfo *info;

	memset(r, 0, sizeof(*r));
	r->status = status;
	r->reply = reply;
	r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
				answer, r, MHD_OPTION_END);
	assert_non_null(r->d);
	info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
	r->port = info->port;
}

static struct scorerclient *client(char (*urls)[256], size_t n)
{
	struct scorerclient_config cfg = { (const char (*)[256])urls, n, "", "", "", 3000 };
	char err[200];
	struct scorerclient *sc = scorerclient_create(&cfg, err, sizeof(err));

	assert_non_null(sc);
	return sc;
}

static void test_scorerclient_first_that_answers(void **state)
{
	struct replica a;
	char urls[2][256];
	struct scorerclient *sc;
	struct buf b;
	const char *url = NULL;
	char why[512];
	long code = 0;

	(void)state;
	up(&a, 200, "{\"nodes\":[]}");
	snprintf(urls[0], 256, "http://127.0.0.1:9");	/* nobody */
	snprintf(urls[1], 256, "http://127.0.0.1:%u", a.port);
	sc = client(urls, 2);
	buf_init(&b, 1 << 20);
	assert_int_equal(scorerclient_get(sc, "/v1/pressure?hot=0.900", 1 << 20, &b, &code, &url, why,
					  sizeof(why)), 0);
	assert_int_equal(code, 200);
	assert_string_equal(url, urls[1]);
	assert_string_equal(b.data, "{\"nodes\":[]}");
	/* Over its bound: an error that says so. */
	assert_int_equal(scorerclient_get(sc, "/v1/pressure", 4, &b, &code, &url, why, sizeof(why)),
			 -EIO);
	assert_non_null(strstr(why, "reply larger than the bound"));
	/* Nobody at all: every scorer named in the error. */
	scorerclient_destroy(sc);
	sc = client(urls, 1);
	assert_int_equal(scorerclient_get(sc, "/v1/pressure", 100, &b, &code, &url, why, sizeof(why)),
			 -EIO);
	assert_non_null(strstr(why, "http://127.0.0.1:9: "));
	buf_free(&b);
	scorerclient_destroy(sc);
	MHD_stop_daemon(a.d);
}

static void test_scorerclient_post_all_urls(void **state)
{
	static const char move[] = "{\"pod\":\"web-1\"}";
	struct replica a, b, c;
	char urls[3][256];
	struct scorerclient *sc;
	struct scorerclient_all all;

	(void)state;
	up(&a, 200, "{\"accepted\":true}");
	up(&b, 200, "{\"accepted\":true}");
	up(&c, 400, "{\"error\":\"unknown node n-9 (to)\"}");
	snprintf(urls[0], 256, "http://127.0.0.1:%u", a.port);
	snprintf(urls[1], 256, "http://127.0.0.1:%u", b.port);
	snprintf(urls[2], 256, "http://127.0.0.1:%u", c.port);
	sc = client(urls, 2);
	assert_int_equal(scorerclient_post_all(sc, "", "/v1/moves", move, strlen(move), &all), 0);
	assert_int_equal(all.replicas, 2);
	assert_int_equal(all.accepted, 2);
	assert_int_equal(atomic_load(&a.posts), 1);
	assert_int_equal(atomic_load(&b.posts), 1);
	assert_string_equal(b.body, move);
	scorerclient_destroy(sc);

	sc = client(urls, 3);
	assert_int_equal(scorerclient_post_all(sc, NULL, "/v1/moves", move, strlen(move), &all), 0);
	assert_int_equal(all.accepted, 2);
	assert_int_equal(all.refused, 1);
	assert_non_null(strstr(all.why, "answered 400: {\"error\":\"unknown node n-9 (to)\"}"));
	scorerclient_destroy(sc);
	MHD_stop_daemon(a.d);
	MHD_stop_daemon(b.d);
	MHD_stop_daemon(c.d);
}

static void test_scorerclient_post_all_name(void **state)
{
	static const char move[] = "{\"pod\":\"web-1\"}";
	struct replica a;
	char urls[1][256], want[64];
	struct scorerclient *sc;
	struct scorerclient_all all;

	(void)state;
	up(&a, 200, "{\"accepted\":true}");
	/* A name no resolver knows: reached only through the replicas' addresses. */
	snprintf(urls[0], 256, "http://scorer.invalid:%u", a.port);
	sc = client(urls, 1);
	assert_int_equal(scorerclient_post_all(sc, "127.0.0.1", "/v1/moves", move, strlen(move), &all), 0);
	assert_int_equal(all.replicas, 1);
	assert_int_equal(all.accepted, 1);
	snprintf(want, sizeof(want), "scorer.invalid:%u", a.port);
	assert_string_equal(a.host, want);
	assert_string_equal(a.body, move);

	assert_int_equal(scorerclient_post_all(sc, "no-such-replicas.invalid", "/v1/moves", move,
					       strlen(move), &all), -ENOENT);
	assert_non_null(strstr(all.why, "no-such-replicas.invalid does not resolve"));
	assert_int_equal(all.accepted, 0);
	scorerclient_destroy(sc);

	/* The replica is gone: counted as not answering, not as refusing. */
	MHD_stop_daemon(a.d);
	sc = client(urls, 1);
	assert_int_equal(scorerclient_post_all(sc, "127.0.0.1", "/v1/moves", move, strlen(move), &all), 0);
	assert_int_equal(all.unreachable, 1);
	assert_int_equal(all.refused, 0);
	scorerclient_destroy(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scorerclient_first_that_answers),
		cmocka_unit_test(test_scorerclient_post_all_urls),
		cmocka_unit_test(test_scorerclient_post_all_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
