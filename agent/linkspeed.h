/* Link speed from /sys/class/net/IF/speed (megabits per second). Virtual
 * and down interfaces report -1 or fail to read: unknown is a legal answer,
 * and the scorer then ranks the node relative to its peers. */
#ifndef NETSCHED_LINKSPEED_H
#define NETSCHED_LINKSPEED_H

#include <stdint.h>

/* --link-speed IF=SPEED: for NICs whose speed the kernel does not know. */
struct linkspeed_override {
	char ifname[16];
	uint64_t bps;
};

/* Bits per second, or 0 when the kernel does not know. root is normally
 * "/sys/class/net" (tests point it elsewhere). */
uint64_t linkspeed_read(const char *root, const char *ifname);

#endif
