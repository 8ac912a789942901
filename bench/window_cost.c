/* netsched-window-cost: what the burst figures cost the agent. Each report
 * calls window_stats() once per measured interface; since it also yields the
 * p95 (two sorts of the window's one-sample rates) and the recent rate, its
 * cost grows with the window's samples. Measured, one thread, CPU time, for
 * the default window (60 s of 1 s samples, 61 slots) and the largest the
 * agent accepts (AGENT_MAX_WINDOW_SLOTS samples), with bursty rates (the
 * sort's worst inputs are not sorted ones). Prints ns per call and what one
 * report of 32 interfaces costs, with the machine. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/options.h"
#include "agent/window.h"
#include "bench/machine.h"
#include "common/clock.h"

/* ns per window_stats() over a full window of slots one-second samples. */
static double cost(uint32_t slots, unsigned rounds)
{
	struct ifreading c = { 0 };
	struct window_stats st;
	struct window w;
	uint64_t seed = 88172645463325252ULL, t0, sum = 0;

	if (window_init(&w, slots + 1))
		return -1;
	for (uint32_t i = 0; i <= slots; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift */
		c.rx_bytes += (i & 1) ? seed % 125000000 : 0;
		c.tx_bytes += seed % 1000000;
		window_add(&w, (uint64_t)i * NS_PER_SEC, &c, 2 * NS_PER_SEC, 0);
	}
	t0 = machine_cpu_ns();
	for (unsigned r = 0; r < rounds; r++) {
		window_stats(&w, (uint64_t)slots * NS_PER_SEC, ((uint64_t)slots + 1) * NS_PER_SEC,
			     2 * NS_PER_SEC, &st);
		sum += st.traffic.rx.p95;
	}
	t0 = machine_cpu_ns() - t0;
	window_free(&w);
	if (sum == 1) /* keep the loop */
		printf(" ");
	return (double)t0 / rounds;
}

int main(void)
{
	const uint32_t sizes[] = { 60, 600, AGENT_MAX_WINDOW_SLOTS };
	char model[128];

	machine_cpu_model(model, sizeof(model));
	printf("window_stats (p95 + recent), machine: %ld cpus, %s\n", sysconf(_SC_NPROCESSORS_ONLN),
	       model);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double ns = cost(sizes[i], sizes[i] > 1000 ? 2000 : 20000);

		printf("  %4u samples in the window: %9.0f ns per interface per report, "
		       "%7.1f us per report of 32 interfaces\n", sizes[i], ns, ns * 32 / 1000);
	}
	return 0;
}
