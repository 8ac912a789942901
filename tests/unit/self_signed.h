/* A self-signed P-256 certificate and its key, made with GnuTLS for tests
 * that need TLS: valid for an hour, for CN name and the address 127.0.0.1
 * (so a client that verifies the peer accepts it there). Header-only. */
#ifndef NETSCHED_TEST_SELF_SIGNED_H
#define NETSCHED_TEST_SELF_SIGNED_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

/* *cert and *key: malloc'd NUL-terminated PEM, for the key purpose OID
 * purpose only (an extended key usage; NULL: none, so good for any), with
 * the DNS name dns too (NULL: none). 0 or -1. */
static inline int self_signed_dns(const char *name, const char *purpose, const char *dns,
				  char **cert, char **key)
{
	static const unsigned char loopback[4] = { 127, 0, 0, 1 };
	gnutls_x509_privkey_t k = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t c = { NULL, 0 }, d = { NULL, 0 };
	time_t now = time(NULL);
	int rc = -1;

	*cert = *key = NULL;
	if (gnutls_x509_privkey_init(&k) ||
	    gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
					 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) ||
	    gnutls_x509_crt_init(&crt) || gnutls_x509_crt_set_version(crt, 3) ||
	    gnutls_x509_crt_set_serial(crt, "\x01", 1) ||
	    gnutls_x509_crt_set_activation_time(crt, now - 60) ||
	    gnutls_x509_crt_set_expiration_time(crt, now + 3600) ||
	    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, name, strlen(name)) ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, loopback,
						 sizeof(loopback), GNUTLS_FSAN_SET) ||
	    (dns && gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, dns, strlen(dns),
							 GNUTLS_FSAN_APPEND)) ||
	    (purpose && gnutls_x509_crt_set_key_purpose_oid(crt, purpose, 1)) ||
	    gnutls_x509_crt_set_key(crt, k) ||
	    gnutls_x509_crt_sign2(crt, crt, k, GNUTLS_DIG_SHA256, 0) ||
	    gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c) ||
	    gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d))
		goto out;
	*cert = strndup((const char *)c.data, c.size);
	*key = strndup((const char *)d.data, d.size);
	rc = *cert && *key ? 0 : -1;
	if (rc) {
		free(*cert);
		free(*key);
		*cert = *key = NULL;
	}
out:
	gnutls_free(c.data);
	gnutls_free(d.data);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(k);
	return rc;
}

static inline int self_signed_for(const char *name, const char *purpose, char **cert, char **key)
{
	return self_signed_dns(name, purpose, NULL, cert, key);
}

static inline int self_signed(const char *name, char **cert, char **key)
{
	return self_signed_for(name, NULL, cert, key);
}

#endif
