#include "serve/tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "clock.h"
#include "file.h"
#include "log.h"
#include "worker.h"

struct tls_rotation {
	const struct tls_files *files;
	tls_daemon_start start;
	tls_daemon_stop stop;
	void *ctx;
	/* The daemon serving now and what it was started with; the one a
	 * rotation replaced, stopped one check later so its requests finish. */
	struct MHD_Daemon *daemon;
	struct tls_pems pems;
	struct MHD_Daemon *retiring;
	struct tls_pems retiring_pems;
	struct worker *checker;
	pthread_mutex_t lock;
};

static int read_pem(const char *path, char **out, struct file_stamp *st, char *err,
		    size_t errlen)
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
	*st = file_stamp_of(&sb);
	*out = buf;
	return 0;
}

/* Whether GnuTLS takes the key with the certificate: a mismatched pair is
 * refused here, before any daemon is stopped for it. */
static int check_pair(const struct tls_files *f, const struct tls_pems *p, char *err,
		      size_t errlen)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = { (unsigned char *)p->cert, (unsigned)strlen(p->cert) };
	gnutls_datum_t key = { (unsigned char *)p->key, (unsigned)strlen(p->key) };
	int rc;

	if (gnutls_certificate_allocate_credentials(&cred) != GNUTLS_E_SUCCESS) {
		snprintf(err, errlen, "%s: out of memory for TLS credentials", f->cert);
		return -ENOMEM;
	}
	rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (rc < 0) {
		snprintf(err, errlen, "%s with %s: %s", f->cert, f->key, gnutls_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

int tls_load(const struct tls_files *f, struct tls_pems *out, char *err, size_t errlen)
{
	struct tls_pems p = { 0 };

	if (read_pem(f->cert, &p.cert, &p.stamps[0], err, errlen) ||
	    read_pem(f->key, &p.key, &p.stamps[1], err, errlen) ||
	    check_pair(f, &p, err, errlen) ||
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

/* A file gone for a moment mid-rotation counts as unchanged: keep what we
 * have. "" is a file not configured. */
static bool stamp_changed(const char *path, const struct file_stamp *st)
{
	return path[0] && file_stamp_changed(path, st);
}

static void restamp(const char *path, struct file_stamp *st)
{
	if (path[0])
		file_stamp_take(path, st);
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

/* New certificates: the running daemon stops accepting and hands over its
 * socket to a daemon with the new files, so no connection attempt is
 * refused; the old one finishes its requests and is stopped next check. */
static void rotate(struct tls_rotation *h)
{
	struct tls_pems fresh;
	struct MHD_Daemon *next;
	char err[512];
	int fd, spare;

	if (tls_load(h->files, &fresh, err, sizeof(err))) {
		log_error("tls", "certificate files changed but cannot be used: %s; still serving "
			  "the old ones", err);
		tls_restamp(h->files, &h->pems); /* wait for the next change */
		return;
	}
	fd = MHD_quiesce_daemon(h->daemon);
	if (fd < 0) {
		log_error("tls", "cannot hand over the listening socket; still serving the old "
			  "certificates");
		tls_free(&fresh);
		return;
	}
	/* libmicrohttpd closes the socket when a daemon fails to start: keep a
	 * copy to go back to the old certificates with. */
	spare = dup(fd);
	next = h->start(h->ctx, fd, &fresh);
	if (next && spare >= 0)
		close(spare);
	if (!next) {
		log_error("tls", "new certificates refused by TLS (see above); back to the old ones");
		tls_free(&fresh);
		next = spare >= 0 ? h->start(h->ctx, spare, &h->pems) : NULL;
		if (!next) {
			log_error("tls", "cannot serve HTTPS any more: restart the scorer");
			return;
		}
		tls_restamp(h->files, &h->pems);
		/* The same certificates go on: nothing to retire with the old
		 * daemon (freeing them then would free what is in use). */
		fresh = h->pems;
		memset(&h->pems, 0, sizeof(h->pems));
	} else {
		log_info("tls", "certificates reloaded from %s", h->files->cert);
	}
	pthread_mutex_lock(&h->lock);
	h->retiring = h->daemon;
	h->retiring_pems = h->pems;
	h->daemon = next;
	h->pems = fresh;
	pthread_mutex_unlock(&h->lock);
}

/* One check: the daemon the last rotation replaced has had a whole check
 * to finish its requests; then, new files? */
static uint64_t rotation_check(void *arg)
{
	struct tls_rotation *h = arg;
	struct MHD_Daemon *old;
	struct tls_pems old_pems;

	pthread_mutex_lock(&h->lock);
	old = h->retiring;
	old_pems = h->retiring_pems;
	h->retiring = NULL;
	memset(&h->retiring_pems, 0, sizeof(h->retiring_pems));
	pthread_mutex_unlock(&h->lock);
	if (old) {
		h->stop(h->ctx, old);
		tls_free(&old_pems);
	}
	if (tls_changed(h->files, &h->pems))
		rotate(h);
	return FILE_RELOAD_CHECK_NS / NS_PER_MS;
}

struct tls_rotation *tls_rotation_start(const struct tls_files *f, struct tls_pems *pems,
					struct MHD_Daemon *daemon, tls_daemon_start start,
					tls_daemon_stop stop, void *ctx, char *err, size_t errlen)
{
	struct tls_rotation *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "https: out of memory");
		goto out_stop_daemon;
	}
	r->files = f;
	r->start = start;
	r->stop = stop;
	r->ctx = ctx;
	r->daemon = daemon;
	r->pems = *pems;
	memset(pems, 0, sizeof(*pems));
	pthread_mutex_init(&r->lock, NULL);
	r->checker = worker_start("https: the certificate reloader", rotation_check, r,
				  FILE_RELOAD_CHECK_NS / NS_PER_MS, err, errlen);
	if (!r->checker) {
		pthread_mutex_destroy(&r->lock);
		*pems = r->pems; /* freed below */
		free(r);
		goto out_stop_daemon;
	}
	return r;

out_stop_daemon:
	stop(ctx, daemon);
	tls_free(pems);
	return NULL;
}

void tls_rotation_stop(struct tls_rotation *r)
{
	if (!r)
		return;
	worker_stop(r->checker);
	if (r->retiring)
		r->stop(r->ctx, r->retiring);
	if (r->daemon)
		r->stop(r->ctx, r->daemon);
	tls_free(&r->retiring_pems);
	tls_free(&r->pems);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int tls_client_names_parse(const char *list, struct tls_client_names *out, char *why, size_t len)
{
	struct tls_client_names n = { 0 };
	const char *p = list;

	for (;;) {
		size_t k = strcspn(p, ",");

		if (k == 0) {
			snprintf(why, len, "an empty name in the list (expected NAME[,NAME...], such as "
				 "netsched-scheduler,system:kube-scheduler)");
			return -EINVAL;
		}
		if (n.n == TLS_MAX_CLIENT_NAMES) {
			snprintf(why, len, "more than %u names", TLS_MAX_CLIENT_NAMES);
			return -EINVAL;
		}
		if (k > TLS_CLIENT_NAME_MAX) {
			snprintf(why, len, "a name of %zu bytes, limit %u", k, TLS_CLIENT_NAME_MAX);
			return -EINVAL;
		}
		for (size_t i = 0; i < k; i++)
			if (p[i] <= ' ' || p[i] > '~') {
				snprintf(why, len, "name %zu has a byte that is not printable ASCII "
					 "(0x%02x) or a space", n.n + 1, (unsigned char)p[i]);
				return -EINVAL;
			}
		memcpy(n.name[n.n], p, k);
		n.name[n.n++][k] = '\0';
		if (!p[k])
			break;
		p += k + 1;
	}
	*out = n;
	return 0;
}

const char *tls_client_names_format(const struct tls_client_names *names, char *out, size_t cap)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < names->n && used < cap; i++) {
		int w = snprintf(out + used, cap - used, "%s%s", i ? "," : "", names->name[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return out;
}

/* Whether a name from the certificate (len bytes, no NUL inside) is
 * allowed; DNS names compare without case, as DNS does. */
static bool name_allowed(const struct tls_client_names *names, const char *v, size_t len, bool dns)
{
	if (strlen(v) != len)
		return false;
	for (size_t i = 0; i < names->n; i++)
		if (dns ? !strcasecmp(names->name[i], v) : !strcmp(names->name[i], v))
			return true;
	return false;
}

/* The peer's leaf certificate (already verified) names an allowed caller:
 * its one common name, or one of its DNS names. */
static int check_names(gnutls_session_t session, const struct tls_client_names *names, char *why,
		       size_t len)
{
	const gnutls_datum_t *certs;
	unsigned n = 0;
	gnutls_x509_crt_t crt = NULL;
	char cn[TLS_CLIENT_NAME_MAX + 2] = "", v[TLS_CLIENT_NAME_MAX + 2], shown[80];
	char dns_shown[180] = "", allowed[160];
	size_t sz, dns_used = 0;
	bool has_cn = false;
	int rc = -EACCES;

	if (!names->n)
		return 0;
	certs = gnutls_certificate_get_peers(session, &n);
	if (!certs || !n || gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate cannot be read");
		return -EACCES;
	}
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) != GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate cannot be read");
		goto out;
	}
	sz = sizeof(cn);
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &sz) ==
	    GNUTLS_E_SUCCESS) {
		has_cn = true;
		/* Two common names: which one is the holder depends on who
		 * reads it (Go takes the last); none is taken. */
		sz = sizeof(v);
		if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 1, 0, v, &sz) !=
		    GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) {
			snprintf(why, len, "client certificate has several common names (CN=%s ...)",
				 log_printable(cn, strlen(cn), shown, 64));
			goto out;
		}
		if (name_allowed(names, cn, strlen(cn), false)) {
			rc = 0;
			goto out;
		}
	}
	/* Bounded: a certificate may carry any number of names. */
	for (unsigned seq = 0; seq < 64; seq++) {
		int type;

		sz = sizeof(v);
		type = gnutls_x509_crt_get_subject_alt_name(crt, seq, v, &sz, NULL);
		if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (type != GNUTLS_SAN_DNSNAME)
			continue;	/* too long, or not a DNS name */
		if (name_allowed(names, v, sz, true)) {
			rc = 0;
			goto out;
		}
		if (dns_used < sizeof(dns_shown) - 1) {
			int w = snprintf(dns_shown + dns_used, sizeof(dns_shown) - dns_used, "%s%s",
					 dns_used ? "," : " DNS:", log_printable(v, sz, shown, 64));

			if (w > 0)
				dns_used += (size_t)w;
		}
	}
	snprintf(why, len, "client certificate %s%s%s is not one of --client-names %s",
		 has_cn ? "CN=" : "(no common name)", has_cn ? log_printable(cn, strlen(cn), shown, 64) : "",
		 dns_shown, tls_client_names_format(names, allowed, sizeof(allowed)));
out:
	gnutls_x509_crt_deinit(crt);
	return rc;
}

int tls_verify_client(struct MHD_Connection *c, const struct tls_files *f, char *why, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_typed_vdata_st client_purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
	};
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
	/* A certificate for clients: one made for a server (the scorer's
	 * own, signed by the same CA in deploy/) is no client's credential.
	 * GnuTLS takes a certificate without the extension as good for any
	 * purpose. */
	if (gnutls_certificate_verify_peers(session, &client_purpose, 1, &status) !=
	    GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate cannot be verified");
		return -EACCES;
	}
	if (status == 0)
		return check_names(session, &f->client_names, why, len);
	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) ==
	    GNUTLS_E_SUCCESS) {
		snprintf(why, len, "client certificate rejected: %s", (const char *)text.data);
		gnutls_free(text.data);
	} else {
		snprintf(why, len, "client certificate rejected (status %#x)", status);
	}
	return -EACCES;
}
