/* Report keys and signatures: key files good and bad (never echoing the
 * key), signing and verifying with both rotation keys, and everything a
 * forger or a corrupted wire could produce. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/keyfile.h"
#include "common/nodekey.h"
#include "proto/report.h"

#define K1 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define K2 "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define K3 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct key_row {
	const char *name;
	const char *text;
	int rc;
	size_t n;
	const char *why;	/* substring of the error */
};

static const struct key_row rows[] = {
	{ "one key", K1 "\n", 0, 1, NULL },
	{ "two keys, comments, blank lines, CRLF and spaces",
	  "# rotation\n\n  " K1 "  \r\n" K2 "\n", 0, 2, NULL },
	{ "uppercase hex", "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF", 0, 1,
	  NULL },
	{ "64-byte key", K1 K2, 0, 1, NULL },
	{ "empty file", "", -EINVAL, 0, "no key" },
	{ "only comments", "# nothing\n", -EINVAL, 0, "no key" },
	{ "too short", "00112233\n", -EINVAL, 0, "32 to 64 bytes" },
	{ "too long", K1 K2 "00\n", -EINVAL, 0, "32 to 64 bytes" },
	{ "odd length", K1 "0\n", -EINVAL, 0, "32 to 64 bytes" },
	{ "not hex", "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n", -EINVAL, 0,
	  "not hex" },
	{ "three keys", K1 "\n" K2 "\n" K3 "\n", -EINVAL, 0, "more than 2 keys" },
	{ "masters and shared keys (a migration)", "master " K1 "\nmaster  " K2 "\n" K3 "\n" K1 "\n",
	  0, 4, NULL },
	{ "three masters", "master " K1 "\nmaster " K2 "\nmaster " K3 "\n", -EINVAL, 0,
	  "more than 2 master keys" },
	{ "a node's own keys", "# derived\nnode node-1.example\n" K1 "\n" K2 "\n", 0, 2, NULL },
	{ "a node's file with a master", "node node-1\nmaster " K1 "\n", -EINVAL, 0,
	  "masters belong to the scorer alone" },
	{ "two node lines", "node a\nnode b\n" K1 "\n", -EINVAL, 0, "a second node line" },
	{ "a node name that is none", "node Node_1\n" K1 "\n", -EINVAL, 0,
	  "keys:1: the node name is not a DNS subdomain" },
	{ "a short master", "master 0011\n", -EINVAL, 0, "32 to 64 bytes" },
};

static void test_keyfile_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct keyfile kf = { .n = 99 };
		char err[256] = "";
		int rc = keyfile_parse("keys", rows[r].text, strlen(rows[r].text), &kf, err,
				       sizeof(err));

		if (rc != rows[r].rc)
			fail_msg("%s: rc %d (%s), want %d", rows[r].name, rc, err, rows[r].rc);
		if (rc == 0 && kf.n != rows[r].n)
			fail_msg("%s: %zu keys, want %zu", rows[r].name, kf.n, rows[r].n);
		if (rc && kf.n != 99)
			fail_msg("%s: output written on error", rows[r].name);
		if (rows[r].why && !strstr(err, rows[r].why))
			fail_msg("%s: error '%s' lacks '%s'", rows[r].name, err, rows[r].why);
		if (strstr(err, "00112233445566") || strstr(err, "ffeeddcc"))
			fail_msg("%s: error '%s' echoes the key", rows[r].name, err);
	}
}

static void keys(struct keyfile *kf, const char *text)
{
	char err[256];

	assert_int_equal(keyfile_parse("k", text, strlen(text), kf, err, sizeof(err)), 0);
}

static size_t signed_report(const struct keyfile_key *key, uint8_t *wire, size_t cap)
{
	struct report r = { .instance_id = 1, .seq = 5, .n_ifaces = 1 };
	size_t len;

	strcpy(r.node, "node-1");
	strcpy(r.ifaces[0].name, "eth0");
	report_iface_count(&r.ifaces[0], 1234, 0, 1000);
	assert_int_equal(report_encode_signed(&r, key, wire, cap, &len), 0);
	return len;
}

static void test_keyfile_sign_verify(void **state)
{
	struct keyfile old_only, both, other;
	uint8_t wire[REPORT_MAX_BYTES];
	struct report out;
	char err[256];
	size_t len;

	(void)state;
	keys(&old_only, K1);
	keys(&both, K2 "\n" K1);
	keys(&other, K3);
	assert_int_not_equal(old_only.keys[0].id, other.keys[0].id);

	/* Signed with the old key: verified by a scorer holding both keys. */
	len = signed_report(&old_only.keys[0], wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &both, &out, err, sizeof(err)), 0);
	assert_string_equal(out.node, "node-1");
	assert_int_equal(out.ifaces[0].rx_bytes, 1234);
	/* ...and by one without keys (signatures are optional there). */
	assert_int_equal(report_decode(wire, len, &out, err, sizeof(err)), 0);
	/* An unknown key. */
	assert_int_equal(report_decode_verified(wire, len, &other, &out, err, sizeof(err)),
			 -EKEYREJECTED);
	assert_non_null(strstr(err, "unknown key"));
	/* Every single flipped byte is caught (or makes the envelope unreadable). */
	for (size_t i = 0; i < len; i++) {
		int rc;

		wire[i] ^= 0x01;
		rc = report_decode_verified(wire, len, &both, &out, err, sizeof(err));
		if (rc == 0)
			fail_msg("flipping byte %zu of %zu went unnoticed", i, len);
		wire[i] ^= 0x01;
	}
	/* Unsigned while keys are required. */
	len = signed_report(NULL, wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &both, &out, err, sizeof(err)), -ENOKEY);
	assert_non_null(strstr(err, "unsigned"));
}

/* HKDF-SHA256(salt "netsched report key", master K1, info "netsched node
 * report key v1:node-1"), computed apart from libcrypto (Python's hmac):
 * the derivation is a wire contract between scorers and provisioned keys. */
#define NODE1_OF_K1 "030fe87be0b4d4dbd6810c6aa44cb22e1850a5ae17a6a2da0ee68d7dffbed6e8"

static void test_nodekey_derive(void **state)
{
	struct keyfile m, shared, node1;
	struct keyfile_key a, b, again;
	char text[1024], err[256], hex[2 * NODEKEY_BYTES + 1];

	(void)state;
	keys(&m, "master " K1 "\nmaster " K2);
	assert_int_equal(m.n_master, 2);
	assert_int_equal(nodekey_derive(&m.keys[0], "node-1", &a), 0);
	for (size_t i = 0; i < a.len; i++)
		snprintf(hex + 2 * i, 3, "%02x", a.bytes[i]);
	assert_string_equal(hex, NODE1_OF_K1);
	assert_int_equal(a.id, 0x13b8e695);
	assert_int_equal(a.kind, KEYFILE_NODE);
	assert_string_equal(a.node, "node-1");
	assert_int_equal(nodekey_derive(&m.keys[0], "node-1", &again), 0);
	assert_memory_equal(a.bytes, again.bytes, a.len);
	assert_int_equal(nodekey_derive(&m.keys[0], "node-2", &b), 0);
	assert_memory_not_equal(a.bytes, b.bytes, a.len);
	assert_int_equal(nodekey_derive(&m.keys[1], "node-1", &b), 0);
	assert_memory_not_equal(a.bytes, b.bytes, a.len);
	/* Only a master derives, and only for a node name. */
	keys(&shared, K1);
	assert_int_equal(nodekey_derive(&shared.keys[0], "node-1", &b), -EINVAL);
	assert_int_equal(nodekey_derive(&m.keys[0], "Node 1", &b), -EINVAL);

	/* The provisioning file: node-1's key alone, from the first master. */
	assert_int_equal(nodekey_file(&m, "node-1", text, sizeof(text), err, sizeof(err)), 0);
	assert_non_null(strstr(text, "\nnode node-1\n" NODE1_OF_K1 "\n"));
	assert_null(strstr(text, K1));
	keys(&node1, text);
	assert_string_equal(node1.node, "node-1");
	assert_int_equal(node1.n, 1);
	assert_int_equal(keyfile_signing_key(&node1)->id, a.id);
	assert_int_equal(nodekey_file(&shared, "node-1", text, sizeof(text), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no master key"));
	assert_int_equal(nodekey_file(&m, "node\r\n1", text, sizeof(text), err, sizeof(err)), -EINVAL);
	assert_null(strpbrk(err, "\r\n"));
}

static size_t report_as(const char *node, const struct keyfile_key *key, uint8_t *wire, size_t cap)
{
	struct report r = { .instance_id = 1, .seq = 5, .n_ifaces = 1 };
	size_t len;

	strcpy(r.node, node);
	strcpy(r.ifaces[0].name, "eth0");
	report_iface_count(&r.ifaces[0], 1234, 0, 1000);
	assert_int_equal(report_encode_signed(&r, key, wire, cap, &len), 0);
	return len;
}

/* Issue 39: with a shared key, one node's agent spoke as any other. A
 * node's own key signs for that node alone: its reports are taken, the
 * same key claiming another node is refused with both names, and a key
 * made to claim the other node's name does not verify as its key. */
static void test_nodekey_sign_verify(void **state)
{
	struct keyfile scorer, migrating, a_file, shared;
	struct keyfile_key lie;
	uint8_t wire[REPORT_MAX_BYTES];
	struct report out;
	char err[256], text[1024];
	size_t len;

	(void)state;
	keys(&scorer, "master " K1);
	assert_int_equal(nodekey_file(&scorer, "node-a", text, sizeof(text), err, sizeof(err)), 0);
	keys(&a_file, text);

	len = report_as("node-a", keyfile_signing_key(&a_file), wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &scorer, &out, err, sizeof(err)), 0);
	assert_string_equal(out.node, "node-a");
	assert_int_equal(out.signed_with, REPORT_SIGNED_NODE);

	/* node-a's key, its report saying node-b: refused, both named. */
	len = report_as("node-b", keyfile_signing_key(&a_file), wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &scorer, &out, err, sizeof(err)), -EPERM);
	assert_string_equal(err, "report for node node-b signed with node node-a's own key: a node "
			    "may report only for itself");
	/* ... and by a scorer without masters it is no key at all. */
	keys(&shared, K2);
	assert_int_equal(report_decode_verified(wire, len, &shared, &out, err, sizeof(err)),
			 -EKEYREJECTED);
	assert_non_null(strstr(err, "signed as node node-a with key"));

	/* node-a's key bytes presented as node-b's: not node-b's key. */
	lie = *keyfile_signing_key(&a_file);
	strcpy(lie.node, "node-b");
	len = report_as("node-b", &lie, wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &scorer, &out, err, sizeof(err)),
			 -EKEYREJECTED);
	assert_non_null(strstr(err, "signed as node node-b with key"));
	assert_non_null(strstr(err, "which is not that node's key"));

	/* A migration: masters and a shared key at once. Both verify; the
	 * shared key's reports say so. */
	keys(&migrating, "master " K1 "\n" K2);
	len = report_as("node-z", &shared.keys[0], wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &migrating, &out, err, sizeof(err)), 0);
	assert_int_equal(out.signed_with, REPORT_SIGNED_SHARED);
	len = report_as("node-a", keyfile_signing_key(&a_file), wire, sizeof(wire));
	assert_int_equal(report_decode_verified(wire, len, &migrating, &out, err, sizeof(err)), 0);
	assert_int_equal(out.signed_with, REPORT_SIGNED_NODE);
	assert_int_equal(report_decode(wire, len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.signed_with, REPORT_UNCHECKED);

	/* A master never signs, and a file of masters has no signing key. */
	assert_null(keyfile_signing_key(&scorer));
	assert_int_equal(report_encode_signed(&out, &scorer.keys[0], wire, sizeof(wire), &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyfile_rows),
		cmocka_unit_test(test_keyfile_sign_verify),
		cmocka_unit_test(test_nodekey_derive),
		cmocka_unit_test(test_nodekey_sign_verify),
	};
	return cmocka_run_group_tests_name("keyfile", tests, NULL, NULL);
}
