/* A growable byte buffer with a hard maximum, and JSON output helpers.
 *
 * Errors are sticky: once an append fails (allocation, or the maximum would
 * be exceeded) the buffer is marked failed, later appends do nothing, and
 * buf_failed() says so. Callers check once at the end instead of after every
 * append. The buffer owns its memory; buf_release() hands it to the caller.
 * Memory is plain malloc(); a buffer started with buf_start() holds a block
 * of scratch.h's, which buf_free() hands back for the next request. */
#ifndef NETSCHED_BUF_H
#define NETSCHED_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
	bool failed;
	bool scratch;	/* data came from scratch_take() (buf_start()) */
};

void buf_init(struct buf *b, size_t max);
/* Gives an empty buffer without memory yet room for hint bytes (at most
 * max) at once, from a block scratch.h kept (for big replies and bodies:
 * no growth by doubling, no fresh pages). A failure is left to the first
 * append. */
void buf_start(struct buf *b, size_t hint);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
bool buf_failed(const struct buf *b);
/* Hands the bytes (NUL-terminated, not counted in len) to the caller, who
 * frees them with free(), or gives them back with scratch_give() when
 * b->scratch said they came from there; the buffer is left empty. NULL if
 * failed. */
char *buf_release(struct buf *b, size_t *len);

void buf_append(struct buf *b, const void *data, size_t len);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* JSON: a quoted, escaped string of len bytes (control characters as \u00XX). */
void buf_json_str(struct buf *b, const char *s, size_t len);
void buf_json_cstr(struct buf *b, const char *s);
void buf_json_u64(struct buf *b, uint64_t v);
/* A finite number with up to 3 decimals; NaN and infinities become 0. */
void buf_json_double(struct buf *b, double v);

#endif
