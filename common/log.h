/* Leveled logging to stderr, one line per call:
 *   2026-11-22T17:40:01.123Z netsched-scorer info ingest: node-7: ...
 * Thread-safe: each line is written whole.
 *
 * After log_start() a log call never waits for stderr: the line is copied
 * into a bounded buffer that one writer thread drains, so a reader that
 * stalls (a stopped log shipper, a full pipe) cannot stall a worker. When
 * the buffer is full the line is dropped and counted (log_dropped_total()),
 * and once stderr takes bytes again the log says how many were lost:
 *   ... warn log: 1234 lines dropped while stderr was blocked
 * Before log_start() and after log_stop(), lines are written in place. */
#ifndef NETSCHED_LOG_H
#define NETSCHED_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level {
	LOG_LVL_ERROR,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* prog is kept by pointer; pass a string literal. */
void log_init(const char *prog);
void log_set_level(enum log_level level);
/* "error" | "warn" | "info" | "debug"; returns 0 or -EINVAL (out untouched). */
int log_parse_level(const char *s, enum log_level *out);
bool log_enabled(enum log_level level);

/* Starts the writer thread (signals blocked in it). 0 or -errno. */
int log_start(void);
/* Writes what is buffered (waiting two seconds at most for a stalled
 * reader) and stops the writer. */
void log_stop(void);
/* Lines dropped because the buffer was full, since the process started. */
uint64_t log_dropped_total(void);

void log_msg(enum log_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One place's budget of log lines, for messages that outside input can
 * repeat at will (bad reports, a flapping NIC, a failing Prometheus): at
 * most one line per interval, and the next line written says how many were
 * not. Zero-initialised (static, or inside a struct) it is ready; it is
 * thread-safe and never blocks. */
struct log_limit {
	_Atomic uint64_t next_ns;
	_Atomic uint64_t suppressed;
};

/* log_msg() if l's interval has passed at now_ns (monotonic), else counts
 * the line as suppressed. Returns whether the line was written. */
bool log_limited(struct log_limit *l, uint64_t now_ns, uint64_t interval_ns, enum log_level level,
		 const char *module, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Up to cap - 1 bytes of an outside string (len bytes, s may be NULL) for a
 * log line or a JSON field: anything but printable ASCII becomes '?', so no
 * client, apiserver or Prometheus can forge or split a line. cap >= 1.
 * Returns out. */
const char *log_printable(const char *s, size_t len, char *out, size_t cap);

#define log_error(mod, ...) log_msg(LOG_LVL_ERROR, mod, __VA_ARGS__)
#define log_warn(mod, ...)  log_msg(LOG_LVL_WARN, mod, __VA_ARGS__)
#define log_info(mod, ...)  log_msg(LOG_LVL_INFO, mod, __VA_ARGS__)
#define log_debug(mod, ...) \
	do { if (log_enabled(LOG_LVL_DEBUG)) log_msg(LOG_LVL_DEBUG, mod, __VA_ARGS__); } while (0)

#endif
