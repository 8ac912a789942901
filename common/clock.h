/* Clocks. Intervals and ages always use the monotonic clock, so a stepped wall
 * clock never stretches or shrinks a window; wall time is for humans only. */
#ifndef NETSCHED_CLOCK_H
#define NETSCHED_CLOCK_H

#include <stdint.h>

#define NS_PER_MS 1000000ULL
#define NS_PER_SEC 1000000000ULL

uint64_t clock_mono_ns(void);
uint64_t clock_unix_ms(void);

#endif
