/* stderr into a temporary file, for tests that check what was logged
 * (common/log.c writes lines in place before log_start()). Header-only;
 * include after cmocka.h. */
#ifndef NETSCHED_TEST_STDERR_CAPTURE_H
#define NETSCHED_TEST_STDERR_CAPTURE_H

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char stderr_capture_path[] = "/tmp/netsched-test-stderr.XXXXXX";

/* A group setup: stderr goes to the file from now on. */
static inline int stderr_capture_start(void **state)
{
	int fd = mkstemp(stderr_capture_path);

	(void)state;
	if (fd < 0 || !freopen(stderr_capture_path, "w+", stderr))
		return -1;
	close(fd);
	setvbuf(stderr, NULL, _IONBF, 0);
	return 0;
}

/* A group teardown. */
static inline int stderr_capture_stop(void **state)
{
	(void)state;
	unlink(stderr_capture_path);
	return 0;
}

/* What was written since the last call (the file is emptied). */
static inline char *stderr_captured(void)
{
	static char text[64 * 1024];
	size_t n;

	fflush(stderr);
	rewind(stderr);
	n = fread(text, 1, sizeof(text) - 1, stderr);
	text[n] = '\0';
	if (ftruncate(fileno(stderr), 0))
		fail_msg("cannot empty the captured stderr");
	rewind(stderr);
	return text;
}

/* Waits up to wait_ms until what was written since the file was last
 * emptied holds want; whether it did. For lines another thread writes:
 * read through a file of its own and never emptied here, so a line
 * written while it reads is not lost (stderr_captured() empties the file,
 * and could drop one). */
static inline bool stderr_capture_wait(const char *want, unsigned wait_ms)
{
	static char all[64 * 1024];

	for (unsigned waited = 0;; waited += 10) {
		FILE *f = fopen(stderr_capture_path, "r");
		size_t n = 0;

		if (f) {
			n = fread(all, 1, sizeof(all) - 1, f);
			fclose(f);
		}
		all[n] = '\0';
		if (strstr(all, want))
			return true;
		if (waited >= wait_ms)
			return false;
		poll(NULL, 0, 10);
	}
}

#endif
