#include "bearertoken.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "errmsg.h"
#include "file.h"

static const char prefix[] = "Authorization: Bearer ";

static bool visible(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e;
}

bool bearertoken_valid(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!visible((unsigned char)s[i]))
			return false;
	return true;
}

int bearertoken_read(const char *path, char *out, size_t cap, char *err, size_t errlen)
{
	char *data = NULL;
	size_t got = 0, len, i;
	int rc;

	rc = file_read_small(path, BEARERTOKEN_FILE_MAX, &data, &got, NULL, err, errlen);
	if (rc)
		goto out;
	len = got;
	while (len && (data[len - 1] == ' ' || data[len - 1] == '\t' || data[len - 1] == '\r' ||
		       data[len - 1] == '\n'))
		len--;
	for (i = 0; i < len && visible((unsigned char)data[i]); i++)
		;
	if (!len)
		rc = errmsg(err, errlen, -EINVAL, "%s: holds no bearer token (empty, or only "
			    "whitespace)", path);
	else if (i < len)
		/* The byte's value and place, never the token's text. */
		rc = errmsg(err, errlen, -EINVAL, "%s: byte %zu of the bearer token (0x%02x) cannot "
			    "go in an HTTP header: the file must hold one token of visible ASCII, "
			    "trailing whitespace aside", path, i + 1, (unsigned char)data[i]);
	else if (len >= cap)
		rc = errmsg(err, errlen, -E2BIG, "%s: the bearer token is %zu bytes, more than the "
			    "%zu allowed", path, len, cap - 1);
	if (rc)
		goto out;
	memcpy(out, data, len);
	out[len] = '\0';
out:
	if (data) {
		OPENSSL_cleanse(data, got);
		free(data);
	}
	if (rc && cap)
		OPENSSL_cleanse(out, cap);
	return rc;
}

int bearertoken_header(const char *token, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s%s", prefix, token);

	if (n < 0 || (size_t)n >= cap) {
		OPENSSL_cleanse(out, cap);
		return -E2BIG;
	}
	return 0;
}

int bearertoken_header_file(const char *path, char *out, size_t cap, char *err, size_t errlen)
{
	char token[BEARERTOKEN_FILE_MAX];
	int rc = bearertoken_read(path, token, sizeof(token), err, errlen);

	if (!rc && bearertoken_header(token, out, cap))
		rc = errmsg(err, errlen, -E2BIG, "%s: the bearer token is %zu bytes, more than the "
			    "%zu a header line here may carry", path, strlen(token),
			    cap > sizeof(prefix) ? cap - sizeof(prefix) : 0);
	OPENSSL_cleanse(token, sizeof(token));
	if (rc && cap)
		OPENSSL_cleanse(out, cap);
	return rc;
}
