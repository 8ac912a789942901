/* Report keys: the file behind --key-file (a Kubernetes Secret).
 *
 * One key per line, hex, 32 to 64 bytes (generate one with
 * `openssl rand -hex 32`); blank lines and lines starting with '#' are
 * skipped. An agent signs with the first key; a scorer accepts any key in
 * its file, which is how keys rotate: add the new key to the scorers, then
 * put it first on the agents, then remove the old one. A key is named on
 * the wire by the first 4 bytes of its SHA-256, so no key ids need
 * managing and the id reveals nothing useful about the key. */
#ifndef NETSCHED_KEYFILE_H
#define NETSCHED_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "filestamp.h"

#define KEYFILE_MAX_KEYS 2
#define KEYFILE_MIN_BYTES 32
#define KEYFILE_MAX_BYTES 64

struct keyfile_key {
	uint32_t id;
	size_t len;
	uint8_t bytes[KEYFILE_MAX_BYTES];
};

struct keyfile {
	size_t n;
	struct keyfile_key keys[KEYFILE_MAX_KEYS];
	struct file_stamp stamp;	/* the file as read, to notice a rotation */
};

/* Reads path into *kf (written only on success). Returns 0, or -errno with
 * err naming the file, the line and the problem (never the key). */
int keyfile_load(const char *path, struct keyfile *kf, char *err, size_t errlen);

/* Parses a key file's contents (tests, fuzzing). Same contract. */
int keyfile_parse(const char *name, const char *data, size_t len, struct keyfile *kf, char *err,
		  size_t errlen);

/* The reload policy of filestamp.h, for the caller's periodic check: when
 * path is no longer the file *kf was read from, reads it again. Returns 1
 * with *kf replaced; 0 when there is nothing new; or -errno with err saying
 * why the new version cannot be used: *kf keeps the keys in use, and that
 * version is not read again until the file changes once more. */
int keyfile_reload(const char *path, struct keyfile *kf, char *err, size_t errlen);

/* The key with this id, or NULL. */
const struct keyfile_key *keyfile_find(const struct keyfile *kf, uint32_t id);

#endif
