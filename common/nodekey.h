/* Per-node report keys: each node's key is derived from a master key the
 * scorers alone hold, with HKDF-SHA256 (RFC 5869, OpenSSL's libcrypto) over
 * the node's name. A node's agent holds only its own derived key, so root
 * on a node can sign as that node and no other; the scorer needs no list of
 * nodes, it derives the key of the node a report is signed as.
 *
 * A derived key is written as a key file of its own (keyfile.h: a "node
 * NAME" line and the key) by `netsched-scorer --key-file MASTERS
 * --derive-node-key NAME`, for a provisioning step to put on that node. */
#ifndef NETSCHED_NODEKEY_H
#define NETSCHED_NODEKEY_H

#include <stddef.h>

#include "keyfile.h"

/* Every derived key is this long (SHA-256's output). */
#define NODEKEY_BYTES 32u

/* node's key from master (a KEYFILE_MASTER key) into *out: a KEYFILE_NODE
 * key naming node, with its id. node must be a valid node name (nodename.h).
 * 0, or -EINVAL (not a master, not a node name) or -EIO (libcrypto failed). */
int nodekey_derive(const struct keyfile_key *master, const char *node, struct keyfile_key *out);

/* The key file for node, derived from the first master of kf, as text in
 * out (cap bytes): a comment naming the master's id, the "node" line and the
 * key in hex. 0, or -EINVAL with err saying why (no master, a bad name). */
int nodekey_file(const struct keyfile *kf, const char *node, char *out, size_t cap, char *err,
		 size_t errlen);

#endif
