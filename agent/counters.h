/* One reading of an interface's cumulative kernel counters, from any source. */
#ifndef NETSCHED_COUNTERS_H
#define NETSCHED_COUNTERS_H

#include <stdint.h>

struct counters {
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_dropped;
	uint64_t tx_dropped;
	uint64_t rx_missed_errors;	/* the NIC's FIFO overflowed: a saturation signal */
};

#endif
