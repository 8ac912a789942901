/* Report keys: the file behind --key-file (a Kubernetes Secret).
 *
 * One key per line, hex, 32 to 64 bytes (generate one with
 * `openssl rand -hex 32`); blank lines and lines starting with '#' are
 * skipped. An agent signs with the first key; a scorer accepts any key in
 * its file, which is how keys rotate: add the new key to the scorers, then
 * put it first on the agents, then remove the old one. A key is named on
 * the wire by the first 4 bytes of its SHA-256, so no key ids need
 * managing and the id reveals nothing useful about the key.
 *
 * Per-node keys (nodekey.h): a line "node NAME" says the file's keys are
 * that node's own, derived from a master (netsched-scorer --derive-node-key
 * writes such a file); an agent then signs as NAME, and a scorer checks
 * the signature with the key it derives for NAME. A line "master HEX" is a
 * master key, the scorer's alone: reports are never signed with it. A
 * scorer's file may hold masters and shared keys at once (a migration);
 * a plain hex line is a shared key, which any node holding it can sign as
 * any other with. */
#ifndef NETSCHED_KEYFILE_H
#define NETSCHED_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "filestamp.h"
#include "nodename.h"

/* Two of each kind: one in use and one being rotated in. */
#define KEYFILE_MAX_PER_KIND 2
#define KEYFILE_MAX_KEYS (2 * KEYFILE_MAX_PER_KIND)
#define KEYFILE_MIN_BYTES 32
#define KEYFILE_MAX_BYTES 64

enum keyfile_kind {
	KEYFILE_SHARED,		/* signs as any node */
	KEYFILE_NODE,		/* one node's own (node below) */
	KEYFILE_MASTER,		/* derives each node's key; never signs */
};

struct keyfile_key {
	uint32_t id;
	enum keyfile_kind kind;
	char node[NODENAME_MAX_LEN + 1];	/* KEYFILE_NODE: whose key it is */
	size_t len;
	uint8_t bytes[KEYFILE_MAX_BYTES];
};

struct keyfile {
	size_t n;				/* masters and signing keys, in file order */
	struct keyfile_key keys[KEYFILE_MAX_KEYS];
	char node[NODENAME_MAX_LEN + 1];	/* "node NAME": "" for none */
	size_t n_master, n_shared;
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

/* The signing key (shared or a node's, never a master) with this id, or
 * NULL. */
const struct keyfile_key *keyfile_find(const struct keyfile *kf, uint32_t id);

/* The key an agent signs with: the first that is not a master; NULL when
 * the file holds only masters (it is a scorer's). */
const struct keyfile_key *keyfile_signing_key(const struct keyfile *kf);

/* A key's id: the first 4 bytes of its SHA-256, big-endian. */
uint32_t keyfile_id(const uint8_t *bytes, size_t len);

#endif
