#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

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

/* Lines wait here for the writer thread: enough for a burst of a few
 * thousand lines while stderr's reader is slow, and a fixed bound when it
 * has stopped reading. */
#define LOG_RING_BYTES (256u * 1024u)
/* The writer hands stderr this much at most per write(). */
#define LOG_CHUNK_BYTES (16u * 1024u)
/* log_stop() waits this long for the ring to drain into a stalled reader. */
#define LOG_STOP_WAIT_S 2

/* The ring and its writer. Callers copy a whole line in under the mutex
 * (never more than a memcpy); only the writer thread calls write(), so a
 * reader that stops reading stalls that thread and no other. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* writer: lines waiting, or stop */
	pthread_cond_t drained;	/* log_stop(): the ring is empty */
	pthread_t thread;
	bool running;		/* log_start() succeeded, log_stop() not yet */
	bool stopping;
	char *ring;
	size_t head, len;	/* oldest byte, bytes waiting */
	uint64_t dropped_since;	/* not yet reported in the log */
} lg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.drained = PTHREAD_COND_INITIALIZER,
};
static _Atomic uint64_t dropped_total;

static int format_line(char *out, size_t outlen, enum log_level level, const char *module,
		       const char *msg)
{
	char stamp[32];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	return snprintf(out, outlen, "%s.%03ldZ %s %s %s: %s\n", stamp, ts.tv_nsec / 1000000L,
			log_prog, level_names[level], module, msg);
}

/* Writes all of p to stderr, blocking; false on an error other than EINTR. */
static bool write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Appends a whole line or nothing; called with lg.lock held. */
static bool ring_put(const char *line, size_t n)
{
	size_t tail, first;

	if (n > LOG_RING_BYTES - lg.len)
		return false;
	tail = (lg.head + lg.len) % LOG_RING_BYTES;
	first = n < LOG_RING_BYTES - tail ? n : LOG_RING_BYTES - tail;
	memcpy(lg.ring + tail, line, first);
	memcpy(lg.ring, line + first, n - first);
	lg.len += n;
	return true;
}

/* msg with every control character written as \xNN: a line is one line,
 * whatever a caller passed on from outside (a name in a certificate, a
 * kubeconfig, a report), so no one can forge or split one. */
static const char *escape_controls(const char *msg, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *c = msg; *c && o + 1 < cap; c++) {
		unsigned char b = (unsigned char)*c;

		if (b >= 0x20 && b != 0x7f) {
			out[o++] = *c;
			continue;
		}
		if (o + 5 > cap)
			break;
		snprintf(out + o, cap - o, "\\x%02x", b);
		o += 4;
	}
	out[o] = '\0';
	return out;
}

static void emit(enum log_level level, const char *module, const char *msg)
{
	char line[1280], safe[1024];
	int n = format_line(line, sizeof(line), level, module,
			    escape_controls(msg, safe, sizeof(safe)));
	size_t len;

	if (n < 0)
		return;
	len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (len && line[len - 1] != '\n')
		line[len - 1] = '\n';	/* truncated: still one line */
	pthread_mutex_lock(&lg.lock);
	if (!lg.running) {
		/* Before log_start() (start-up, tests) and after log_stop():
		 * written in place, as a single call. */
		pthread_mutex_unlock(&lg.lock);
		fwrite(line, 1, len, stderr);
		return;
	}
	if (ring_put(line, len)) {
		pthread_cond_signal(&lg.wake);
	} else {
		lg.dropped_since++;
		atomic_fetch_add(&dropped_total, 1);
	}
	pthread_mutex_unlock(&lg.lock);
}

/* Takes what the ring holds (up to LOG_CHUNK_BYTES), writes it without the
 * lock, and once a write went through after lines were dropped, says how
 * many: the reader is back. */
static void *writer(void *arg)
{
	static char chunk[LOG_CHUNK_BYTES];
	char note[256];

	(void)arg;
	pthread_mutex_lock(&lg.lock);
	for (;;) {
		uint64_t dropped;
		size_t n, first;

		while (!lg.len && !lg.dropped_since && !lg.stopping)
			pthread_cond_wait(&lg.wake, &lg.lock);
		if (!lg.len && !lg.dropped_since) {
			pthread_cond_broadcast(&lg.drained);
			break;	/* stopping, and all is written */
		}
		n = lg.len < sizeof(chunk) ? lg.len : sizeof(chunk);
		first = n < LOG_RING_BYTES - lg.head ? n : LOG_RING_BYTES - lg.head;
		memcpy(chunk, lg.ring + lg.head, first);
		memcpy(chunk + first, lg.ring, n - first);
		lg.head = (lg.head + n) % LOG_RING_BYTES;
		lg.len -= n;
		pthread_mutex_unlock(&lg.lock);
		write_all(chunk, n);	/* stderr gone: nothing better to do */
		pthread_mutex_lock(&lg.lock);
		dropped = lg.dropped_since;
		lg.dropped_since = 0;
		if (dropped) {
			char msg[128];
			int m;

			pthread_mutex_unlock(&lg.lock);
			snprintf(msg, sizeof(msg), "%llu lines dropped while stderr was blocked",
				 (unsigned long long)dropped);
			m = format_line(note, sizeof(note), LOG_LVL_WARN, "log", msg);
			if (m > 0)
				write_all(note, (size_t)m < sizeof(note) ? (size_t)m : sizeof(note) - 1);
			pthread_mutex_lock(&lg.lock);
		}
	}
	pthread_mutex_unlock(&lg.lock);
	return NULL;
}

int log_start(void)
{
	int rc;

	pthread_mutex_lock(&lg.lock);
	if (lg.running) {
		pthread_mutex_unlock(&lg.lock);
		return 0;
	}
	if (!lg.ring)
		lg.ring = malloc(LOG_RING_BYTES);
	if (!lg.ring) {
		pthread_mutex_unlock(&lg.lock);
		return -ENOMEM;
	}
	fflush(stderr);
	lg.stopping = false;
	lg.head = lg.len = 0;
	rc = worker_thread_create(&lg.thread, writer, NULL);
	lg.running = rc == 0;
	pthread_mutex_unlock(&lg.lock);
	return rc;
}

void log_stop(void)
{
	struct timespec deadline;
	bool drained = true;

	pthread_mutex_lock(&lg.lock);
	if (!lg.running) {
		pthread_mutex_unlock(&lg.lock);
		return;
	}
	lg.stopping = true;
	pthread_cond_signal(&lg.wake);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += LOG_STOP_WAIT_S;
	while (lg.len || lg.dropped_since) {
		if (pthread_cond_timedwait(&lg.drained, &lg.lock, &deadline) == ETIMEDOUT) {
			drained = false;
			break;
		}
	}
	/* Lines from here on are written in place. */
	lg.running = false;
	pthread_mutex_unlock(&lg.lock);
	/* A writer stuck in write() to a reader that never returns is left
	 * behind: the process is ending, and waiting for it would hang. */
	if (drained)
		pthread_join(lg.thread, NULL);
	else
		pthread_detach(lg.thread);
}

const char *log_printable(const char *s, size_t len, char *out, size_t cap)
{
	size_t n = s ? len : 0;

	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[n] = '\0';
	return out;
}

uint64_t log_dropped_total(void)
{
	return atomic_load(&dropped_total);
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
