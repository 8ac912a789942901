/* YAML config files whose keys are the command-line option names.
 *
 * A config file is one flat mapping; a value is a scalar or a list of
 * scalars (for repeatable options such as the agent's `scorer`):
 *
 *     node: node-7
 *     interfaces: eth0,eth1
 *     scorer: [tcp://10.0.0.1:7470, tcp://10.0.0.2:7470]
 *
 * config_load() calls apply(ctx, key, value) once per scalar, in file order,
 * so the same handler serves flags and files and a file can never mean
 * something a flag cannot. Files are bounded (size, keys, value length) and
 * anything else (nesting, anchors, several documents) is an error. */
#ifndef NETSCHED_CONFIG_H
#define NETSCHED_CONFIG_H

#include <stddef.h>

#define CONFIG_MAX_FILE_BYTES (64u * 1024u)
#define CONFIG_MAX_KEYS 128u
#define CONFIG_MAX_VALUE_LEN 4096u

/* Returns 0, or -errno with err set to "FILE:LINE: key: what is wrong"; on
 * error, keys before the bad one have been applied. The handler returns 0 or
 * a negative errno and writes its reason (without the key) into its err. */
typedef int (*config_apply_fn)(void *ctx, const char *key, const char *value, char *err,
			       size_t errlen);

int config_load(const char *path, config_apply_fn apply, void *ctx, char *err, size_t errlen);

/* The same, from memory (tests, fuzzing). name is used in messages. */
int config_load_buffer(const char *name, const char *data, size_t len, config_apply_fn apply,
		       void *ctx, char *err, size_t errlen);

#endif
