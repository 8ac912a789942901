/* `netsched-agent --once` (agent/reportjson.c): the exact JSON of a known
 * report, every figure at full 64-bit precision (the instance id in hex),
 * rates derived from bytes over covered time (0 over no time), names
 * escaped, an empty interface list, and a buffer too small said by
 * buf_failed(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/reportjson.h"

static struct report known(void)
{
	struct report r = {
		.node = "node-7",
		.instance_id = 0x00c0ffee12345678ULL,
		.seq = 42,
		.window_start_unix_ms = 1790000000000ULL,
		.window_end_unix_ms = 1790000004000ULL,
		.sample_interval_ms = 1000,
		.n_ifaces = 2,
	};

	r.ifaces[0] = (struct report_iface){
		.name = "eth0", .ifindex = 2, .samples = 4, .samples_expected = 4,
		.traffic = {
			.rx = { .recent = 2500000, .p95 = 2900000, .peak = 3000000 },
			.tx = { .recent = 1500, .p95 = 1900, .peak = 2000 },
			.rx_dropped = 1, .rx_missed = 2, .tx_dropped = 3,
			.link_bytes_per_second = 10000000000ULL / 8,
		},
	};
	report_iface_count(&r.ifaces[0], 8000000, 4000, 4000);
	/* Linux lets a name hold a quote or a backslash; no time covered. */
	r.ifaces[1] = (struct report_iface){
		.name = "we\"ird\\\x01", .ifindex = 4294967295u, .failed_samples = 7,
		.traffic.tx_dropped = UINT64_MAX,
	};
	report_iface_count(&r.ifaces[1], UINT64_MAX, 0, 0);
	return r;
}

static const char known_json[] =
	"{\"node\":\"node-7\",\"instanceId\":\"00c0ffee12345678\",\"seq\":42,"
	"\"windowStartUnixMs\":1790000000000,\"windowEndUnixMs\":1790000004000,"
	"\"sampleIntervalMs\":1000,\"interfaces\":["
	"{\"name\":\"eth0\",\"ifindex\":2,\"rxBytes\":8000000,\"txBytes\":4000,\"coveredMs\":4000,"
	"\"samples\":4,\"samplesExpected\":4,\"linkSpeedBitsPerSecond\":10000000000,"
	"\"rxBytesPerSecond\":2000000,\"txBytesPerSecond\":1000,"
	"\"rxPeakBytesPerSecond\":3000000,\"txPeakBytesPerSecond\":2000,"
	"\"rxP95BytesPerSecond\":2900000,\"txP95BytesPerSecond\":1900,"
	"\"rxRecentBytesPerSecond\":2500000,\"txRecentBytesPerSecond\":1500,"
	"\"rxDropped\":1,\"rxMissed\":2,\"txDropped\":3,\"failedSamples\":0},"
	"{\"name\":\"we\\\"ird\\\\\\u0001\",\"ifindex\":4294967295,"
	"\"rxBytes\":18446744073709551615,\"txBytes\":0,\"coveredMs\":0,\"samples\":0,"
	"\"samplesExpected\":0,\"linkSpeedBitsPerSecond\":0,\"rxBytesPerSecond\":0,"
	"\"txBytesPerSecond\":0,\"rxPeakBytesPerSecond\":0,\"txPeakBytesPerSecond\":0,"
	"\"rxP95BytesPerSecond\":0,\"txP95BytesPerSecond\":0,\"rxRecentBytesPerSecond\":0,"
	"\"txRecentBytesPerSecond\":0,\"rxDropped\":0,\"rxMissed\":0,"
	"\"txDropped\":18446744073709551615,\"failedSamples\":7}]}";

static void test_reportjson_known(void **state)
{
	struct report r = known();
	struct buf b;

	(void)state;
	buf_init(&b, 1 << 20);
	reportjson_write(&b, &r);
	assert_false(buf_failed(&b));
	assert_string_equal(b.data, known_json);
	buf_free(&b);
}

static void test_reportjson_edges(void **state)
{
	struct report r = known();
	struct buf b;

	(void)state;
	/* No interface: an empty list, still one object. */
	r.n_ifaces = 0;
	buf_init(&b, 1 << 20);
	reportjson_write(&b, &r);
	assert_non_null(strstr(b.data, ",\"interfaces\":[]}"));
	assert_int_equal(b.data[b.len - 1], '}');
	buf_free(&b);
	/* Appended to what the buffer holds, never over it. */
	r = known();
	buf_init(&b, 1 << 20);
	buf_puts(&b, "[");
	reportjson_write(&b, &r);
	buf_puts(&b, "]");
	assert_int_equal(b.len, strlen(known_json) + 2);
	assert_memory_equal(b.data + 1, known_json, strlen(known_json));
	buf_free(&b);
	/* Too small a buffer: said once, at the end. */
	buf_init(&b, 100);
	reportjson_write(&b, &r);
	assert_true(buf_failed(&b));
	buf_free(&b);
}

/* Pods from their point of view, dual-stack, and the rest; none at all
 * when the report carries no pod figures. */
static void test_reportjson_pods(void **state)
{
	static struct report r;
	struct buf b;

	(void)state;
	r = known();
	buf_init(&b, 1 << 20);
	reportjson_write(&b, &r);
	assert_null(strstr(b.data, "\"pods\""));
	buf_free(&b);
	r.has_pods = true;
	r.pods_seen = 3;
	r.n_pods = 1;
	r.pods[0].n_ips = 2;
	report_ip_parse("10.244.1.7", &r.pods[0].ips[0]);
	report_ip_parse("fd00::7", &r.pods[0].ips[1]);
	report_pod_count(&r.pods[0], 6000, 2000, 2000);
	r.pods[0].rx.recent = 3500;
	report_pod_count(&r.pods_rest, 10, 0, 1000);
	buf_init(&b, 1 << 20);
	reportjson_write(&b, &r);
	assert_false(buf_failed(&b));
	assert_non_null(strstr(b.data, "}],\"pods\":{\"seen\":3,\"listed\":[{\"ips\":[\"10.244.1.7\","
				       "\"fd00::7\"],\"rxBytes\":6000,\"txBytes\":2000,\"coveredMs\":2000,"
				       "\"rxBytesPerSecond\":3000,\"txBytesPerSecond\":1000,"
				       "\"rxRecentBytesPerSecond\":3500,\"txRecentBytesPerSecond\":0}],"
				       "\"rest\":{\"ips\":[],\"rxBytes\":10,"));
	assert_int_equal(b.data[b.len - 1], '}');
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reportjson_known),
		cmocka_unit_test(test_reportjson_pods),
		cmocka_unit_test(test_reportjson_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
