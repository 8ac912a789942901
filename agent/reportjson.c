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
		const struct traffic *t = &f->traffic;

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
			   f->ifindex, f->rx_bytes, f->tx_bytes, t->covered_ms, f->samples,
			   f->samples_expected, t->link_bytes_per_second * 8, t->rx.average,
			   t->tx.average, t->rx.peak, t->tx.peak, t->rx.p95, t->tx.p95, t->rx.recent,
			   t->tx.recent, t->rx_dropped, t->rx_missed, t->tx_dropped);
	}
	buf_puts(b, "]}");
}
