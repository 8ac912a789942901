#include "sampler.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "units.h"

int sampler_init(struct sampler *s, struct nl *nl, const char *node,
		 const char (*names)[REPORT_MAX_IFNAME_LEN + 1], const uint64_t *link_speeds,
		 size_t n, uint64_t interval_ns, uint64_t window_ns)
{
	uint64_t slots;
	int rc;

	memset(s, 0, sizeof(*s));
	if (n == 0 || n > REPORT_MAX_INTERFACES || interval_ns == 0 || window_ns < interval_ns)
		return -EINVAL;
	s->nl = nl;
	s->node = node;
	s->interval_ns = interval_ns;
	s->window_ns = window_ns;
	/* One slot per interval, plus one so a full window is always covered
	 * even when ticks land a little late. */
	slots = window_ns / interval_ns + 1;
	for (size_t i = 0; i < n; i++) {
		struct sampler_iface *f = &s->ifs[i];

		s->n = i + 1;
		memcpy(f->name, names[i], sizeof(f->name));
		f->link_speed_bps = link_speeds[i];
		rc = window_init(&f->win, (uint32_t)slots);
		if (rc)
			return rc;
		rc = nl_ifindex(nl, f->name, &f->ifindex);
		if (rc)
			log_warn("sampler", "%s: %s: not found (%s); will keep looking for it",
				 node, f->name, strerror(-rc));
	}
	return 0;
}

void sampler_free(struct sampler *s)
{
	for (size_t i = 0; i < s->n; i++)
		window_free(&s->ifs[i].win);
	s->n = 0;
}

static void on_stats(void *ctx, uint32_t ifindex, const struct counters *c)
{
	struct sampler *s = ctx;

	for (size_t i = 0; i < s->n; i++)
		if (s->ifs[i].ifindex == ifindex && ifindex) {
			s->ifs[i].now = *c;
			s->ifs[i].seen = true;
		}
}

static void log_event(const struct sampler *s, const struct sampler_iface *f,
		      enum window_event ev, const struct counters *prev_hint)
{
	char rate[32], limit[32];

	switch (ev) {
	case WINDOW_RESET:
		log_info("sampler", "%s: %s: counters went backwards (rx %llu, tx %llu): device "
			 "reset, window re-primed without a spike", s->node, f->name,
			 (unsigned long long)f->now.rx_bytes, (unsigned long long)f->now.tx_bytes);
		break;
	case WINDOW_GAP:
		log_warn("sampler", "%s: %s: sample more than %.1f s after the previous one "
			 "(agent paused or starved?): recorded as a gap", s->node, f->name,
			 (double)(2 * s->interval_ns) / 1e9);
		break;
	case WINDOW_ABSURD:
		units_format_bytes_rate(rate, sizeof(rate),
					(double)(f->now.rx_bytes - prev_hint->rx_bytes) * 1e9 /
						(double)s->interval_ns);
		units_format_bits_rate(limit, sizeof(limit), (double)f->link_speed_bps);
		log_warn("sampler", "%s: %s: sample of about %s is over twice the %s link: dropped "
			 "(%llu so far)", s->node, f->name, rate, limit,
			 (unsigned long long)f->win.absurd);
		break;
	default:
		break;
	}
}

int sampler_tick(struct sampler *s, uint64_t now_ns)
{
	uint64_t max_gap = 2 * s->interval_ns;
	int rc;

	for (size_t i = 0; i < s->n; i++)
		s->ifs[i].seen = false;
	rc = nl_dump_stats(s->nl, on_stats, s);
	if (rc) {
		s->dump_failures++;
		if (rc != s->last_dump_err)
			log_warn("sampler", "%s: reading counters over netlink failed: %s (%llu "
				 "failures so far); samples recorded as gaps", s->node,
				 strerror(-rc), (unsigned long long)s->dump_failures);
		s->last_dump_err = rc;
		for (size_t i = 0; i < s->n; i++)
			window_gap(&s->ifs[i].win, now_ns);
		return rc;
	}
	s->last_dump_err = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct sampler_iface *f = &s->ifs[i];
		struct counters prev = { .rx_bytes = f->win.prev_rx, .tx_bytes = f->win.prev_tx };
		enum window_event ev;

		if (!f->seen) {
			if (f->ifindex) {
				log_warn("sampler", "%s: %s (ifindex %u) disappeared; looking for "
					 "it by name", s->node, f->name, f->ifindex);
				f->ifindex = 0;
			}
			window_gap(&f->win, now_ns);
			/* Found again (perhaps re-created): read from the next tick on. */
			if (nl_ifindex(s->nl, f->name, &f->ifindex) == 0)
				log_info("sampler", "%s: %s appeared as ifindex %u", s->node,
					 f->name, f->ifindex);
			continue;
		}
		ev = window_add(&f->win, now_ns, f->now.rx_bytes, f->now.tx_bytes, max_gap,
				f->link_speed_bps / 8 * 2);
		log_event(s, f, ev, &prev);
	}
	return 0;
}

void sampler_fill(const struct sampler *s, uint64_t now_ns, struct report *r)
{
	r->n_ifaces = (uint32_t)s->n;
	for (size_t i = 0; i < s->n; i++) {
		const struct sampler_iface *f = &s->ifs[i];
		struct report_iface *d = &r->ifaces[i];
		struct window_stats st;

		window_stats(&f->win, now_ns, s->window_ns, &st);
		memset(d, 0, sizeof(*d));
		memcpy(d->name, f->name, sizeof(d->name));
		d->ifindex = f->ifindex;
		d->rx_bytes = st.rx_bytes;
		d->tx_bytes = st.tx_bytes;
		/* Round to the nearest ms; a covered window is never under 100 ms. */
		d->covered_ms = (st.covered_ns + NS_PER_MS / 2) / NS_PER_MS;
		d->samples = st.samples;
		d->samples_expected = (uint32_t)(s->window_ns / s->interval_ns);
		d->link_speed_bps = f->link_speed_bps;
		d->rx_peak_bytes_per_second = st.rx_peak_bytes_per_second;
		d->tx_peak_bytes_per_second = st.tx_peak_bytes_per_second;
	}
}
