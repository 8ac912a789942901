#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a file that is not regular is, for its error. */
static const char *kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a file";
}

int file_read_small(const char *path, size_t max, char **data, size_t *len, struct stat *st,
		    char *err, size_t errlen)
{
	struct stat sb;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, rc;

	/* O_NONBLOCK: opening a FIFO waits for a writer otherwise. On a
	 * regular file, the only kind read below, it changes nothing. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &sb)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s: %s, not a regular file", path, kind_of(sb.st_mode));
		goto out;
	}
	buf = malloc(max + 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (got <= max && (n = read(fd, buf + got, max + 1 - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		got += (size_t)n;
	}
	if (got > max) {
		rc = -E2BIG;
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		goto out;
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
	if (st)
		*st = sb;
	buf = NULL;
	rc = 0;
out:
	if (buf) /* it may have held a secret */
		explicit_bzero(buf, got < max + 1 ? got : max + 1);
	free(buf);
	close(fd);
	return rc;
}

int file_check_readable(const char *path, size_t max, char *err, size_t errlen)
{
	char *data;
	size_t len;
	int rc = file_read_small(path, max, &data, &len, NULL, err, errlen);

	if (rc)
		return rc;
	explicit_bzero(data, len);
	free(data);
	return 0;
}
