#include "serve/metricrows.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

static void value(struct buf *b, enum metricrows_kind kind, const void *at)
{
	switch (kind) {
	case METRICROWS_ATOMIC:
		buf_printf(b, "%lu\n", atomic_load_explicit((const atomic_ulong *)at,
							    memory_order_relaxed));
		break;
	case METRICROWS_U64:
		buf_printf(b, "%llu\n", (unsigned long long)*(const uint64_t *)at);
		break;
	case METRICROWS_SIZE:
		buf_printf(b, "%zu\n", *(const size_t *)at);
		break;
	case METRICROWS_BOOL:
		buf_printf(b, "%d\n", *(const bool *)at ? 1 : 0);
		break;
	case METRICROWS_NS_SECONDS:
		buf_printf(b, "%.3f\n", (double)*(const uint64_t *)at / 1e9);
		break;
	}
}

static void family(struct buf *b, const struct metricfamily *f, const char *base)
{
	const char *v = f->values;

	buf_printf(b, "# HELP " METRICROWS_PREFIX "%s %s\n# TYPE " METRICROWS_PREFIX "%s %s\n",
		   f->name, f->help, f->name, f->type);
	if (!f->label) {
		buf_printf(b, METRICROWS_PREFIX "%s ", f->name);
		value(b, f->kind, base + f->at[0]);
		return;
	}
	for (size_t k = 0; k < METRICROWS_MAX_SERIES && *v; k++) {
		size_t len = strcspn(v, " ");

		buf_printf(b, METRICROWS_PREFIX "%s{%s=\"%.*s\"} ", f->name, f->label, (int)len, v);
		value(b, f->kind, base + f->at[k]);
		v += len + (v[len] == ' ');
	}
}

void metricrows_put(struct buf *b, const struct metricfamily *f, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++)
		family(b, &f[i], base);
}
