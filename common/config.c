#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "file.h"
#include "log.h"

/* A key given twice is a mistake one of whose values would be lost without
 * a word (the last wins in most YAML readers): refused, naming both lines.
 * A repeatable option is a list under one key. */
struct seen_key {
	char key[64];
	unsigned long line;
};

struct loader {
	const char *name;
	yaml_parser_t parser;
	config_apply_fn apply;
	void *ctx;
	char *err;
	size_t errlen;
	unsigned keys;
	struct seen_key seen[CONFIG_MAX_KEYS];
};

static int loader_fail(struct loader *l, const yaml_event_t *ev, const char *key, int rc,
		       const char *what)
{
	unsigned long line = ev ? (unsigned long)ev->start_mark.line + 1 : 0;
	char shown[64];

	/* The key is the file's text: never a raw control character in a
	 * message that ends up in a log. */
	if (key)
		snprintf(l->err, l->errlen, "%s:%lu: %s: %s", l->name, line,
			 log_printable(key, strlen(key), shown, sizeof(shown)), what);
	else
		snprintf(l->err, l->errlen, "%s:%lu: %s", l->name, line, what);
	return rc;
}

/* Next event; a parse error becomes the loader's error. */
static int next(struct loader *l, yaml_event_t *ev)
{
	char what[160];

	if (yaml_parser_parse(&l->parser, ev))
		return 0;
	snprintf(what, sizeof(what), "not valid YAML: %s",
		 l->parser.problem ? l->parser.problem : "parse error");
	snprintf(l->err, l->errlen, "%s:%lu: %s", l->name,
		 (unsigned long)l->parser.problem_mark.line + 1, what);
	return -EINVAL;
}

static int apply_scalar(struct loader *l, const yaml_event_t *ev, const char *key)
{
	char why[256] = "invalid value";
	const char *value = (const char *)ev->data.scalar.value;
	int rc;

	if (ev->data.scalar.length > CONFIG_MAX_VALUE_LEN)
		return loader_fail(l, ev, key, -E2BIG, "value longer than 4096 bytes");
	if (strlen(value) != ev->data.scalar.length)
		return loader_fail(l, ev, key, -EINVAL, "value contains a NUL byte");
	rc = l->apply(l->ctx, key, value, why, sizeof(why));
	if (rc)
		return loader_fail(l, ev, key, rc < 0 ? rc : -EINVAL, why);
	return 0;
}

/* One value: a scalar, or a flow/block sequence of scalars. */
static int load_value(struct loader *l, const char *key)
{
	yaml_event_t ev;
	int rc;

	if ((rc = next(l, &ev)))
		return rc;
	if (ev.type == YAML_SCALAR_EVENT) {
		rc = apply_scalar(l, &ev, key);
		yaml_event_delete(&ev);
		return rc;
	}
	if (ev.type != YAML_SEQUENCE_START_EVENT) {
		rc = loader_fail(l, &ev, key, -EINVAL, "expected a value or a list of values");
		yaml_event_delete(&ev);
		return rc;
	}
	yaml_event_delete(&ev);
	for (;;) {
		if ((rc = next(l, &ev)))
			return rc;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT)
			rc = loader_fail(l, &ev, key, -EINVAL, "list items must be plain values");
		else
			rc = apply_scalar(l, &ev, key);
		yaml_event_delete(&ev);
		if (rc)
			return rc;
	}
}

static int load_mapping(struct loader *l)
{
	yaml_event_t ev;
	int rc;

	for (;;) {
		char key[64];

		if ((rc = next(l, &ev)))
			return rc;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			rc = loader_fail(l, &ev, NULL, -EINVAL, "keys must be plain names");
			yaml_event_delete(&ev);
			return rc;
		}
		if (++l->keys > CONFIG_MAX_KEYS) {
			rc = loader_fail(l, &ev, NULL, -E2BIG, "more than 128 keys");
			yaml_event_delete(&ev);
			return rc;
		}
		if (ev.data.scalar.length >= sizeof(key)) {
			rc = loader_fail(l, &ev, NULL, -EINVAL, "key longer than 63 bytes");
			yaml_event_delete(&ev);
			return rc;
		}
		if (strlen((const char *)ev.data.scalar.value) != ev.data.scalar.length) {
			rc = loader_fail(l, &ev, NULL, -EINVAL, "key contains a NUL byte");
			yaml_event_delete(&ev);
			return rc;
		}
		memcpy(key, ev.data.scalar.value, ev.data.scalar.length + 1);
		for (unsigned i = 0; i + 1 < l->keys; i++)
			if (!strcmp(l->seen[i].key, key)) {
				char shown[64];

				snprintf(l->err, l->errlen, "%s: key '%s' given twice (lines %lu and %lu); "
					 "give a repeatable option's values as a list", l->name,
					 log_printable(key, strlen(key), shown, sizeof(shown)),
					 l->seen[i].line, (unsigned long)ev.start_mark.line + 1);
				yaml_event_delete(&ev);
				return -EINVAL;
			}
		memcpy(l->seen[l->keys - 1].key, key, strlen(key) + 1);
		l->seen[l->keys - 1].line = (unsigned long)ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if ((rc = load_value(l, key)))
			return rc;
	}
}

/* Expects the given event type; empty documents are allowed at the top. */
static int expect(struct loader *l, yaml_event_type_t type, const char *what)
{
	yaml_event_t ev;
	int rc;

	if ((rc = next(l, &ev)))
		return rc;
	rc = ev.type == type ? 0 : loader_fail(l, &ev, NULL, -EINVAL, what);
	yaml_event_delete(&ev);
	return rc;
}

int config_load_buffer(const char *name, const char *data, size_t len, config_apply_fn apply,
		       void *ctx, char *err, size_t errlen)
{
	struct loader l = { .name = name, .apply = apply, .ctx = ctx, .err = err, .errlen = errlen };
	yaml_event_t ev;
	int rc;

	if (len > CONFIG_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s: %zu bytes, limit %u", name, len, CONFIG_MAX_FILE_BYTES);
		return -E2BIG;
	}
	if (!yaml_parser_initialize(&l.parser)) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)data, len);

	if ((rc = expect(&l, YAML_STREAM_START_EVENT, "not a YAML stream")))
		goto out;
	if ((rc = next(&l, &ev)))
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) { /* an empty file sets nothing */
		yaml_event_delete(&ev);
		goto out;
	}
	rc = ev.type == YAML_DOCUMENT_START_EVENT ? 0 :
		loader_fail(&l, &ev, NULL, -EINVAL, "expected a YAML document");
	yaml_event_delete(&ev);
	if (rc)
		goto out;
	if ((rc = next(&l, &ev)))
		goto out;
	if (ev.type == YAML_MAPPING_START_EVENT) {
		yaml_event_delete(&ev);
		rc = load_mapping(&l);
	} else if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.length == 0) {
		yaml_event_delete(&ev); /* a document with only comments */
	} else {
		rc = loader_fail(&l, &ev, NULL, -EINVAL, "the top level must be a mapping of option: value");
		yaml_event_delete(&ev);
	}
	if (rc)
		goto out;
	if ((rc = expect(&l, YAML_DOCUMENT_END_EVENT, "expected the end of the document")))
		goto out;
	rc = expect(&l, YAML_STREAM_END_EVENT, "only one YAML document is allowed");
out:
	yaml_parser_delete(&l.parser);
	return rc;
}

int config_load(const char *path, config_apply_fn apply, void *ctx, char *err, size_t errlen)
{
	char *data;
	size_t len;
	int rc = file_read_small(path, CONFIG_MAX_FILE_BYTES, &data, &len, NULL, err, errlen);

	if (rc)
		return rc;
	rc = config_load_buffer(path, data, len, apply, ctx, err, errlen);
	free(data);
	return rc;
}
