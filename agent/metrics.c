#include "metrics.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

void agent_metrics_snapshot_fill(struct agent_metrics_snapshot *out, const struct report *r,
				 const struct sampler *sm, struct sender *snd)
{
	out->report = *r;
	out->have_report = true;
	out->n_ifaces = sm ? sampler_health(sm, out->ifaces, REPORT_MAX_INTERFACES) : 0;
	out->n_peers = snd ? sender_peers(snd, out->peers, SENDER_MAX_PEERS) : 0;
	if (out->n_peers > SENDER_MAX_PEERS)
		out->n_peers = SENDER_MAX_PEERS;
	out->have_pods = sm && sampler_pods_health(sm, &out->pods);
	out->have_nl = sm && sampler_nl_health(sm, &out->nl);
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

void agent_metrics_process_read(struct agent_metrics_process *p)
{
	struct rusage ru;

	p->cpu_seconds = 0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		p->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
				 ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	p->resident_bytes = rss_bytes();
	p->log_lines_dropped = log_dropped_total();
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

/* A figure of each interface of the latest report. */
enum iface_figure { RX_RATE, TX_RATE, LINK_SPEED, RX_DROPPED, TX_DROPPED };

static uint64_t iface_figure(const struct report_iface *f, enum iface_figure which)
{
	switch (which) {
	case RX_RATE: return f->traffic.rx.average;
	case TX_RATE: return f->traffic.tx.average;
	case LINK_SPEED: return f->traffic.link_bytes_per_second;
	case RX_DROPPED: return f->traffic.rx_dropped + f->traffic.rx_missed;
	case TX_DROPPED: return f->traffic.tx_dropped;
	}
	return 0;
}

static void per_iface(struct buf *b, const struct agent_metrics_snapshot *m, const char *name,
		      const char *help, enum iface_figure which)
{
	family(b, name, "gauge", help);
	if (!m->have_report)
		return;
	for (uint32_t i = 0; i < m->report.n_ifaces; i++) {
		const struct report_iface *f = &m->report.ifaces[i];

		buf_printf(b, "%s{interface=\"", name);
		label(b, f->name);
		buf_printf(b, "\"} %" PRIu64 "\n", iface_figure(f, which));
	}
}

/* A count of each interface the sampler has measured. */
static void iface_rows(struct buf *b, const struct agent_metrics_snapshot *m)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
	} rows[] = {
#define ROW(n, t, f, h) { "netsched_agent_" n, t, h, offsetof(struct sampler_health, f) }
		ROW("samples_dropped_total", "counter", absurd,
		    "Samples dropped for implying more than twice the link speed."),
		ROW("sample_gaps_total", "counter", gaps, "Samples missed or late, recorded as gaps."),
		ROW("interface_resets_total", "counter", resets,
		    "Times the kernel's counters went backwards (device reset)."),
		ROW("sample_read_failures_total", "counter", failed,
		    "Samples whose counters could not be read (after the netlink retries), recorded as gaps."),
		ROW("sample_failures_in_row", "gauge", failed_in_row,
		    "The newest samples that could not be read, in a row (0: the newest was read); the reports carry it."),
#undef ROW
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		family(b, rows[r].name, rows[r].type, rows[r].help);
		for (size_t i = 0; i < m->n_ifaces; i++) {
			uint64_t v;

			memcpy(&v, (const char *)&m->ifaces[i] + rows[r].offset, sizeof(v));
			buf_printf(b, "%s{interface=\"", rows[r].name);
			label(b, m->ifaces[i].name);
			buf_printf(b, "\"} %" PRIu64 "\n", v);
		}
	}
}

/* How the netlink socket kept in step (nl.h). */
static void nl_rows(struct buf *b, const struct nl_health *h)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} rows[] = {
#define ROW(n, f, h) { "netsched_agent_netlink_" n, h, offsetof(struct nl_health, f) }
		ROW("requests_total", requests, "Netlink dumps and batches of requests sent (retries apart)."),
		ROW("dumps_interrupted_total", interrupted,
		    "Dumps the kernel flagged interrupted (links changed during them): read to their end and tried again."),
		ROW("retries_total", retries, "Requests sent again after a failed try."),
		ROW("stale_replies_total", stale, "Replies to earlier requests found in the socket and skipped."),
		ROW("requests_failed_total", failed, "Requests that failed every try."),
		ROW("socket_reopens_total", reopens, "Times the netlink socket was out of step and opened anew."),
		ROW("socket_reopen_errors_total", reopen_errors, "Times opening it anew failed."),
#undef ROW
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v;

		memcpy(&v, (const char *)h + rows[i].offset, sizeof(v));
		family(b, rows[i].name, "counter", rows[i].help);
		buf_printf(b, "%s %" PRIu64 "\n", rows[i].name, v);
	}
}

/* One series per scorer address: the counter at offset in sender_peer. */
static void per_peer(struct buf *b, const struct agent_metrics_snapshot *m, const char *name,
		     const char *help, size_t offset)
{
	family(b, name, "counter", help);
	for (size_t i = 0; i < m->n_peers; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&m->peers[i] + offset, sizeof(v));
		buf_printf(b, "%s{scorer=\"", name);
		label(b, m->peers[i].url);
		buf_printf(b, "\"} %" PRIu64 "\n", v);
	}
}

/* Pods' totals only: a label per pod address would make a new series for
 * every pod the node ever ran (per-pod figures are in the report, --once,
 * and the scorer's /v1/nodes). */
static void pod_rows(struct buf *b, const struct pods_health *h)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
	} rows[] = {
#define ROW(n, t, f, h) { "netsched_agent_" n, t, h, offsetof(struct pods_health, f) }
		ROW("pod_interfaces", "gauge", measured, "Pods' interfaces measured."),
		ROW("pod_interfaces_with_address", "gauge", with_ips,
		    "Pods' interfaces whose addresses are known (routes, or bridge neighbours and FDB)."),
		ROW("pods_listed", "gauge", listed,
		    "Pods listed by address in the reports (--pods-reported at most); the rest are summed."),
		ROW("pods_receive_bytes_per_second", "gauge", rx_bytes_per_second,
		    "Every pod's receive rate added up, as the pods see it (their interfaces' host-side tx)."),
		ROW("pods_transmit_bytes_per_second", "gauge", tx_bytes_per_second,
		    "Every pod's transmit rate added up, as the pods see it."),
		ROW("pod_interfaces_unmeasured_total", "counter", unmeasured,
		    "Pods' interfaces left out: more than the agent measures."),
		ROW("pod_addresses_dropped_total", "counter", addrs_dropped,
		    "Addresses left out: more than a report carries for one pod."),
		ROW("pod_samples_dropped_total", "counter", absurd,
		    "Pod samples dropped for implying more than twice the node's link."),
		ROW("pod_sample_gaps_total", "counter", gaps, "Pod samples missed, recorded as gaps."),
		ROW("pod_interface_resets_total", "counter", resets,
		    "Times a pod interface's counters went backwards."),
		ROW("pod_windows_restarted_total", "counter", restarts,
		    "Pod windows started over: their interface now serves another pod's addresses."),
		ROW("pod_address_lookups_total", "counter", map_builds,
		    "Times the pods' addresses were read from routes, neighbours and the bridge FDB."),
		ROW("pod_address_lookup_errors_total", "counter", map_errors,
		    "Times reading the pods' addresses failed (the last ones were kept)."),
		ROW("pod_reports_withheld_total", "counter", withheld,
		    "Reports sent without pods: they added up to more than twice the node's link."),
#undef ROW
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v;

		memcpy(&v, (const char *)h + rows[i].offset, sizeof(v));
		family(b, rows[i].name, rows[i].type, rows[i].help);
		buf_printf(b, "%s %" PRIu64 "\n", rows[i].name, v);
	}
}

void agent_metrics_render(const struct agent_metrics_snapshot *m,
			  const struct agent_metrics_process *p, struct buf *b)
{
	per_iface(b, m, "netsched_agent_receive_bytes_per_second",
		  "Average receive rate over the last window.", RX_RATE);
	per_iface(b, m, "netsched_agent_transmit_bytes_per_second",
		  "Average transmit rate over the last window.", TX_RATE);
	per_iface(b, m, "netsched_agent_link_speed_bytes_per_second", "Link speed (0 = unknown).",
		  LINK_SPEED);
	per_iface(b, m, "netsched_agent_receive_dropped_packets",
		  "Packets dropped or missed on receive in the last window.", RX_DROPPED);
	per_iface(b, m, "netsched_agent_transmit_dropped_packets",
		  "Packets dropped on transmit in the last window.", TX_DROPPED);
	iface_rows(b, m);
	per_peer(b, m, "netsched_agent_reports_sent_total", "Reports queued for a scorer.",
		 offsetof(struct sender_peer, sent));
	per_peer(b, m, "netsched_agent_reports_failed_total",
		 "Reports a scorer could not take (down or not keeping up).",
		 offsetof(struct sender_peer, failed));
	per_peer(b, m, "netsched_agent_scorer_redials_total",
		 "Connections to a scorer opened anew after reports in a row were not taken (a scorer gone without closing).",
		 offsetof(struct sender_peer, redials));
	if (m->have_pods)
		pod_rows(b, &m->pods);
	if (m->have_nl)
		nl_rows(b, &m->nl);
	family(b, "netsched_agent_http_deadline_closes_total", "counter",
	       "Connections to this endpoint closed for not finishing a request in time, or idle.");
	buf_printf(b, "netsched_agent_http_deadline_closes_total %" PRIu64 "\n",
		   p->http_deadline_closes);
	family(b, "netsched_agent_http_connections_reclaimed_total", "counter",
	       "Connections closed to make room for a new one with every slot taken: an idle one, or one of the address holding the most.");
	buf_printf(b, "netsched_agent_http_connections_reclaimed_total{reason=\"idle\"} %" PRIu64 "\n"
		      "netsched_agent_http_connections_reclaimed_total{reason=\"busiest_address\"} %"
		      PRIu64 "\n", p->http_reclaimed_idle, p->http_reclaimed_busiest);
	family(b, "netsched_agent_log_lines_dropped_total", "counter",
	       "Log lines dropped because stderr's reader was not keeping up.");
	buf_printf(b, "netsched_agent_log_lines_dropped_total %" PRIu64 "\n", p->log_lines_dropped);
	family(b, "process_cpu_seconds_total", "counter", "User and system CPU time.");
	buf_printf(b, "process_cpu_seconds_total %.3f\n", p->cpu_seconds);
	family(b, "process_resident_memory_bytes", "gauge", "Resident memory.");
	buf_printf(b, "process_resident_memory_bytes %" PRIu64 "\n", p->resident_bytes);
}
