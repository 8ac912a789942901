#include "rules/policy.h"

#include <errno.h>
#include <string.h>

#include "units.h"

static const char *const kind_names[] = {
	[POLICY_RELATIVE] = "relative",
	[POLICY_UTILIZATION] = "utilization",
	[POLICY_PRESSURE] = "pressure",
};

static const char *const direction_names[] = {
	[POLICY_DIR_RX] = "rx",
	[POLICY_DIR_TX] = "tx",
	[POLICY_DIR_BOTH] = "both",
	[POLICY_DIR_MAX] = "max",
	[POLICY_DIR_FIT] = "fit",
};

uint64_t policy_rate(enum policy_direction dir, uint64_t rx, uint64_t tx)
{
	switch (dir) {
	case POLICY_DIR_TX:
		return tx;
	case POLICY_DIR_BOTH:
		return units_add_sat(rx, tx);
	case POLICY_DIR_MAX:
	case POLICY_DIR_FIT:	/* without a pod to weigh by: the busier side */
		return rx > tx ? rx : tx;
	case POLICY_DIR_RX:
	default:
		return rx;
	}
}

/* The Go plugin's integer formula, Max - rate * Max / maxRate, in 128 bits so
 * no rate can overflow it. maxRate == 0 means every node is idle: all Max. */
static int relative_score(uint64_t rate, uint64_t max_rate)
{
	unsigned __int128 used;

	if (max_rate == 0)
		return POLICY_MAX_SCORE;
	used = (unsigned __int128)rate * POLICY_MAX_SCORE / max_rate;
	if (used > POLICY_MAX_SCORE)
		used = POLICY_MAX_SCORE;
	return POLICY_MAX_SCORE - (int)used;
}

/* round(Max * (1 - min(1, rate / link))) with integers: round half up. */
static int utilization_score(uint64_t rate, uint64_t link)
{
	unsigned __int128 used;

	if (rate >= link)
		return 0;
	used = ((unsigned __int128)rate * POLICY_MAX_SCORE * 2 + link) / ((unsigned __int128)link * 2);
	if (used > POLICY_MAX_SCORE)
		used = POLICY_MAX_SCORE;
	return POLICY_MAX_SCORE - (int)used;
}

uint64_t policy_pressure(uint64_t rate, uint64_t recent, uint64_t p95)
{
	uint64_t level = rate > recent ? rate : recent;
	uint64_t mid;

	if (p95 <= level)
		return level;
	mid = level + (p95 - level) / 2; /* (level + p95) / 2 without overflow */
	return mid;
}

bool policy_dropping(uint64_t drops, uint64_t window_ms, uint64_t max_per_second)
{
	if (drops == 0 || max_per_second == POLICY_DROPS_IGNORED)
		return false;
	if (window_ms == 0)
		window_ms = 1000;
	/* drops / (window_ms / 1000) > max_per_second, in integers */
	return (unsigned __int128)drops * 1000 > (unsigned __int128)max_per_second * window_ms;
}

void policy_score(enum policy_kind kind, struct policy_node *nodes, size_t n)
{
	uint64_t max_rate = 0;

	/* What each node is judged by. */
	for (size_t i = 0; i < n; i++) {
		struct policy_node *p = &nodes[i];

		p->pressure = kind == POLICY_PRESSURE ? policy_pressure(p->rate, p->recent, p->p95) :
							p->rate;
	}
	/* Nodes without a known link speed are ranked relative to each other
	 * even under the utilization and pressure policies: there is nothing
	 * else to compare. */
	for (size_t i = 0; i < n; i++) {
		const struct policy_node *p = &nodes[i];
		bool relative = kind == POLICY_RELATIVE || p->link_bytes_per_second == 0;

		if (p->has_data && relative && p->pressure > max_rate)
			max_rate = p->pressure;
	}
	for (size_t i = 0; i < n; i++) {
		struct policy_node *p = &nodes[i];

		if (!p->has_data)
			p->score = POLICY_NEUTRAL_SCORE;
		else if (kind == POLICY_PRESSURE && p->dropping)
			p->score = 0; /* it already loses packets: the last place to add load */
		else if (kind != POLICY_RELATIVE && p->link_bytes_per_second != 0)
			p->score = utilization_score(p->pressure, p->link_bytes_per_second);
		else
			p->score = relative_score(p->pressure, max_rate);
	}
}

static int parse_name(const char *s, const char *const *names, size_t n, int *out)
{
	for (size_t i = 0; i < n; i++) {
		if (names[i] && strcmp(s, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

int policy_parse_kind(const char *s, enum policy_kind *out)
{
	int v;

	if (parse_name(s, kind_names, sizeof(kind_names) / sizeof(kind_names[0]), &v))
		return -EINVAL;
	*out = (enum policy_kind)v;
	return 0;
}

int policy_parse_direction(const char *s, enum policy_direction *out)
{
	int v;

	if (parse_name(s, direction_names, sizeof(direction_names) / sizeof(direction_names[0]), &v))
		return -EINVAL;
	*out = (enum policy_direction)v;
	return 0;
}

const char *policy_kind_name(enum policy_kind kind)
{
	return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

const char *policy_direction_name(enum policy_direction dir)
{
	return (unsigned)dir < sizeof(direction_names) / sizeof(direction_names[0]) ?
		       direction_names[dir] : "?";
}
