/* Read-only status endpoints: GET /v1/nodes and GET /healthz.
 * Same reply convention as extender.h: *out gets a status and a malloc'd
 * JSON body the caller frees. */
#ifndef NETSCHED_STATUS_H
#define NETSCHED_STATUS_H

#include "extender.h"
#include "scorer.h"

/* {"nodes":[{"name","source","ageSeconds","rxBytesPerSecond",
 *  "txBytesPerSecond","linkBytesPerSecond","score"}]}, sorted by name. */
void status_nodes(struct scorer *s, struct ext_reply *out);
/* {"status":"ok","nodes":N,"uptimeSeconds":S} */
void status_healthz(struct scorer *s, struct ext_reply *out);

#endif
