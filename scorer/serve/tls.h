/* HTTPS for the extender: certificate files, their rotation, and client
 * certificate checks (mTLS), for libmicrohttpd over GnuTLS.
 *
 * The files are read into memory as PEM text (bounded) and handed to a
 * daemon at start. A rotation (cert-manager or a Secret update replaces the
 * files) is noticed by tls_rotation, which starts a daemon with the new ones
 * on the same listening socket. With a client CA, every request must come
 * with a client certificate that chains to it and names an allowed caller
 * (--client-names): the scheduler's tlsConfig certFile/keyFile, checked
 * with GnuTLS on the connection's session. A CA signs whatever it is asked
 * to (cert-manager's Issuers sign any Certificate of their namespace), so
 * the chain alone says only who issued the certificate, not who holds it. */
#ifndef NETSCHED_TLS_H
#define NETSCHED_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "filestamp.h"

struct MHD_Connection;
struct MHD_Daemon;

#define TLS_PATH_MAX 256
/* A chain of a few certificates is a few KB. */
#define TLS_MAX_PEM_BYTES (256u * 1024u)
/* Allowed client names: a DNS name is at most 253 bytes; a few names are
 * the scheduler's under its aliases, never a directory of clients. */
#define TLS_CLIENT_NAME_MAX 253u
#define TLS_MAX_CLIENT_NAMES 8u

struct tls_client_names {
	size_t n;			/* 0: any certificate from the CA (tests) */
	char name[TLS_MAX_CLIENT_NAMES][TLS_CLIENT_NAME_MAX + 1];
};

struct tls_files {
	char cert[TLS_PATH_MAX];	/* "" = plain HTTP */
	char key[TLS_PATH_MAX];
	char client_ca[TLS_PATH_MAX];	/* "" = no client certificates asked */
	/* With client_ca: who may call, matched against the verified
	 * certificate's common name and DNS names. */
	struct tls_client_names client_names;
};

/* Parses a comma-separated list ("netsched-scheduler,system:kube-scheduler")
 * into *out (written only on success): 1 to TLS_MAX_CLIENT_NAMES names of
 * 1 to TLS_CLIENT_NAME_MAX printable ASCII bytes, no spaces. 0, or -EINVAL
 * with why saying what is wrong. */
int tls_client_names_parse(const char *list, struct tls_client_names *out, char *why, size_t len);

/* The names as a comma-separated list, for messages. Returns out. */
const char *tls_client_names_format(const struct tls_client_names *names, char *out, size_t cap);

struct tls_pems {
	char *cert, *key, *ca;		/* NUL-terminated PEM text; ca may be NULL */
	struct file_stamp stamps[3];	/* cert, key, ca as read */
};

/* Reads the files and checks that the key is the certificate's. 0, or
 * -errno with err naming the file and the problem (never its contents);
 * *out is untouched on error. */
int tls_load(const struct tls_files *f, struct tls_pems *out, char *err, size_t errlen);
/* Frees and zeroes (the key is wiped). Accepts a zeroed struct. */
void tls_free(struct tls_pems *p);
/* Takes the files' current identity as p's, without reading them: a set
 * that failed to load is not retried until it changes again. */
void tls_restamp(const struct tls_files *f, struct tls_pems *p);

/* Whether any file differs from what p was read from. */
bool tls_changed(const struct tls_files *f, const struct tls_pems *p);

/* tls_rotation checks the files by the reload policy of filestamp.h. */

struct tls_rotation;

/* Starts a daemon serving the listening socket fd with p's certificates;
 * NULL when it cannot (fd is then still the caller's). */
typedef struct MHD_Daemon *(*tls_daemon_start)(void *ctx, int fd, const struct tls_pems *p);
/* Stops a daemon start() made (or the first one): MHD_stop_daemon() once
 * the caller's own hold on its connections (suspended ones) is released. */
typedef void (*tls_daemon_stop)(void *ctx, struct MHD_Daemon *d);

/* Serves rotated certificates with no restart and no refused connection:
 * a thread checks f's files by the reload policy of filestamp.h; when they changed and load,
 * the running daemon stops accepting and hands its listening socket to a
 * daemon that start(ctx, ...) makes with the new files; the old one finishes
 * its requests and is stopped (stop(ctx, ...)) a check later. Files that changed but cannot
 * be used are logged and not retried until they change again; the old
 * certificates stay in use.
 * Takes daemon (started with *pems) and *pems (zeroed here), even on
 * failure. f and ctx must outlive the rotation. NULL with err on failure. */
struct tls_rotation *tls_rotation_start(const struct tls_files *f, struct tls_pems *pems,
					struct MHD_Daemon *daemon, tls_daemon_start start,
					tls_daemon_stop stop, void *ctx, char *err, size_t errlen);

/* Stops the thread, then every daemon the rotation holds, and frees the
 * certificates. Accepts NULL. */
void tls_rotation_stop(struct tls_rotation *r);

/* Whether the connection presented a client certificate that verifies
 * against the daemon's trust list, for TLS clients (its extended key usage,
 * when it has one, includes clientAuth), and whose common name or one of
 * whose DNS names is in f->client_names (any, when that is empty). 0, or
 * -EACCES with why ("no client certificate", "certificate signer not
 * trusted", "...purpose", "client certificate CN=x ... is not one of
 * --client-names y"); names from the certificate are escaped (log.h). */
int tls_verify_client(struct MHD_Connection *c, const struct tls_files *f, char *why, size_t len);

#endif
