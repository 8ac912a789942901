/* Command-line options and YAML config files from one table.
 *
 * A program describes its options once, as an array of struct cli_opt; the
 * same handler serves `--name VALUE` on the command line and `name: VALUE` in
 * the file given by `--config FILE`, so a file can never mean something a
 * flag cannot. The file is applied first and the flags after it, wherever
 * `--config` stands, so flags win. `--config` itself is handled here and
 * must not appear in the table.
 *
 * A row states everything about its option once: its name, what its value
 * looks like, what it does, its default (applied by cli_defaults() through
 * the same parser as a flag's value, and shown by cli_usage()), and either
 * a type with where the value goes and its bounds, or a handler.
 *
 * Handlers write their reason (without the option name) into why and return
 * 0 or a negative errno. cli_parse() turns that into one line naming the
 * option, the value and the problem, the line a program prints before it
 * exits with status 2. */
#ifndef NETSCHED_CLI_H
#define NETSCHED_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*cli_set_fn)(void *ctx, const char *value, char *why, size_t len);

enum cli_kind {
	CLI_VALUE,	/* --name VALUE, and `name: VALUE` in a file */
	CLI_FLAG,	/* --name alone; set() gets NULL; never in a file */
	CLI_FILE_ONLY,	/* `name: VALUE` in a file only (compatibility names) */
};

/* How a row's value is parsed and stored, at offset in the context. */
enum cli_type {
	CLI_CUSTOM,	/* set() parses and stores it */
	CLI_STRING,	/* a string into char[size] (cli_set_string()) */
	CLI_DURATION,	/* milliseconds into a uint64_t, from min to max (cli_set_duration()) */
	CLI_COUNT,	/* a uint64_t from 1 to max (cli_set_count()) */
	CLI_SWITCH,	/* a bool: on or true, off or false; a CLI_FLAG sets it */
};

struct cli_opt {
	const char *name;
	enum cli_kind kind;
	const char *arg;	/* what the value looks like, for --help: "DUR", "N" */
	const char *help;	/* what it does; NULL hides the option */
	const char *def;	/* the default as one would write it; NULL: none */
	enum cli_type type;
	size_t offset;		/* typed: where the value goes in the context */
	size_t size;		/* CLI_STRING: the array's size */
	uint64_t min, max;	/* CLI_DURATION (ms), CLI_COUNT (max) */
	cli_set_fn set;		/* CLI_CUSTOM */
};

#define CLI_MAX_OPTS 64

/* Applies the file named by --config (if any), then the flags, to ctx.
 * Returns 0, or -EINVAL with err set; ctx may then be partly updated. */
int cli_parse(const struct cli_opt *opts, size_t n, void *ctx, int argc, char **argv, char *err,
	      size_t errlen);

/* Sets every option that has a default to it. 0, or -EINVAL with err
 * naming the option whose default does not parse (a bug). */
int cli_defaults(const struct cli_opt *opts, size_t n, void *ctx, char *err, size_t errlen);

/* Lists the options with their values, what they do and their defaults. */
void cli_usage(FILE *f, const char *prog, const struct cli_opt *opts, size_t n);

/* Helpers for handlers; each writes *dst only on success. */
int cli_set_string(char *dst, size_t cap, const char *v, char *why, size_t len);
/* A duration in [min_ms, max_ms] ("250ms", "2s", "5m"). */
int cli_set_duration(uint64_t *dst, const char *v, uint64_t min_ms, uint64_t max_ms, char *why,
		     size_t len);
/* A count in [1, max]. */
int cli_set_count(uint64_t *dst, const char *v, uint64_t max, char *why, size_t len);

#endif
