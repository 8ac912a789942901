#include "view.h"

#include <stdio.h>
#include <string.h>

#include "prom.h"
#include "table.h"

void view_get(struct scorer *s, const char *name, size_t len, uint64_t now_ns,
	      struct view_node *out)
{
	struct table_node tn;
	uint64_t rx, tx, age;

	memset(out, 0, sizeof(*out));
	if (table_get(s->table, name, len, &tn)) {
		out->known = true;
		out->age_ns = table_node_age_ns(&tn, now_ns);
		if (out->age_ns <= s->stale_after_ns) {
			out->source = VIEW_AGENT;
			out->rx_bytes_per_second = tn.rx_bytes_per_second;
			out->tx_bytes_per_second = tn.tx_bytes_per_second;
			out->link_bytes_per_second = tn.link_bytes_per_second;
			memcpy(out->label, tn.ifaces_label, sizeof(out->label));
			return;
		}
	}
	if (s->prom && prom_get(s->prom, name, len, now_ns, &rx, &tx, &age)) {
		out->source = VIEW_PROMETHEUS;
		out->rx_bytes_per_second = rx;
		out->tx_bytes_per_second = tx;
		out->age_ns = age;
		snprintf(out->label, sizeof(out->label), "prometheus");
	}
}

void view_policy_input(const struct scorer *s, const struct view_node *v, struct policy_node *out)
{
	memset(out, 0, sizeof(*out));
	if (v->source == VIEW_NONE)
		return;
	out->has_data = true;
	out->rate = policy_rate(s->direction, v->rx_bytes_per_second, v->tx_bytes_per_second);
	out->link_bytes_per_second = v->link_bytes_per_second;
}

const char *view_source_name(enum view_source src)
{
	switch (src) {
	case VIEW_AGENT:
		return "agent";
	case VIEW_PROMETHEUS:
		return "prometheus";
	case VIEW_NONE:
	default:
		return "none";
	}
}
