/* libFuzzer: the agent report as the scorer receives it, pods included (report_decode, and
 * report_decode_verified with a key file, whose signature check reads the
 * envelope first). A report that decodes must pass report_validate, encode
 * again (plain and signed), and decode from each encoding to the same
 * struct. Decode turns absent optional fields into 0 and encode writes them
 * all, so the reference is the first decode, not the input bytes. The
 * fuzzer cannot forge an HMAC: with keys, the input itself must be refused
 * unless it decodes without them. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/keyfile.h"
#include "proto/report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct keyfile keys;

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void check_same_iface(const struct report_iface *a, const struct report_iface *b)
{
	check(strcmp(a->name, b->name) == 0);
	check(a->ifindex == b->ifindex);
	check(a->rx_bytes == b->rx_bytes && a->tx_bytes == b->tx_bytes);
	check(a->samples == b->samples && a->samples_expected == b->samples_expected);
	for (size_t i = 0; i < traffic_n_figures; i++)
		check(traffic_get(&a->traffic, &traffic_figures[i]) ==
		      traffic_get(&b->traffic, &traffic_figures[i]));
}

static void check_same_pod(const struct report_pod *a, const struct report_pod *b)
{
	check(a->n_ips == b->n_ips && a->n_ips <= REPORT_MAX_POD_IPS);
	for (uint32_t k = 0; k < a->n_ips; k++)
		check(report_ip_equal(&a->ips[k], &b->ips[k]));
	check(a->rx_bytes == b->rx_bytes && a->tx_bytes == b->tx_bytes);
	check(a->covered_ms == b->covered_ms);
	check(a->rx.average == b->rx.average && a->tx.average == b->tx.average);
	check(a->rx.recent == b->rx.recent && a->tx.recent == b->tx.recent);
}

/* Field by field: padding bytes are not part of the value. */
static void check_same(const struct report *a, const struct report *b)
{
	check(strcmp(a->node, b->node) == 0);
	check(a->instance_id == b->instance_id && a->seq == b->seq);
	check(a->window_start_unix_ms == b->window_start_unix_ms);
	check(a->window_end_unix_ms == b->window_end_unix_ms);
	check(a->sample_interval_ms == b->sample_interval_ms);
	check(a->n_ifaces == b->n_ifaces);
	for (uint32_t i = 0; i < a->n_ifaces; i++)
		check_same_iface(&a->ifaces[i], &b->ifaces[i]);
	check(a->has_pods == b->has_pods && a->pods_seen == b->pods_seen);
	check(a->n_pods == b->n_pods && a->n_pods <= REPORT_MAX_PODS);
	for (uint32_t i = 0; i < a->n_pods; i++)
		check_same_pod(&a->pods[i], &b->pods[i]);
	check_same_pod(&a->pods_rest, &b->pods_rest);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char text[] = "# fuzz\n"
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
	char err[256];

	(void)argc;
	(void)argv;
	if (keyfile_parse("fuzz-keys", text, sizeof(text) - 1, &keys, err, sizeof(err)) ||
	    keys.n != 1)
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct report first, again;
	static uint8_t wire[REPORT_MAX_BYTES];
	char err[256];
	size_t len = 0;
	int rc;

	memset(err, 0x55, sizeof(err));
	rc = report_decode_verified(data, size, &keys, &again, err, sizeof(err));
	check(rc != 0 || report_decode(data, size, &first, NULL, 0) == 0);
	if (rc)
		check(memchr(err, '\0', sizeof(err)) && err[0]);

	memset(err, 0x55, sizeof(err));
	rc = report_decode(data, size, &first, err, sizeof(err));
	if (rc) {
		check(rc == -EBADMSG || rc == -EPROTO || rc == -E2BIG || rc == -ERANGE ||
		      rc == -REPORT_EPODS_OVERSIZE || rc == -REPORT_EPODS_DUPLICATE ||
		      rc == -REPORT_EPODS_OVER_LINK);
		check(memchr(err, '\0', sizeof(err)) && err[0]);
		return 0;
	}
	check(report_validate(&first, NULL, 0) == 0);
	check(first.n_ifaces <= REPORT_MAX_INTERFACES);
	check(report_encode(&first, wire, sizeof(wire), &len) == 0);
	check(len > 0 && len <= sizeof(wire));
	check(report_decode(wire, len, &again, err, sizeof(err)) == 0);
	check_same(&first, &again);

	check(report_encode_signed(&first, &keys.keys[0], wire, sizeof(wire), &len) == 0);
	check(len > 0 && len <= sizeof(wire));
	check(report_decode_verified(wire, len, &keys, &again, err, sizeof(err)) == 0);
	check_same(&first, &again);
	return 0;
}
