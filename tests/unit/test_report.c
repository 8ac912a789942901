/* The wire: round trips, and every kind of corrupt or forged message is
 * rejected with a reason while the output stays untouched. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netsched.pb-c.h"
#include "proto/report.h"

static struct report sample_report(void)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "node-7");
	r.instance_id = 0x0123456789abcdefULL;
	r.seq = 42;
	r.window_start_unix_ms = 1700000000000ULL;
	r.window_end_unix_ms = 1700000060000ULL;
	r.sample_interval_ms = 1000;
	r.n_ifaces = 2;
	for (uint32_t i = 0; i < 2; i++) {
		struct report_iface *f = &r.ifaces[i];

		snprintf(f->name, sizeof(f->name), "ens19%u", i);
		f->ifindex = 2 + i;
		report_iface_count(f, 812000000ULL * 60, 1000 + i, 60000);
		f->samples = 60;
		f->samples_expected = 60;
		f->traffic.link_bytes_per_second = i ? 0 : 1250000000ULL;
		f->traffic.rx.peak = 900000000;
		f->traffic.tx.peak = 10;
		f->traffic.rx.p95 = 850000000;
		f->traffic.tx.p95 = 9;
		f->traffic.rx.recent = 812000000 + i;
		f->traffic.tx.recent = 10;
		f->traffic.rx_dropped = 3 + i;
		f->traffic.rx_missed = 5;
		f->traffic.tx_dropped = 7;
	}
	return r;
}

static void test_report_round_trip(void **state)
{
	struct report in = sample_report(), out;
	uint8_t buf[REPORT_MAX_BYTES];
	size_t len = 0;

	(void)state;
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len), 0);
	assert_true(len > 0 && len < 400);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(report_decode(buf, len, &out, NULL, 0), 0);
	assert_memory_equal(&in, &out, sizeof(in));
	assert_int_equal(out.ifaces[0].traffic.rx.average, 812000000);
}

static void test_report_encode_limits(void **state)
{
	struct report r = sample_report();
	uint8_t buf[REPORT_MAX_BYTES];
	char err[256];
	size_t len = 0;

	(void)state;
	assert_int_equal(report_encode(&r, buf, 10, &len), -EMSGSIZE);
	r.n_ifaces = REPORT_MAX_INTERFACES + 1;
	assert_int_equal(report_encode(&r, buf, sizeof(buf), &len), -EINVAL);
	r = sample_report();
	r.node[0] = '\0';
	assert_int_equal(report_encode(&r, buf, sizeof(buf), &len), -EINVAL);
	/* An average the byte counts do not make would change on the wire. */
	r = sample_report();
	r.ifaces[1].traffic.tx.average++;
	assert_int_equal(report_encode(&r, buf, sizeof(buf), &len), -EINVAL);
	assert_int_equal(report_validate(&r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "node-7: ens191 averages are not its byte counts"));
}

/* Packs an envelope with arbitrary contents, as a forger would. */
static size_t forge(uint8_t *buf, uint32_t version, const Netsched__Report *rep)
{
	Netsched__Envelope env = NETSCHED__ENVELOPE__INIT;
	uint8_t inner[REPORT_MAX_BYTES * 4];

	env.version = version;
	env.report.data = inner;
	env.report.len = netsched__report__pack(rep, inner);
	return netsched__envelope__pack(&env, buf);
}

struct bad_row {
	const char *name;
	int rc;
	const char *reason; /* must appear in the error text */
	void (*mutate)(Netsched__Report *rep, Netsched__Interface *ifc);
};

static void m_empty_node(Netsched__Report *rep, Netsched__Interface *ifc) { (void)ifc; rep->node = ""; }
static void m_control_node(Netsched__Report *rep, Netsched__Interface *ifc) { (void)ifc; rep->node = "node\n7"; }
static void m_absurd_rx(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->rx_bytes = UINT64_MAX; }
static void m_absurd_peak(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->has_rx_peak_bytes_per_second = 1; ifc->rx_peak_bytes_per_second = UINT64_MAX; }
/* 2^63 bytes in 1 ms: a rate that wrapped to 0 in 64 bits once passed. */
static void m_wrapping_rx(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->rx_bytes = 1ULL << 63; ifc->covered_ms = 1; }
static void m_bytes_no_time(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->covered_ms = 0; }
static void m_long_window(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->covered_ms = UINT64_MAX; }
static void m_backwards(Netsched__Report *rep, Netsched__Interface *ifc) { (void)ifc; rep->window_end_unix_ms = 1; }
static void m_long_ifname(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->name = "a-very-long-interface-name"; }
static void m_absurd_link(Netsched__Report *rep, Netsched__Interface *ifc) { (void)rep; ifc->has_link_speed_bps = 1; ifc->link_speed_bps = UINT64_MAX; }

/* 300 MB/s average, and a 400 MB/s peak, on a 1 Gb/s link. */
static void m_over_link(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_link_speed_bps = 1;
	ifc->link_speed_bps = 1000000000;
	ifc->rx_bytes = 300000000;
}
static void m_peak_over_link(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_link_speed_bps = 1;
	ifc->link_speed_bps = 1000000000;
	ifc->has_tx_peak_bytes_per_second = 1;
	ifc->tx_peak_bytes_per_second = 400000000;
}
/* The p95 and the recent rate are averages or members of the samples, so
 * never above the peak of their direction; a p95 can never hide an absurd
 * rate behind an absurd peak either. */
static void m_p95_over_peak(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_rx_peak_bytes_per_second = ifc->has_rx_p95_bytes_per_second = 1;
	ifc->rx_peak_bytes_per_second = 1000;
	ifc->rx_p95_bytes_per_second = 1001;
}
static void m_recent_over_peak(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_tx_recent_bytes_per_second = 1;
	ifc->tx_recent_bytes_per_second = 5;
}
static void m_absurd_p95(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_tx_peak_bytes_per_second = ifc->has_tx_p95_bytes_per_second = 1;
	ifc->tx_peak_bytes_per_second = ifc->tx_p95_bytes_per_second = UINT64_MAX;
}
static void m_recent_over_link(Netsched__Report *rep, Netsched__Interface *ifc)
{
	(void)rep;
	ifc->has_link_speed_bps = 1;
	ifc->link_speed_bps = 1000000000;
	ifc->has_rx_peak_bytes_per_second = ifc->has_rx_recent_bytes_per_second = 1;
	ifc->rx_peak_bytes_per_second = ifc->rx_recent_bytes_per_second = 250000001;
}
/* 32 interfaces at 300 GB/s each, each under the per-interface limit: a
 * node of 9.6 TB/s. */
static Netsched__Interface *same_iface[REPORT_MAX_INTERFACES];
static void m_node_sum(Netsched__Report *rep, Netsched__Interface *ifc)
{
	for (size_t i = 0; i < REPORT_MAX_INTERFACES; i++)
		same_iface[i] = ifc;
	rep->n_interfaces = REPORT_MAX_INTERFACES;
	rep->interfaces = same_iface;
	ifc->rx_bytes = 300ULL * 1000 * 1000 * 1000;
}

static char long_node[NODENAME_MAX_LEN + 2];
static void m_long_node(Netsched__Report *rep, Netsched__Interface *ifc) { (void)ifc; rep->node = long_node; }

static const struct bad_row bad_rows[] = {
	{ "control characters in the node name", -EBADMSG, "not a DNS subdomain", m_control_node },
	{ "empty node name", -EBADMSG, "node name", m_empty_node },
	{ "node name over 253 bytes", -EBADMSG, "253", m_long_node },
	{ "interface name over 15 bytes", -EBADMSG, "15", m_long_ifname },
	{ "absurd rx byte count", -ERANGE, "limit 400000000000 B/s", m_absurd_rx },
	{ "absurd peak rate", -ERANGE, "limit", m_absurd_peak },
	{ "a byte count whose rate wraps 64 bits", -ERANGE, "rx 18446744073709551615 B/s, limit 400000000000 B/s", m_wrapping_rx },
	{ "bytes over no time", -ERANGE, "covers no time", m_bytes_no_time },
	{ "window of years", -ERANGE, "limit 86400000 ms", m_long_window },
	{ "window ends before it starts", -ERANGE, "ends before", m_backwards },
	{ "absurd link speed", -ERANGE, "link speed 2305843009213693951 B/s, limit 400000000000 B/s", m_absurd_link },
	{ "a rate over twice the link", -ERANGE, "on a 1000000000 b/s link, limit 250000000 B/s", m_over_link },
	{ "a peak over twice the link", -ERANGE, "eth0 tx peak 400000000 B/s on a 1000000000 b/s link, limit 250000000 B/s", m_peak_over_link },
	{ "a p95 above the peak", -ERANGE, "eth0 rx p95 1001 B/s, above its peak 1000 B/s", m_p95_over_peak },
	{ "a recent rate above the peak", -ERANGE, "eth0 tx recent 5 B/s, above its peak 0 B/s", m_recent_over_peak },
	{ "an absurd p95 under an absurd peak", -ERANGE, "tx peak 18446744073709551615 B/s, limit 400000000000 B/s", m_absurd_p95 },
	{ "a recent rate over twice the link", -ERANGE, "rx peak 250000001 B/s on a 1000000000 b/s link", m_recent_over_link },
	{ "interfaces adding up to an absurd node", -ERANGE, "32 interfaces add up to rx 9600000000000", m_node_sum },
};

static void test_report_forged(void **state)
{
	(void)state;
	memset(long_node, 'n', sizeof(long_node) - 1);
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *row = &bad_rows[i];
		Netsched__Report rep = NETSCHED__REPORT__INIT;
		Netsched__Interface ifc = NETSCHED__INTERFACE__INIT;
		Netsched__Interface *ifp = &ifc;
		uint8_t buf[REPORT_MAX_BYTES * 4];
		struct report out;
		char err[256] = "";
		size_t len;
		int rc;

		rep.node = "node-7";
		rep.instance_id = 1;
		rep.seq = 1;
		rep.window_start_unix_ms = 1000;
		rep.window_end_unix_ms = 2000;
		ifc.name = "eth0";
		ifc.rx_bytes = 1000;
		ifc.covered_ms = 1000;
		rep.n_interfaces = 1;
		rep.interfaces = &ifp;
		row->mutate(&rep, &ifc);
		len = forge(buf, REPORT_WIRE_VERSION, &rep);
		memset(&out, 0x5a, sizeof(out));
		rc = report_decode(buf, len, &out, err, sizeof(err));
		if (rc != row->rc)
			fail_msg("%s: rc %d, want %d (%s)", row->name, rc, row->rc, err);
		if (!strstr(err, row->reason))
			fail_msg("%s: reason \"%s\" does not mention \"%s\"", row->name, err, row->reason);
		for (size_t b = 0; b < sizeof(out); b++)
			if (((uint8_t *)&out)[b] != 0x5a)
				fail_msg("%s: output written on error", row->name);
	}
}

static void test_report_wrong_version_and_counts(void **state)
{
	Netsched__Report rep = NETSCHED__REPORT__INIT;
	Netsched__Interface ifc = NETSCHED__INTERFACE__INIT;
	Netsched__Interface *many[REPORT_MAX_INTERFACES + 1];
	uint8_t buf[REPORT_MAX_BYTES * 4];
	struct report out;
	char err[256] = "";
	size_t len;

	(void)state;
	rep.node = "node-7";
	ifc.name = "eth0";
	len = forge(buf, REPORT_WIRE_VERSION + 1, &rep);
	assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "wire version 2"));

	for (size_t i = 0; i < REPORT_MAX_INTERFACES + 1; i++)
		many[i] = &ifc;
	rep.interfaces = many;
	rep.n_interfaces = REPORT_MAX_INTERFACES + 1;
	len = forge(buf, REPORT_WIRE_VERSION, &rep);
	assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "limit 32"));

	assert_int_equal(report_decode(buf, REPORT_MAX_BYTES + 1, &out, err, sizeof(err)), -E2BIG);
}

/* An agent from before the burst fields: its report still decodes, with
 * the fields it does not know at 0 (the scorer then uses the average). */
static void test_report_without_burst_fields(void **state)
{
	Netsched__Report rep = NETSCHED__REPORT__INIT;
	Netsched__Interface ifc = NETSCHED__INTERFACE__INIT;
	Netsched__Interface *ifp = &ifc;
	uint8_t buf[REPORT_MAX_BYTES];
	struct report out;
	char err[256] = "";
	size_t len;

	(void)state;
	rep.node = "old-agent";
	rep.window_end_unix_ms = 1000;
	ifc.name = "eth0";
	ifc.rx_bytes = 5000;
	ifc.covered_ms = 1000;
	ifc.has_rx_peak_bytes_per_second = 1;
	ifc.rx_peak_bytes_per_second = 9000;
	rep.n_interfaces = 1;
	rep.interfaces = &ifp;
	len = forge(buf, REPORT_WIRE_VERSION, &rep);
	assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.ifaces[0].traffic.rx.p95, 0);
	assert_int_equal(out.ifaces[0].traffic.rx.recent, 0);
	assert_int_equal(out.ifaces[0].traffic.tx.recent, 0);
	assert_int_equal(out.ifaces[0].traffic.rx.peak, 9000);
	assert_int_equal(out.ifaces[0].traffic.rx.average, 5000);
}

static void test_report_garbage(void **state)
{
	struct report in = sample_report(), out;
	uint8_t good[REPORT_MAX_BYTES], buf[REPORT_MAX_BYTES];
	size_t len = 0, accepted = 0;

	(void)state;
	assert_int_equal(report_decode((const uint8_t *)"", 0, &out, NULL, 0), -EBADMSG);
	assert_int_equal(report_encode(&in, good, sizeof(good), &len), 0);
	/* Every truncation of a valid message, then bounded random bit flips:
	 * decode may accept a flip that still makes sense, but must never crash
	 * and never accept a report that breaks the limits. */
	for (size_t cut = 0; cut < len; cut++)
		assert_int_not_equal(report_decode(good, cut, &out, NULL, 0), 0);
	srand(7);
	for (int i = 0; i < 20000; i++) {
		memcpy(buf, good, len);
		for (int f = 0; f < 3; f++)
			buf[(size_t)rand() % len] ^= (uint8_t)(1u << (rand() % 8));
		if (report_decode(buf, len, &out, NULL, 0) == 0) {
			accepted++;
			assert_int_equal(report_validate(&out, NULL, 0), 0);
		}
	}
	print_message("random flips: %zu of 20000 still decoded as valid reports\n", accepted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_round_trip),
		cmocka_unit_test(test_report_encode_limits),
		cmocka_unit_test(test_report_forged),
		cmocka_unit_test(test_report_wrong_version_and_counts),
		cmocka_unit_test(test_report_garbage),
		cmocka_unit_test(test_report_without_burst_fields),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
