/* Entering another network namespace for long enough to open sockets in it.
 *
 * A socket stays in the namespace it was created in, so the agent enters the
 * target (`--netns NAME` for /run/netns/NAME, or a path such as
 * /proc/PID/ns/net), opens its netlink socket, and returns before anything
 * else (NNG, which dials the scorers) runs. setns() needs CAP_SYS_ADMIN; in
 * a DaemonSet the agent uses hostNetwork instead and never calls this. */
#ifndef NETSCHED_NETNS_H
#define NETSCHED_NETNS_H

#include <stddef.h>

/* Switches the calling thread into the namespace; *saved receives a handle
 * on the one it left. 0, or -errno with err naming the path and the cause. */
int netns_enter(const char *name_or_path, int *saved, char *err, size_t errlen);

/* Switches back and closes the handle. 0 or -errno. */
int netns_leave(int saved);

/* Gives the process a private mount namespace with a fresh sysfs on /sys,
 * which then shows the network namespace the caller is in now (what
 * `ip netns exec` does). Call inside the target, before any thread starts.
 * 0, or -errno with err naming the step. */
int netns_remount_sysfs(char *err, size_t errlen);

#endif
