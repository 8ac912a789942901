/* What a benchmark measures with and prints beside its figures: the
 * process's CPU time and the machine's CPU model (README: "Benchmarks print
 * figures and the machine"). Header-only, static: each bench tool is one
 * file with its own main. */
#ifndef NETSCHED_BENCH_MACHINE_H
#define NETSCHED_BENCH_MACHINE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

/* CPU time of this process, ns: what the code under test costs, whatever
 * else the machine runs. */
static inline uint64_t machine_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* /proc/cpuinfo's first "model name", or "unknown". */
static inline void machine_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(buf, len, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	fclose(f);
}

#endif
