#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *log_prog = "netsched";
static enum log_level log_level = LOG_LVL_INFO;

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARN] = "warn",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

void log_init(const char *prog)
{
	if (prog)
		log_prog = prog;
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool log_enabled(enum log_level level)
{
	return level <= log_level;
}

static void emit(enum log_level level, const char *module, const char *msg)
{
	char stamp[32];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ %s %s %s: %s\n", stamp, ts.tv_nsec / 1000000L,
		log_prog, level_names[level], module, msg);
}

void log_msg(enum log_level level, const char *module, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, module, msg);
}

bool log_limited(struct log_limit *l, uint64_t now_ns, uint64_t interval_ns, enum log_level level,
		 const char *module, const char *fmt, ...)
{
	uint64_t next = atomic_load(&l->next_ns), missed;
	char msg[1024];
	size_t n;
	va_list ap;

	/* Losing the race to another thread counts as suppressed, too. */
	if ((next && now_ns < next) ||
	    !atomic_compare_exchange_strong(&l->next_ns, &next, now_ns + interval_ns)) {
		atomic_fetch_add(&l->suppressed, 1);
		return false;
	}
	missed = atomic_exchange(&l->suppressed, 0);
	if (!log_enabled(level))
		return false;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	if (missed && n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, " (%llu similar lines suppressed since the last one)",
			 (unsigned long long)missed);
	emit(level, module, msg);
	return true;
}
