#include "pods/podweight.h"

#include <math.h>
#include <string.h>

#include "pods/podindex.h"
#include "pods/workload.h"

/* The pod's workload's demand: of key when keyed (NULL: none), else from
 * the pod's names; false when it has none or none is known. */
static bool learned(const struct podweight *w, const struct podweight_pod *pod,
		    const struct workload_key *key, bool keyed, struct workload_demand *d)
{
	static const struct kubepod_owner none;
	struct workload_key own;

	if (!w || !w->workloads)
		return false;
	if (keyed)
		return key && workload_demand_of(w->workloads, key, d);
	if (!pod->ns || !pod->name ||
	    workload_key_of(pod->ns, pod->owner ? pod->owner : &none, pod->name, &own))
		return false;
	return workload_demand_of(w->workloads, &own, d);
}

/* The fallback's weight, per direction. */
static void fallback(const struct podweight *w, uint64_t *rx, uint64_t *tx)
{
	struct podindex_stats st;

	*rx = *tx = 0;
	if (!w)
		return;
	if (w->cfg.estimate_bytes_per_second) {
		*rx = *tx = w->cfg.estimate_bytes_per_second;
		return;
	}
	podindex_stats(w->pods, &st);
	*rx = st.avg_rx_bytes_per_second;
	*tx = st.avg_tx_bytes_per_second;
}

static void weigh(const struct podweight *w, const struct podweight_pod *pod,
		  const struct workload_key *key, bool keyed, struct inflight_pod *out,
		  enum podweight_source *rx_from, enum podweight_source *tx_from)
{
	struct workload_demand d;
	bool known = false, avg_done = false;
	uint64_t avg_rx = 0, avg_tx = 0;
	enum podweight_source rs, ts;

	memset(out, 0, sizeof(*out));
	out->label = pod->label;
	if (!pod->ingress_bps || !pod->egress_bps)
		known = learned(w, pod, key, keyed, &d);
	if (pod->ingress_bps) {
		rs = PODWEIGHT_DECLARED;
		out->rx_bytes_per_second = out->reserve_rx_bytes_per_second = pod->ingress_bps / 8;
	} else if (known) {
		rs = PODWEIGHT_LEARNED;
		out->rx_bytes_per_second = d.rx_bytes_per_second;
		if (w->cfg.learned_filter)
			out->reserve_rx_bytes_per_second = d.rx_bytes_per_second;
	} else {
		rs = PODWEIGHT_FALLBACK;
		fallback(w, &avg_rx, &avg_tx);
		avg_done = true;
		out->rx_bytes_per_second = avg_rx;
		out->unknown_rx = true;
	}
	if (pod->egress_bps) {
		ts = PODWEIGHT_DECLARED;
		out->tx_bytes_per_second = out->reserve_tx_bytes_per_second = pod->egress_bps / 8;
	} else if (known) {
		ts = PODWEIGHT_LEARNED;
		out->tx_bytes_per_second = d.tx_bytes_per_second;
		if (w->cfg.learned_filter)
			out->reserve_tx_bytes_per_second = d.tx_bytes_per_second;
	} else {
		ts = PODWEIGHT_FALLBACK;
		if (!avg_done)
			fallback(w, &avg_rx, &avg_tx);
		out->tx_bytes_per_second = avg_tx;
		out->unknown_tx = true;
	}
	out->basis = rs == PODWEIGHT_FALLBACK || ts == PODWEIGHT_FALLBACK ? INFLIGHT_GUESSED :
		     rs == PODWEIGHT_LEARNED || ts == PODWEIGHT_LEARNED ? INFLIGHT_LEARNED :
									 INFLIGHT_DECLARED;
	if (rx_from)
		*rx_from = rs;
	if (tx_from)
		*tx_from = ts;
}

void podweight_of(const struct podweight *w, const struct podweight_pod *pod,
		  struct inflight_pod *out, enum podweight_source *rx_from,
		  enum podweight_source *tx_from)
{
	weigh(w, pod, NULL, false, out, rx_from, tx_from);
}

void podweight_of_keyed(const struct podweight *w, const struct podweight_pod *pod,
			const struct workload_key *key, struct inflight_pod *out,
			enum podweight_source *rx_from, enum podweight_source *tx_from)
{
	weigh(w, pod, key, true, out, rx_from, tx_from);
}

void podweight_filter(const struct podweight *w, const struct podweight_pod *pod,
		      struct filter_pod *out)
{
	struct workload_demand d;

	memset(out, 0, sizeof(*out));
	out->ingress_bps = pod->ingress_bps;
	out->egress_bps = pod->egress_bps;
	if (!w || !w->cfg.learned_filter || (pod->ingress_bps && pod->egress_bps) ||
	    !learned(w, pod, NULL, false, &d))
		return;
	if (!pod->ingress_bps && d.rx_bytes_per_second) {
		out->ingress_bps = d.rx_bytes_per_second * 8;
		out->learned_ingress = true;
	}
	if (!pod->egress_bps && d.tx_bytes_per_second) {
		out->egress_bps = d.tx_bytes_per_second * 8;
		out->learned_egress = true;
	}
}

uint64_t podweight_doubt(unsigned pct, uint64_t link, uint64_t used, uint32_t unknown_milli)
{
	/* log2 of one pod's keep, for the last pct asked: pct is a setting,
	 * and pow() per node and direction was 8% of a prioritize's CPU
	 * under churn, where exp2() of a known log costs a quarter of it. */
	static _Thread_local unsigned memo_pct;
	static _Thread_local double memo_log2;
	double keep;

	if (!pct || !link || !unknown_milli || used >= link)
		return 0;
	if (pct > 100)
		pct = 100;
	if (pct != memo_pct) {
		memo_log2 = log2(1.0 - pct / 100.0);
		memo_pct = pct;
	}
	/* What stays free after that many pods each took pct of it
	 * ((1 - pct/100)^pods; at 100%, log2(0) is -inf and exp2 gives 0). */
	keep = exp2(memo_log2 * (unknown_milli / 1000.0));
	return (uint64_t)((double)(link - used) * (1.0 - keep));
}

const char *podweight_source_name(enum podweight_source s)
{
	switch (s) {
	case PODWEIGHT_DECLARED:
		return "declared";
	case PODWEIGHT_LEARNED:
		return "learned";
	case PODWEIGHT_FALLBACK:
	default:
		return "fallback";
	}
}
