/* The Prometheus fallback: traffic for nodes whose agent is silent.
 *
 * One background thread asks Prometheus ONE instant query for every node's
 * rx and tx rate (promquery.h) every refresh interval, and publishes the
 * result as an immutable snapshot. The extender's request path only reads
 * that snapshot from memory: Prometheus being slow, down or hanging never
 * reaches the scheduler. Every call has a connect and a total deadline
 * (libcurl); while Prometheus fails, refreshes back off (up to 4x the
 * interval) and the last good snapshot keeps its own time, so a failed
 * refresh never makes old data look fresh; data older than max_age is not
 * used at all.
 *
 * The reply's bytes, as they arrive, and its JSON tokens are taken from a
 * memory budget (cfg->budget: the scorer's request memory, shared with
 * the extender's bodies) before they are held: a reply at the caps below
 * needs 112 MiB (32 MiB and 4 Mi tokens of 20 bytes), and outside any
 * budget that came on top of everything the budgets bound. A reply with
 * no room is a failed refresh (backed off, logged with the numbers).
 *
 * Counters (refreshes, failures, dropped values, latency) are the
 * scorer's (registry.h), updated atomically by the thread. */
#ifndef NETSCHED_PROM_H
#define NETSCHED_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prom/promquery.h"

#define PROM_URL_MAX 256
#define PROM_PATH_MAX 256
/* A reply for 10,000 nodes is ~3 MB; anything far beyond is refused. */
#define PROM_MAX_REPLY_BYTES (32u * 1024u * 1024u)

struct prom_config {
	char url[PROM_URL_MAX];		/* http(s)://host:port[/prefix] */
	struct promquery_config query;
	uint64_t refresh_ms;
	uint64_t timeout_ms;		/* the whole request */
	uint64_t connect_timeout_ms;
	uint64_t max_age_ms;		/* older data is not used */
	char token_file[PROM_PATH_MAX];	/* bearer token, re-read every refresh */
	char ca_file[PROM_PATH_MAX];
	bool insecure;			/* skip TLS verification: explicit only */
	size_t max_nodes;
	/* The reply and its tokens are charged to it while a refresh holds
	 * them; NULL: no budget. Must outlive the fallback. */
	struct membudget *budget;
};

struct membudget;
struct registry;
struct prom;

/* Checks the config, builds the query and starts the thread; the first
 * refresh runs at once. counters must outlive it; now_ns (monotonic) times
 * each snapshot. NULL with err set. */
struct prom *prom_start(const struct prom_config *cfg, struct registry *counters,
			uint64_t (*now_ns)(void), char *err, size_t errlen);
/* Stops the thread (an in-flight request ends within its deadline) and
 * frees everything. Accepts NULL. */
void prom_stop(struct prom *p);

/* The node's rates from the latest snapshot, if it has them and the
 * snapshot is younger than max_age. *age_ns is the snapshot's age. */
bool prom_get(struct prom *p, const char *node, size_t len, uint64_t now_ns, uint64_t *rx,
	      uint64_t *tx, uint64_t *age_ns);

/* Copies up to cap node names of a fresh snapshot into names (each
 * NODENAME_MAX_LEN + 1 bytes); returns how many there are. */
size_t prom_nodes(struct prom *p, uint64_t now_ns, char (*names)[NODENAME_MAX_LEN + 1],
		  size_t cap);

#endif
