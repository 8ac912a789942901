#include "fdlimit.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#define FDLIMIT_UNKNOWN 1024u

size_t fdlimit_current(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return FDLIMIT_UNKNOWN;
	return (size_t)rl.rlim_cur;
}

size_t fdlimit_raise(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max &&
	    rl.rlim_max != RLIM_INFINITY) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return fdlimit_current();
}

bool fdlimit_in_use(size_t fd)
{
	int got;

	if (fd > (size_t)INT32_MAX)
		return false;
	/* The lowest free number at or above fd: fd itself unless it is
	 * taken (or none is left: EMFILE). */
	got = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, (int)fd);
	if (got < 0)
		return errno == EMFILE;
	close(got);
	return (size_t)got != fd;
}
