/* Small files read whole: config files, key files, certificates. */
#ifndef NETSCHED_FILE_H
#define NETSCHED_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Reads path whole, at most max bytes: a larger file is refused, judged by
 * reading one byte past the limit (a file can grow after a stat). Only a
 * regular file (or a link to one, as a mounted Secret's are) is read:
 * anything else is -EINVAL ("PATH: a FIFO, not a regular file"), found
 * without waiting, since the open never blocks (a FIFO without a writer
 * would hang the caller for ever, a device never ends). On success *data is
 * malloc'd and NUL-terminated (the caller frees it, wiping it first if it
 * held a secret), *len its length, and st (may be NULL) what fstat said when
 * it was opened. Otherwise -errno, with err holding "PATH: what is wrong",
 * and nothing to free. */
int file_read_small(const char *path, size_t max, char **data, size_t *len, struct stat *st,
		    char *err, size_t errlen);

/* Whether path could be read by file_read_small() with this max, now: what
 * --check-config asks of every file an option names, for files another
 * library (libcurl, NNG) opens later. 0 or -errno with err as above; what
 * was read is wiped. */
int file_check_readable(const char *path, size_t max, char *err, size_t errlen);

#endif
