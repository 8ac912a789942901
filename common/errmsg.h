/* The one way a function here says what went wrong: it returns -errno and
 * writes one line into the caller's buffer (err, errlen), as every parser
 * and loader does. */
#ifndef NETSCHED_ERRMSG_H
#define NETSCHED_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Formats the message into err (when err is not NULL and errlen > 0,
 * truncated to fit) and returns rc, so a caller writes
 * `return errmsg(err, errlen, -EINVAL, "...", ...);`. */
int errmsg(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
