/* HTTPS certificate files (scorer/tls.c): loading a pair, and every way a
 * set of files is refused with a message naming the file (missing, not
 * PEM, too large, a key that is not the certificate's); noticing a
 * replaced file, and restamping so a broken set is not retried until it
 * changes again. Certificates are made here with GnuTLS, in a temporary
 * directory. Rotation itself runs against the real scorer in
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

#include "scorer/tls.h"
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

/* name.pem and name.key: a self-signed P-256 certificate and its key. */
static int make_pair(const char *name)
{
	char *cert, *key, file[64];
	int rc;

	if (self_signed(name, &cert, &key))
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

static int setup(void **state)
{
	static char big[TLS_MAX_PEM_BYTES + 2];

	(void)state;
	if (!mkdtemp(dir) || make_pair("a") || make_pair("b") ||
	    write_file("junk.pem", "not a certificate\n", 18))
		return -1;
	memcpy(big, "-----BEGIN ", 11);
	memset(big + 11, 'x', sizeof(big) - 11);
	return write_file("big.pem", big, sizeof(big));
}

static int teardown(void **state)
{
	static const char *const names[] = { "a.pem", "a.key", "b.pem", "b.key", "junk.pem",
					     "big.pem", "live.pem" };
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
		struct tls_files f = { "", "", "" };
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
	struct tls_files f = { "", "", "" };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_load),
		cmocka_unit_test(test_tls_changed),
	};
	return cmocka_run_group_tests_name("tls", tests, setup, teardown);
}
