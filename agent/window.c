#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

int window_init(struct window *w, uint32_t cap)
{
	memset(w, 0, sizeof(*w));
	if (cap == 0)
		return -EINVAL;
	w->slots = calloc(cap, sizeof(*w->slots));
	w->scratch = calloc(2 * (size_t)cap, sizeof(*w->scratch));
	if (!w->slots || !w->scratch) {
		window_free(w);
		return -ENOMEM;
	}
	w->cap = cap;
	return 0;
}

void window_free(struct window *w)
{
	free(w->slots);
	free(w->scratch);
	w->slots = NULL;
	w->scratch = NULL;
	w->cap = w->head = w->count = 0;
}

static void push(struct window *w, const struct window_slot *s)
{
	w->slots[w->head] = *s;
	w->head = (w->head + 1) % w->cap;
	if (w->count < w->cap)
		w->count++;
}

static void prime(struct window *w, uint64_t now_ns, const struct ifreading *c)
{
	w->primed = true;
	w->prev_ns = now_ns;
	w->prev = *c;
}

static bool went_back(const struct ifreading *prev, const struct ifreading *c)
{
	return c->rx_bytes < prev->rx_bytes || c->tx_bytes < prev->tx_bytes ||
	       c->rx_dropped < prev->rx_dropped || c->rx_missed_errors < prev->rx_missed_errors ||
	       c->tx_dropped < prev->tx_dropped;
}

/* bytes over dur_ns as bytes per second, without overflow. */
static uint64_t per_second(uint64_t bytes, uint64_t dur_ns)
{
	unsigned __int128 r;

	if (dur_ns == 0)
		return UINT64_MAX;
	r = (unsigned __int128)bytes * NS_PER_SEC / dur_ns;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

enum window_event window_add(struct window *w, uint64_t now_ns, const struct ifreading *c,
			     uint64_t max_gap_ns, uint64_t max_bytes_per_second)
{
	struct window_slot s = { .end_ns = now_ns };
	uint64_t dur;

	if (!w->primed) {
		prime(w, now_ns, c);
		return WINDOW_PRIMED;
	}
	dur = now_ns > w->prev_ns ? now_ns - w->prev_ns : 0;
	if (went_back(&w->prev, c)) {
		w->resets++;
		prime(w, now_ns, c);
		return WINDOW_RESET;
	}
	if (dur == 0 || dur > max_gap_ns) {
		/* The bytes are real, but we cannot say when inside the pause they
		 * flowed; a gap slot keeps the window's clock moving. */
		w->gaps++;
		s.dur_ns = dur;
		push(w, &s);
		prime(w, now_ns, c);
		return WINDOW_GAP;
	}
	s.dur_ns = dur;
	s.rx_bytes = c->rx_bytes - w->prev.rx_bytes;
	s.tx_bytes = c->tx_bytes - w->prev.tx_bytes;
	if (max_bytes_per_second && (per_second(s.rx_bytes, dur) > max_bytes_per_second ||
				     per_second(s.tx_bytes, dur) > max_bytes_per_second)) {
		w->absurd++;
		s.rx_bytes = s.tx_bytes = 0;
		push(w, &s);
		prime(w, now_ns, c);
		return WINDOW_ABSURD;
	}
	s.rx_dropped = c->rx_dropped - w->prev.rx_dropped;
	s.rx_missed = c->rx_missed_errors - w->prev.rx_missed_errors;
	s.tx_dropped = c->tx_dropped - w->prev.tx_dropped;
	s.valid = true;
	push(w, &s);
	prime(w, now_ns, c);
	return WINDOW_DELTA;
}

void window_gap(struct window *w, uint64_t now_ns)
{
	struct window_slot s = { .end_ns = now_ns };

	w->gaps++;
	if (w->primed && now_ns > w->prev_ns)
		s.dur_ns = now_ns - w->prev_ns;
	push(w, &s);
	w->primed = false;
}

void window_reprime(struct window *w)
{
	w->primed = false;
}

static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest of v[0..n) (k from 0), reordering v: Hoare's selection
 * with a median-of-three pivot, linear on average. A report sorts nothing:
 * at the largest window (3,600 samples) qsort cost 0.45 ms per interface. */
static uint64_t select_kth(uint64_t *v, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		uint64_t pivot;

		/* v[lo] <= v[mid] <= v[hi]: both scans below stop inside [lo, hi]. */
		if (v[mid] < v[lo])
			swap(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap(&v[hi], &v[mid]);
		pivot = v[mid];
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
				swap(&v[i++], &v[j--]);
		}
		/* Now v[lo..j] <= pivot <= v[i..hi], and v[j+1..i-1] == pivot. */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

/* Nearest rank: the smallest value with at least WINDOW_PERCENTILE percent
 * of the values at or below it. Reorders v. */
static uint64_t percentile(uint64_t *v, uint32_t n)
{
	uint32_t rank;

	if (n == 0)
		return 0;
	rank = (uint32_t)(((uint64_t)n * WINDOW_PERCENTILE + 99) / 100); /* ceil, 1..n */
	return select_kth(v, n, (int64_t)rank - 1);
}

void window_clear(struct window *w)
{
	w->head = w->count = 0;
	w->primed = false;
}

static void sum_slots(const struct window *w, uint64_t now_ns, uint64_t span_ns,
		      uint64_t recent_ns, bool percentiles, struct window_stats *out);

void window_stats(const struct window *w, uint64_t now_ns, uint64_t span_ns, uint64_t recent_ns,
		  struct window_stats *out)
{
	sum_slots(w, now_ns, span_ns, recent_ns, true, out);
}

void window_totals(const struct window *w, uint64_t now_ns, uint64_t span_ns, uint64_t recent_ns,
		   struct window_stats *out)
{
	sum_slots(w, now_ns, span_ns, recent_ns, false, out);
}

/* window_stats(), and without percentiles window_totals(). */
static void sum_slots(const struct window *w, uint64_t now_ns, uint64_t span_ns,
		      uint64_t recent_ns, bool percentiles, struct window_stats *out)
{
	struct window_stats st = { 0 };
	struct traffic *t = &st.traffic;
	uint64_t recent_rx = 0, recent_tx = 0;

	for (uint32_t k = 0; k < w->count; k++) {
		const struct window_slot *s = &w->slots[(w->head + w->cap - 1 - k) % w->cap];
		uint64_t rate;

		if (s->end_ns > now_ns)
			continue; /* taken after now: not ours to report */
		if (now_ns - s->end_ns >= span_ns)
			break; /* newest first: everything after this is older */
		st.slots++;
		if (!s->valid)
			continue;
		/* The newest sample is always recent: a report sent just before
		 * the next sample still says what the link does now. */
		if (st.samples == 0 || now_ns - s->end_ns < recent_ns) {
			recent_rx += s->rx_bytes;
			recent_tx += s->tx_bytes;
			st.recent_covered_ns += s->dur_ns;
		}
		st.samples++;
		st.rx_bytes += s->rx_bytes;
		st.tx_bytes += s->tx_bytes;
		st.covered_ns += s->dur_ns;
		t->rx_dropped += s->rx_dropped;
		t->rx_missed += s->rx_missed;
		t->tx_dropped += s->tx_dropped;
		if (!percentiles)
			continue;
		rate = per_second(s->rx_bytes, s->dur_ns);
		w->scratch[st.samples - 1] = rate;
		if (rate > t->rx.peak)
			t->rx.peak = rate;
		rate = per_second(s->tx_bytes, s->dur_ns);
		w->scratch[w->cap + st.samples - 1] = rate;
		if (rate > t->tx.peak)
			t->tx.peak = rate;
	}
	if (st.samples) {
		t->rx.recent = per_second(recent_rx, st.recent_covered_ns);
		t->tx.recent = per_second(recent_tx, st.recent_covered_ns);
	}
	if (st.samples && percentiles) {
		t->rx.p95 = percentile(w->scratch, st.samples);
		t->tx.p95 = percentile(w->scratch + w->cap, st.samples);
	}
	/* A covered window is never under 100 ms: rounding costs little. */
	t->covered_ms = (st.covered_ns + NS_PER_MS / 2) / NS_PER_MS;
	t->rx.average = traffic_per_second(st.rx_bytes, t->covered_ms);
	t->tx.average = traffic_per_second(st.tx_bytes, t->covered_ms);
	*out = st;
}
