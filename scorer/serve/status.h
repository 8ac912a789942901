/* Read-only status endpoints: GET /v1/nodes, GET /healthz and GET /readyz.
 * Same reply convention as reply.h: *out gets a status and a malloc'd
 * JSON body the caller frees. */
#ifndef NETSCHED_STATUS_H
#define NETSCHED_STATUS_H

struct reply;
struct scorer;

/* {"nodes":[{"name","source","ageSeconds","rxBytesPerSecond",
 *  "txBytesPerSecond","linkBytesPerSecond","score"}]}: every node of
 * view_list(), sorted by name. */
void status_nodes(struct scorer *s, struct reply *out);
/* GET /v1/workloads: podstatus_workloads() (podstatus.h). */
void status_workloads(struct scorer *s, struct reply *out);
/* {"status":"ok","nodes":N,"uptimeSeconds":S} */
void status_healthz(struct scorer *s, struct reply *out);
/* 200 {"ready":true,"freshNodes":F,"nodes":N,"warmupRemainingSeconds":0}
 * once some node has fresh data or s->view.warmup_ns has passed since start
 * (until then the scheduler would only get neutral scores); else the same
 * body with "ready":false and status 503. */
void status_readyz(struct scorer *s, struct reply *out);

#endif
