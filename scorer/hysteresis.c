#include "hysteresis.h"

#include "clock.h"

unsigned hysteresis_release_pct(const struct filter_config *cfg)
{
	return cfg->max_utilization_pct > cfg->margin_pct ?
		       cfg->max_utilization_pct - cfg->margin_pct : 0;
}

enum hysteresis_event hysteresis_step(const struct filter_config *cfg, struct hysteresis_state *st,
				      uint64_t rate, uint64_t link, uint64_t now_ns)
{
	uint64_t held;

	if (cfg->max_utilization_pct == 0 || link == 0) {
		bool was = st->over;

		st->over = false;
		return was ? HYSTERESIS_RELEASED : HYSTERESIS_SAME;
	}
	if (!st->over) {
		if (!filter_above(rate, link, cfg->max_utilization_pct))
			return HYSTERESIS_SAME;
		st->over = true;
		st->since_ns = now_ns;
		return HYSTERESIS_CROSSED;
	}
	held = now_ns > st->since_ns ? now_ns - st->since_ns : 0;
	if (filter_above(rate, link, hysteresis_release_pct(cfg)) || held < cfg->hold_ms * NS_PER_MS)
		return HYSTERESIS_SAME;
	st->over = false;
	return HYSTERESIS_RELEASED;
}
