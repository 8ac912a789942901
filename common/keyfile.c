#include "keyfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "file.h"

/* A key file is a few lines; anything larger is not one. */
#define KEYFILE_MAX_FILE 4096

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

uint32_t keyfile_id(const uint8_t *bytes, size_t len)
{
	uint8_t digest[SHA256_DIGEST_LENGTH];

	SHA256(bytes, len, digest);
	return (uint32_t)digest[0] << 24 | (uint32_t)digest[1] << 16 | (uint32_t)digest[2] << 8 |
	       digest[3];
}

/* "node NAME": the file's keys are NAME's own. */
static int parse_node(const char *name, unsigned line, const char *v, size_t n, struct keyfile *k,
		      char *err, size_t errlen)
{
	char why[256];

	if (k->node[0]) {
		snprintf(err, errlen, "%s:%u: a second node line (a key file is one node's)", name,
			 line);
		return -EINVAL;
	}
	if (nodename_check(v, n, why, sizeof(why))) {
		snprintf(err, errlen, "%s:%u: the node name is %s", name, line, why);
		return -EINVAL;
	}
	memcpy(k->node, v, n);
	k->node[n] = '\0';
	return 0;
}

int keyfile_parse(const char *name, const char *data, size_t len, struct keyfile *kf, char *err,
		  size_t errlen)
{
	struct keyfile k;
	unsigned line = 0;
	size_t pos = 0;

	memset(&k, 0, sizeof(k));
	while (pos < len) {
		size_t end = pos, n;
		struct keyfile_key *key;
		enum keyfile_kind kind = KEYFILE_SHARED;

		while (end < len && data[end] != '\n')
			end++;
		line++;
		n = end;
		while (n > pos && (data[n - 1] == '\r' || data[n - 1] == ' ' || data[n - 1] == '\t'))
			n--;
		while (pos < n && (data[pos] == ' ' || data[pos] == '\t'))
			pos++;
		if (pos == n || data[pos] == '#') {
			pos = end + 1;
			continue;
		}
		if (n - pos > 5 && !memcmp(data + pos, "node ", 5)) {
			if (parse_node(name, line, data + pos + 5, n - pos - 5, &k, err, errlen))
				goto fail;
			pos = end + 1;
			continue;
		}
		if (n - pos > 7 && !memcmp(data + pos, "master ", 7)) {
			kind = KEYFILE_MASTER;
			pos += 7;
			while (pos < n && (data[pos] == ' ' || data[pos] == '\t'))
				pos++;
		}
		if ((kind == KEYFILE_MASTER ? k.n_master : k.n - k.n_master) == KEYFILE_MAX_PER_KIND) {
			snprintf(err, errlen, "%s:%u: more than %d %skeys (one in use and one being "
				 "rotated in)", name, line, KEYFILE_MAX_PER_KIND,
				 kind == KEYFILE_MASTER ? "master " : "");
			goto fail;
		}
		if ((n - pos) % 2 || (n - pos) / 2 < KEYFILE_MIN_BYTES ||
		    (n - pos) / 2 > KEYFILE_MAX_BYTES) {
			snprintf(err, errlen, "%s:%u: a key is %d to %d bytes written as hex "
				 "(openssl rand -hex 32); this line has %zu characters", name, line,
				 KEYFILE_MIN_BYTES, KEYFILE_MAX_BYTES, n - pos);
			goto fail;
		}
		key = &k.keys[k.n];
		key->len = (n - pos) / 2;
		for (size_t i = 0; i < key->len; i++) {
			int hi = hexval(data[pos + 2 * i]), lo = hexval(data[pos + 2 * i + 1]);

			if (hi < 0 || lo < 0) {
				snprintf(err, errlen, "%s:%u: not hex at column %zu", name, line,
					 2 * i + (hi < 0 ? 1 : 2));
				goto fail;
			}
			key->bytes[i] = (uint8_t)(hi << 4 | lo);
		}
		key->id = keyfile_id(key->bytes, key->len);
		key->kind = kind;
		k.n_master += kind == KEYFILE_MASTER;
		k.n++;
		pos = end + 1;
	}
	if (k.n == 0) {
		snprintf(err, errlen, "%s: no key (one hex key per line)", name);
		goto fail;
	}
	/* A node's file holds that node's keys and nothing that could sign
	 * or derive for another. */
	if (k.node[0] && k.n_master) {
		/* The node's name is not quoted: it may look like a key. */
		snprintf(err, errlen, "%s: a node's key file (it has a node line) holds a master "
			 "key: masters belong to the scorer alone", name);
		goto fail;
	}
	for (size_t i = 0; i < k.n; i++)
		if (k.keys[i].kind == KEYFILE_SHARED && k.node[0]) {
			k.keys[i].kind = KEYFILE_NODE;
			memcpy(k.keys[i].node, k.node, sizeof(k.node));
		}
	k.n_shared = k.node[0] ? 0 : k.n - k.n_master;
	*kf = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
fail:
	OPENSSL_cleanse(&k, sizeof(k));
	return -EINVAL;
}

int keyfile_load(const char *path, struct keyfile *kf, char *err, size_t errlen)
{
	struct stat st;
	char *data;
	size_t len;
	int rc = file_read_small(path, KEYFILE_MAX_FILE, &data, &len, &st, err, errlen);

	if (rc)
		return rc;
	rc = keyfile_parse(path, data, len, kf, err, errlen);
	OPENSSL_cleanse(data, len);
	free(data);
	if (rc)
		return rc;
	kf->stamp = file_stamp_of(&st);
	return 0;
}

int keyfile_reload(const char *path, struct keyfile *kf, char *err, size_t errlen)
{
	struct keyfile fresh;
	int rc;

	if (!file_stamp_changed(path, &kf->stamp))
		return 0;
	rc = keyfile_load(path, &fresh, err, errlen);
	if (rc) {
		file_stamp_take(path, &kf->stamp);
		return rc;
	}
	*kf = fresh;
	return 1;
}

const struct keyfile_key *keyfile_find(const struct keyfile *kf, uint32_t id)
{
	for (size_t i = 0; i < kf->n; i++)
		if (kf->keys[i].id == id && kf->keys[i].kind != KEYFILE_MASTER)
			return &kf->keys[i];
	return NULL;
}

const struct keyfile_key *keyfile_signing_key(const struct keyfile *kf)
{
	for (size_t i = 0; i < kf->n; i++)
		if (kf->keys[i].kind != KEYFILE_MASTER)
			return &kf->keys[i];
	return NULL;
}
