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
	/* Two pods listed (one dual-stack), three more summed. */
	r.has_pods = true;
	r.pods_seen = 5;
	r.n_pods = 2;
	report_ip_parse("10.244.1.7", &r.pods[0].ips[0]);
	report_ip_parse("fd00:10:244:1::7", &r.pods[0].ips[1]);
	r.pods[0].n_ips = 2;
	report_pod_count(&r.pods[0], 30000000ULL * 60, 2000000ULL * 60, 60000);
	r.pods[0].rx.recent = 31000000;
	r.pods[0].tx.recent = 1900000;
	report_ip_parse("10.244.1.9", &r.pods[1].ips[0]);
	r.pods[1].n_ips = 1;
	report_pod_count(&r.pods[1], 5000, 7000, 14000);
	r.pods[1].rx.recent = 400;
	report_pod_count(&r.pods_rest, 90000, 1000, 60000);
	r.pods_rest.tx.recent = 20;
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
	assert_true(out.has_pods);
	assert_int_equal(out.pods[0].rx.average, 30000000);
	assert_int_equal(out.pods[1].ips[0].len, 4);
	assert_int_equal(out.pods[0].ips[1].len, 16);
}

/* Every interface and pod at its bounds, IPv6 addresses, counters that
 * take ten bytes each: what REPORT_MAX_BYTES must hold. */
static void test_report_worst_case_fits(void **state)
{
	static struct report r, out;
	uint8_t buf[REPORT_MAX_BYTES];
	size_t len = 0;
	uint64_t each = TRAFFIC_MAX_BYTES_PER_SECOND / REPORT_MAX_INTERFACES;
	uint64_t pod = TRAFFIC_MAX_BYTES_PER_SECOND / (REPORT_MAX_PODS + 1);

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(r.node, 'n', NODENAME_MAX_LEN);
	r.instance_id = r.seq = UINT64_MAX;
	r.window_start_unix_ms = r.window_end_unix_ms = UINT64_MAX;
	r.sample_interval_ms = UINT32_MAX;
	r.n_ifaces = REPORT_MAX_INTERFACES;
	for (uint32_t i = 0; i < r.n_ifaces; i++) {
		struct report_iface *f = &r.ifaces[i];

		snprintf(f->name, sizeof(f->name), "eth%012u", i);
		f->ifindex = f->samples = f->samples_expected = UINT32_MAX;
		f->failed_samples = REPORT_MAX_FAILED_SAMPLES;
		report_iface_count(f, each / 1000 * REPORT_MAX_COVERED_MS,
				   each / 1000 * REPORT_MAX_COVERED_MS, REPORT_MAX_COVERED_MS);
		/* Link unknown on one: the pods are held to the absolute bound. */
		f->traffic.link_bytes_per_second = i ? TRAFFIC_MAX_BYTES_PER_SECOND : 0;
		f->traffic.rx.peak = f->traffic.tx.peak = TRAFFIC_MAX_BYTES_PER_SECOND;
		f->traffic.rx.p95 = f->traffic.tx.p95 = TRAFFIC_MAX_BYTES_PER_SECOND;
		f->traffic.rx.recent = f->traffic.tx.recent = TRAFFIC_MAX_BYTES_PER_SECOND;
		f->traffic.rx_dropped = f->traffic.rx_missed = f->traffic.tx_dropped = UINT64_MAX;
	}
	r.has_pods = true;
	r.pods_seen = REPORT_MAX_PODS_SEEN;
	r.n_pods = REPORT_MAX_PODS;
	for (uint32_t i = 0; i <= REPORT_MAX_PODS; i++) {
		struct report_pod *p = i < REPORT_MAX_PODS ? &r.pods[i] : &r.pods_rest;

		for (uint32_t k = 0; i < REPORT_MAX_PODS && k < REPORT_MAX_POD_IPS; k++) {
			p->ips[k].len = 16;
			memset(p->ips[k].addr, 0xfd, 16);
			p->ips[k].addr[14] = (uint8_t)i;
			p->ips[k].addr[15] = (uint8_t)k;
		}
		p->n_ips = i < REPORT_MAX_PODS ? REPORT_MAX_POD_IPS : 0;
		report_pod_count(p, pod / 1000 * REPORT_MAX_COVERED_MS,
				 pod / 1000 * REPORT_MAX_COVERED_MS, REPORT_MAX_COVERED_MS);
		p->rx.recent = p->tx.recent = pod;
	}
	assert_int_equal(report_validate(&r, NULL, 0), 0);
	assert_int_equal(report_encode(&r, buf, sizeof(buf), &len), 0);
	print_message("worst case: %zu bytes, limit %u\n", len, REPORT_MAX_BYTES);
	/* A margin for a few more optional fields before the limit must move. */
	assert_true(len < REPORT_MAX_BYTES * 7 / 8);
	assert_int_equal(report_decode(buf, len, &out, NULL, 0), 0);
	assert_memory_equal(&r, &out, sizeof(r));
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

/* Decodes rep (a forged node-7 with eth0) and holds the result to the
 * row's; name says which row and form. */
static void check_forged(const char *name, const Netsched__Report *rep, int want,
			 const char *reason, uint32_t n_pods)
{
	uint8_t buf[REPORT_MAX_BYTES * 4];
	struct report out;
	char err[512] = "";
	size_t len;
	int rc;

	len = forge(buf, REPORT_WIRE_VERSION, rep);
	memset(&out, 0x5a, sizeof(out));
	rc = report_decode(buf, len, &out, err, sizeof(err));
	if (rc != want)
		fail_msg("%s: rc %d, want %d (%s)", name, rc, want, err);
	if (!strstr(err, reason))
		fail_msg("%s: reason \"%s\" does not mention \"%s\"", name, err, reason);
	if (rc == 0) {
		assert_true(out.has_pods);
		assert_int_equal(out.n_pods, n_pods);
		return;
	}
	for (size_t b = 0; b < sizeof(out); b++)
		if (((uint8_t *)&out)[b] != 0x5a)
			fail_msg("%s: output written on error", name);
}

/* A forged node-7 with one interface, eth0, 1000 B over 1 s, its window
 * ending at 2 s. */
static void forged_node(Netsched__Report *rep, Netsched__Interface *ifc, Netsched__Interface **ifp)
{
	netsched__report__init(rep);
	netsched__interface__init(ifc);
	rep->node = "node-7";
	rep->instance_id = 1;
	rep->seq = 1;
	rep->window_start_unix_ms = 1000;
	rep->window_end_unix_ms = 2000;
	ifc->name = "eth0";
	ifc->rx_bytes = 1000;
	ifc->covered_ms = 1000;
	*ifp = ifc;
	rep->n_interfaces = 1;
	rep->interfaces = ifp;
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
		Netsched__Report rep;
		Netsched__Interface ifc, *ifp;

		forged_node(&rep, &ifc, &ifp);
		row->mutate(&rep, &ifc);
		check_forged(row->name, &rep, row->rc, row->reason, 0);
	}
}

/* -------------------------------------------------------------- pods */

/* A forged report's pods: room for one more than any bound. */
#define F_PODS (REPORT_MAX_PODS + 1)
#define F_IPS (REPORT_MAX_POD_IPS + 1)
struct forged_pods {
	Netsched__Pod pods[F_PODS];
	Netsched__Pod *podp[F_PODS];
	Netsched__Pod rest;
	ProtobufCBinaryData ips[F_PODS][F_IPS];
	uint8_t addr[F_PODS][F_IPS][16];
};

/* Pod i gets n addresses 10.244.i.k (or fd00::i:k when v6). */
static void f_addrs(struct forged_pods *f, size_t i, size_t n, bool v6)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t *a = f->addr[i][k];

		memset(a, 0, 16);
		if (v6) {
			a[0] = 0xfd;
			a[13] = (uint8_t)(i >> 8);
			a[14] = (uint8_t)i;
			a[15] = (uint8_t)(k + 1);
		} else {
			a[0] = 10, a[1] = 244, a[2] = (uint8_t)i, a[3] = (uint8_t)(k + 1);
		}
		f->ips[i][k].data = a;
		f->ips[i][k].len = v6 ? 16 : 4;
	}
	f->pods[i].ips = f->ips[i];
	f->pods[i].n_ips = n;
}

/* n pods of one IPv4 address, 1000 B/s each way over 1 s, and a rest. */
static void f_pods(Netsched__Report *rep, struct forged_pods *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		netsched__pod__init(&f->pods[i]);
		f_addrs(f, i, 1, false);
		f->pods[i].rx_bytes = f->pods[i].tx_bytes = 1000;
		f->pods[i].covered_ms = 1000;
		f->podp[i] = &f->pods[i];
	}
	netsched__pod__init(&f->rest);
	rep->n_pods = n;
	rep->pods = f->podp;
	rep->pods_rest = &f->rest;
	rep->has_pods_seen = 1;
	rep->pods_seen = (uint32_t)n;
}

struct pod_row {
	const char *name;
	int rc;
	const char *reason;
	void (*mutate)(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f);
};

static void p_ok(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 3);
}
static void p_too_many(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, REPORT_MAX_PODS + 1);
}
static void p_too_many_ips(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 2);
	f_addrs(f, 1, REPORT_MAX_POD_IPS + 1, true);
}
static void p_too_many_seen(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	rep->pods_seen = REPORT_MAX_PODS_SEEN + 1;
}
static void p_dup_across(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 3);
	f->addr[2][0][2] = 0; /* pod 2's address becomes pod 0's: 10.244.0.1 */
}
static void p_dup_within(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f_addrs(f, 0, 2, true);
	f->addr[0][1][15] = 1;
}
static void p_ip_length(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f->ips[0][0].len = 5;
}
static void p_ip_zero(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	memset(f->addr[0][0], 0, 4);
}
static void p_ip_mapped(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f_addrs(f, 0, 1, true);
	memset(f->addr[0][0], 0, 16);
	f->addr[0][0][10] = f->addr[0][0][11] = 0xff;
	f->addr[0][0][12] = 10;
}
static void p_no_ip(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 2);
	f->pods[1].n_ips = 0;
}
static void p_rest_ip(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f->rest.ips = f->ips[0];
	f->rest.n_ips = 1;
}
static void p_more_than_seen(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 3);
	rep->pods_seen = 2;
}
static void p_unseen(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	rep->has_pods_seen = 0;
	rep->pods_seen = 0;
}
static void p_no_time(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f->rest.tx_bytes = 1;
}
static void p_absurd_recent(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, 1);
	f->pods[0].has_tx_recent_bytes_per_second = 1;
	f->pods[0].tx_recent_bytes_per_second = UINT64_MAX;
}
/* 64 pods at 300 GB/s, each under the absolute limit, and no link known. */
static void p_node_sum(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	(void)ifc;
	f_pods(rep, f, REPORT_MAX_PODS);
	for (size_t i = 0; i < REPORT_MAX_PODS; i++)
		f->pods[i].rx_bytes = 300ULL * 1000 * 1000 * 1000;
}
/* A 1 Gb/s node (125 MB/s): pods may add up to 250 MB/s a direction. */
static void p_link(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	ifc->has_link_speed_bps = 1;
	ifc->link_speed_bps = 1000000000;
	f_pods(rep, f, 2);
	f->pods[0].rx_bytes = 149999000; /* pod 1: 1000 */
	f->rest.rx_bytes = 100000000;
	f->rest.covered_ms = 1000;
}
static void p_over_link(Netsched__Report *rep, Netsched__Interface *ifc, struct forged_pods *f)
{
	p_link(rep, ifc, f);
	f->pods[1].rx_bytes++;
}
static void p_recent_over_link(Netsched__Report *rep, Netsched__Interface *ifc,
			       struct forged_pods *f)
{
	ifc->has_link_speed_bps = 1;
	ifc->link_speed_bps = 1000000000;
	f_pods(rep, f, 2);
	f->pods[0].has_tx_recent_bytes_per_second = f->pods[1].has_tx_recent_bytes_per_second = 1;
	f->pods[0].tx_recent_bytes_per_second = 200000000;
	f->pods[1].tx_recent_bytes_per_second = 50000001;
}

static const struct pod_row pod_rows[] = {
	{ "three pods, well formed", 0, "", p_ok },
	{ "pods at exactly twice the link", 0, "", p_link },
	{ "65 pods", -REPORT_EPODS_OVERSIZE, "65 pods listed, limit 64", p_too_many },
	{ "5 addresses on a pod", -REPORT_EPODS_OVERSIZE, "pod 1 has 5 addresses, limit 4", p_too_many_ips },
	{ "4097 pods seen", -REPORT_EPODS_OVERSIZE, "4097 pods seen, limit 4096", p_too_many_seen },
	{ "an address on two pods", -REPORT_EPODS_DUPLICATE, "node-7: pod 2 lists 10.244.0.1, listed before", p_dup_across },
	{ "an address twice on one pod", -REPORT_EPODS_DUPLICATE, "pod 0 lists fd00::1, listed before", p_dup_within },
	{ "an address of 5 bytes", -EBADMSG, "pod 0 has an address neither 4 nor 16 bytes long", p_ip_length },
	{ "0.0.0.0", -EBADMSG, "pod 0 address 0 (4 bytes) is no pod's address", p_ip_zero },
	{ "an IPv4-mapped IPv6 address", -EBADMSG, "pod 0 address 0 (16 bytes) is no pod's address", p_ip_mapped },
	{ "a listed pod without an address", -EBADMSG, "pod 1 has no address", p_no_ip },
	{ "the rest with an address", -EBADMSG, "the rest of the pods has 1 addresses", p_rest_ip },
	{ "more pods listed than seen", -EBADMSG, "3 pods listed but only 2 seen", p_more_than_seen },
	{ "pods without a count of pods seen", -EBADMSG, "pod figures without a count", p_unseen },
	{ "the rest's bytes over no time", -ERANGE, "the rest of the pods has bytes but covers no time", p_no_time },
	{ "an absurd recent rate", -ERANGE, "pod 0 (10.244.0.1) rx 1000 B/s (recent 0), tx 1000 B/s (recent 18446744073709551615)", p_absurd_recent },
	{ "pods adding up to an absurd node", -ERANGE, "pods add up to 19200000000000 B/s", p_node_sum },
	{ "pods over twice the link", -REPORT_EPODS_OVER_LINK, "2 pods add up to rx 250000001 B/s (recent 0), tx 2000 B/s (recent 0) on a 1000000000 b/s link, limit 250000000 B/s", p_over_link },
	{ "recent rates over twice the link", -REPORT_EPODS_OVER_LINK, "tx 2000 B/s (recent 250000001)", p_recent_over_link },
};

/* The same pods as a table, the form agents send since issue 25. */
struct forged_table {
	Netsched__PodTable t;
	uint32_t v4n[F_PODS], v6n[F_PODS];
	uint8_t v4[F_PODS * F_IPS * 4], v6[F_PODS * F_IPS * 16];
	uint64_t rx[F_PODS], tx[F_PODS], ms[F_PODS], rx_recent[F_PODS], tx_recent[F_PODS];
};

/* Moves rep's pod list into ft, column by column (addresses of 4 or 16
 * bytes only), and rep->pod_table to it. */
static void f_table(Netsched__Report *rep, struct forged_table *ft)
{
	size_t n = rep->n_pods, b4 = 0, b6 = 0;

	netsched__pod_table__init(&ft->t);
	for (size_t i = 0; i < n; i++) {
		const Netsched__Pod *p = rep->pods[i];

		ft->v4n[i] = ft->v6n[i] = 0;
		for (size_t k = 0; k < p->n_ips; k++) {
			if (p->ips[k].len == 4) {
				memcpy(ft->v4 + b4, p->ips[k].data, 4);
				b4 += 4;
				ft->v4n[i]++;
			} else {
				memcpy(ft->v6 + b6, p->ips[k].data, 16);
				b6 += 16;
				ft->v6n[i]++;
			}
		}
		ft->rx[i] = p->rx_bytes;
		ft->tx[i] = p->tx_bytes;
		ft->ms[i] = p->covered_ms;
		ft->rx_recent[i] = p->rx_recent_bytes_per_second;
		ft->tx_recent[i] = p->tx_recent_bytes_per_second;
	}
	ft->t.seen = rep->pods_seen;
	ft->t.n_ipv4_count = ft->t.n_ipv6_count = ft->t.n_rx_bytes = ft->t.n_tx_bytes = n;
	ft->t.n_covered_ms = ft->t.n_rx_recent_bytes_per_second = n;
	ft->t.n_tx_recent_bytes_per_second = n;
	ft->t.ipv4_count = ft->v4n;
	ft->t.ipv6_count = ft->v6n;
	ft->t.has_ipv4 = ft->t.has_ipv6 = 1;
	ft->t.ipv4 = (ProtobufCBinaryData){ b4, ft->v4 };
	ft->t.ipv6 = (ProtobufCBinaryData){ b6, ft->v6 };
	ft->t.rx_bytes = ft->rx;
	ft->t.tx_bytes = ft->tx;
	ft->t.covered_ms = ft->ms;
	ft->t.rx_recent_bytes_per_second = ft->rx_recent;
	ft->t.tx_recent_bytes_per_second = ft->tx_recent;
	ft->t.rest = rep->pods_rest;
	rep->pod_table = &ft->t;
	rep->n_pods = 0;
	rep->pods = NULL;
	rep->pods_rest = NULL;
	rep->has_pods_seen = 0;
	rep->pods_seen = 0;
}

/* Faults only the table can have, on three well-formed pods (p_ok). */
struct table_row {
	const char *name;
	int rc;
	const char *reason;
	void (*mutate)(Netsched__Report *rep, struct forged_table *ft);
};

static void t_short_column(Netsched__Report *rep, struct forged_table *ft) { (void)rep; ft->t.n_tx_bytes = 2; }
static void t_no_figures(Netsched__Report *rep, struct forged_table *ft) { (void)rep; ft->t.n_rx_bytes = 0; }
static void t_short_bytes(Netsched__Report *rep, struct forged_table *ft) { (void)rep; ft->t.ipv4.len -= 4; }
static void t_huge_count(Netsched__Report *rep, struct forged_table *ft) { (void)rep; ft->v4n[1] = UINT32_MAX; }
static void t_spare_v6(Netsched__Report *rep, struct forged_table *ft) { (void)rep; ft->t.ipv6.len = 16; }
static void t_and_list(Netsched__Report *rep, struct forged_table *ft) { (void)ft; rep->has_pods_seen = 1; rep->pods_seen = 3; }

static const struct table_row table_rows[] = {
	{ "a column shorter than the rest", -EBADMSG, "node-7: the pod table lists 3 pods by rx_bytes but 2 by tx_bytes", t_short_column },
	{ "addresses and no figures", -EBADMSG, "lists 0 pods by rx_bytes but 3 by ipv4_count", t_no_figures },
	{ "an address short", -EBADMSG, "holds 8 bytes of IPv4 and 0 of IPv6 addresses, its counts make 12 and 0", t_short_bytes },
	{ "an address no count claims", -EBADMSG, "holds 12 bytes of IPv4 and 16 of IPv6 addresses, its counts make 12 and 0", t_spare_v6 },
	{ "a count of 2^32 - 1 addresses", -REPORT_EPODS_OVERSIZE, "pod 1 has 4294967295 addresses, limit 4", t_huge_count },
	{ "pods both as a table and as a list", -EBADMSG, "node-7: pod figures both as a table and as a list", t_and_list },
};

/* Every row as a list (older agents) and as a table (agents since issue
 * 25): the same fault gives the same error whichever form carries it. */
static void test_report_pods_forged(void **state)
{
	static struct forged_pods f;
	static struct forged_table ft;

	(void)state;
	for (size_t i = 0; i < sizeof(pod_rows) / sizeof(pod_rows[0]); i++) {
		const struct pod_row *row = &pod_rows[i];
		Netsched__Report rep;
		Netsched__Interface ifc, *ifp;
		char name[128];
		uint32_t n;

		/* Faults a table cannot carry: an address of another size, pods
		 * without a count seen (the table's is required). */
		bool list_only = row->mutate == p_ip_length || row->mutate == p_unseen;

		for (int table = 0; table < 2 - list_only; table++) {
			memset(&f, 0, sizeof(f));
			forged_node(&rep, &ifc, &ifp);
			row->mutate(&rep, &ifc, &f);
			n = (uint32_t)rep.n_pods;
			if (table)
				f_table(&rep, &ft);
			snprintf(name, sizeof(name), "%s, as a %s", row->name, table ? "table" : "list");
			check_forged(name, &rep, row->rc, row->reason, n);
		}
	}
	for (size_t i = 0; i < sizeof(table_rows) / sizeof(table_rows[0]); i++) {
		const struct table_row *row = &table_rows[i];
		Netsched__Report rep;
		Netsched__Interface ifc, *ifp;

		memset(&f, 0, sizeof(f));
		forged_node(&rep, &ifc, &ifp);
		p_ok(&rep, &ifc, &f);
		f_table(&rep, &ft);
		row->mutate(&rep, &ft);
		check_forged(row->name, &rep, row->rc, row->reason, 3);
	}
}

/* An older agent's list and a newer agent's table carry the same report:
 * both decode to it, a dual-stack pod's IPv4 address first whatever order
 * the list gave, and the table is the smaller. */
static void test_report_pod_forms_agree(void **state)
{
	static struct forged_pods f;
	static struct forged_table ft;
	struct report in = sample_report(), as_list, as_table;
	Netsched__Report rep;
	Netsched__Interface ifc, *ifp;
	Netsched__Pod rest = NETSCHED__POD__INIT;
	uint8_t buf[REPORT_MAX_BYTES * 4];
	size_t table_len, list_len;
	char err[256] = "";

	(void)state;
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &table_len), 0);
	assert_int_equal(report_decode(buf, table_len, &as_table, err, sizeof(err)), 0);
	assert_memory_equal(&in, &as_table, sizeof(in));

	/* sample_report()'s pods, forged as a list on node-7's eth0. */
	memset(&f, 0, sizeof(f));
	forged_node(&rep, &ifc, &ifp);
	f_pods(&rep, &f, in.n_pods);
	rep.pods_seen = in.pods_seen;
	for (uint32_t i = 0; i < in.n_pods; i++) {
		Netsched__Pod *p = &f.pods[i];
		const struct report_pod *src = &in.pods[i];

		/* The list gives pod 0's IPv6 address first. */
		for (uint32_t k = 0; k < src->n_ips; k++) {
			uint32_t at = src->n_ips - 1 - k;

			memcpy(f.addr[i][at], src->ips[k].addr, src->ips[k].len);
			f.ips[i][at] = (ProtobufCBinaryData){ src->ips[k].len, f.addr[i][at] };
		}
		p->n_ips = src->n_ips;
		p->rx_bytes = src->rx_bytes;
		p->tx_bytes = src->tx_bytes;
		p->covered_ms = src->covered_ms;
		p->has_rx_recent_bytes_per_second = p->has_tx_recent_bytes_per_second = 1;
		p->rx_recent_bytes_per_second = src->rx.recent;
		p->tx_recent_bytes_per_second = src->tx.recent;
	}
	rest.rx_bytes = in.pods_rest.rx_bytes;
	rest.tx_bytes = in.pods_rest.tx_bytes;
	rest.covered_ms = in.pods_rest.covered_ms;
	rest.has_tx_recent_bytes_per_second = 1;
	rest.tx_recent_bytes_per_second = in.pods_rest.tx.recent;
	rep.pods_rest = &rest;
	list_len = forge(buf, REPORT_WIRE_VERSION, &rep);
	assert_int_equal(report_decode(buf, list_len, &as_list, err, sizeof(err)), 0);
	assert_int_equal(as_list.pods[0].ips[0].len, 4);
	assert_int_equal(as_list.pods[0].ips[1].len, 16);
	assert_true(as_list.has_pods);
	assert_int_equal(as_list.pods_seen, as_table.pods_seen);
	assert_int_equal(as_list.n_pods, as_table.n_pods);
	assert_memory_equal(as_list.pods, as_table.pods, sizeof(as_table.pods));
	assert_memory_equal(&as_list.pods_rest, &as_table.pods_rest, sizeof(as_table.pods_rest));

	/* 32 pods, as the agent lists by default: the table is the smaller. */
	memset(&f, 0, sizeof(f));
	forged_node(&rep, &ifc, &ifp);
	f_pods(&rep, &f, 32);
	for (size_t i = 0; i < 32; i++) {
		f.pods[i].has_rx_recent_bytes_per_second = 1;
		f.pods[i].has_tx_recent_bytes_per_second = 1;
	}
	list_len = forge(buf, REPORT_WIRE_VERSION, &rep);
	f_table(&rep, &ft);
	table_len = forge(buf, REPORT_WIRE_VERSION, &rep);
	print_message("32 pods: %zu bytes as a list, %zu as a table\n", list_len, table_len);
	assert_true(table_len * 4 < list_len * 3);
}

/* A forged message of nothing but empty pods: 16 KB of them unpack to
 * hundreds of KB, past the decode arena, so protobuf-c mallocs the rest. It is
 * refused, what it took is freed (the sanitizer build would report a
 * leak), and the next report decodes from the arena again. The same for a
 * table whose column is the 16 KB. */
static void test_report_arena_spill(void **state)
{
	static Netsched__Pod empty = NETSCHED__POD__INIT;
	static Netsched__Pod *pods[REPORT_MAX_BYTES / 2];
	Netsched__Report rep = NETSCHED__REPORT__INIT;
	uint8_t buf[REPORT_MAX_BYTES * 4];
	struct report good, out;
	char err[256] = "";
	size_t len;

	/* Each a tag, a length and the pod's required fields. */
	size_t n = (REPORT_MAX_BYTES - 128) / (netsched__pod__get_packed_size(&empty) + 2);

	(void)state;
	for (size_t i = 0; i < n; i++)
		pods[i] = &empty;
	rep.node = "node-7";
	rep.instance_id = 1;
	rep.seq = 1;
	rep.window_start_unix_ms = 1000;
	rep.window_end_unix_ms = 2000;
	rep.n_pods = n;
	rep.pods = pods;
	len = forge(buf, REPORT_WIRE_VERSION, &rep);
	assert_true(len <= REPORT_MAX_BYTES);
	assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), -REPORT_EPODS_OVERSIZE);
	assert_non_null(strstr(err, "node-7: "));
	assert_non_null(strstr(err, "pods listed, limit 64"));

	good = sample_report();
	assert_int_equal(report_encode(&good, buf, sizeof(buf), &len), 0);
	assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), 0);
	assert_memory_equal(&good, &out, sizeof(good));

	/* The table's way: a column of 16,000 one-byte figures unpacks to
	 * 128 KB, twice the arena. */
	{
		static uint64_t figures[REPORT_MAX_BYTES];
		Netsched__PodTable t = NETSCHED__POD_TABLE__INIT;
		Netsched__Pod rest = NETSCHED__POD__INIT;

		rep.n_pods = 0;
		rep.pods = NULL;
		t.n_rx_bytes = REPORT_MAX_BYTES - 384;
		t.rx_bytes = figures;
		t.rest = &rest;
		rep.pod_table = &t;
		len = forge(buf, REPORT_WIRE_VERSION, &rep);
		assert_true(len <= REPORT_MAX_BYTES);
		assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)),
				 -REPORT_EPODS_OVERSIZE);
		assert_non_null(strstr(err, "node-7: 16000 pods listed, limit 64"));
		assert_int_equal(report_encode(&good, buf, sizeof(buf), &len), 0);
		assert_int_equal(report_decode(buf, len, &out, err, sizeof(err)), 0);
		assert_memory_equal(&good, &out, sizeof(good));
	}
}

/* How an older scorer reads a newer agent: protobuf skips a field it does
 * not know. A report carrying a field numbered past any we use decodes. */
static void test_report_unknown_field_skipped(void **state)
{
	struct report in = sample_report(), out;
	Netsched__Envelope *env;
	Netsched__Envelope wrap = NETSCHED__ENVELOPE__INIT;
	uint8_t buf[REPORT_MAX_BYTES], inner[REPORT_MAX_BYTES];
	size_t len = 0;

	(void)state;
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len), 0);
	env = netsched__envelope__unpack(NULL, len, buf);
	assert_non_null(env);
	memcpy(inner, env->report.data, env->report.len);
	/* field 99, varint 1: tag (99 << 3 | 0) = 792 = 0x98 0x06 */
	inner[env->report.len] = 0x98;
	inner[env->report.len + 1] = 0x06;
	inner[env->report.len + 2] = 0x01;
	wrap.version = REPORT_WIRE_VERSION;
	wrap.report.data = inner;
	wrap.report.len = env->report.len + 3;
	len = netsched__envelope__pack(&wrap, buf);
	netsched__envelope__free_unpacked(env, NULL);
	assert_int_equal(report_decode(buf, len, &out, NULL, 0), 0);
	assert_memory_equal(&in, &out, sizeof(in));
}

struct ip_row {
	const char *text;
	int parse_rc;
	bool ok;
};

static const struct ip_row ip_rows[] = {
	{ "10.244.1.7", 0, true },
	{ "fd00:10:244:1::7", 0, true },
	{ "2001:db8::1", 0, true },
	{ "0.0.0.0", 0, false },
	{ "127.0.0.1", 0, false },
	{ "224.0.0.1", 0, false },
	{ "255.255.255.255", 0, false },
	{ "::", 0, false },
	{ "::1", 0, false },
	{ "ff02::1", 0, false },
	{ "169.254.1.1", 0, false },
	{ "fe80::1", 0, false },
	{ "febf::1", 0, false },
	{ "fec0::1", 0, true },
	{ "::ffff:10.0.0.1", 0, false },
	{ "10.244.1", -EINVAL, false },
	{ "10.244.1.7/32", -EINVAL, false },
	{ "", -EINVAL, false },
	{ "fd00::7%eth0", -EINVAL, false },
};

static void test_report_ip_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ip_rows) / sizeof(ip_rows[0]); i++) {
		const struct ip_row *row = &ip_rows[i];
		struct report_ip ip = { .len = 99 }, again;
		char text[REPORT_IP_STRLEN];

		if (report_ip_parse(row->text, &ip) != row->parse_rc)
			fail_msg("%s: parse, want %d", row->text, row->parse_rc);
		if (row->parse_rc) {
			assert_int_equal(ip.len, 99); /* untouched */
			continue;
		}
		if (report_ip_ok(&ip) != row->ok)
			fail_msg("%s: ok, want %d", row->text, row->ok);
		assert_int_equal(report_ip_format(&ip, text, sizeof(text)), 0);
		assert_int_equal(report_ip_parse(text, &again), 0);
		assert_true(report_ip_equal(&ip, &again));
	}
	{
		struct report_ip bad = { .len = 5 };
		char text[REPORT_IP_STRLEN];

		assert_int_equal(report_ip_format(&bad, text, sizeof(text)), -EINVAL);
		assert_false(report_ip_ok(&bad));
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

/* An agent from before the burst and pod fields: its report still
 * decodes, with the fields it does not know at 0 (the scorer then uses the
 * average) and no pods. */
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
	assert_false(out.has_pods);
	assert_int_equal(out.n_pods, 0);
	assert_int_equal(out.pods_seen, 0);
	assert_int_equal(out.ifaces[0].failed_samples, 0); /* an older agent: none said */
}

/* An interface whose newest samples failed says how many, over the wire
 * and back; a count past the bound is refused. Without any, the wire is
 * what it was (the field left out). */
static void test_report_failed_samples(void **state)
{
	struct report in = sample_report(), out;
	uint8_t buf[REPORT_MAX_BYTES];
	size_t len = 0, len0 = 0;

	(void)state;
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len0), 0);
	in.ifaces[1].failed_samples = 300;
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len), 0);
	assert_true(len > len0);
	assert_int_equal(report_decode(buf, len, &out, NULL, 0), 0);
	assert_int_equal(out.ifaces[0].failed_samples, 0);
	assert_int_equal(out.ifaces[1].failed_samples, 300);
	in.ifaces[1].failed_samples = REPORT_MAX_FAILED_SAMPLES + 1;
	assert_int_equal(report_validate(&in, NULL, 0), -ERANGE);
	assert_int_equal(report_encode(&in, buf, sizeof(buf), &len), -EINVAL);
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
		cmocka_unit_test(test_report_worst_case_fits),
		cmocka_unit_test(test_report_pods_forged),
		cmocka_unit_test(test_report_pod_forms_agree),
		cmocka_unit_test(test_report_arena_spill),
		cmocka_unit_test(test_report_unknown_field_skipped),
		cmocka_unit_test(test_report_ip_text),
		cmocka_unit_test(test_report_encode_limits),
		cmocka_unit_test(test_report_forged),
		cmocka_unit_test(test_report_wrong_version_and_counts),
		cmocka_unit_test(test_report_garbage),
		cmocka_unit_test(test_report_without_burst_fields),
		cmocka_unit_test(test_report_failed_samples),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
