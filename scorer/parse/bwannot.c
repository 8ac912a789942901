#include "parse/bwannot.h"

#include <errno.h>
#include <string.h>

#include "units.h"

const struct bwannot_key bwannot_keys[BWANNOT_KEYS] = {
	{ "kubernetes.io/ingress-bandwidth", true, BWANNOT_BITS },
	{ "kubernetes.io/egress-bandwidth", false, BWANNOT_BITS },
	{ "qos.projectcalico.org/ingressBandwidth", true, BWANNOT_BITS },
	{ "qos.projectcalico.org/egressBandwidth", false, BWANNOT_BITS },
	{ "ovn.kubernetes.io/ingress_rate", true, BWANNOT_MBIT },
	{ "ovn.kubernetes.io/egress_rate", false, BWANNOT_MBIT },
};

/* Mbit/s: digits, at most one '.', nothing else ("1e3" and "100M" are not
 * Kube-OVN's); read as the quantity "<value>M". */
static int parse_mbit(const char *s, size_t len, uint64_t *bps)
{
	char q[32];
	size_t dots = 0;

	if (len == 0 || len > sizeof(q) - 2)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.')
			dots++;
		else if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	}
	if (dots > 1)
		return -EINVAL;
	memcpy(q, s, len);
	q[len] = 'M';
	return units_parse_quantity_n(q, len + 1, bps);
}

int bwannot_parse(const struct bwannot_key *k, const char *value, size_t len, uint64_t *bps)
{
	if (!k || !value)
		return -EINVAL;
	if (k->unit == BWANNOT_MBIT)
		return parse_mbit(value, len, bps);
	return units_parse_quantity_n(value, len, bps) ? -EINVAL : 0;
}
