#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "units.h"

struct file_ctx {
	const struct cli_opt *opts;
	size_t n;
	void *ctx;
};

static const struct cli_opt *find(const struct cli_opt *opts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

static int set_switch(bool *dst, const char *v, char *why, size_t len)
{
	if (!v || strcmp(v, "on") == 0 || strcmp(v, "true") == 0)
		*dst = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0)
		*dst = false;
	else {
		snprintf(why, len, "expected on or off (or true or false)");
		return -EINVAL;
	}
	return 0;
}

/* Every value is one line of text: a URL, a path, a name, a number. A
 * control character in one (a CR/LF in a kubeconfig path, a server URL)
 * would be carried into requests and log lines where it can forge what
 * follows, so it is refused wherever the value came from. */
static int check_text(const char *v, char *why, size_t len)
{
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(why, len, "a control character (0x%02x) at byte %zu: a value is one "
				 "line of printable text", (unsigned char)*c, (size_t)(c - v) + 1);
			return -EINVAL;
		}
	return 0;
}

/* Parses v for op into ctx, by its type. */
static int apply(const struct cli_opt *op, void *ctx, const char *v, char *why, size_t len)
{
	void *at = (char *)ctx + op->offset;

	if (v && check_text(v, why, len))
		return -EINVAL;
	switch (op->type) {
	case CLI_STRING:
		return cli_set_string(at, op->size, v, why, len);
	case CLI_DURATION:
		return cli_set_duration(at, v, op->min, op->max, why, len);
	case CLI_COUNT:
		return cli_set_count(at, v, op->max, why, len);
	case CLI_SWITCH:
		return set_switch(at, v, why, len);
	case CLI_CUSTOM:
	default:
		return op->set(ctx, v, why, len);
	}
}

static int from_file(void *arg, const char *key, const char *value, char *why, size_t len)
{
	const struct file_ctx *fc = arg;
	const struct cli_opt *op = find(fc->opts, fc->n, key);

	if (!op || strcmp(key, "config") == 0) {
		snprintf(why, len, "unknown option");
		return -EINVAL;
	}
	if (op->kind == CLI_FLAG) {
		snprintf(why, len, "a command-line flag, not allowed in a config file");
		return -EINVAL;
	}
	return apply(op, fc->ctx, value, why, len);
}

int cli_parse(const struct cli_opt *opts, size_t n, void *ctx, int argc, char **argv, char *err,
	      size_t errlen)
{
	struct option longopts[CLI_MAX_OPTS + 2];
	struct file_ctx fc = { opts, n, ctx };
	const size_t config_code = 256 + CLI_MAX_OPTS;
	const char *config = NULL;
	char why[256];
	size_t k = 0;
	int c;

	if (n > CLI_MAX_OPTS) {
		snprintf(err, errlen, "%zu options, limit %d", n, CLI_MAX_OPTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (opts[i].kind == CLI_FILE_ONLY)
			continue;
		longopts[k++] = (struct option){ opts[i].name,
						 opts[i].kind == CLI_FLAG ? no_argument :
									   required_argument,
						 NULL, (int)(256 + i) };
	}
	longopts[k++] = (struct option){ "config", required_argument, NULL, (int)config_code };
	longopts[k] = (struct option){ NULL, 0, NULL, 0 };

	/* Find the file first, so that flags override it wherever they stand. */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if (c == (int)config_code)
			config = optarg;
	if (config && config_load(config, from_file, &fc, err, errlen))
		return -EINVAL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		const struct cli_opt *op;

		if (c == (int)config_code)
			continue;
		if (c < 256 || c >= (int)config_code) {
			char shown[128];
			const char *arg = argv[optind - 1];

			log_printable(arg, strlen(arg), shown, sizeof(shown));
			if (optopt)
				snprintf(err, errlen, "%s: missing value", shown);
			else
				snprintf(err, errlen, "%s: unknown option (see --help)", shown);
			return -EINVAL;
		}
		op = &opts[c - 256];
		snprintf(why, sizeof(why), "invalid value");
		if (apply(op, ctx, op->kind == CLI_FLAG ? NULL : optarg, why, sizeof(why))) {
			char shown[128];

			if (op->kind == CLI_FLAG)
				snprintf(err, errlen, "--%s: %s", op->name, why);
			else
				snprintf(err, errlen, "--%s %s: %s", op->name,
					 log_printable(optarg, strlen(optarg), shown, sizeof(shown)), why);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		char shown[128];

		snprintf(err, errlen, "%s: unexpected argument (see --help)",
			 log_printable(argv[optind], strlen(argv[optind]), shown, sizeof(shown)));
		return -EINVAL;
	}
	return 0;
}

int cli_defaults(const struct cli_opt *opts, size_t n, void *ctx, char *err, size_t errlen)
{
	char why[256];

	for (size_t i = 0; i < n; i++) {
		if (!opts[i].def)
			continue;
		snprintf(why, sizeof(why), "invalid value");
		if (apply(&opts[i], ctx, opts[i].def, why, sizeof(why))) {
			snprintf(err, errlen, "--%s: default %s: %s", opts[i].name, opts[i].def, why);
			return -EINVAL;
		}
	}
	return 0;
}

static void usage_line(FILE *f, const char *name, const char *arg, const char *help,
		       const char *def)
{
	char left[64];

	snprintf(left, sizeof(left), "--%s%s%s", name, arg ? " " : "", arg ? arg : "");
	fprintf(f, "  %-34s %s%s%s%s\n", left, help, def ? " (" : "", def ? def : "", def ? ")" : "");
}

void cli_usage(FILE *f, const char *prog, const struct cli_opt *opts, size_t n)
{
	fprintf(f, "usage: %s [options]\n", prog);
	for (size_t i = 0; i < n; i++)
		if (opts[i].help && opts[i].kind != CLI_FILE_ONLY)
			usage_line(f, opts[i].name, opts[i].arg, opts[i].help, opts[i].def);
	usage_line(f, "config", "FILE", "YAML file whose keys are these option names", NULL);
}

int cli_set_string(char *dst, size_t cap, const char *v, char *why, size_t len)
{
	size_t n = strlen(v);

	if (n >= cap) {
		snprintf(why, len, "%zu bytes, limit %zu", n, cap - 1);
		return -EINVAL;
	}
	memcpy(dst, v, n + 1);
	return 0;
}

int cli_set_duration(uint64_t *dst, const char *v, uint64_t min_ms, uint64_t max_ms, char *why,
		     size_t len)
{
	uint64_t ms;

	if (units_parse_duration_ms(v, &ms) || ms < min_ms || ms > max_ms) {
		snprintf(why, len, "expected a duration from %llums to %llus, such as 2s",
			 (unsigned long long)min_ms, (unsigned long long)(max_ms / 1000));
		return -EINVAL;
	}
	*dst = ms;
	return 0;
}

int cli_set_count(uint64_t *dst, const char *v, uint64_t max, char *why, size_t len)
{
	uint64_t n;

	if (units_parse_u64(v, max, &n) || n == 0) {
		snprintf(why, len, "expected a count from 1 to %llu", (unsigned long long)max);
		return -EINVAL;
	}
	*dst = n;
	return 0;
}
