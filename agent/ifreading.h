/* One reading of an interface's cumulative kernel counters, from any source
 * (nl.c, sysfs.c), which the window turns into deltas. */
#ifndef NETSCHED_IFREADING_H
#define NETSCHED_IFREADING_H

#include <stdint.h>

struct ifreading {
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_dropped;
	uint64_t tx_dropped;
	uint64_t rx_missed_errors;	/* the NIC's FIFO overflowed: a saturation signal */
};

#endif
