/* "Has this file changed since I read it?" for files that are reloaded in
 * place: signing keys and TLS certificates mounted from Kubernetes Secrets.
 * A Secret update swaps a symlink to a new file, so the inode changes; an
 * editor or `cp` rewrites in place, so mtime or size changes. Any of the
 * four differing counts as a change. */
#ifndef NETSCHED_FILESTAMP_H
#define NETSCHED_FILESTAMP_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

struct file_stamp {
	time_t mtime;
	long mtime_nsec;
	off_t size;
	ino_t ino;
};

struct stat;

/* The stamp of what was just read through an open descriptor (fstat()). */
struct file_stamp file_stamp_of(const struct stat *sb);

/* Fills *st from path's current state. 0, or -errno (st untouched). */
int file_stamp_take(const char *path, struct file_stamp *st);

/* Whether path is no longer the file *st was taken from. A file that cannot
 * be stat()ed counts as unchanged: whoever holds its contents keeps them. */
bool file_stamp_changed(const char *path, const struct file_stamp *st);

/* The one reload policy for keys and certificates, in the agent and the
 * scorer alike: look every FILE_RELOAD_CHECK_NS; a file that changed is
 * read again; a new version that cannot be used is reported once and the
 * contents in use are kept, and that version is not read again until the
 * file changes once more (Secret updates are atomic: a broken version does
 * not mend itself). */
#define FILE_RELOAD_CHECK_NS (5ULL * 1000000000ULL)

#endif
