#include "kubeaccess.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "bearertoken.h"
#include "errmsg.h"
#include "file.h"

void kubeaccess_free(struct kubeaccess *a)
{
	struct kubeaccess_pem *pems[] = { &a->ca, &a->cert, &a->key };

	for (size_t i = 0; i < sizeof(pems) / sizeof(pems[0]); i++) {
		if (pems[i]->data) {
			OPENSSL_cleanse(pems[i]->data, pems[i]->len);
			free(pems[i]->data);
		}
		pems[i]->data = NULL;
		pems[i]->len = 0;
	}
	OPENSSL_cleanse(a->token, sizeof(a->token));
}

/* dir/path, or path itself when it is absolute or dir is empty. */
static int join(char *out, size_t cap, const char *dir, const char *path)
{
	int n = path[0] == '/' || !dir[0] ? snprintf(out, cap, "%s", path)
					  : snprintf(out, cap, "%s/%s", dir, path);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The first control character in v (a CR/LF would split a log line or a
 * request it goes into), or NULL. */
static const char *control_char(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return v;
	return NULL;
}

/* ------------------------------------------------------------ in-cluster */

int kubeaccess_in_cluster(struct kubeaccess *a, const char *sa_dir, char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	int n;

	memset(a, 0, sizeof(*a));
	if (!host || !host[0] || !port || !port[0]) {
		snprintf(err, errlen, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
			 "set: not running in a pod");
		return -ENOENT;
	}
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
		return errmsg(err, errlen, -EINVAL, "KUBERNETES_SERVICE_PORT is not a port number");
	if (control_char(host))
		return errmsg(err, errlen, -EINVAL, "KUBERNETES_SERVICE_HOST has a control character "
			      "(0x%02x)", (unsigned char)*control_char(host));
	/* An IPv6 service address needs brackets in a URL. */
	n = snprintf(a->server, sizeof(a->server), strchr(host, ':') ? "https://[%s]:%s"
								      : "https://%s:%s", host, port);
	if (n < 0 || (size_t)n >= sizeof(a->server))
		return errmsg(err, errlen, -EINVAL, "KUBERNETES_SERVICE_HOST is longer than %u bytes",
			    KUBEACCESS_URL_MAX - 16);
	if (join(a->token_file, sizeof(a->token_file), sa_dir, "token") ||
	    join(a->ca.file, sizeof(a->ca.file), sa_dir, "ca.crt"))
		return errmsg(err, errlen, -EINVAL, "%.200s...: path longer than %u bytes", sa_dir,
			      KUBEACCESS_PATH_MAX - 1);
	if (access(a->token_file, R_OK)) {
		n = errno;
		snprintf(err, errlen, "%s: %s: the pod has no ServiceAccount token mounted",
			 a->token_file, strerror(n));
		return -n;
	}
	snprintf(a->origin, sizeof(a->origin), "in-cluster ServiceAccount (%s)", a->server);
	return 0;
}

/* ------------------------------------------------------------ kubeconfig */

struct kc {
	yaml_document_t doc;
	const char *name;
	const char *dir;
	char *err;
	size_t errlen;
};

/* The value of key in mapping node m, or NULL. */
static yaml_node_t *member(struct kc *k, yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *p;

	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(&k->doc, p->key);

		if (kn && kn->type == YAML_SCALAR_NODE &&
		    kn->data.scalar.length == strlen(key) &&
		    memcmp(kn->data.scalar.value, key, kn->data.scalar.length) == 0)
			return yaml_document_get_node(&k->doc, p->value);
	}
	return NULL;
}

/* A scalar's text (NUL-terminated by libyaml), or NULL when absent or not
 * a scalar; *len its length. */
static const char *scalar(yaml_node_t *n, size_t *len)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	if (len)
		*len = n->data.scalar.length;
	return (const char *)n->data.scalar.value;
}

/* The entry of list `section` whose name is want, and its `field` mapping. */
static yaml_node_t *named(struct kc *k, yaml_node_t *root, const char *section, const char *field,
			  const char *want)
{
	yaml_node_t *list = member(k, root, section);
	yaml_node_item_t *it;

	if (!list || list->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(&k->doc, *it);
		const char *name = scalar(member(k, e, "name"), NULL);

		if (name && strcmp(name, want) == 0)
			return member(k, e, field);
	}
	return NULL;
}

/* A name, URL or path from the file is one line of text: refused, naming
 * where it is and the field, when it holds a control character. where is
 * already clean ("cluster c", "user u", "" for the top level). */
static int plain(struct kc *k, const char *where, const char *field, const char *v)
{
	const char *c = v ? control_char(v) : NULL;

	if (!c)
		return 0;
	return errmsg(k->err, k->errlen, -EINVAL, "%s: %s%s%s has a control character (0x%02x) at "
		      "byte %zu: names, URLs and paths are one line of text", k->name, where,
		      where[0] ? " " : "", field, (unsigned char)*c, (size_t)(c - v) + 1);
}

static int copy_str(struct kc *k, char *out, size_t cap, const char *what, const char *v)
{
	if (strlen(v) >= cap)
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s is %zu bytes, longer than the %zu allowed",
			    k->name, what, strlen(v), cap - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* field-data (base64) or field (a path) of mapping m into *pem. */
static int pem(struct kc *k, yaml_node_t *m, const char *field, const char *where,
	       struct kubeaccess_pem *out)
{
	char key[64];
	const char *path, *b64;
	size_t len;
	int n;

	snprintf(key, sizeof(key), "%s-data", field);
	b64 = scalar(member(k, m, key), &len);
	if (b64 && len) {
		if (len > KUBEACCESS_FILE_MAX / 3 * 4 || len % 4)
			return errmsg(k->err, k->errlen, -EINVAL, "%s: %s %s is not base64 of at most %u bytes",
				    k->name, where, key, KUBEACCESS_FILE_MAX);
		out->data = malloc(len / 4 * 3 + 1);
		if (!out->data)
			return -ENOMEM;
		n = EVP_DecodeBlock((unsigned char *)out->data, (const unsigned char *)b64, (int)len);
		if (n < 0) {
			free(out->data);
			out->data = NULL;
			return errmsg(k->err, k->errlen, -EINVAL, "%s: %s %s is not valid base64", k->name,
				    where, key);
		}
		/* EVP_DecodeBlock counts the padding as zero bytes. */
		for (size_t i = len; i > 0 && b64[i - 1] == '='; i--)
			n--;
		out->len = (size_t)n;
		out->data[out->len] = '\0';
		return 0;
	}
	path = scalar(member(k, m, field), &len);
	if (plain(k, where, field, path))
		return -EINVAL;
	if (path && len && join(out->file, sizeof(out->file), k->dir, path))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s %s: path too long", k->name, where, field);
	return 0;
}

static int load_user(struct kc *k, struct kubeaccess *a, yaml_node_t *user, const char *uname)
{
	const char *v;
	char where[300];
	int rc;

	snprintf(where, sizeof(where), "user %.200s", uname);
	if (member(k, user, "exec") || member(k, user, "auth-provider"))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s gets its credentials from %s, which the "
			    "scorer does not run: give it a token, a tokenFile or a client "
			    "certificate", k->name, where,
			    member(k, user, "exec") ? "an exec plugin" : "an auth provider");
	if (member(k, user, "password"))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s has a password: basic authentication is not "
			    "supported, use a token or a client certificate", k->name, where);
	v = scalar(member(k, user, "token"), NULL);
	if (v && copy_str(k, a->token, sizeof(a->token), "the token", v))
		return -EINVAL;
	if (a->token[0] && !bearertoken_valid(a->token, strlen(a->token)))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s token has a byte that cannot go in "
			    "an HTTP header", k->name, where);
	v = scalar(member(k, user, "tokenFile"), NULL);
	if (plain(k, where, "tokenFile", v))
		return -EINVAL;
	if (v && v[0] && join(a->token_file, sizeof(a->token_file), k->dir, v))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s tokenFile: path too long", k->name, where);
	rc = pem(k, user, "client-certificate", where, &a->cert);
	if (!rc)
		rc = pem(k, user, "client-key", where, &a->key);
	if (rc)
		return rc;
	if (!(a->cert.data || a->cert.file[0]) != !(a->key.data || a->key.file[0]))
		return errmsg(k->err, k->errlen, -EINVAL, "%s: %s has a client certificate without its key, "
			    "or a key without its certificate", k->name, where);
	return 0;
}

static int load_doc(struct kc *k, struct kubeaccess *a)
{
	yaml_node_t *root = yaml_document_get_root_node(&k->doc), *ctx, *cluster, *user;
	const char *cur, *cname, *uname, *server, *insecure;
	char where[220];
	int rc;

	if (!root || root->type != YAML_MAPPING_NODE)
		return errmsg(k->err, k->errlen, -EINVAL, "%s: not a kubeconfig (expected a mapping)", k->name);
	cur = scalar(member(k, root, "current-context"), NULL);
	if (!cur || !cur[0])
		return errmsg(k->err, k->errlen, -EINVAL, "%s: no current-context", k->name);
	if (plain(k, "", "current-context", cur))
		return -EINVAL;
	ctx = named(k, root, "contexts", "context", cur);
	if (!ctx)
		return errmsg(k->err, k->errlen, -EINVAL, "%s: current-context %.200s is not among its "
			    "contexts", k->name, cur);
	cname = scalar(member(k, ctx, "cluster"), NULL);
	uname = scalar(member(k, ctx, "user"), NULL);
	snprintf(where, sizeof(where), "context %.200s", cur);
	if (plain(k, where, "cluster", cname) || plain(k, where, "user", uname))
		return -EINVAL;
	cluster = cname ? named(k, root, "clusters", "cluster", cname) : NULL;
	if (!cluster)
		return errmsg(k->err, k->errlen, -EINVAL, "%s: context %.200s names no cluster that the file "
			    "has", k->name, cur);
	server = scalar(member(k, cluster, "server"), NULL);
	snprintf(where, sizeof(where), "cluster %.200s", cname);
	if (plain(k, where, "server", server))
		return -EINVAL;
	if (!server || strncmp(server, "https://", 8) != 0)
		return errmsg(k->err, k->errlen, -EINVAL, "%s: cluster %.200s: server must be an https:// URL",
			    k->name, cname);
	if (copy_str(k, a->server, sizeof(a->server), "the server URL", server))
		return -EINVAL;
	while (strlen(a->server) > 8 && a->server[strlen(a->server) - 1] == '/')
		a->server[strlen(a->server) - 1] = '\0';
	insecure = scalar(member(k, cluster, "insecure-skip-tls-verify"), NULL);
	a->insecure = insecure && strcmp(insecure, "true") == 0;
	rc = pem(k, cluster, "certificate-authority", "cluster", &a->ca);
	if (rc)
		return rc;
	if (uname && uname[0]) {
		user = named(k, root, "users", "user", uname);
		if (!user)
			return errmsg(k->err, k->errlen, -EINVAL, "%s: context %.200s names user %.200s, which "
				    "the file does not have", k->name, cur, uname);
		rc = load_user(k, a, user, uname);
		if (rc)
			return rc;
	}
	snprintf(a->origin, sizeof(a->origin), "kubeconfig %.900s, context %.60s", k->name, cur);
	return 0;
}

/* Whether an event opens a node with an anchor (&name). */
static bool has_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.anchor;
	default:
		return false;
	}
}

/* One pass over the events before libyaml's loader builds the document:
 * nesting over KUBEACCESS_MAX_DEPTH or anchors over KUBEACCESS_MAX_ANCHORS
 * are refused at the first event past the bound, so this pass stays linear
 * (the scanner never holds more than the bound's open levels) and so does
 * the load that follows. */
static int bound_yaml(const char *name, const char *data, size_t len, char *err, size_t errlen)
{
	yaml_parser_t parser;
	unsigned depth = 0, anchors = 0;
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	for (;;) {
		yaml_event_t ev;
		yaml_event_type_t type;
		size_t line;

		if (!yaml_parser_parse(&parser, &ev)) {
			rc = errmsg(err, errlen, -EINVAL, "%s:%zu: %s", name,
				    parser.problem_mark.line + 1,
				    parser.problem ? parser.problem : "not YAML");
			break;
		}
		type = ev.type;
		line = ev.start_mark.line + 1;
		if (has_anchor(&ev) && ++anchors > KUBEACCESS_MAX_ANCHORS)
			rc = errmsg(err, errlen, -E2BIG, "%s:%zu: more than %u YAML anchors", name, line,
				    KUBEACCESS_MAX_ANCHORS);
		else if ((type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) &&
			 ++depth > KUBEACCESS_MAX_DEPTH)
			rc = errmsg(err, errlen, -E2BIG, "%s:%zu: nested deeper than %u levels", name,
				    line, KUBEACCESS_MAX_DEPTH);
		else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT)
			depth--;
		yaml_event_delete(&ev);
		/* The loader reads the first document only; so does this. */
		if (rc || type == YAML_DOCUMENT_END_EVENT || type == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}

int kubeaccess_kubeconfig_buffer(struct kubeaccess *a, const char *name, const char *dir,
				 const char *data, size_t len, char *err, size_t errlen)
{
	struct kc k = { .name = name, .dir = dir ? dir : "", .err = err, .errlen = errlen };
	yaml_parser_t parser;
	int rc;

	memset(a, 0, sizeof(*a));
	if (len > KUBEACCESS_FILE_MAX)
		return errmsg(err, errlen, -EINVAL, "%s: %zu bytes, more than the %u a kubeconfig may have",
			    name, len, KUBEACCESS_FILE_MAX);
	rc = bound_yaml(name, data, len, err, errlen);
	if (rc)
		return rc;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &k.doc)) {
		rc = errmsg(err, errlen, -EINVAL, "%s:%zu: %s", name, parser.problem_mark.line + 1,
			  parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return rc;
	}
	rc = load_doc(&k, a);
	yaml_document_delete(&k.doc);
	yaml_parser_delete(&parser);
	if (rc)
		kubeaccess_free(a);
	return rc;
}

int kubeaccess_kubeconfig(struct kubeaccess *a, const char *path, char *err, size_t errlen)
{
	char dir[KUBEACCESS_PATH_MAX], *data, *slash;
	size_t len;
	int rc;

	memset(a, 0, sizeof(*a));
	if (strlen(path) >= sizeof(dir))
		return errmsg(err, errlen, -EINVAL, "%.200s...: path longer than %u bytes", path,
			      KUBEACCESS_PATH_MAX - 1);
	memcpy(dir, path, strlen(path) + 1);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	rc = file_read_small(path, KUBEACCESS_FILE_MAX, &data, &len, NULL, err, errlen);
	if (rc)
		return rc;
	rc = kubeaccess_kubeconfig_buffer(a, path, slash ? (dir[0] ? dir : "/") : "", data, len,
					  err, errlen);
	OPENSSL_cleanse(data, len);
	free(data);
	return rc;
}

/* One file a names, if it names it. */
static int check_pem_file(const struct kubeaccess_pem *p, const char *what, char *err,
			  size_t errlen)
{
	char why[KUBEACCESS_PATH_MAX + 128];

	if (p->data || !p->file[0] || !file_check_readable(p->file, KUBEACCESS_FILE_MAX, why,
							  sizeof(why)))
		return 0;
	return errmsg(err, errlen, -EINVAL, "%s: %s", what, why);
}

int kubeaccess_check_files(const struct kubeaccess *a, char *err, size_t errlen)
{
	char tok[KUBEACCESS_TOKEN_MAX], why[KUBEACCESS_PATH_MAX + 128];
	int rc = 0;

	if (a->token_file[0]) {
		rc = bearertoken_read(a->token_file, tok, sizeof(tok), why, sizeof(why));
		OPENSSL_cleanse(tok, sizeof(tok));
		if (rc)
			return errmsg(err, errlen, rc, "token file: %s", why);
	}
	if ((rc = check_pem_file(&a->ca, "certificate authority", err, errlen)) ||
	    (rc = check_pem_file(&a->cert, "client certificate", err, errlen)) ||
	    (rc = check_pem_file(&a->key, "client key", err, errlen)))
		return rc;
	return 0;
}

int kubeaccess_token(const struct kubeaccess *a, char *out, size_t cap, char *err,
		     size_t errlen)
{
	if (a->token_file[0])
		return bearertoken_read(a->token_file, out, cap, err, errlen);
	if (strlen(a->token) >= cap)
		return errmsg(err, errlen, -EINVAL, "the token is longer than %zu bytes", cap - 1);
	memcpy(out, a->token, strlen(a->token) + 1);
	return 0;
}
