#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "file.h"

static int read_pem(const char *path, char **out, struct tls_stamp *st, char *err, size_t errlen)
{
	struct stat sb;
	char *buf;
	size_t len;
	int rc = file_read_small(path, TLS_MAX_PEM_BYTES, &buf, &len, &sb, err, errlen);

	if (rc)
		return rc;
	if (!strstr(buf, "-----BEGIN ")) {
		snprintf(err, errlen, "%s: not a PEM file (no -----BEGIN line)", path);
		explicit_bzero(buf, len);
		free(buf);
		return -EINVAL;
	}
	*st = (struct tls_stamp){ sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, sb.st_size, sb.st_ino };
	*out = buf;
	return 0;
}

int tls_load(const struct tls_files *f, struct tls_pems *out, char *err, size_t errlen)
{
	struct tls_pems p = { 0 };

	if (read_pem(f->cert, &p.cert, &p.stamps[0], err, errlen) ||
	    read_pem(f->key, &p.key, &p.stamps[1], err, errlen) ||
	    (f->client_ca[0] && read_pem(f->client_ca, &p.ca, &p.stamps[2], err, errlen))) {
		tls_free(&p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

void tls_free(struct tls_pems *p)
{
	if (p->key)
		explicit_bzero(p->key, strlen(p->key));
	free(p->cert);
	free(p->key);
	free(p->ca);
	memset(p, 0, sizeof(*p));
}

static bool stamp_changed(const char *path, const struct tls_stamp *st)
{
	struct stat sb;

	if (!path[0] || stat(path, &sb))
		return false; /* gone for a moment mid-rotation: keep what we have */
	return sb.st_mtim.tv_sec != st->mtime || sb.st_mtim.tv_nsec != st->mtime_nsec ||
	       sb.st_size != st->size || sb.st_ino != st->ino;
}

static void restamp(const char *path, struct tls_stamp *st)
{
	struct stat sb;

	if (path[0] && stat(path, &sb) == 0)
		*st = (struct tls_stamp){ sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, sb.st_size,
					  sb.st_ino };
}

void tls_restamp(const struct tls_files *f, struct tls_pems *p)
{
	restamp(f->cert, &p->stamps[0]);
	restamp(f->key, &p->stamps[1]);
	restamp(f->client_ca, &p->stamps[2]);
}

bool tls_changed(const struct tls_files *f, const struct tls_pems *p)
{
	return stamp_changed(f->cert, &p->stamps[0]) || stamp_changed(f->key, &p->stamps[1]) ||
	       stamp_changed(f->client_ca, &p->stamps[2]);
}

int tls_verify_client(struct MHD_Connection *c, char *why, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t session;
	gnutls_datum_t text;
	unsigned status = 0;

	if (!ci || !ci->tls_session) {
		snprintf(why, len, "not a TLS connection");
		return -EACCES;
	}
	session = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(session, &(unsigned){ 0 })) {
		snprintf(why, len, "no client certificate (the scheduler's tlsConfig needs "
			 "certFile and keyFile)");
		return -EACCES;
	}
	if (gnutls_certificate_verify_peers2(session, &status) != GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate cannot be verified");
		return -EACCES;
	}
	if (status == 0)
		return 0;
	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) ==
	    GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate rejected: %s", (const char *)text.data);
		gnutls_free(text.data);
	} else {
		snprintf(why, len, "client certificate rejected (status %#x)", status);
	}
	return -EACCES;
}
