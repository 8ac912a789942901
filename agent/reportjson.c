#include "reportjson.h"

#include <inttypes.h>
#include <stdio.h>

/* A pod from its point of view: rx is what it received. */
static void pod_json(struct buf *b, const struct report_pod *p)
{
	char ip[REPORT_IP_STRLEN];

	buf_puts(b, "{\"ips\":[");
	for (uint32_t k = 0; k < p->n_ips; k++) {
		if (report_ip_format(&p->ips[k], ip, sizeof(ip)))
			snprintf(ip, sizeof(ip), "?");
		buf_printf(b, "%s\"%s\"", k ? "," : "", ip);
	}
	buf_printf(b, "],\"rxBytes\":%" PRIu64 ",\"txBytes\":%" PRIu64 ",\"coveredMs\":%" PRIu64
		   ",\"rxBytesPerSecond\":%" PRIu64 ",\"txBytesPerSecond\":%" PRIu64
		   ",\"rxRecentBytesPerSecond\":%" PRIu64 ",\"txRecentBytesPerSecond\":%" PRIu64 "}",
		   p->rx_bytes, p->tx_bytes, p->covered_ms, p->rx.average, p->tx.average, p->rx.recent,
		   p->tx.recent);
}

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
			   ",\"failedSamples\":%" PRIu32 "}",
			   f->ifindex, f->rx_bytes, f->tx_bytes, t->covered_ms, f->samples,
			   f->samples_expected, t->link_bytes_per_second * 8, t->rx.average,
			   t->tx.average, t->rx.peak, t->tx.peak, t->rx.p95, t->tx.p95, t->rx.recent,
			   t->tx.recent, t->rx_dropped, t->rx_missed, t->tx_dropped, f->failed_samples);
	}
	buf_puts(b, "]");
	if (r->has_pods) {
		buf_printf(b, ",\"pods\":{\"seen\":%" PRIu32 ",\"listed\":[", r->pods_seen);
		for (uint32_t i = 0; i < r->n_pods; i++) {
			if (i)
				buf_puts(b, ",");
			pod_json(b, &r->pods[i]);
		}
		buf_puts(b, "],\"rest\":");
		pod_json(b, &r->pods_rest);
		buf_puts(b, "}");
	}
	buf_puts(b, "}");
}
