#include "traffic.h"

#include "units.h"

#define AT(field) offsetof(struct traffic, field)

const struct traffic_figure traffic_figures[] = {
	{ .label = "rx", .offset = AT(rx.average), .bound = TRAFFIC_RATE,
	  .json = "rxBytesPerSecond", .metric = "receive_bytes_per_second",
	  .help = "A node's rx rate as the scorer sees it." },
	{ .label = "tx", .offset = AT(tx.average), .bound = TRAFFIC_RATE,
	  .json = "txBytesPerSecond", .metric = "transmit_bytes_per_second",
	  .help = "A node's tx rate as the scorer sees it." },
	{ .label = "link", .offset = AT(link_bytes_per_second), .sum = TRAFFIC_SUM_KNOWN,
	  .bound = TRAFFIC_SPECIAL, .json = "linkBytesPerSecond", .metric = "link_bytes_per_second",
	  .help = "A node's link speed (0: unknown)." },
	{ .label = "rx recent", .offset = AT(rx.recent), .bound = TRAFFIC_SAMPLED,
	  .peak = AT(rx.peak), .wire = "rx_recent_bytes_per_second", .json = "rxRecentBytesPerSecond" },
	{ .label = "tx recent", .offset = AT(tx.recent), .bound = TRAFFIC_SAMPLED,
	  .peak = AT(tx.peak), .wire = "tx_recent_bytes_per_second", .json = "txRecentBytesPerSecond" },
	{ .label = "rx p95", .offset = AT(rx.p95), .bound = TRAFFIC_SAMPLED, .peak = AT(rx.peak),
	  .wire = "rx_p95_bytes_per_second", .json = "rxP95BytesPerSecond" },
	{ .label = "tx p95", .offset = AT(tx.p95), .bound = TRAFFIC_SAMPLED, .peak = AT(tx.peak),
	  .wire = "tx_p95_bytes_per_second", .json = "txP95BytesPerSecond" },
	{ .label = "rx dropped", .offset = AT(rx_dropped), .wire = "rx_dropped", .json = "rxDropped" },
	{ .label = "rx missed", .offset = AT(rx_missed), .wire = "rx_missed", .json = "rxMissed" },
	{ .label = "tx dropped", .offset = AT(tx_dropped), .wire = "tx_dropped", .json = "txDropped" },
	/* A node's peak is its interfaces' peaks added up: an upper bound. */
	{ .label = "rx peak", .offset = AT(rx.peak), .bound = TRAFFIC_RATE,
	  .wire = "rx_peak_bytes_per_second" },
	{ .label = "tx peak", .offset = AT(tx.peak), .bound = TRAFFIC_RATE,
	  .wire = "tx_peak_bytes_per_second" },
	{ .label = "covered time", .offset = AT(covered_ms), .sum = TRAFFIC_LONGEST,
	  .bound = TRAFFIC_SPECIAL },
};

const size_t traffic_n_figures = sizeof(traffic_figures) / sizeof(traffic_figures[0]);

void traffic_add(struct traffic *sum, const struct traffic *t)
{
	for (size_t i = 0; i < traffic_n_figures; i++) {
		const struct traffic_figure *f = &traffic_figures[i];
		uint64_t a = traffic_get(sum, f), b = traffic_get(t, f);

		switch (f->sum) {
		case TRAFFIC_SUM_KNOWN:
			traffic_set(sum, f, a && b ? units_add_sat(a, b) : 0);
			break;
		case TRAFFIC_LONGEST:
			traffic_set(sum, f, a > b ? a : b);
			break;
		case TRAFFIC_SUM:
		default:
			traffic_set(sum, f, units_add_sat(a, b));
			break;
		}
	}
}

uint64_t traffic_per_second(uint64_t count, uint64_t ms)
{
	unsigned __int128 r;

	if (ms == 0)
		return 0;
	r = (unsigned __int128)count * 1000u / ms;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}
