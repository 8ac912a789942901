/* A report as JSON, for `netsched-agent --once` and for humans debugging a
 * node: the wire fields plus the average rates they imply. */
#ifndef NETSCHED_REPORTJSON_H
#define NETSCHED_REPORTJSON_H

#include "buf.h"
#include "report.h"

/* Appends one JSON object to b; check buf_failed(b) afterwards. */
void reportjson_write(struct buf *b, const struct report *r);

#endif
