/* Moves announced by the rebalancer (POST /v1/moves): for each, a hold on
 * the node a pod leaves and a reservation on the node it should land on.
 *
 * The rebalancer posts a move before it evicts the pod. For holdSeconds:
 *  - hold: pods of the moved pod's workload score 0 on `from`, and the fit
 *    filter leaves `from` out for them while another node passes (the
 *    extender asks moves_mine()), so the replacement does not go straight
 *    back to the node being relieved. Other pods are not held: they see
 *    `from` as its agent's window shows it, which still holds the evicted
 *    pod's traffic (the average for the whole window, decaying; the p95
 *    almost whole until the window has turned over), so the next burst
 *    does not refill it at once;
 *  - reservation: `to` counts the pod's rx and tx as in flight (the view:
 *    moves_reserved_each()), so other pods see the room taken, until a pod
 *    of that workload is bound to `to` (the pod watch: moves_bound(); from
 *    then on the in-flight table counts it) or the hold ends. Pods of the
 *    moved workload itself do not see their own reservation (as a pod in
 *    flight is never judged against its own share: inflight.h).
 * A second move for the same pod UID replaces the first.
 *
 * Bounded: at most max moves (--moves-max, 4,096); a new one when every
 * row holds an unexpired move is refused (-ENOSPC: 503). Expired rows are
 * reused at once and swept by moves_tick().
 *
 * Cheap when unused: every lookup on the request path first reads one
 * atomic count of rows in use. Lookups go through chained hash tables by
 * `from`, by `to` (on hash_fnv1a() of the name, the hash a request's names
 * already carry: namekey.h) and by workload, so a request costs a probe or
 * two however full the table is (a scan of 4,096 rows per request would
 * have cost ~80 us).
 *
 * Thread-safe: one read-write lock. Time is passed in (monotonic ns). */
#ifndef NETSCHED_MOVES_H
#define NETSCHED_MOVES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "namekey.h"
#include "nodename.h"
#include "parse/movereq.h"

#define MOVES_DEFAULT_MAX 4096u
#define MOVES_MAX_MAX 65536u
/* A rate above this many times the wider link of the two nodes is absurd
 * (movesroute.h). */
#define MOVES_RATE_LINKS 100u
/* Holds and reservations of one workload a request looks at, at most
 * (moves_mine()): the rebalancer moves a few pods of a workload at once,
 * never hundreds; beyond this the oldest are not seen by that request. */
#define MOVES_MINE_MAX 32u

/* One move now, for GET /v1/moves. */
struct moves_entry {
	struct movereq rq;
	uint64_t remaining_ns;
	bool landed;		/* a pod of the workload was bound to `to` */
};

/* What one workload's moves mean for a pod of it (moves_mine()). */
struct moves_mine_row {
	uint64_t from_hash, to_hash;	/* hash_fnv1a() of the names */
	char from[NODENAME_MAX_LEN + 1];
	char to[NODENAME_MAX_LEN + 1];
	uint64_t rx, tx;		/* reserved on `to`; 0 once landed */
	uint32_t hold_s;		/* as posted */
	uint32_t remaining_s;		/* rounded up */
};

struct moves_mine {
	size_t n;
	struct moves_mine_row rows[MOVES_MINE_MAX];
};

struct moves_stats {
	uint64_t accepted;	/* moves_put() that took a row */
	uint64_t replaced;	/* ... replacing an earlier move of the same UID */
	uint64_t full;		/* refused: every row held */
	uint64_t landed;	/* reservations ended by a bound pod */
	size_t holds;		/* unexpired moves now */
	size_t reservations;	/* ... whose pod has not landed */
	size_t max;
};

struct moves;

/* NULL when max is 0 or over MOVES_MAX_MAX, or memory ran out. */
struct moves *moves_create(size_t max);
/* Accepts NULL. */
void moves_destroy(struct moves *m);

/* Records rq at now_ns: held until now_ns + hold_s. 0; 1 when it replaced
 * an earlier move of the same UID; -ENOSPC when every row holds an
 * unexpired move. */
int moves_put(struct moves *m, const struct movereq *rq, uint64_t now_ns);

/* The unexpired moves of workload wl[0..wl_len) (at most MOVES_MINE_MAX):
 * where its pods are held and what they reserve. out->n 0 when none; m
 * may be NULL. */
void moves_mine(struct moves *m, const char *wl, size_t wl_len, uint64_t now_ns,
		struct moves_mine *out);

/* For each of keys[0..n) that unlanded, unexpired moves go to: fn(i, their
 * rx, their tx, ctx), all under one read lock (fn must be quick and must
 * not call back in). Returns how many nodes had some. m may be NULL. */
size_t moves_reserved_each(struct moves *m, const struct namekey *keys, size_t n, uint64_t now_ns,
			   void (*fn)(size_t i, uint64_t rx, uint64_t tx, void *ctx), void *ctx);

/* Whether any row is in use (expired or not): one atomic read, so the
 * request path skips everything else when the rebalancer is not moving
 * anything. m may be NULL. */
bool moves_active(struct moves *m);

/* Unexpired moves from node name[0..len) (the holds on it). m may be NULL. */
size_t moves_held_on(struct moves *m, const char *name, size_t len, uint64_t now_ns);

/* The pod watch: pod uid of workload wl was bound to node at bound_ns. A
 * move of that workload to that node, posted no later than bound_ns
 * allows (the binding time has whole seconds: a second's slack), of
 * another pod than uid, has landed: its reservation ends (its hold stays
 * until it expires). How many landed. m may be NULL. */
size_t moves_bound(struct moves *m, const char *uid, size_t uid_len, const char *node,
		   size_t node_len, const char *wl, size_t wl_len, uint64_t bound_ns,
		   uint64_t now_ns);

/* Frees the rows of expired moves. Off the request path, once a second. */
void moves_tick(struct moves *m, uint64_t now_ns);

/* Every unexpired move, sorted by from, then to, then UID: how many, and a
 * malloc'd array in *out the caller frees; -ENOMEM (*out untouched). */
long moves_list(struct moves *m, uint64_t now_ns, struct moves_entry **out);

/* Counters and sizes at now_ns; m may be NULL (all zero). */
void moves_stats(struct moves *m, uint64_t now_ns, struct moves_stats *out);

/* The name part of a workload label ("default/Deployment/web" -> "web"),
 * for messages. */
const char *moves_workload_short(const char *label);

#endif
