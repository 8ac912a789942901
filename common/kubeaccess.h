/* How the scorer reaches the apiserver: inside the cluster, its
 * ServiceAccount (token and CA mounted by the kubelet); outside, a
 * kubeconfig file (--kubeconfig), read with libyaml.
 *
 * Of a kubeconfig, the current context's cluster (server, CA file or data,
 * insecure-skip-tls-verify) and user (token, tokenFile, client certificate
 * and key as files or data) are used. Exec plugins, auth providers and
 * passwords are refused with a message that says so: the scorer runs no
 * external programs. Relative paths are relative to the kubeconfig's
 * folder, as kubectl reads them.
 *
 * Tokens in files are read again for every connection, because a projected
 * ServiceAccount token is rotated in place about every hour.
 *
 * A struct kubeaccess owns its PEM buffers; kubeaccess_free() releases them. */
#ifndef NETSCHED_KUBEACCESS_H
#define NETSCHED_KUBEACCESS_H

#include <stdbool.h>
#include <stddef.h>

#define KUBEACCESS_URL_MAX 512u
#define KUBEACCESS_PATH_MAX 1024u
#define KUBEACCESS_TOKEN_MAX 16384u
#define KUBEACCESS_FILE_MAX (1024u * 1024u)	/* kubeconfig, CA bundle, token */
/* A kubeconfig nests 4 deep (clusters, an entry, its cluster, a field), an
 * extension's object a few more; libyaml's loader costs grow with the
 * nesting (each token looks at every open flow level) and with the anchors
 * (each alias searches them all), so a 1 MiB file of either took seconds
 * to minutes. Past these it is refused before the loader sees it. */
#define KUBEACCESS_MAX_DEPTH 32u
#define KUBEACCESS_MAX_ANCHORS 64u
#define KUBEACCESS_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kubeaccess_pem {
	char *data;		/* owned; NULL when a file is named instead */
	size_t len;
	char file[KUBEACCESS_PATH_MAX];
};

struct kubeaccess {
	char server[KUBEACCESS_URL_MAX];	/* "https://host:port", no trailing slash */
	char token[KUBEACCESS_TOKEN_MAX];	/* a static token, or "" */
	char token_file[KUBEACCESS_PATH_MAX];	/* read per connection, or "" */
	struct kubeaccess_pem ca;		/* neither set: the system's CAs */
	struct kubeaccess_pem cert;		/* client certificate, or none */
	struct kubeaccess_pem key;
	bool insecure;				/* insecure-skip-tls-verify */
	char origin[KUBEACCESS_PATH_MAX + 64];	/* for logs: "in-cluster", "kubeconfig F, context C" */
};

/* Each returns 0, or -errno with err naming the file, the field and what is
 * wrong; on error *a holds nothing to free. */

/* The pod's ServiceAccount: KUBERNETES_SERVICE_HOST and _PORT, and the token
 * and CA under sa_dir (KUBEACCESS_SA_DIR; tests pass another). -ENOENT when
 * the scorer is not running in a pod. */
int kubeaccess_in_cluster(struct kubeaccess *a, const char *sa_dir, char *err, size_t errlen);

/* A kubeconfig file: a regular file (common/file.h) of at most
 * KUBEACCESS_FILE_MAX bytes, KUBEACCESS_MAX_DEPTH levels and
 * KUBEACCESS_MAX_ANCHORS anchors, loaded in time linear in its size. */
int kubeaccess_kubeconfig(struct kubeaccess *a, const char *path, char *err, size_t errlen);

/* The same from memory; dir resolves relative paths, name is for messages. */
int kubeaccess_kubeconfig_buffer(struct kubeaccess *a, const char *name, const char *dir,
				 const char *data, size_t len, char *err, size_t errlen);

/* The bearer token to send now: the static one, or token_file read afresh
 * by bearertoken_read() (common/bearertoken.h: its one rule). "" when there
 * is none. 0 or -errno with err naming the file. */
int kubeaccess_token(const struct kubeaccess *a, char *out, size_t cap, char *err,
		     size_t errlen);

/* Whether every file a names can be read now (the token file, the CA,
 * client certificate and key files), for start-up and --check-config:
 * libcurl opens them later, on the watch's thread. 0, or -errno with err
 * naming the file and the field. */
int kubeaccess_check_files(const struct kubeaccess *a, char *err, size_t errlen);

/* Accepts a zeroed or already freed struct. */
void kubeaccess_free(struct kubeaccess *a);

#endif
