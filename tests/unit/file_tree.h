/* A file tree the test builds under a temporary root: a fake sysfs for the
 * sysfs source and the sampler. Include after cmocka.h. */
#ifndef NETSCHED_TEST_FILE_TREE_H
#define NETSCHED_TEST_FILE_TREE_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Writes content to root/rel, creating the folders on the way. */
static inline void file_tree_put(const char *root, const char *rel, const char *content)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

#endif
