/* Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection does it: the leader renews the Lease's renewTime; another
 * replica takes the Lease over only when it has seen the same holder and
 * renewTime unchanged for leaseDurationSeconds by its own clock (never by
 * comparing clocks across machines); every write carries the
 * resourceVersion read, so of two replicas taking over at once the
 * apiserver accepts one (the other gets 409).
 *
 * This file is the judgement and the Lease's JSON; the requests are the
 * caller's. A lease_state is the caller's, zeroed at start. */
#ifndef NETSCHED_REBALANCER_LEASE_H
#define NETSCHED_REBALANCER_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define LEASE_ID_MAX 254u	/* a holder identity: a pod name or a hostname */
#define LEASE_TIME_MAX 40u	/* "2026-11-27T21:00:00.000000Z" */
#define LEASE_RV_MAX 64u

/* What a GET of the Lease said. */
struct lease_record {
	bool exists;
	char holder[LEASE_ID_MAX];
	char renew[LEASE_TIME_MAX];
	char acquire[LEASE_TIME_MAX];
	uint64_t duration_s;
	uint64_t transitions;
	char rv[LEASE_RV_MAX];
};

struct lease_state {
	char seen_holder[LEASE_ID_MAX];
	char seen_renew[LEASE_TIME_MAX];
	uint64_t seen_at_ms;	/* monotonic, when seen_* last changed */
	bool leader;
	uint64_t renewed_at_ms;	/* monotonic, the last successful write */
};

enum lease_action {
	LEASE_CREATE,	/* no Lease yet: POST one holding it */
	LEASE_RENEW,	/* ours: PUT a new renewTime */
	LEASE_TAKE,	/* expired or released: PUT ourselves as holder */
	LEASE_FOLLOW,	/* another replica holds it */
};

/* What to do now (monotonic now_ms) with what the GET read; remembers what
 * was seen. duration_s: ours, when the record has none. */
enum lease_action lease_judge(struct lease_state *st, const struct lease_record *r,
			      const char *identity, uint64_t duration_s, uint64_t now_ms);

/* After the write for the action: whether the apiserver took it (2xx). */
void lease_wrote(struct lease_state *st, enum lease_action a, bool ok, uint64_t now_ms);

/* Whether this replica may act now: it wrote the Lease as holder less than
 * duration_s ago. */
bool lease_is_leader(const struct lease_state *st, uint64_t duration_s, uint64_t now_ms);

/* A Lease object (GET reply) into r; a 404 is r->exists false, the
 * caller's. 0 or -EINVAL with err. */
int lease_parse(const char *js, size_t len, struct lease_record *r, char *err, size_t errlen);

/* The body to POST (action LEASE_CREATE) or PUT: identity holds the Lease
 * from now_text (a MicroTime, "2026-11-27T21:00:00.000000Z"). */
void lease_body(struct buf *b, const char *name, const char *ns, const char *identity,
		uint64_t duration_s, const struct lease_record *r, enum lease_action a,
		const char *now_text);

/* now (Unix, nanoseconds) as a MicroTime. */
void lease_micro_time(uint64_t unix_ns, char *out, size_t cap);

#endif
