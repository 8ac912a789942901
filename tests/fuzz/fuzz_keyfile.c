/* libFuzzer: report key files (keyfile_parse), the contents of a Secret.
 * Checks what keyfile.h promises: on success 1 or 2 keys of 32..64 bytes,
 * each id the first 4 bytes of its SHA-256 and findable by it; on failure
 * the output untouched and an error that never quotes a hex run as long as
 * a key. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static size_t longest_hex_run(const char *s)
{
	size_t best = 0, run = 0;

	for (; *s; s++) {
		run = ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')) ?
			      run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keyfile kf, sentinel;
	char err[256] = "";
	int rc;

	memset(&sentinel, 0xa5, sizeof(sentinel));
	kf = sentinel;
	rc = keyfile_parse("fuzz", (const char *)data, size, &kf, err, sizeof(err));
	if (rc) {
		check(rc == -EINVAL);
		check(memcmp(&kf, &sentinel, sizeof(kf)) == 0);
		check(err[0] != '\0');
		check(longest_hex_run(err) < 2 * KEYFILE_MIN_BYTES);
		return 0;
	}
	check(kf.n >= 1 && kf.n <= KEYFILE_MAX_KEYS);
	for (size_t i = 0; i < kf.n; i++) {
		check(kf.keys[i].len >= KEYFILE_MIN_BYTES && kf.keys[i].len <= KEYFILE_MAX_BYTES);
		check(keyfile_find(&kf, kf.keys[i].id) != NULL);
	}
	return 0;
}
