#include "filestamp.h"

#include <errno.h>
#include <sys/stat.h>

struct file_stamp file_stamp_of(const struct stat *sb)
{
	return (struct file_stamp){ sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec, sb->st_size,
				    sb->st_ino };
}

int file_stamp_take(const char *path, struct file_stamp *st)
{
	struct stat sb;

	if (stat(path, &sb))
		return -errno;
	*st = file_stamp_of(&sb);
	return 0;
}

bool file_stamp_changed(const char *path, const struct file_stamp *st)
{
	struct file_stamp now = { 0 };

	if (file_stamp_take(path, &now))
		return false;
	return now.mtime != st->mtime || now.mtime_nsec != st->mtime_nsec ||
	       now.size != st->size || now.ino != st->ino;
}
