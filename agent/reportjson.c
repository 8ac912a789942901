#include "reportjson.h"

#include <inttypes.h>

void reportjson_write(struct buf *b, const struct report *r)
{
	buf_puts(b, "{\"node\":");
	buf_json_cstr(b, r->node);
	/* Hex: a JSON number loses precision above 2^53. */
	buf_printf(b, ",\"instanceId\":\"%016" PRIx64 "\",\"seq\":%" PRIu64
		   ",\"windowStartUnixMs\":%" PRIu64 ",\"windowEndUnixMs\":%" PRIu64
		   ",\"sampleIntervalMs\":%" PRIu32 ",\"interfaces\":[",
		   r->instance_id, r->seq, r->window_start_unix_ms, r->window_end_unix_ms,
		   r->sample_interval_ms);
	for (uint32_t i = 0; i < r->n_ifaces; i++) {
		const struct report_iface *f = &r->ifaces[i];

		buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		buf_json_cstr(b, f->name);
		buf_printf(b, ",\"ifindex\":%" PRIu32 ",\"rxBytes\":%" PRIu64 ",\"txBytes\":%" PRIu64
			   ",\"coveredMs\":%" PRIu64 ",\"samples\":%" PRIu32
			   ",\"samplesExpected\":%" PRIu32 ",\"linkSpeedBitsPerSecond\":%" PRIu64
			   ",\"rxBytesPerSecond\":%" PRIu64 ",\"txBytesPerSecond\":%" PRIu64
			   ",\"rxPeakBytesPerSecond\":%" PRIu64 ",\"txPeakBytesPerSecond\":%" PRIu64
			   ",\"rxP95BytesPerSecond\":%" PRIu64 ",\"txP95BytesPerSecond\":%" PRIu64
			   ",\"rxRecentBytesPerSecond\":%" PRIu64 ",\"txRecentBytesPerSecond\":%" PRIu64
			   ",\"rxDropped\":%" PRIu64 ",\"rxMissed\":%" PRIu64 ",\"txDropped\":%" PRIu64
			   "}",
			   f->ifindex, f->rx_bytes, f->tx_bytes, f->covered_ms, f->samples,
			   f->samples_expected, f->link_speed_bps, report_iface_rx_rate(f),
			   report_iface_tx_rate(f), f->rx_peak_bytes_per_second,
			   f->tx_peak_bytes_per_second, f->rx_p95_bytes_per_second,
			   f->tx_p95_bytes_per_second, f->rx_recent_bytes_per_second,
			   f->tx_recent_bytes_per_second, f->rx_dropped, f->rx_missed, f->tx_dropped);
	}
	buf_puts(b, "]}");
}
