#include "linkspeed.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "traffic.h"
#include "units.h"

/* sysfs says Mb/s. */
#define MBPS_MAX (TRAFFIC_MAX_BYTES_PER_SECOND * 8 / 1000000)

uint64_t linkspeed_read(const char *root, const char *ifname)
{
	char path[256], buf[24];
	uint64_t mbps;
	ssize_t n;
	int fd, rc;

	rc = snprintf(path, sizeof(path), "%s/%s/speed", root, ifname);
	if (rc < 0 || (size_t)rc >= sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* "-1" (unknown) fails the unsigned parse, which is what we want. */
	if (units_parse_u64(buf, MBPS_MAX, &mbps) || mbps == 0)
		return 0;
	return mbps * 1000000ULL;
}
