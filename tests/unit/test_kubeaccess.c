/* Reaching the apiserver: kubeconfigs as kubectl writes them (token, token
 * file, CA and client certificate as files or base64 data, relative paths),
 * what is refused with a message that says why (exec plugins, passwords,
 * plain http, missing contexts, a token that would break a header), and the
 * in-cluster ServiceAccount read from a folder the test builds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "file_tree.h"
#include "common/kubeaccess.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/netsched-kubeaccess.XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static int load(struct kubeaccess *a, const char *yaml, char *err, size_t errlen)
{
	return kubeaccess_kubeconfig_buffer(a, "kc", "/etc/kube", yaml, strlen(yaml), err, errlen);
}

#define HEAD "apiVersion: v1\nkind: Config\ncurrent-context: c\n" \
	     "contexts:\n- name: other\n  context: {cluster: x, user: x}\n" \
	     "- name: c\n  context: {cluster: k, user: u}\n"
#define CLUSTER "clusters:\n- name: k\n  cluster:\n    server: https://10.0.0.1:6443/\n" \
		"    certificate-authority: pki/ca.crt\n"

static void test_kubeaccess_token(void **state)
{
	struct kubeaccess a;
	char err[512], tok[64];

	(void)state;
	assert_int_equal(load(&a, HEAD CLUSTER "users:\n- name: u\n  user: {token: abc.def}\n",
			      err, sizeof(err)), 0);
	assert_string_equal(a.server, "https://10.0.0.1:6443");
	assert_string_equal(a.ca.file, "/etc/kube/pki/ca.crt");
	assert_null(a.ca.data);
	assert_false(a.insecure);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "abc.def");
	assert_non_null(strstr(a.origin, "context c"));
	kubeaccess_free(&a);
}

static void test_kubeaccess_data(void **state)
{
	/* "-----BEGIN X-----\n" and "key\n" in base64. */
	static const char yaml[] = HEAD
		"clusters:\n- name: k\n  cluster:\n    server: https://api.example:443\n"
		"    certificate-authority-data: LS0tLS1CRUdJTiBYLS0tLS0K\n"
		"users:\n- name: u\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBYLS0tLS0K\n"
		"    client-key-data: a2V5Cg==\n";
	struct kubeaccess a;
	char err[512], tok[64];

	(void)state;
	assert_int_equal(load(&a, yaml, err, sizeof(err)), 0);
	assert_int_equal(a.ca.len, 18);
	assert_memory_equal(a.ca.data, "-----BEGIN X-----\n", 18);
	assert_int_equal(a.key.len, 4);
	assert_memory_equal(a.key.data, "key\n", 4);
	assert_non_null(a.cert.data);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "");
	kubeaccess_free(&a);
	assert_null(a.ca.data);
	kubeaccess_free(&a); /* twice is harmless */
}

static void test_kubeaccess_token_file(void **state)
{
	struct kubeaccess a;
	char err[512], tok[64], yaml[1024], dir[128];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/kc", root);
	file_tree_put(root, "kc/token", "rotated-1\n");
	snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {tokenFile: token}\n");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", dir, yaml, strlen(yaml), err,
						      sizeof(err)), 0);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "rotated-1");
	/* Read again on every connection: a rotated token is used at once. */
	file_tree_put(root, "kc/token", "rotated-2");
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "rotated-2");
	file_tree_put(root, "kc/token", "bad token\r\nX-Injected: 1");
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot go in an HTTP header"));
	kubeaccess_free(&a);
}

static void test_kubeaccess_file(void **state)
{
	struct kubeaccess a;
	char err[512], path[128];

	(void)state;
	file_tree_put(root, "conf/kubeconfig", HEAD CLUSTER "users:\n- name: u\n  user:\n"
		      "    client-certificate: me.crt\n    client-key: /abs/me.key\n");
	snprintf(path, sizeof(path), "%s/conf/kubeconfig", root);
	assert_int_equal(kubeaccess_kubeconfig(&a, path, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/conf/pki/ca.crt", root);
	assert_string_equal(a.ca.file, path);
	snprintf(path, sizeof(path), "%s/conf/me.crt", root);
	assert_string_equal(a.cert.file, path);
	assert_string_equal(a.key.file, "/abs/me.key");
	kubeaccess_free(&a);

	snprintf(path, sizeof(path), "%s/none", root);
	assert_int_equal(kubeaccess_kubeconfig(&a, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

static void test_kubeaccess_refused(void **state)
{
	static const struct {
		const char *name, *yaml, *err;
	} cases[] = {
		{ "exec plugin", HEAD CLUSTER "users:\n- name: u\n  user:\n    exec: {command: "
		  "aws}\n", "an exec plugin" },
		{ "auth provider", HEAD CLUSTER "users:\n- name: u\n  user:\n    auth-provider: "
		  "{name: gcp}\n", "an auth provider" },
		{ "password", HEAD CLUSTER "users:\n- name: u\n  user: {username: a, password: b}\n",
		  "basic authentication is not supported" },
		{ "plain http", HEAD "clusters:\n- name: k\n  cluster: {server: "
		  "http://10.0.0.1:8080}\nusers:\n- name: u\n  user: {token: t}\n",
		  "server must be an https:// URL" },
		{ "no current context", "apiVersion: v1\nkind: Config\n", "no current-context" },
		{ "unknown context", "current-context: nope\ncontexts: []\n",
		  "current-context nope is not among its contexts" },
		{ "missing cluster", HEAD "users:\n- name: u\n  user: {token: t}\n",
		  "names no cluster" },
		{ "missing user", HEAD CLUSTER, "names user u, which the file does not have" },
		{ "key without certificate", HEAD CLUSTER "users:\n- name: u\n  user: {client-key: "
		  "k.pem}\n", "without its key, or a key without its certificate" },
		{ "token with a newline", HEAD CLUSTER "users:\n- name: u\n  user: {token: "
		  "\"a\\r\\nX-Evil: 1\"}\n", "cannot go in an HTTP header" },
		{ "bad base64", HEAD "clusters:\n- name: k\n  cluster:\n    server: https://a\n"
		  "    certificate-authority-data: '!!!!'\nusers: []\n", "not valid base64" },
		{ "base64 of the wrong length", HEAD "clusters:\n- name: k\n  cluster:\n    server: "
		  "https://a\n    certificate-authority-data: abc\n", "not base64" },
		/* Issue 39: a CR/LF in the server URL passed --check-config and
		 * was logged raw; in any name, URL or path it is refused, naming
		 * the field. */
		{ "CR/LF in the server URL", HEAD "clusters:\n- name: k\n  cluster: {server: "
		  "\"https://10.0.0.1\\r\\n2026-11-27T00:00:00Z netsched-scorer info forged\"}\n",
		  "kc: cluster k server has a control character (0x0d) at byte 17" },
		{ "LF in the current context", "current-context: \"c\\nx\"\ncontexts: []\n",
		  "kc: current-context has a control character (0x0a) at byte 2" },
		{ "a tab in the user's name", "current-context: c\ncontexts:\n- name: c\n  context: "
		  "{cluster: k, user: \"u\\tv\"}\n" CLUSTER, "context c user has a control character (0x09)" },
		{ "CR in a CA path", HEAD "clusters:\n- name: k\n  cluster: {server: https://a, "
		  "certificate-authority: \"ca\\r.crt\"}\n", "cluster certificate-authority has a control" },
		{ "CR in a client key path", HEAD CLUSTER "users:\n- name: u\n  user: {client-certificate: "
		  "c.pem, client-key: \"k\\r.pem\"}\n", "user u client-key has a control character" },
		{ "LF in a token file path", HEAD CLUSTER "users:\n- name: u\n  user: {tokenFile: "
		  "\"t\\n\"}\n", "user u tokenFile has a control character (0x0a) at byte 2" },
		{ "not a mapping", "- a\n- b\n", "not a kubeconfig" },
		{ "not YAML", "a: [b\n", "kc:" },
	};
	struct kubeaccess a;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (load(&a, cases[i].yaml, err, sizeof(err)) == 0)
			fail_msg("%s: accepted", cases[i].name);
		if (!strstr(err, cases[i].err))
			fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].name, err, cases[i].err);
		if (strpbrk(err, "\r\n\t"))
			fail_msg("%s: error \"%s\" holds a control character", cases[i].name, err);
	}
}

static void test_kubeaccess_in_cluster(void **state)
{
	struct kubeaccess a;
	char err[512], tok[64], sa[128], path[160];

	(void)state;
	snprintf(sa, sizeof(sa), "%s/sa", root);
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not running in a pod"));

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no ServiceAccount token"));

	file_tree_put(root, "sa/token", "eyJhbGciOi.sa-token\n");
	file_tree_put(root, "sa/ca.crt", "-----BEGIN CERTIFICATE-----\n");
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), 0);
	assert_string_equal(a.server, "https://10.96.0.1:443");
	snprintf(path, sizeof(path), "%s/ca.crt", sa);
	assert_string_equal(a.ca.file, path);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "eyJhbGciOi.sa-token");
	kubeaccess_free(&a);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), 0);
	assert_string_equal(a.server, "https://[fd00::1]:443");
	kubeaccess_free(&a);

	setenv("KUBERNETES_SERVICE_PORT", "443/tcp", 1);
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), -EINVAL);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

/* Nesting and anchors are bounded before libyaml's loader, whose cost
 * grows with both (a 1 MiB nested file did not load in 20 s): past the
 * bound, a clear error at the first level or anchor too many, whatever
 * follows it; within it, a file loads. */
static void test_kubeaccess_yaml_bounds(void **state)
{
	static char yaml[KUBEACCESS_FILE_MAX];
	struct kubeaccess a;
	char err[512];
	size_t n;

	(void)state;
	/* 1 MiB of '[' after a key, never closed. */
	n = (size_t)snprintf(yaml, sizeof(yaml), "current-context: c\nclusters: ");
	memset(yaml + n, '[', sizeof(yaml) - n);
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", "", yaml, sizeof(yaml), err,
						      sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "kc:2: nested deeper than 32 levels"));
	/* Flow mappings as the first key. */
	n = 0;
	for (unsigned i = 0; i < 40; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "{a: ");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", "", yaml, n, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "nested deeper than 32 levels"));
	/* Block nesting, by indentation. */
	n = (size_t)snprintf(yaml, sizeof(yaml), "current-context: c\nl:\n");
	for (unsigned i = 0; i < 40; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "%*s- \n", (int)(2 * i), "");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", "", yaml, n, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "nested deeper than 32 levels"));
	/* Anchors: 64 are fine, the 65th is refused. */
	n = (size_t)snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {token: t}\n"
			     "l:\n");
	for (unsigned i = 0; i < KUBEACCESS_MAX_ANCHORS; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "- &a%u x\n- *a%u\n", i, i);
	if (kubeaccess_kubeconfig_buffer(&a, "kc", "/etc/kube", yaml, n, err, sizeof(err)))
		fail_msg("64 anchors: %s", err);
	kubeaccess_free(&a);
	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "- &last x\n");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", "/etc/kube", yaml, n, err,
						      sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 64 YAML anchors"));
	/* Exactly 32 levels load (an extension's object may nest). */
	n = (size_t)snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {token: t}\n"
			     "x: ");
	for (unsigned i = 0; i < KUBEACCESS_MAX_DEPTH - 1; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "[");
	for (unsigned i = 0; i < KUBEACCESS_MAX_DEPTH - 1; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "]");
	if (kubeaccess_kubeconfig_buffer(&a, "kc", "/etc/kube", yaml, n, err, sizeof(err)))
		fail_msg("32 levels: %s", err);
	kubeaccess_free(&a);
}

/* What start-up and --check-config ask: every file the access names can be
 * read now (libcurl opens them later, on the watch's thread, where a FIFO
 * would hang it and a missing file would only show as failing requests). */
static void test_kubeaccess_check_files(void **state)
{
	struct kubeaccess a;
	char err[512], yaml[1024], dir[128], path[160];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cf", root);
	file_tree_put(root, "cf/token", "tok\n");
	file_tree_put(root, "cf/ca.crt", "-----BEGIN CERTIFICATE-----\n");
	snprintf(yaml, sizeof(yaml), HEAD "clusters:\n- name: k\n  cluster: {server: https://a, "
		 "certificate-authority: ca.crt}\nusers:\n- name: u\n  user: {tokenFile: token}\n");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", dir, yaml, strlen(yaml), err,
						      sizeof(err)), 0);
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), 0);
	/* A missing CA. */
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	unlink(path);
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "certificate authority: "));
	assert_non_null(strstr(err, "ca.crt: No such file or directory"));
	/* A FIFO as the CA: refused at once, not waited on. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ca.crt: a FIFO, not a regular file"));
	unlink(path);
	file_tree_put(root, "cf/ca.crt", "-----BEGIN CERTIFICATE-----\n");
	/* A missing or empty token file. */
	snprintf(path, sizeof(path), "%s/token", dir);
	unlink(path);
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "token file: "));
	file_tree_put(root, "cf/token", "\n");
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "holds no bearer token"));
	kubeaccess_free(&a);
	/* A client key that is a device. */
	file_tree_put(root, "cf/token", "tok\n");
	snprintf(yaml, sizeof(yaml), HEAD "clusters:\n- name: k\n  cluster: {server: https://a}\n"
		 "users:\n- name: u\n  user: {client-certificate: ca.crt, client-key: /dev/zero}\n");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", dir, yaml, strlen(yaml), err,
						      sizeof(err)), 0);
	assert_int_equal(kubeaccess_check_files(&a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "client key: /dev/zero: a character device, not a regular file"));
	kubeaccess_free(&a);
	/* A kubeconfig that is a FIFO. */
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(kubeaccess_kubeconfig(&a, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a FIFO, not a regular file"));
}

/* Every length the access holds is bounded, and past it a clear error. */
static void test_kubeaccess_limits(void **state)
{
	static char yaml[KUBEACCESS_FILE_MAX + 64], big[KUBEACCESS_TOKEN_MAX + 16];
	struct kubeaccess a;
	char err[512], tok[8], sa[KUBEACCESS_PATH_MAX + 16];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {token: %s}\n", big);
	assert_int_equal(load(&a, yaml, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the token is 16399 bytes, longer than the 16383 allowed"));
	big[KUBEACCESS_PATH_MAX + 8] = '\0';
	snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {tokenFile: %s}\n", big);
	assert_int_equal(load(&a, yaml, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tokenFile: path too long"));
	snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {client-certificate: "
		 "%s, client-key: k}\n", big);
	assert_int_equal(load(&a, yaml, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "client-certificate: path too long"));
	memset(yaml, '#', KUBEACCESS_FILE_MAX + 1);
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", "", yaml, KUBEACCESS_FILE_MAX + 1,
						      err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than the 1048576 a kubeconfig may have"));
	/* A static token longer than the caller's room. */
	assert_int_equal(load(&a, HEAD CLUSTER "users:\n- name: u\n  user: {token: abcdefghij}\n",
			      err, sizeof(err)), 0);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 7 bytes"));
	kubeaccess_free(&a);
	/* An empty token file is refused (common/bearertoken.h), not sent as none. */
	file_tree_put(root, "empty/token", "\n");
	snprintf(sa, sizeof(sa), "%s/empty", root);
	snprintf(yaml, sizeof(yaml), HEAD CLUSTER "users:\n- name: u\n  user: {tokenFile: token}\n");
	assert_int_equal(kubeaccess_kubeconfig_buffer(&a, "kc", sa, yaml, strlen(yaml), err,
						      sizeof(err)), 0);
	assert_int_equal(kubeaccess_token(&a, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "holds no bearer token"));
	kubeaccess_free(&a);
	/* In a pod: an address or a folder too long. */
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	memset(big, 'h', KUBEACCESS_URL_MAX);
	big[KUBEACCESS_URL_MAX] = '\0';
	setenv("KUBERNETES_SERVICE_HOST", big, 1);
	assert_int_equal(kubeaccess_in_cluster(&a, "/sa", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST is longer than"));
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	memset(sa, 'd', sizeof(sa) - 1);
	sa[0] = '/';
	sa[sizeof(sa) - 1] = '\0';
	assert_int_equal(kubeaccess_in_cluster(&a, sa, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "...: path longer than 1023 bytes"));
	assert_int_equal(kubeaccess_kubeconfig(&a, sa, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "...: path longer than 1023 bytes"));
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubeaccess_limits),
		cmocka_unit_test(test_kubeaccess_token),
		cmocka_unit_test(test_kubeaccess_data),
		cmocka_unit_test(test_kubeaccess_token_file),
		cmocka_unit_test(test_kubeaccess_file),
		cmocka_unit_test(test_kubeaccess_refused),
		cmocka_unit_test(test_kubeaccess_in_cluster),
		cmocka_unit_test(test_kubeaccess_yaml_bounds),
		cmocka_unit_test(test_kubeaccess_check_files),
	};
	return cmocka_run_group_tests_name("kubeaccess", tests, setup, teardown);
}
