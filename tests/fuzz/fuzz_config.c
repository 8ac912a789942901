/* libFuzzer: YAML config files (config_load_buffer). The handler records
 * "key=value;" into a bounded log, refuses the key "bad" (the error path
 * after some keys were applied), and traps when the loader hands it what
 * config.h promises it never will: a key of 64 bytes or more, a value over
 * CONFIG_MAX_VALUE_LEN, more than CONFIG_MAX_KEYS keys. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

struct seen {
	char log[8192];
	size_t len;
	unsigned calls;
	char last_key[64];
	unsigned keys;
};

static int record(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	struct seen *s = ctx;
	size_t klen = strnlen(key, 64), vlen = strnlen(value, CONFIG_MAX_VALUE_LEN + 1);
	int n;

	check(klen < 64 && vlen <= CONFIG_MAX_VALUE_LEN);
	/* A list applies its key once per item: count distinct keys in a row. */
	if (s->calls++ == 0 || strcmp(s->last_key, key) != 0)
		s->keys++;
	memcpy(s->last_key, key, klen + 1);
	check(s->keys <= CONFIG_MAX_KEYS);
	if (strcmp(key, "bad") == 0) {
		snprintf(err, errlen, "\"%s\" is refused", value);
		return -EINVAL;
	}
	n = snprintf(s->log + s->len, sizeof(s->log) - s->len, "%s=%s;", key, value);
	if (n > 0)
		s->len += (size_t)n < sizeof(s->log) - s->len ? (size_t)n : sizeof(s->log) - s->len - 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { .len = 0 };
	char err[256];
	int rc;

	memset(err, 0x55, sizeof(err));
	rc = config_load_buffer("fuzz.yaml", (const char *)data, size, record, &s, err,
				sizeof(err));
	if (rc) {
		check(rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
		check(memchr(err, '\0', sizeof(err)) && strncmp(err, "fuzz.yaml", 9) == 0);
	}
	check(s.len < sizeof(s.log));
	return 0;
}
