/* Small files read whole: config files, key files, certificates. */
#ifndef NETSCHED_FILE_H
#define NETSCHED_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Reads path whole, at most max bytes: a larger file is refused, judged by
 * reading one byte past the limit (a file can grow after a stat). On
 * success *data is malloc'd and NUL-terminated (the caller frees it, wiping
 * it first if it held a secret), *len its length, and st (may be NULL) what
 * fstat said when it was opened. Otherwise -errno, with err holding
 * "PATH: what is wrong", and nothing to free. */
int file_read_small(const char *path, size_t max, char **data, size_t *len, struct stat *st,
		    char *err, size_t errlen);

#endif
