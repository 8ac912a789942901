#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <microhttpd.h>

#include "buf.h"
#include "httpguard.h"
#include "log.h"

/* Prometheus and the kubelet's probes need a few connections; slow or
 * hostile clients get a few per address, and must send their headers
 * within the header deadline (common/httpguard.h), so they cannot hold
 * every slot and fail the liveness probe. */
#define METRICS_MAX_CONNECTIONS 32
#define METRICS_PER_CLIENT 4
#define METRICS_HEADER_TIMEOUT_S 3
#define METRICS_TIMEOUT_S 5
#define METRICS_MAX_BODY (256u * 1024u)
#define METRICS_MIN_BYTES_PER_SECOND (64u * 1024u)

struct agent_metrics {
	struct MHD_Daemon *daemon;
	struct httpguard *guard;
	uint16_t port;
	pthread_mutex_t lock;
	/* The snapshot, guarded by lock. */
	bool have_report;
	struct report report;
	size_t n_ifaces;
	struct sampler_health ifaces[REPORT_MAX_INTERFACES];
	size_t n_peers;
	struct sender_peer peers[SENDER_MAX_PEERS];
};

void agent_metrics_publish(struct agent_metrics *m, const struct report *r, const struct sampler *sm,
		     struct sender *snd)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->report = *r;
	m->have_report = true;
	m->n_ifaces = sampler_health(sm, m->ifaces, REPORT_MAX_INTERFACES);
	m->n_peers = snd ? sender_peers(snd, m->peers, SENDER_MAX_PEERS) : 0;
	if (m->n_peers > SENDER_MAX_PEERS)
		m->n_peers = SENDER_MAX_PEERS;
	pthread_mutex_unlock(&m->lock);
}

/* Label values are interface names and URLs we validated; still escape
 * the three characters the text format reserves. */
static void label(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_append(b, s, 1);
	}
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void per_iface(struct buf *b, const struct agent_metrics *m, const char *name, const char *type,
		      const char *help, int which)
{
	family(b, name, type, help);
	for (uint32_t i = 0; i < m->report.n_ifaces; i++) {
		const struct report_iface *f = &m->report.ifaces[i];
		uint64_t v = 0;

		switch (which) {
		case 0: v = f->traffic.rx.average; break;
		case 1: v = f->traffic.tx.average; break;
		case 2: v = f->traffic.link_bytes_per_second; break;
		case 3: v = f->traffic.rx_dropped + f->traffic.rx_missed; break;
		case 4: v = f->traffic.tx_dropped; break;
		}
		buf_printf(b, "%s{interface=\"", name);
		label(b, f->name);
		buf_printf(b, "\"} %" PRIu64 "\n", v);
	}
}

static void per_iface_count(struct buf *b, const struct agent_metrics *m, const char *name,
			    const char *help, int which)
{
	family(b, name, "counter", help);
	for (size_t i = 0; i < m->n_ifaces; i++) {
		const struct sampler_health *c = &m->ifaces[i];

		buf_printf(b, "%s{interface=\"", name);
		label(b, c->name);
		buf_printf(b, "\"} %" PRIu64 "\n", which == 0 ? c->absurd : which == 1 ? c->gaps :
									       c->resets);
	}
}

static void per_peer(struct buf *b, const struct agent_metrics *m, const char *name, const char *help,
		     bool failed)
{
	family(b, name, "counter", help);
	for (size_t i = 0; i < m->n_peers; i++) {
		buf_printf(b, "%s{scorer=\"", name);
		label(b, m->peers[i].url);
		buf_printf(b, "\"} %" PRIu64 "\n", failed ? m->peers[i].failed : m->peers[i].sent);
	}
}

static uint64_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
	fclose(f);
	return ok ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static void render(struct agent_metrics *m, struct buf *b)
{
	struct rusage ru;
	double cpu = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		      ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	pthread_mutex_lock(&m->lock);
	per_iface(b, m, "netsched_agent_receive_bytes_per_second", "gauge",
		  "Average receive rate over the last window.", 0);
	per_iface(b, m, "netsched_agent_transmit_bytes_per_second", "gauge",
		  "Average transmit rate over the last window.", 1);
	per_iface(b, m, "netsched_agent_link_speed_bytes_per_second", "gauge",
		  "Link speed (0 = unknown).", 2);
	per_iface(b, m, "netsched_agent_receive_dropped_packets", "gauge",
		  "Packets dropped or missed on receive in the last window.", 3);
	per_iface(b, m, "netsched_agent_transmit_dropped_packets", "gauge",
		  "Packets dropped on transmit in the last window.", 4);
	per_iface_count(b, m, "netsched_agent_samples_dropped_total",
			"Samples dropped for implying more than twice the link speed.", 0);
	per_iface_count(b, m, "netsched_agent_sample_gaps_total",
			"Samples missed or late, recorded as gaps.", 1);
	per_iface_count(b, m, "netsched_agent_interface_resets_total",
			"Times the kernel's counters went backwards (device reset).", 2);
	per_peer(b, m, "netsched_agent_reports_sent_total", "Reports queued for a scorer.", false);
	per_peer(b, m, "netsched_agent_reports_failed_total",
		 "Reports a scorer could not take (down or not keeping up).", true);
	pthread_mutex_unlock(&m->lock);
	family(b, "netsched_agent_log_lines_dropped_total", "counter",
	       "Log lines dropped because stderr's reader was not keeping up.");
	buf_printf(b, "netsched_agent_log_lines_dropped_total %" PRIu64 "\n", log_dropped_total());
	family(b, "process_cpu_seconds_total", "counter", "User and system CPU time.");
	buf_printf(b, "process_cpu_seconds_total %.3f\n", cpu);
	family(b, "process_resident_memory_bytes", "gauge", "Resident memory.");
	buf_printf(b, "process_resident_memory_bytes %" PRIu64 "\n", rss_bytes());
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
			       struct buf *b)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	size_t len = 0;
	char *body = buf_release(b, &len);

	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	httpguard_replying(c, len);
	rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **req)
{
	struct agent_metrics *m = cls;
	struct buf b;

	(void)version, (void)data;
	if (!*req) { /* first call: headers only */
		httpguard_headers_done(c, 0);
		*req = m;
		return MHD_YES;
	}
	if (*data_len) { /* a body we never asked for: discard it */
		*data_len = 0;
		return MHD_YES;
	}
	buf_init(&b, METRICS_MAX_BODY);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		buf_puts(&b, "method not allowed: use GET\n");
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", &b);
	}
	if (strcmp(url, "/metrics") == 0) {
		render(m, &b);
		return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
	}
	if (strcmp(url, "/healthz") == 0) {
		buf_puts(&b, "ok\n");
		return respond(c, MHD_HTTP_OK, "text/plain", &b);
	}
	buf_puts(&b, "not found: try /metrics or /healthz\n");
	return respond(c, MHD_HTTP_NOT_FOUND, "text/plain", &b);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)req, (void)why;
	httpguard_request_done(c);
}

struct agent_metrics *agent_metrics_start(const char *addr, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	const union MHD_DaemonInfo *info;
	/* poll(), not epoll: level-triggered, so a client that closes is
	 * forgotten at once (see scorer/http.c). */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
	struct agent_metrics *m;

	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errlen, "--metrics %s: not an IP address", addr);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "--metrics: out of memory");
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->guard = httpguard_start(&(struct httpguard_config){
		.name = "metrics",
		.header_timeout_s = METRICS_HEADER_TIMEOUT_S,
		.idle_timeout_s = METRICS_TIMEOUT_S,
		.min_bytes_per_second = METRICS_MIN_BYTES_PER_SECOND,
		.max_connections = METRICS_MAX_CONNECTIONS,
	}, err, errlen);
	if (!m->guard)
		goto out_free;
	m->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, m,
				     MHD_OPTION_EXTERNAL_LOGGER, httpguard_mhd_log, "metrics",
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT,
				     HTTPGUARD_HARD_LIMIT(METRICS_MAX_CONNECTIONS),
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, METRICS_PER_CLIENT,
				     MHD_OPTION_CONNECTION_TIMEOUT, METRICS_TIMEOUT_S,
				     MHD_OPTION_NOTIFY_CONNECTION, httpguard_notify, m->guard,
				     MHD_OPTION_URI_LOG_CALLBACK, httpguard_uri_log, NULL,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				     MHD_OPTION_END);
	if (!m->daemon) {
		snprintf(err, errlen, "--metrics %s:%u: cannot listen (in use? see the log above)",
			 addr, port);
		goto out_free;
	}
	info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
	m->port = info ? info->port : port;
	return m;

out_free:
	httpguard_stop(m->guard);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return NULL;
}

void agent_metrics_stop(struct agent_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->daemon);
	httpguard_stop(m->guard);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

uint16_t agent_metrics_port(const struct agent_metrics *m)
{
	return m->port;
}
