/* A bearer token for an HTTP Authorization header, read from a file: a
 * projected ServiceAccount token (the pod watch), a kubeconfig's tokenFile,
 * or --prometheus-token-file. Every client reads it the same way, again
 * before each request, because Kubernetes rotates projected tokens in
 * place.
 *
 * One rule: the file holds one token; trailing whitespace (the newline an
 * editor or `echo` adds, CR, spaces, tabs) is removed; every other byte
 * must be visible ASCII (0x21-0x7e), so no token can end the header or add
 * another. Anything else (a second line, a space inside, a control byte,
 * UTF-8, an empty file) refuses the file with an error that names it and
 * never quotes the token. What was read is wiped (OPENSSL_cleanse) as soon
 * as it is copied out; callers wipe their copies after use. */
#ifndef NETSCHED_BEARERTOKEN_H
#define NETSCHED_BEARERTOKEN_H

#include <stdbool.h>
#include <stddef.h>

/* A file larger than this is refused: a ServiceAccount token is ~1 KB. */
#define BEARERTOKEN_FILE_MAX 16384u
/* Room for the whole header line with the largest token. */
#define BEARERTOKEN_HEADER_MAX (BEARERTOKEN_FILE_MAX + 32u)

/* Whether len bytes of s may be sent as a bearer token (visible ASCII, at
 * least one byte). */
bool bearertoken_valid(const char *s, size_t len);

/* Reads the token in path into out (cap bytes, NUL-terminated). 0, or
 * -errno with err naming the file and what is wrong; out is then zeroed. */
int bearertoken_read(const char *path, char *out, size_t cap, char *err, size_t errlen);

/* "Authorization: Bearer <token>" into out. 0 or -E2BIG (out zeroed). */
int bearertoken_header(const char *token, char *out, size_t cap);

/* Both: the header line for the token in path, read now; the token itself
 * is wiped. 0, or -errno with err naming the file (out zeroed). */
int bearertoken_header_file(const char *path, char *out, size_t cap, char *err, size_t errlen);

#endif
