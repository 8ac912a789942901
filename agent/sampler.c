#include "sampler.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "units.h"

int sampler_init(struct sampler *s, struct nl *nl, const struct sampler_config *cfg)
{
	memset(s, 0, sizeof(*s));
	if (cfg->interval_ns == 0 || cfg->window_ns < cfg->interval_ns ||
	    (cfg->source == SAMPLER_NETLINK && !nl))
		return -EINVAL;
	s->cfg = *cfg;
	s->nl = nl;
	s->rescan_now = true;
	for (size_t i = 0; i < REPORT_MAX_INTERFACES; i++)
		sysfs_stats_init(&s->ifs[i].sysfs);
	if (cfg->source == SAMPLER_NETLINK && podselect_enabled(&cfg->pods.spec)) {
		struct pods_config pc = cfg->pods;
		int rc;

		pc.node = cfg->node;
		pc.window_ns = cfg->window_ns;
		pc.exclude = cfg->spec;
		pc.slack_ns = cfg->interval_ns / 2;
		rc = pods_init(&s->pods, nl, &pc);
		if (rc)
			return rc;
		s->pods_on = true;
	}
	return 0;
}

static void iface_release(struct sampler_iface *f)
{
	sysfs_stats_close(&f->sysfs);
	window_free(&f->win);
	f->used = false;
}

void sampler_free(struct sampler *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ifs[i].used)
			iface_release(&s->ifs[i]);
	s->n = 0;
	if (s->pods_on)
		pods_free(&s->pods);
	s->pods_on = false;
}

bool sampler_pods_health(const struct sampler *s, struct pods_health *h)
{
	if (!s->pods_on)
		return false;
	pods_health(&s->pods, h);
	return true;
}

/* The measured uplinks' ifindexes into out (REPORT_MAX_INTERFACES). */
static size_t uplinks(const struct sampler *s, uint32_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->ifs[i].used && s->ifs[i].ifindex)
			out[n++] = s->ifs[i].ifindex;
	return n;
}

/* The node's link: the measured uplinks' speeds added up, 0 when any is
 * unknown (what report_node_link() says of the report). */
static uint64_t node_link(const struct sampler *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (!s->ifs[i].used)
			continue;
		if (!s->ifs[i].link_speed_bps)
			return 0;
		sum = units_add_sat(sum, s->ifs[i].link_speed_bps / 8);
	}
	return sum;
}

size_t sampler_count(const struct sampler *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		k += s->ifs[i].used && s->ifs[i].ifindex;
	return k;
}

size_t sampler_health(const struct sampler *s, struct sampler_health *out, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n && k < cap; i++) {
		const struct sampler_iface *f = &s->ifs[i];

		if (!f->used)
			continue;
		memcpy(out[k].name, f->name, sizeof(out[k].name));
		out[k].resets = f->win.resets;
		out[k].gaps = f->win.gaps;
		out[k].absurd = f->win.absurd;
		out[k].failed = f->failed;
		out[k].failed_in_row = f->failed_in_row;
		k++;
	}
	return k;
}

bool sampler_nl_health(const struct sampler *s, struct nl_health *h)
{
	if (!s->nl)
		return false;
	nl_health(s->nl, h);
	return true;
}

static uint64_t speed_of(const struct sampler *s, const char *name)
{
	for (size_t i = 0; i < s->cfg.n_speeds; i++)
		if (strcmp(s->cfg.speeds[i].ifname, name) == 0)
			return s->cfg.speeds[i].bps;
	return s->cfg.sysfs_speed ? linkspeed_read(s->cfg.sysfs_root, name) : 0;
}

/* Starts reading f from the next tick on: a fresh reading primes the window. */
static void iface_attach(struct sampler *s, struct sampler_iface *f, const struct ifselect_link *l)
{
	char speed[32] = "unknown";

	memcpy(f->name, l->name, sizeof(f->name));
	f->ifindex = l->ifindex;
	f->have_raw = false;
	f->link_speed_bps = speed_of(s, f->name);
	window_reprime(&f->win);
	if (s->cfg.source == SAMPLER_SYSFS) {
		int rc = sysfs_stats_open(&f->sysfs, s->cfg.sysfs_root, f->name);

		if (rc)
			log_warn("sampler", "%s: %s: cannot open %s/%s/statistics: %s", s->cfg.node,
				 f->name, s->cfg.sysfs_root, f->name, strerror(-rc));
	}
	if (f->link_speed_bps)
		units_format_bits_rate(speed, sizeof(speed), (double)f->link_speed_bps);
	log_info("sampler", "%s: measuring %s (ifindex %u%s%s, link %s)", s->cfg.node, f->name,
		 f->ifindex, l->kind[0] ? ", " : "", l->kind, speed);
}

static void iface_detach(struct sampler *s, struct sampler_iface *f, uint64_t now_ns)
{
	log_warn("sampler", "%s: %s (ifindex %u) disappeared; its window keeps what it had and "
		 "resumes if it comes back", s->cfg.node, f->name, f->ifindex);
	f->ifindex = 0;
	f->gone_since_ns = now_ns;
	sysfs_stats_close(&f->sysfs);
	window_gap(&f->win, now_ns);
}

static struct sampler_iface *slot_for(struct sampler *s, const struct ifselect_link *l)
{
	struct sampler_iface *free_slot = NULL;
	int rc;

	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];

		if (f->used && !f->ifindex && strcmp(f->name, l->name) == 0)
			return f; /* came back, perhaps re-created: same window */
		if (!f->used && !free_slot)
			free_slot = f;
	}
	if (!free_slot && s->n < REPORT_MAX_INTERFACES)
		free_slot = &s->ifs[s->n++];
	if (!free_slot) {
		if (!s->warned_full)
			log_warn("sampler", "%s: %s matches too, but %u interfaces are measured "
				 "already (the limit): ignored", s->cfg.node, l->name,
				 REPORT_MAX_INTERFACES);
		s->warned_full = true;
		return NULL;
	}
	/* One slot per interval, plus one so a full window is always covered
	 * even when ticks land a little late. */
	rc = window_init(&free_slot->win, (uint32_t)(s->cfg.window_ns / s->cfg.interval_ns + 1));
	if (rc) {
		log_error("sampler", "%s: %s: no memory for its window", s->cfg.node, l->name);
		return NULL;
	}
	free_slot->used = true;
	return free_slot;
}

static int list_links(struct sampler *s, size_t *n)
{
	if (s->nl)
		return nl_links(s->nl, s->links, SAMPLER_MAX_LINKS, n);
	return sysfs_links(s->cfg.sysfs_root, s->cfg.route4, s->cfg.route6, s->links,
			   SAMPLER_MAX_LINKS, n);
}

static void rescan(struct sampler *s, uint64_t now_ns)
{
	size_t n = 0;
	int rc = list_links(s, &n);

	s->rescan_now = false;
	s->n_links = n;
	/* With link notifications the periodic rescan is only a safety net. */
	s->next_rescan_ns = now_ns + (s->nl ? SAMPLER_RESCAN_NOTIFIED_NS : SAMPLER_RESCAN_NS);
	if (rc == -E2BIG)
		log_warn("sampler", "%s: more than %d links; only the first are considered",
			 s->cfg.node, SAMPLER_MAX_LINKS);
	else if (rc) {
		/* Links changing faster than a dump reads them (nl.h tried it
		 * NL_TRIES times): again at the next sample, not 5 s on. */
		bool churn = rc == -EINTR || rc == -EBUSY;

		log_limited(&s->rescan_log, now_ns, 10ULL * NS_PER_SEC, LOG_LVL_WARN, "sampler",
			    "%s: cannot list interfaces: %s; trying again %s", s->cfg.node,
			    strerror(-rc), churn ? "at the next sample" : "in 5 s");
		s->next_rescan_ns = now_ns + SAMPLER_RESCAN_NS;
		s->rescan_now = churn;
		return;
	}

	/* What we measure: renamed, still there, or gone. */
	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];
		const struct ifselect_link *l = NULL;

		if (!f->used || !f->ifindex)
			continue;
		for (size_t k = 0; k < n && !l; k++)
			if (s->links[k].ifindex == f->ifindex)
				l = &s->links[k];
		if (!l) {
			iface_detach(s, f, now_ns);
		} else if (strcmp(l->name, f->name)) {
			log_info("sampler", "%s: %s (ifindex %u) renamed to %s; still measured",
				 s->cfg.node, f->name, f->ifindex, l->name);
			memcpy(f->name, l->name, sizeof(f->name));
		}
	}
	/* What we should measure and do not yet. */
	for (size_t k = 0; k < n; k++) {
		const struct ifselect_link *l = &s->links[k];
		struct sampler_iface *f;
		bool followed = false;

		for (size_t i = 0; i < s->n && !followed; i++)
			followed = s->ifs[i].used && s->ifs[i].ifindex == l->ifindex;
		if (followed || !ifselect_match(&s->cfg.spec, l))
			continue;
		f = slot_for(s, l);
		if (f)
			iface_attach(s, f, l);
	}
	/* Gone for a whole window: nothing left to report. */
	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];

		if (f->used && !f->ifindex && now_ns - f->gone_since_ns >= s->cfg.window_ns) {
			log_info("sampler", "%s: %s gone for a whole window: no longer reported",
				 s->cfg.node, f->name);
			iface_release(f);
		}
	}
	if (sampler_count(s) == 0)
		log_warn("sampler", "%s: no interface to measure matches the selection", s->cfg.node);
	if (s->pods_on) {
		uint32_t up[REPORT_MAX_INTERFACES];

		pods_sync(&s->pods, s->links, n, up, uplinks(s, up));
	}
}

static void on_stats(void *ctx, uint32_t ifindex, const struct ifreading *c, unsigned bits)
{
	struct sampler *s = ctx;

	/* Pods' interfaces are veths, always 64-bit. */
	if (s->pods_on && bits == 64)
		pods_on_stats(&s->pods, ifindex, c);
	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];

		if (f->used && f->ifindex == ifindex) {
			f->raw = *c;
			f->bits = bits;
			f->seen = true;
		}
	}
}

/* Counters the kernel only keeps in 32 bits wrap every 4 GB (3.4 s at
 * 10 Gb/s). wide's low half is always the previous raw value, so a raw value
 * below it means one wrap. A real reset looks like a wrap here; the
 * absurd-rate check catches it when the link speed is known. */
uint64_t sampler_widen32(uint64_t wide, uint64_t raw)
{
	uint64_t hi = wide & ~0xffffffffULL;

	return hi + raw + (raw < (wide & 0xffffffffULL) ? 0x100000000ULL : 0);
}

static void widen(struct sampler_iface *f)
{
	if (f->bits != 32 || !f->have_raw) {
		f->wide = f->raw;
		return;
	}
	f->wide.rx_bytes = sampler_widen32(f->wide.rx_bytes, f->raw.rx_bytes);
	f->wide.tx_bytes = sampler_widen32(f->wide.tx_bytes, f->raw.tx_bytes);
	f->wide.rx_dropped = sampler_widen32(f->wide.rx_dropped, f->raw.rx_dropped);
	f->wide.tx_dropped = sampler_widen32(f->wide.tx_dropped, f->raw.tx_dropped);
	f->wide.rx_missed_errors = sampler_widen32(f->wide.rx_missed_errors, f->raw.rx_missed_errors);
}

/* Resets, gaps and dropped samples are logged once a minute per interface
 * at most, with how many were not: a NIC whose speed the kernel gets wrong
 * would otherwise log every sample, on every node. */
#define SAMPLER_LOG_QUIET_NS (60ULL * NS_PER_SEC)

static void log_event(const struct sampler *s, struct sampler_iface *f, enum window_event ev,
		      uint64_t prev_rx, uint64_t now_ns)
{
	char rate[32], limit[32];

	switch (ev) {
	case WINDOW_RESET:
		log_limited(&f->events_log, now_ns, SAMPLER_LOG_QUIET_NS, LOG_LVL_INFO, "sampler",
			    "%s: %s: counters went backwards (rx now %llu): device reset, window "
			    "re-primed without a spike", s->cfg.node, f->name,
			    (unsigned long long)f->wide.rx_bytes);
		break;
	case WINDOW_GAP:
		log_limited(&f->events_log, now_ns, SAMPLER_LOG_QUIET_NS, LOG_LVL_WARN, "sampler",
			    "%s: %s: sample more than %.1f s after the previous one (agent paused or "
			    "starved?): recorded as a gap", s->cfg.node, f->name,
			    (double)(2 * s->cfg.interval_ns) / 1e9);
		break;
	case WINDOW_ABSURD:
		units_format_bytes_rate(rate, sizeof(rate),
					(double)(f->wide.rx_bytes - prev_rx) * 1e9 /
						(double)s->cfg.interval_ns);
		units_format_bits_rate(limit, sizeof(limit), (double)f->link_speed_bps);
		log_limited(&f->events_log, now_ns, SAMPLER_LOG_QUIET_NS, LOG_LVL_WARN, "sampler",
			    "%s: %s: a sample of about %s rx is over twice the %s link: dropped "
			    "(%llu so far)", s->cfg.node, f->name, rate, limit,
			    (unsigned long long)f->win.absurd);
		break;
	default:
		break;
	}
}

/* pods: this tick reads the pods' interfaces too. */
static int read_all(struct sampler *s, bool pods)
{
	uint32_t ifindexes[REPORT_MAX_INTERFACES];
	size_t n = 0;
	int rc = 0;

	if (s->cfg.source == SAMPLER_NETLINK) {
		n = uplinks(s, ifindexes);
		/* A dump walks every link (pods' veths included); a request per
		 * measured interface is cheaper once they are a small share. */
		if (!pods && n * 4 < s->n_links) {
			rc = nl_read_stats(s->nl, ifindexes, n, on_stats, s);
			if (rc != -EOPNOTSUPP)
				return rc;
		}
		return nl_dump_stats(s->nl, on_stats, s);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];

		if (!f->used || !f->ifindex)
			continue;
		rc = sysfs_stats_read(&f->sysfs, &f->raw);
		f->seen = rc == 0;
		f->bits = 64;
	}
	return 0;
}

/* The first measured interface's name, for log lines. */
static const char *first_name(const struct sampler *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ifs[i].used && s->ifs[i].ifindex)
			return s->ifs[i].name;
	return "no interface";
}

int sampler_tick(struct sampler *s, uint64_t now_ns)
{
	bool pods;
	int rc;

	if (s->nl && nl_links_changed(s->nl))
		s->rescan_now = true;
	if (s->rescan_now || now_ns >= s->next_rescan_ns)
		rescan(s, now_ns);
	for (size_t i = 0; i < s->n; i++)
		s->ifs[i].seen = false;
	pods = s->pods_on && pods_due(&s->pods, now_ns);
	if (pods)
		pods_begin_read(&s->pods, now_ns);
	rc = read_all(s, pods);
	if (pods)
		pods_sample(&s->pods, now_ns, node_link(s), rc == 0);
	if (rc) {
		s->read_failures++;
		if (s->failed_in_row < REPORT_MAX_FAILED_SAMPLES)
			s->failed_in_row++;
		for (size_t i = 0; i < s->n; i++) {
			struct sampler_iface *f = &s->ifs[i];

			if (!f->used)
				continue;
			window_gap(&f->win, now_ns);
			if (!f->ifindex)
				continue; /* gone: not unreadable */
			f->failed++;
			if (f->failed_in_row < REPORT_MAX_FAILED_SAMPLES)
				f->failed_in_row++;
		}
		/* Said at once when the error changes, else every
		 * SAMPLER_LOG_QUIET_NS with the count. */
		if (rc != s->last_read_err)
			s->read_log = (struct log_limit){ 0 };
		log_limited(&s->read_log, now_ns, SAMPLER_LOG_QUIET_NS, LOG_LVL_WARN, "sampler",
			    "%s: reading the counters of %s (%zu interface%s measured) failed: %s "
			    "(%u samples in a row, %llu so far); recorded as gaps, and the reports "
			    "say so", s->cfg.node, first_name(s), sampler_count(s),
			    sampler_count(s) == 1 ? "" : "s", strerror(-rc), s->failed_in_row,
			    (unsigned long long)s->read_failures);
		s->last_read_err = rc;
		return rc;
	}
	if (s->failed_in_row)
		log_info("sampler", "%s: counters read again after %u failed samples", s->cfg.node,
			 s->failed_in_row);
	s->failed_in_row = 0;
	s->last_read_err = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];
		uint64_t prev_rx = f->win.prev.rx_bytes;
		enum window_event ev;

		if (!f->used)
			continue;
		if (!f->seen) {
			/* Gone since the last rescan (or its files are): look now. */
			window_gap(&f->win, now_ns);
			if (f->ifindex)
				s->rescan_now = true;
			continue;
		}
		widen(f);
		f->have_raw = true;
		f->failed_in_row = 0;
		ev = window_add(&f->win, now_ns, &f->wide, 2 * s->cfg.interval_ns,
				f->link_speed_bps / 8 * 2);
		log_event(s, f, ev, prev_rx, now_ns);
	}
	return 0;
}

void sampler_fill(struct sampler *s, uint64_t now_ns, struct report *r)
{
	uint32_t k = 0;

	for (size_t i = 0; i < s->n && k < REPORT_MAX_INTERFACES; i++) {
		const struct sampler_iface *f = &s->ifs[i];
		struct report_iface *d = &r->ifaces[k];
		struct window_stats st;

		if (!f->used)
			continue;
		window_stats(&f->win, now_ns, s->cfg.window_ns, s->cfg.recent_ns, &st);
		memset(d, 0, sizeof(*d));
		memcpy(d->name, f->name, sizeof(d->name));
		d->ifindex = f->ifindex;
		d->samples = st.samples;
		d->samples_expected = (uint32_t)(s->cfg.window_ns / s->cfg.interval_ns);
		d->failed_samples = f->failed_in_row;
		d->rx_bytes = st.rx_bytes;
		d->tx_bytes = st.tx_bytes;
		d->traffic = st.traffic;
		d->traffic.link_bytes_per_second = f->link_speed_bps / 8;
		k++;
	}
	r->n_ifaces = k;
	if (s->pods_on)
		pods_fill(&s->pods, r, now_ns);
}
