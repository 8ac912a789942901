#include "nodekey.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "nodename.h"

/* Fixed labels: a key derived for reports is good for nothing else, and a
 * later scheme can change the version without a key of the old one ever
 * verifying under it. */
#define NODEKEY_SALT "netsched report key"
#define NODEKEY_INFO "netsched node report key v1:"

int nodekey_derive(const struct keyfile_key *master, const char *node, struct keyfile_key *out)
{
	unsigned char info[sizeof(NODEKEY_INFO) + NODENAME_MAX_LEN];
	size_t nlen = strnlen(node, NODENAME_MAX_LEN + 1), info_len, klen = NODEKEY_BYTES;
	struct keyfile_key k;
	EVP_PKEY_CTX *ctx;
	int rc = -EIO;

	if (master->kind != KEYFILE_MASTER || !nodename_valid(node, nlen))
		return -EINVAL;
	memcpy(info, NODEKEY_INFO, sizeof(NODEKEY_INFO) - 1);
	memcpy(info + sizeof(NODEKEY_INFO) - 1, node, nlen);
	info_len = sizeof(NODEKEY_INFO) - 1 + nlen;
	memset(&k, 0, sizeof(k));
	ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	if (!ctx)
		return -EIO;
	if (EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_salt(ctx, (const unsigned char *)NODEKEY_SALT,
					(int)sizeof(NODEKEY_SALT) - 1) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_key(ctx, master->bytes, (int)master->len) <= 0 ||
	    EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int)info_len) <= 0 ||
	    EVP_PKEY_derive(ctx, k.bytes, &klen) <= 0 || klen != NODEKEY_BYTES)
		goto out;
	k.len = klen;
	k.kind = KEYFILE_NODE;
	memcpy(k.node, node, nlen);
	k.id = keyfile_id(k.bytes, k.len);
	*out = k;
	rc = 0;
out:
	OPENSSL_cleanse(&k, sizeof(k));
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

int nodekey_file(const struct keyfile *kf, const char *node, char *out, size_t cap, char *err,
		 size_t errlen)
{
	const struct keyfile_key *master = NULL;
	struct keyfile_key k;
	char why[256];
	size_t used;
	int n;

	for (size_t i = 0; i < kf->n && !master; i++)
		if (kf->keys[i].kind == KEYFILE_MASTER)
			master = &kf->keys[i];
	if (!master) {
		snprintf(err, errlen, "the key file holds no master key (a line \"master HEX\")");
		return -EINVAL;
	}
	if (nodename_check(node, strnlen(node, NODENAME_MAX_LEN + 1), why, sizeof(why))) {
		snprintf(err, errlen, "the node name is %s", why);
		return -EINVAL;
	}
	if (nodekey_derive(master, node, &k)) {
		snprintf(err, errlen, "HKDF failed (libcrypto)");
		return -EIO;
	}
	n = snprintf(out, cap, "# netsched report key of node %s alone (key %08x, derived from "
		     "master %08x by netsched-scorer --derive-node-key)\nnode %s\n", node, k.id,
		     master->id, node);
	if (n < 0 || (size_t)n + 2 * k.len + 2 > cap) {
		OPENSSL_cleanse(&k, sizeof(k));
		snprintf(err, errlen, "no room for the key file");
		return -EINVAL;
	}
	used = (size_t)n;
	for (size_t i = 0; i < k.len; i++)
		used += (size_t)snprintf(out + used, cap - used, "%02x", k.bytes[i]);
	snprintf(out + used, cap - used, "\n");
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}
