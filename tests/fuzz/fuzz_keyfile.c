/* libFuzzer: report key files (keyfile_parse), the contents of a Secret.
 * Checks what keyfile.h promises: on success 1 to KEYFILE_MAX_KEYS keys of
 * 32..64 bytes, each signing key findable by its id and no master ever
 * signing; on failure
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
	check(kf.n_master <= KEYFILE_MAX_PER_KIND && kf.n_shared <= KEYFILE_MAX_PER_KIND);
	for (size_t i = 0; i < kf.n; i++) {
		const struct keyfile_key *k = &kf.keys[i];

		check(k->len >= KEYFILE_MIN_BYTES && k->len <= KEYFILE_MAX_BYTES);
		/* Signing keys are found by their id; a master never signs. */
		if (k->kind == KEYFILE_MASTER)
			check(keyfile_find(&kf, k->id) == NULL ||
			      keyfile_find(&kf, k->id)->kind != KEYFILE_MASTER);
		else
			check(keyfile_find(&kf, k->id) != NULL);
		check(k->kind != KEYFILE_NODE || k->node[0] != '\0');
	}
	check(keyfile_signing_key(&kf) == NULL ||
	      keyfile_signing_key(&kf)->kind != KEYFILE_MASTER);
	return 0;
}
