#include "pods.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "units.h"

/* Resets, gaps, dropped samples and withheld reports: one line a minute. */
#define PODS_LOG_QUIET_NS (60ULL * NS_PER_SEC)

int pods_init(struct pods *p, struct nl *nl, const struct pods_config *cfg)
{
	memset(p, 0, sizeof(*p));
	if (!podselect_enabled(&cfg->spec) || cfg->interval_ns == 0 ||
	    cfg->window_ns < cfg->interval_ns)
		return -EINVAL;
	p->cfg = *cfg;
	if (p->cfg.reported > REPORT_MAX_PODS)
		p->cfg.reported = REPORT_MAX_PODS;
	p->nl = nl;
	/* calloc: pages no pod touches stay unmapped. */
	p->ifs = calloc(PODS_MAX, sizeof(*p->ifs));
	p->map = calloc(1, sizeof(*p->map));
	p->scratch = calloc(PODS_MAX, sizeof(*p->scratch));
	if (!p->ifs || !p->map || !p->scratch) {
		pods_free(p);
		return -ENOMEM;
	}
	p->map_dirty = true;
	p->map_every_ns = PODS_MAP_REFRESH_NS;
	if (nl && !nl_pod_watch(nl)) {
		p->map_every_ns = PODS_MAP_POLL_NS;
		log_warn("pods", "%s: no route and neighbour notifications; pod addresses are "
			 "looked up every %llu s", cfg->node,
			 (unsigned long long)(PODS_MAP_POLL_NS / NS_PER_SEC));
	}
	return 0;
}

void pods_free(struct pods *p)
{
	for (size_t i = 0; p->ifs && i < p->n; i++)
		window_free(&p->ifs[i].win);
	free(p->ifs);
	free(p->map);
	free(p->scratch);
	p->ifs = NULL;
	p->map = NULL;
	p->scratch = NULL;
	p->n = 0;
}

static int cmp_ifindex(const void *a, const void *b)
{
	uint32_t x = ((const struct pod_iface *)a)->ifindex;
	uint32_t y = ((const struct pod_iface *)b)->ifindex;

	return x < y ? -1 : x > y;
}

static struct pod_iface *find(struct pods *p, uint32_t ifindex)
{
	struct pod_iface key = { .ifindex = ifindex };

	return p->n ? bsearch(&key, p->ifs, p->n, sizeof(key), cmp_ifindex) : NULL;
}

static bool in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Keeps the counts of a window that goes away. */
static void forget(struct pods *p, struct pod_iface *f)
{
	p->gone_resets += f->win.resets;
	p->gone_gaps += f->win.gaps;
	p->gone_absurd += f->win.absurd;
	window_free(&f->win);
}

void pods_sync(struct pods *p, const struct ifselect_link *links, size_t n,
	       const uint32_t *uplinks, size_t n_up)
{
	size_t kept = 0, added = 0, gone = 0, was = p->n;
	uint32_t slots = (uint32_t)(p->cfg.window_ns / p->cfg.interval_ns + 1);

	/* Gone, or no longer a pod's (it became an uplink, or was renamed
	 * out of the globs): forgotten. A bridge port may change bridges. */
	for (size_t i = 0; i < p->n; i++) {
		struct pod_iface *f = &p->ifs[i];
		const struct ifselect_link *l = NULL;

		for (size_t k = 0; k < n && !l; k++)
			if (links[k].ifindex == f->ifindex)
				l = &links[k];
		if (!l || !podselect_match(&p->cfg.spec, &p->cfg.exclude, l,
					   in_list(uplinks, n_up, l->ifindex))) {
			log_debug("pods", "%s: pod interface %s (ifindex %u) gone", p->cfg.node,
				  f->name, f->ifindex);
			forget(p, f);
			gone++;
			continue;
		}
		if (l->master != f->master)
			p->map_dirty = true;
		memcpy(f->name, l->name, sizeof(f->name));
		f->master = l->master;
		p->ifs[kept++] = *f;
	}
	p->n = kept;
	for (size_t k = 0; k < n; k++) {
		const struct ifselect_link *l = &links[k];
		struct pod_iface *f;

		if (find(p, l->ifindex) ||
		    !podselect_match(&p->cfg.spec, &p->cfg.exclude, l,
				     in_list(uplinks, n_up, l->ifindex)))
			continue;
		if (p->n + added == PODS_MAX) {
			p->health.unmeasured++;
			if (!p->warned_full)
				log_warn("pods", "%s: %s is a pod interface too, but %u are measured "
					 "already (the limit): not measured", p->cfg.node, l->name,
					 PODS_MAX);
			p->warned_full = true;
			continue;
		}
		f = &p->ifs[p->n + added];
		memset(f, 0, sizeof(*f));
		if (window_init(&f->win, slots)) {
			log_error("pods", "%s: %s: no memory for its window", p->cfg.node, l->name);
			continue;
		}
		f->ifindex = l->ifindex;
		f->master = l->master;
		memcpy(f->name, l->name, sizeof(f->name));
		log_debug("pods", "%s: pod interface %s (ifindex %u%s)", p->cfg.node, f->name,
			  f->ifindex, f->master ? ", bridged" : "");
		added++;
	}
	p->n += added;
	qsort(p->ifs, p->n, sizeof(p->ifs[0]), cmp_ifindex);
	if (added || gone) {
		p->map_dirty = true;
		log_info("pods", "%s: %zu pod interfaces measured (%zu new, %zu gone, %zu before)",
			 p->cfg.node, p->n, added, gone, was);
	}
}

bool pods_due(const struct pods *p, uint64_t now_ns)
{
	return now_ns + p->cfg.slack_ns >= p->next_read_ns;
}

static void on_fact(void *ctx, const struct podmap_fact *f)
{
	podmap_add(ctx, f);
}

static void on_change(void *ctx, const struct podmap_fact *f)
{
	struct pods *p = ctx;

	if (!p->map_dirty && podmap_notice(p->map, f))
		p->map_dirty = true;
}

/* Whether a and b share an address. */
static bool share(const struct report_ip *a, uint32_t na, const struct report_ip *b, uint32_t nb)
{
	for (uint32_t i = 0; i < na; i++)
		for (uint32_t k = 0; k < nb; k++)
			if (report_ip_equal(&a[i], &b[k]))
				return true;
	return false;
}

void pods_apply_map(struct pods *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pod_iface *f = &p->ifs[i];
		struct report_ip ips[REPORT_MAX_POD_IPS];
		size_t n = podmap_lookup(p->map, f->ifindex, ips, REPORT_MAX_POD_IPS);

		if (n > REPORT_MAX_POD_IPS) {
			p->health.addrs_dropped += n - REPORT_MAX_POD_IPS;
			n = REPORT_MAX_POD_IPS;
		}
		/* None of the addresses it last had: another pod's traffic from now. */
		if (f->n_last && n && !share(f->last, f->n_last, ips, (uint32_t)n)) {
			char was[REPORT_IP_STRLEN] = "?", now[REPORT_IP_STRLEN] = "?";

			report_ip_format(&f->last[0], was, sizeof(was));
			report_ip_format(&ips[0], now, sizeof(now));
			log_info("pods", "%s: %s served %s, now %s: its window starts over",
				 p->cfg.node, f->name, was, now);
			window_clear(&f->win);
			p->health.restarts++;
		}
		memcpy(f->ips, ips, n * sizeof(ips[0]));
		f->n_ips = (uint32_t)n;
		if (n) {
			memcpy(f->last, ips, n * sizeof(ips[0]));
			f->n_last = (uint32_t)n;
		}
	}
}

static void refresh_map(struct pods *p, uint64_t now_ns)
{
	struct podmap_iface ifaces[PODS_MAX];
	bool bridges = false;
	int rc;

	for (size_t i = 0; i < p->n; i++) {
		ifaces[i] = (struct podmap_iface){ p->ifs[i].ifindex, p->ifs[i].master };
		bridges |= p->ifs[i].master != 0;
	}
	podmap_begin(p->map, ifaces, p->n);
	rc = nl_pod_facts(p->nl, bridges, on_fact, p->map);
	p->next_map_ns = now_ns + p->map_every_ns;
	if (rc) {
		p->health.map_errors++;
		log_limited(&p->map_log, now_ns, PODS_LOG_QUIET_NS, LOG_LVL_WARN, "pods",
			    "%s: cannot read routes and neighbours for pod addresses: %s; the "
			    "addresses stay as they were", p->cfg.node, strerror(-rc));
		/* The map is half-built: the next reading builds it again. */
		p->map_dirty = true;
		return;
	}
	podmap_end(p->map);
	log_debug("pods", "%s: pod addresses looked up: %zu on %zu interfaces (%zu neighbours, "
		  "%zu FDB entries)", p->cfg.node, p->map->n_addrs, p->n, p->map->n_neigh,
		  p->map->n_fdb);
	p->health.map_builds++;
	p->map_dirty = false;
	pods_apply_map(p);
}

void pods_begin_read(struct pods *p, uint64_t now_ns)
{
	if (p->nl && nl_pod_changes(p->nl, on_change, p))
		p->map_dirty = true; /* notifications were lost */
	if (p->nl && (p->map_dirty || now_ns >= p->next_map_ns))
		refresh_map(p, now_ns);
	for (size_t i = 0; i < p->n; i++)
		p->ifs[i].seen = false;
	p->reading = true;
}

void pods_on_stats(struct pods *p, uint32_t ifindex, const struct ifreading *c)
{
	struct pod_iface *f;

	if (!p->reading)
		return;
	f = find(p, ifindex);
	if (f) {
		f->raw = *c;
		f->seen = true;
	}
}

static int cmp_busiest(const void *pa, const void *pb)
{
	const struct pods_totals *a = pa, *b = pb;
	uint64_t x = units_add_sat(a->rx_bytes, a->tx_bytes), y = units_add_sat(b->rx_bytes, b->tx_bytes);

	if (x != y)
		return x > y ? -1 : 1;
	return a->ifindex < b->ifindex ? -1 : a->ifindex > b->ifindex;
}

uint32_t pods_select(struct pods_totals *in, size_t n, uint32_t cap, struct report_pod *listed,
		     struct report_pod *rest)
{
	uint64_t rx = 0, tx = 0, covered = 0, rx_recent = 0, tx_recent = 0;
	size_t k = 0;
	uint32_t n_listed = 0;

	/* The candidates first: an address, and a time their bytes cover. */
	for (size_t i = 0; i < n; i++)
		if (in[i].n_ips && in[i].covered_ms) {
			struct pods_totals t = in[k];

			in[k++] = in[i];
			in[i] = t;
		}
	qsort(in, k, sizeof(in[0]), cmp_busiest);
	if (cap > REPORT_MAX_PODS)
		cap = REPORT_MAX_PODS;
	for (size_t i = 0; i < n; i++) {
		const struct pods_totals *t = &in[i];

		if (i < k && n_listed < cap) {
			struct report_pod *d = &listed[n_listed++];

			memset(d, 0, sizeof(*d));
			d->n_ips = t->n_ips > REPORT_MAX_POD_IPS ? REPORT_MAX_POD_IPS : t->n_ips;
			memcpy(d->ips, t->ips, d->n_ips * sizeof(d->ips[0]));
			report_pod_count(d, t->rx_bytes, t->tx_bytes, t->covered_ms);
			d->rx.recent = t->rx_recent;
			d->tx.recent = t->tx_recent;
			continue;
		}
		rx = units_add_sat(rx, t->rx_bytes);
		tx = units_add_sat(tx, t->tx_bytes);
		rx_recent = units_add_sat(rx_recent, t->rx_recent);
		tx_recent = units_add_sat(tx_recent, t->tx_recent);
		if (t->covered_ms > covered)
			covered = t->covered_ms;
	}
	memset(rest, 0, sizeof(*rest));
	report_pod_count(rest, rx, tx, covered);
	rest->rx.recent = rx_recent;
	rest->tx.recent = tx_recent;
	return n_listed;
}

static void log_event(struct pods *p, const struct pod_iface *f, enum window_event ev,
		      uint64_t link, uint64_t now_ns)
{
	char limit[32];

	switch (ev) {
	case WINDOW_RESET:
		log_limited(&p->events_log, now_ns, PODS_LOG_QUIET_NS, LOG_LVL_INFO, "pods",
			    "%s: pod interface %s: counters went backwards: window re-primed "
			    "without a spike", p->cfg.node, f->name);
		break;
	case WINDOW_ABSURD:
		units_format_bits_rate(limit, sizeof(limit), (double)link * 8 * 2);
		log_limited(&p->events_log, now_ns, PODS_LOG_QUIET_NS, LOG_LVL_WARN, "pods",
			    "%s: pod interface %s: a sample over %s (twice the node's link) "
			    "dropped (%llu so far)", p->cfg.node, f->name, limit,
			    (unsigned long long)f->win.absurd);
		break;
	default:
		break;
	}
}

void pods_sample(struct pods *p, uint64_t now_ns, uint64_t link_bytes_per_second, bool read_ok)
{
	uint64_t rx_sum = 0, tx_sum = 0, with_ips = 0;

	p->reading = false;
	p->next_read_ns = now_ns + p->cfg.interval_ns;
	for (size_t i = 0; i < p->n; i++) {
		struct pod_iface *f = &p->ifs[i];
		struct pods_totals *t = &p->scratch[i];
		struct window_stats st;
		enum window_event ev;

		if (!read_ok || !f->seen) {
			window_gap(&f->win, now_ns);
		} else {
			ev = window_add(&f->win, now_ns, &f->raw, 2 * p->cfg.interval_ns + p->cfg.slack_ns,
					link_bytes_per_second * 2);
			log_event(p, f, ev, link_bytes_per_second, now_ns);
		}
		window_totals(&f->win, now_ns, p->cfg.window_ns, p->cfg.interval_ns, &st);
		/* The pod's point of view: the host side sends what it receives. */
		*t = (struct pods_totals){
			.ifindex = f->ifindex,
			.n_ips = f->n_ips,
			.ips = f->ips,
			.rx_bytes = st.tx_bytes,
			.tx_bytes = st.rx_bytes,
			.covered_ms = st.traffic.covered_ms,
			.rx_recent = st.traffic.tx.recent,
			.tx_recent = st.traffic.rx.recent,
		};
		rx_sum = units_add_sat(rx_sum, st.traffic.tx.average);
		tx_sum = units_add_sat(tx_sum, st.traffic.rx.average);
		with_ips += f->n_ips > 0;
	}
	p->n_listed = pods_select(p->scratch, p->n, p->cfg.reported, p->listed, &p->rest);
	p->n_seen = (uint32_t)p->n;
	p->have_figures = true;
	p->gen++;
	p->health.measured = p->n;
	p->health.with_ips = with_ips;
	p->health.listed = p->n_listed;
	p->health.rx_bytes_per_second = rx_sum;
	p->health.tx_bytes_per_second = tx_sum;
}

static void put_figures(const struct pods *p, struct report *r)
{
	r->has_pods = true;
	r->pods_seen = p->n_seen;
	r->n_pods = p->n_listed;
	memcpy(r->pods, p->listed, p->n_listed * sizeof(p->listed[0]));
	r->pods_rest = p->rest;
}

static void take_figures(struct report *r)
{
	r->has_pods = false;
	r->pods_seen = r->n_pods = 0;
	memset(&r->pods_rest, 0, sizeof(r->pods_rest));
}

void pods_fill(struct pods *p, struct report *r, uint64_t now_ns)
{
	uint64_t link = report_node_link(r);
	char err[256];

	if (!p->have_figures)
		return;
	/* Whether the figures fit the node's link changes only with them or
	 * with the link: judged once, not every report. */
	if (p->judged_gen != p->gen || p->judged_link != link) {
		p->judged_gen = p->gen;
		p->judged_link = link;
		p->fit = true;
		put_figures(p, r);
		if (!report_validate(r, err, sizeof(err)))
			return;
		take_figures(r);
		if (report_validate(r, NULL, 0))
			return; /* not the pods' fault: report_encode() says so */
		p->fit = false;
		log_limited(&p->withheld_log, now_ns, PODS_LOG_QUIET_NS, LOG_LVL_WARN, "pods",
			    "%s: reports go without their pods: %s (%llu reports so far; traffic "
			    "between pods of one node counts on both and crosses no link)",
			    p->cfg.node, err, (unsigned long long)p->health.withheld + 1);
	}
	if (p->fit) {
		put_figures(p, r);
		return;
	}
	/* The scorer would drop the whole report: send the uplinks alone. */
	p->health.withheld++;
}

void pods_health(const struct pods *p, struct pods_health *h)
{
	*h = p->health;
	h->resets = p->gone_resets;
	h->gaps = p->gone_gaps;
	h->absurd = p->gone_absurd;
	for (size_t i = 0; i < p->n; i++) {
		h->resets += p->ifs[i].win.resets;
		h->gaps += p->ifs[i].win.gaps;
		h->absurd += p->ifs[i].win.absurd;
	}
}
