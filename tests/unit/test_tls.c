/* HTTPS certificate files (scorer/serve/tls.c): loading a pair, and every way a
 * set of files is refused with a message naming the file (missing, not
 * PEM, too large, a key that is not the certificate's); noticing a
 * replaced file, and restamping so a broken set is not retried until it
 * changes again; client certificates checked on a real TLS connection
 * (libmicrohttpd, libcurl): trusted, missing, untrusted, not TLS at all,
 * and trusted but naming someone other than the allowed callers.
 * Certificates are made here with GnuTLS, in a temporary directory.
 * Rotation itself runs against the real scorer in
 * tests/integration/test_https.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "scorer/serve/tls.h"
#include "tests/unit/self_signed.h"

static char dir[] = "/tmp/netsched-test-tls-XXXXXX";

static void path_of(char *out, const char *name)
{
	snprintf(out, TLS_PATH_MAX, "%s/%s", dir, name);
}

static int write_file(const char *name, const void *data, size_t len)
{
	char path[TLS_PATH_MAX];
	FILE *f;
	size_t n;

	path_of(path, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	n = fwrite(data, 1, len, f);
	return fclose(f) == 0 && n == len ? 0 : -1;
}

/* name.pem and name.key: a self-signed P-256 certificate for common name
 * cn and DNS name dns (NULL: none), and its key, for the key purpose OID
 * purpose only (NULL: any). */
static int make_pair_named(const char *name, const char *cn, const char *purpose, const char *dns)
{
	char *cert, *key, file[64];
	int rc;

	if (self_signed_dns(cn, purpose, dns, &cert, &key))
		return -1;
	snprintf(file, sizeof(file), "%s.pem", name);
	rc = write_file(file, cert, strlen(cert));
	snprintf(file, sizeof(file), "%s.key", name);
	if (!rc)
		rc = write_file(file, key, strlen(key));
	free(cert);
	free(key);
	return rc;
}

static int make_pair_for(const char *name, const char *purpose)
{
	return make_pair_named(name, name, purpose, NULL);
}

static int make_pair(const char *name)
{
	return make_pair_for(name, NULL);
}

/* A trust list of several certificates: the files' PEM text, one after the
 * other. */
static int make_bundle(const char *name, const char *a, const char *b, const char *c,
		       const char *d)
{
	const char *parts[] = { a, b, c, d };
	char path[TLS_PATH_MAX], all[16384];
	size_t used = 0;

	for (size_t i = 0; i < 4; i++) {
		FILE *f;
		size_t n;

		path_of(path, parts[i]);
		f = fopen(path, "r");
		if (!f)
			return -1;
		n = fread(all + used, 1, sizeof(all) - used, f);
		fclose(f);
		used += n;
	}
	return write_file(name, all, used);
}

static int setup(void **state)
{
	static char big[TLS_MAX_PEM_BYTES + 2];

	(void)state;
	if (!mkdtemp(dir) || make_pair("a") || make_pair("b") ||
	    make_pair_for("c", GNUTLS_KP_TLS_WWW_CLIENT) || make_pair_for("s", GNUTLS_KP_TLS_WWW_SERVER) ||
	    write_file("junk.pem", "not a certificate\n", 18) ||
	    make_pair_named("evil", "evil-client", NULL, NULL) ||
	    make_pair_named("sched", "netsched-scheduler", GNUTLS_KP_TLS_WWW_CLIENT, NULL) ||
	    make_pair_named("dns", "someone", NULL, "System:Kube-Scheduler") ||
	    make_pair_named("crlf", "evil\r\n2026-01-01T00:00:00Z forged", NULL, NULL) ||
	    make_bundle("many.pem", "evil.pem", "sched.pem", "dns.pem", "crlf.pem"))
		return -1;
	memcpy(big, "-----BEGIN ", 11);
	memset(big + 11, 'x', sizeof(big) - 11);
	return write_file("big.pem", big, sizeof(big));
}

static int teardown(void **state)
{
	static const char *const names[] = { "a.pem", "a.key", "b.pem", "b.key", "c.pem", "c.key",
					     "s.pem", "s.key", "junk.pem", "big.pem", "live.pem",
					     "evil.pem", "evil.key", "sched.pem", "sched.key",
					     "dns.pem", "dns.key", "crlf.pem", "crlf.key", "many.pem" };
	char path[TLS_PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_of(path, names[i]);
		unlink(path);
	}
	return rmdir(dir);
}

struct load_row {
	const char *name;
	const char *cert, *key, *ca;	/* file names in dir; ca NULL: none */
	int rc;
	const char *error;		/* part of the message when rc != 0 */
};

static const struct load_row load_rows[] = {
	{ "a pair", "a.pem", "a.key", NULL, 0, NULL },
	{ "a pair and a client CA", "a.pem", "a.key", "b.pem", 0, NULL },
	{ "missing certificate", "none.pem", "a.key", NULL, -EINVAL, "none.pem: No such file" },
	{ "missing key", "a.pem", "none.key", NULL, -EINVAL, "none.key: No such file" },
	{ "missing client CA", "a.pem", "a.key", "none.pem", -EINVAL, "none.pem: No such file" },
	{ "not PEM", "junk.pem", "a.key", NULL, -EINVAL, "junk.pem: not a PEM file" },
	{ "over the size limit", "big.pem", "a.key", NULL, -EINVAL, "big.pem" },
	{ "the other certificate's key", "a.pem", "b.key", NULL, -EINVAL, "b.key: The certificate and the given key do not match" },
	{ "a certificate as the key", "a.pem", "a.pem", NULL, -EINVAL, "a.pem with" },
};

static void test_tls_load(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(load_rows) / sizeof(load_rows[0]); r++) {
		const struct load_row *row = &load_rows[r];
		struct tls_files f = { 0 };
		struct tls_pems p = { 0 };
		char err[512] = "";
		int rc;

		path_of(f.cert, row->cert);
		path_of(f.key, row->key);
		if (row->ca)
			path_of(f.client_ca, row->ca);
		rc = tls_load(&f, &p, err, sizeof(err));
		if (rc != row->rc)
			fail_msg("%s: tls_load gave %d (%s), want %d", row->name, rc, err, row->rc);
		if (rc && !strstr(err, row->error))
			fail_msg("%s: \"%s\" does not say \"%s\"", row->name, err, row->error);
		if (rc && (p.cert || p.key || p.ca))
			fail_msg("%s: the output was touched on error", row->name);
		if (!rc && (!p.cert || !p.key || !p.ca != !row->ca))
			fail_msg("%s: PEM text missing", row->name);
		if (!rc && strstr(err, "BEGIN"))
			fail_msg("%s: the message quotes the file", row->name);
		tls_free(&p);
		assert_null(p.key);
	}
}

/* A replaced file is noticed; restamping takes the new one as seen, which
 * is how a set that failed to load waits for the next change. */
static void test_tls_changed(void **state)
{
	struct tls_files f = { 0 };
	struct tls_pems p = { 0 };
	char err[512], src[TLS_PATH_MAX], live[TLS_PATH_MAX];

	(void)state;
	path_of(src, "a.pem");
	path_of(live, "live.pem");
	assert_int_equal(link(src, live), 0);
	snprintf(f.cert, sizeof(f.cert), "%s", live);
	path_of(f.key, "a.key");
	assert_int_equal(tls_load(&f, &p, err, sizeof(err)), 0);
	assert_false(tls_changed(&f, &p));

	/* Replaced by another file (a Secret update swaps a symlink). */
	assert_int_equal(unlink(live), 0);
	path_of(src, "b.pem");
	assert_int_equal(link(src, live), 0);
	assert_true(tls_changed(&f, &p));
	tls_restamp(&f, &p);
	assert_false(tls_changed(&f, &p));

	/* Gone for a moment mid-rotation: nothing to reload yet. */
	assert_int_equal(unlink(live), 0);
	assert_false(tls_changed(&f, &p));
	tls_free(&p);
	tls_free(&p);
}

/* ---------------------------------------------- client certificates (mTLS) */

/* What verify_answer() checks against: client_names (empty: any). */
static struct tls_files verify_as;

static enum MHD_Result verify_answer(void *cls, struct MHD_Connection *conn, const char *url,
				     const char *method, const char *version, const char *upload,
				     size_t *upload_size, void **con_cls)
{
	char why[256] = "verified";
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int rc;

	(void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;
	(void)con_cls;
	rc = tls_verify_client(conn, &verify_as, why, sizeof(why));
	resp = MHD_create_response_from_buffer(strlen(why), why, MHD_RESPMEM_MUST_COPY);
	ret = MHD_queue_response(conn, rc ? 403 : 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static size_t keep_body(char *p, size_t size, size_t n, void *ctx)
{
	char *out = ctx;
	size_t len = strlen(out), k = size * n < 255 - len ? size * n : 255 - len;

	memcpy(out + len, p, k);
	out[len + k] = '\0';
	return size * n;
}

/* A GET to port as a client with the certificate pair name ("": none);
 * the status, and the body in out. */
static long get_as(unsigned port, bool tls, const char *name, char *out)
{
	char url[64], cert[TLS_PATH_MAX], key[TLS_PATH_MAX], ca[TLS_PATH_MAX], file[32];
	CURL *c = curl_easy_init();
	long code = 0;

	assert_non_null(c);
	out[0] = '\0';
	snprintf(url, sizeof(url), "%s://127.0.0.1:%u/", tls ? "https" : "http", port);
	path_of(ca, "a.pem");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	if (name[0]) {
		snprintf(file, sizeof(file), "%s.pem", name);
		path_of(cert, file);
		snprintf(file, sizeof(file), "%s.key", name);
		path_of(key, file);
		curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, key);
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code;
}

static struct MHD_Daemon *daemon_on(const struct tls_pems *p, unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = p ? MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL,
				 verify_answer, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				 MHD_OPTION_HTTPS_MEM_KEY, p->key, MHD_OPTION_HTTPS_MEM_CERT,
				 p->cert, MHD_OPTION_HTTPS_MEM_TRUST, p->ca, MHD_OPTION_END)
	      : MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, verify_answer,
				 NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
	assert_non_null(d);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = info->port;
	return d;
}

static struct MHD_Daemon *never_started(void *ctx, int fd, const struct tls_pems *p)
{
	(void)ctx, (void)fd, (void)p;
	fail_msg("no rotation was due");
	return NULL;
}

static void stop_daemon(void *ctx, struct MHD_Daemon *d)
{
	(*(int *)ctx)++;
	MHD_stop_daemon(d);
}

/* The server is pair a, trusting b: b's certificate passes, none and a's
 * own (not signed by b) are refused with the reason; plain HTTP is no TLS.
 * A trusted certificate whose extended key usage is for servers only is
 * refused too. */
static void test_tls_verify_client(void **state)
{
	struct tls_files f = { 0 };
	struct tls_pems p = { 0 };
	struct tls_rotation *r;
	struct MHD_Daemon *d, *plain;
	unsigned port, plain_port;
	char err[256], body[256];
	int stopped = 0;

	(void)state;
	path_of(f.cert, "a.pem");
	path_of(f.key, "a.key");
	path_of(f.client_ca, "b.pem");
	assert_int_equal(tls_load(&f, &p, err, sizeof(err)), 0);
	d = daemon_on(&p, &port);
	assert_int_equal(get_as(port, true, "b", body), 200);
	assert_string_equal(body, "verified");
	assert_int_equal(get_as(port, true, "", body), 403);
	assert_non_null(strstr(body, "no client certificate"));
	assert_int_equal(get_as(port, true, "a", body), 403);
	assert_non_null(strstr(body, "client certificate rejected"));
	plain = daemon_on(NULL, &plain_port);
	assert_int_equal(get_as(plain_port, false, "", body), 403);
	assert_string_equal(body, "not a TLS connection");
	MHD_stop_daemon(plain);
	/* A certificate made for clients passes; one made for servers only
	 * (issue 24: the scorer's own, from the same CA) does not. */
	{
		struct tls_files fc = f;
		struct tls_pems pc = { 0 };
		struct MHD_Daemon *dc;
		unsigned pc_port;

		path_of(fc.client_ca, "c.pem");
		assert_int_equal(tls_load(&fc, &pc, err, sizeof(err)), 0);
		dc = daemon_on(&pc, &pc_port);
		assert_int_equal(get_as(pc_port, true, "c", body), 200);
		MHD_stop_daemon(dc);
		tls_free(&pc);
		path_of(fc.client_ca, "s.pem");
		assert_int_equal(tls_load(&fc, &pc, err, sizeof(err)), 0);
		dc = daemon_on(&pc, &pc_port);
		assert_int_equal(get_as(pc_port, true, "s", body), 403);
		assert_non_null(strstr(body, "client certificate rejected"));
		assert_non_null(strstr(body, "purpose"));
		MHD_stop_daemon(dc);
		tls_free(&pc);
	}
	/* A rotation takes the daemon and the certificates, and stops both. */
	r = tls_rotation_start(&f, &p, d, never_started, stop_daemon, &stopped, err, sizeof(err));
	assert_non_null(r);
	assert_null(p.cert);
	assert_int_equal(get_as(port, true, "b", body), 200);
	tls_rotation_stop(r);
	assert_int_equal(stopped, 1);
	tls_rotation_stop(NULL);
}

static void test_tls_client_names_parse(void **state)
{
	struct tls_client_names n = { 0 };
	char why[256], text[64], many[128] = "", lng[300];

	(void)state;
	assert_int_equal(tls_client_names_parse("netsched-scheduler,system:kube-scheduler", &n, why,
						sizeof(why)), 0);
	assert_int_equal(n.n, 2);
	assert_string_equal(n.name[1], "system:kube-scheduler");
	assert_string_equal(tls_client_names_format(&n, text, sizeof(text)),
			    "netsched-scheduler,system:kube-scheduler");
	for (size_t i = 0; i < 9; i++)
		strcat(many, i ? ",n" : "n");
	memset(lng, 'x', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	{
		static const struct { const char *v, *why; } bad[] = {
			{ "", "empty name" }, { "a,,b", "empty name" }, { "a,", "empty name" },
			{ "a b", "space" }, { "a\r\nb", "0x0d" }, { NULL, "more than 8" },
			{ NULL, "limit 253" },
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			const char *v = bad[i].v ? bad[i].v : i == 5 ? many : lng;

			why[0] = '\0';
			if (tls_client_names_parse(v, &n, why, sizeof(why)) != -EINVAL || !strstr(why, bad[i].why))
				fail_msg("names \"%s\": \"%s\" does not say %s", v, why, bad[i].why);
			assert_int_equal(n.n, 2); /* untouched */
		}
	}
}

/* Issue 39: any certificate from the CA passed, whatever its name. Now
 * only the allowed callers' common name or DNS name (either case) passes;
 * a certificate for anyone else is refused with its name and the allowed
 * ones, and a name with control characters cannot forge a log line. */
static void test_tls_client_names(void **state)
{
	struct tls_files f = { 0 };
	struct tls_pems p = { 0 };
	struct MHD_Daemon *d;
	unsigned port;
	char err[256], body[256];

	(void)state;
	path_of(f.cert, "a.pem");
	path_of(f.key, "a.key");
	path_of(f.client_ca, "many.pem");
	assert_int_equal(tls_load(&f, &p, err, sizeof(err)), 0);
	d = daemon_on(&p, &port);

	/* The CA alone (no names): anyone it signed. */
	memset(&verify_as, 0, sizeof(verify_as));
	assert_int_equal(get_as(port, true, "evil", body), 200);

	assert_int_equal(tls_client_names_parse("netsched-scheduler,system:kube-scheduler",
						&verify_as.client_names, err, sizeof(err)), 0);
	assert_int_equal(get_as(port, true, "evil", body), 403);
	assert_string_equal(body, "client certificate CN=evil-client is not one of --client-names "
			    "netsched-scheduler,system:kube-scheduler");
	assert_int_equal(get_as(port, true, "sched", body), 200);
	assert_int_equal(get_as(port, true, "dns", body), 200);
	assert_int_equal(get_as(port, true, "crlf", body), 403);
	assert_null(strchr(body, '\r'));
	assert_null(strchr(body, '\n'));
	assert_non_null(strstr(body, "CN=evil??2026-01-01T00:00:00Z forged is not one of"));
	/* Not in the list any more: the DNS name no longer helps. */
	assert_int_equal(tls_client_names_parse("netsched-scheduler", &verify_as.client_names, err,
						sizeof(err)), 0);
	assert_int_equal(get_as(port, true, "dns", body), 403);
	assert_non_null(strstr(body, "CN=someone DNS:System:Kube-Scheduler is not one of"));
	memset(&verify_as, 0, sizeof(verify_as));
	MHD_stop_daemon(d);
	tls_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_load),
		cmocka_unit_test(test_tls_changed),
		cmocka_unit_test(test_tls_verify_client),
		cmocka_unit_test(test_tls_client_names_parse),
		cmocka_unit_test(test_tls_client_names),
	};
	return cmocka_run_group_tests_name("tls", tests, setup, teardown);
}
