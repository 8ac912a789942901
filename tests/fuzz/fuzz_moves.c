/* libFuzzer: the rebalancer's move, POST /v1/moves's body (movereq_parse(),
 * scorer/parse/movereq.c), and the table it goes into (pods/moves.c). Besides the
 * sanitizers:
 *  - only the documented errors: -EINVAL, -E2BIG (over MOVEREQ_BODY_MAX,
 *    and only then), -ERANGE;
 *  - the same bytes parse the same way twice;
 *  - a move taken has every string NUL-terminated and non-empty, a hold in
 *    [MOVEREQ_HOLD_MIN_S, MOVEREQ_HOLD_MAX_S], rates at most 400 GB/s; the table
 *    takes it, holds it on its source, reserves it on its destination and
 *    lists it. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/namekey.h"
#include "proto/traffic.h"
#include "scorer/pods/moves.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void got(size_t i, uint64_t rx, uint64_t tx, void *ctx)
{
	(void)i;
	*(uint64_t *)ctx = rx + tx + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct movereq a, b;
	static struct moves *m;
	struct moves_entry *e;
	struct namekey to;
	char err[512];
	uint64_t seen = 0;
	long n;
	int rc = movereq_parse((const char *)data, size, &a, err, sizeof(err));

	check(rc == 0 || rc == -EINVAL || rc == -E2BIG || rc == -ERANGE);
	check((rc == -E2BIG) == (size > MOVEREQ_BODY_MAX));
	check(movereq_parse((const char *)data, size, &b, err, sizeof(err)) == rc);
	if (rc)
		return 0;
	check(!memcmp(&a, &b, sizeof(a)));
	check(a.ns[0] && memchr(a.ns, 0, sizeof(a.ns)));
	check(a.pod[0] && memchr(a.pod, 0, sizeof(a.pod)));
	check(a.uid[0] && memchr(a.uid, 0, sizeof(a.uid)));
	check(a.workload[0] && memchr(a.workload, 0, sizeof(a.workload)));
	check(a.from[0] && memchr(a.from, 0, sizeof(a.from)));
	check(a.to[0] && memchr(a.to, 0, sizeof(a.to)));
	check(a.hold_s >= MOVEREQ_HOLD_MIN_S && a.hold_s <= MOVEREQ_HOLD_MAX_S);
	check(a.rx_bytes_per_second <= TRAFFIC_MAX_BYTES_PER_SECOND);
	check(a.tx_bytes_per_second <= TRAFFIC_MAX_BYTES_PER_SECOND);
	if (!m)
		m = moves_create(4);
	check(m);
	moves_tick(m, UINT64_MAX / 2);	/* an empty table for each input */
	check(moves_put(m, &a, NS_PER_SEC) == 0);
	check(moves_held_on(m, a.from, strlen(a.from), NS_PER_SEC) == 1);
	to = namekey_of(a.to, strlen(a.to));
	check(moves_reserved_each(m, &to, 1, NS_PER_SEC, got, &seen) == 1);
	check(seen == a.rx_bytes_per_second + a.tx_bytes_per_second + 1 ||
	      !strcmp(a.from, a.to));
	n = moves_list(m, NS_PER_SEC, &e);
	check(n == 1 && !strcmp(e[0].rq.uid, a.uid));
	free(e);
	return 0;
}
