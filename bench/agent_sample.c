/* CPU per sample of the agent's sampler, as the agent runs it: one tick reads
 * every measured interface (one netlink dump, or the kept-open sysfs files)
 * and feeds the windows. Run inside the namespace to measure, e.g.
 *   ip netns exec NS build/rel/bench/agent_sample netlink 'eth*' 20000
 * Prints "SOURCE SELECTION links=N measured=M ns_per_sample=X". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/ifselect.h"
#include "agent/nl.h"
#include "agent/sampler.h"
#include "bench/machine.h"
#include "common/clock.h"
#include "common/log.h"

int main(int argc, char **argv)
{
	static struct sampler sm;
	static struct ifselect_link links[SAMPLER_MAX_LINKS];
	struct sampler_config cfg = {
		.node = "bench",
		.interval_ns = NS_PER_SEC,
		.window_ns = 60 * NS_PER_SEC,
		.sysfs_root = "/sys/class/net",
		.route4 = "/proc/net/route",
		.route6 = "/proc/net/ipv6_route",
		.sysfs_speed = true,
	};
	struct nl *nl;
	char err[256];
	uint64_t n, t0, t1, now;
	size_t n_links = 0;

	if (argc != 4 || (strcmp(argv[1], "netlink") && strcmp(argv[1], "sysfs"))) {
		fprintf(stderr, "usage: %s netlink|sysfs SELECTION SAMPLES\n", argv[0]);
		return 2;
	}
	log_init("agent_sample");
	log_set_level(LOG_LVL_ERROR);
	cfg.source = strcmp(argv[1], "sysfs") ? SAMPLER_NETLINK : SAMPLER_SYSFS;
	if (ifselect_parse(&cfg.spec, argv[2], false, err, sizeof(err))) {
		fprintf(stderr, "selection %s: %s\n", argv[2], err);
		return 2;
	}
	n = strtoull(argv[3], NULL, 10);
	nl = nl_open(false, err, sizeof(err));
	if (!nl || sampler_init(&sm, nl, &cfg)) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	nl_links(nl, links, SAMPLER_MAX_LINKS, &n_links);
	/* Ticks one "second" apart on a fake clock, so no tick is a gap and the
	 * windows work as in production; only the CPU is real. */
	now = clock_mono_ns();
	sampler_tick(&sm, now);
	t0 = machine_cpu_ns();
	for (uint64_t i = 1; i <= n; i++)
		sampler_tick(&sm, now + i * NS_PER_SEC);
	t1 = machine_cpu_ns();
	printf("%s %s links=%zu measured=%zu ns_per_sample=%.0f\n", argv[1], argv[2], n_links,
	       sampler_count(&sm), (double)(t1 - t0) / (double)n);
	sampler_free(&sm);
	nl_close(nl);
	return 0;
}
