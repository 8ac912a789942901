/* Report keys and signatures: key files good and bad (never echoing the
 * key), signing and verifying with both rotation keys, and everything a
 * forger or a corrupted wire could produce. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/keyfile.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyfile_rows),
		cmocka_unit_test(test_keyfile_sign_verify),
	};
	return cmocka_run_group_tests_name("keyfile", tests, NULL, NULL);
}
