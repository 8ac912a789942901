/* libFuzzer: a Prometheus instant-query reply (promquery_parse), with the
 * kube-prometheus node label and a small node limit. On success the result
 * must keep promquery.h's promises: at most max_nodes values, sorted by
 * node with no duplicates, each a printable 1..253-byte name with an rx or
 * a tx rate within TRAFFIC_MAX_BYTES_PER_SECOND. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scorer/prom/promquery.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#define MAX_NODES 16

static void check_value(const struct promquery_value *v)
{
	size_t n = strnlen(v->node, sizeof(v->node));

	check(n >= 1 && n <= NODENAME_MAX_LEN);
	for (size_t i = 0; i < n; i++)
		check(v->node[i] > ' ' && v->node[i] < 0x7f && v->node[i] != '\\' &&
		      v->node[i] != '"' && v->node[i] != '/');
	check(v->has_rx || v->has_tx);
	check(v->has_rx || v->rx_bytes_per_second == 0);
	check(v->has_tx || v->tx_bytes_per_second == 0);
	check(v->rx_bytes_per_second <= TRAFFIC_MAX_BYTES_PER_SECOND);
	check(v->tx_bytes_per_second <= TRAFFIC_MAX_BYTES_PER_SECOND);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct promquery_result r;
	char err[256];
	int rc;

	memset(err, 0x55, sizeof(err));
	memset(&r, 0xa5, sizeof(r));
	rc = promquery_parse((const char *)data, size, "instance", MAX_NODES, &r, err, sizeof(err));
	if (rc) {
		check(rc == -EBADMSG || rc == -E2BIG || rc == -ENOMEM);
		if (rc != -ENOMEM)
			check(memchr(err, '\0', sizeof(err)) && err[0]);
		return 0;
	}
	check(r.n <= MAX_NODES && (r.n == 0 || r.values));
	for (size_t i = 0; i < r.n; i++) {
		check_value(&r.values[i]);
		if (i)
			check(strcmp(r.values[i - 1].node, r.values[i].node) < 0);
	}
	promquery_result_free(&r);
	return 0;
}
