/* Which JSON library should parse the scheduler's extender requests?
 *
 * Parses and walks every request fixture and two large generated requests
 * with cJSON, json-c, jansson and jsmn, and prints MB/s and microseconds per
 * request for each. "Walk" is what the scorer needs: Pod.metadata.annotations
 * and every node name (Nodes.items[].metadata.name or NodeNames[]).
 * Standalone: not part of the main build.
 *
 * json-c and jansson both export json_object_get(), so no single binary can
 * link both: each build selects one library. From the repository root:
 *   for l in cjson:libcjson jsonc:json-c jansson:jansson jsmn:; do
 *       n=${l%:*} p=${l#*:}
 *       gcc -O2 -std=c11 -D_GNU_SOURCE -DWITH_${n^^} bench/json_candidates.c \
 *           -o /tmp/json_$n ${p:+$(pkg-config --cflags --libs $p)} && /tmp/json_$n tests/fixtures/extender
 *   done
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(WITH_CJSON)
#include <cjson/cJSON.h>
#elif defined(WITH_JSONC)
#include <json-c/json.h>
#elif defined(WITH_JANSSON)
#include <jansson.h>
#elif !defined(WITH_JSMN)
#error "build with one of -DWITH_CJSON -DWITH_JSONC -DWITH_JANSSON -DWITH_JSMN"
#endif

/* The generator always uses jsmn to find the node object it repeats. */
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#define JSMN_STATIC
#include <jsmn.h>

#define BIG_NODES 5000
#define MIN_SECONDS 0.5
#define MAX_RUNS 20000

/* What a walk found; compared across libraries so none can skip work. */
struct walk {
	size_t nodes;
	size_t name_bytes;
	size_t annotations;
};

struct input {
	char label[64];
	char *data;
	size_t len;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *d = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	d = malloc((size_t)n + 1);
	if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
		free(d);
		d = NULL;
	}
	if (d) {
		d[n] = '\0';
		*len = (size_t)n;
	}
out:
	fclose(f);
	return d;
}

#if defined(WITH_CJSON)
#define LIBRARY "cJSON"
#define VERSION cJSON_Version()
static int walk(const char *js, size_t len, struct walk *w)
{
	cJSON *root = cJSON_ParseWithLength(js, len), *pod, *nodes, *names, *it;

	if (!root)
		return -1;
	pod = cJSON_GetObjectItemCaseSensitive(root, "Pod");
	it = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
					      "annotations");
	w->annotations += (size_t)cJSON_GetArraySize(it);
	nodes = cJSON_GetObjectItemCaseSensitive(root, "Nodes");
	names = cJSON_GetObjectItemCaseSensitive(root, "NodeNames");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(nodes, "items")) {
		cJSON *n = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name");

		if (cJSON_IsString(n)) {
			w->nodes++;
			w->name_bytes += strlen(n->valuestring);
		}
	}
	cJSON_ArrayForEach(it, names) {
		if (cJSON_IsString(it)) {
			w->nodes++;
			w->name_bytes += strlen(it->valuestring);
		}
	}
	cJSON_Delete(root);
	return 0;
}

#elif defined(WITH_JSONC)
#define LIBRARY "json-c"
#define VERSION json_c_version()
static struct json_object *jc_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

static int walk(const char *js, size_t len, struct walk *w)
{
	/* The default depth (32) is too shallow for managedFields. */
	struct json_tokener *tok = json_tokener_new_ex(1000);
	struct json_object *root, *ann, *items, *names;

	if (!tok)
		return -1;
	root = json_tokener_parse_ex(tok, js, (int)len);
	json_tokener_free(tok);
	if (!root)
		return -1;
	ann = jc_get(jc_get(jc_get(root, "Pod"), "metadata"), "annotations");
	if (ann)
		w->annotations += (size_t)json_object_object_length(ann);
	items = jc_get(jc_get(root, "Nodes"), "items");
	if (items && json_object_is_type(items, json_type_array)) {
		size_t n = json_object_array_length(items);

		for (size_t i = 0; i < n; i++) {
			struct json_object *nm =
				jc_get(jc_get(json_object_array_get_idx(items, i), "metadata"), "name");

			if (nm && json_object_is_type(nm, json_type_string)) {
				w->nodes++;
				w->name_bytes += (size_t)json_object_get_string_len(nm);
			}
		}
	}
	names = jc_get(root, "NodeNames");
	if (names && json_object_is_type(names, json_type_array)) {
		size_t n = json_object_array_length(names);

		for (size_t i = 0; i < n; i++) {
			struct json_object *nm = json_object_array_get_idx(names, i);

			if (json_object_is_type(nm, json_type_string)) {
				w->nodes++;
				w->name_bytes += (size_t)json_object_get_string_len(nm);
			}
		}
	}
	json_object_put(root);
	return 0;
}

#elif defined(WITH_JANSSON)
#define LIBRARY "jansson"
#define VERSION JANSSON_VERSION
static int walk(const char *js, size_t len, struct walk *w)
{
	json_error_t err;
	json_t *root = json_loadb(js, len, 0, &err), *ann, *items, *names, *v;
	size_t i;

	if (!root)
		return -1;
	ann = json_object_get(json_object_get(json_object_get(root, "Pod"), "metadata"),
			      "annotations");
	w->annotations += json_object_size(ann);
	items = json_object_get(json_object_get(root, "Nodes"), "items");
	json_array_foreach(items, i, v) {
		json_t *nm = json_object_get(json_object_get(v, "metadata"), "name");

		if (json_is_string(nm)) {
			w->nodes++;
			w->name_bytes += json_string_length(nm);
		}
	}
	names = json_object_get(root, "NodeNames");
	json_array_foreach(names, i, v) {
		if (json_is_string(v)) {
			w->nodes++;
			w->name_bytes += json_string_length(v);
		}
	}
	json_decref(root);
	return 0;
}

#endif

/* jsmn is a tokenizer; the walk navigates the flat token array. */

/* Index of the token after t's whole subtree (tokens are in document order). */
static int jsmn_skip(const jsmntok_t *t, int n, int i)
{
	int end = t[i].end, j = i + 1;

	if (t[i].type == JSMN_OBJECT || t[i].type == JSMN_ARRAY)
		while (j < n && t[j].start < end)
			j++;
	return j;
}

/* The value token of key in the object at obj, or -1. */
static int jsmn_get(const char *js, const jsmntok_t *t, int n, int obj, const char *key)
{
	size_t klen = strlen(key);
	int k;

	if (obj < 0 || t[obj].type != JSMN_OBJECT)
		return -1;
	k = obj + 1;
	for (int c = 0; c < t[obj].size && k + 1 < n; c++) {
		if ((size_t)(t[k].end - t[k].start) == klen && !memcmp(js + t[k].start, key, klen))
			return k + 1;
		k = jsmn_skip(t, n, k + 1);
	}
	return -1;
}

#if defined(WITH_JSMN)
#define LIBRARY "jsmn"
#define VERSION "1.1.0 (Debian libjsmn-dev; JSMN_STRICT, JSMN_PARENT_LINKS)"

static int walk(const char *js, size_t len, struct walk *w)
{
	jsmn_parser p;
	jsmntok_t *t;
	int n, pod, items, names, ann;

	/* Two passes: count, then parse into an exactly-sized array. */
	jsmn_init(&p);
	n = jsmn_parse(&p, js, len, NULL, 0);
	if (n <= 0)
		return -1;
	t = malloc((size_t)n * sizeof(*t));
	if (!t)
		return -1;
	jsmn_init(&p);
	n = jsmn_parse(&p, js, len, t, (unsigned)n);
	if (n <= 0) {
		free(t);
		return -1;
	}
	pod = jsmn_get(js, t, n, 0, "Pod");
	ann = jsmn_get(js, t, n, jsmn_get(js, t, n, pod, "metadata"), "annotations");
	if (ann >= 0)
		w->annotations += (size_t)t[ann].size;
	items = jsmn_get(js, t, n, jsmn_get(js, t, n, 0, "Nodes"), "items");
	if (items >= 0 && t[items].type == JSMN_ARRAY) {
		int k = items + 1;

		for (int c = 0; c < t[items].size; c++) {
			int nm = jsmn_get(js, t, n, jsmn_get(js, t, n, k, "metadata"), "name");

			if (nm >= 0 && t[nm].type == JSMN_STRING) {
				w->nodes++;
				w->name_bytes += (size_t)(t[nm].end - t[nm].start);
			}
			k = jsmn_skip(t, n, k);
		}
	}
	names = jsmn_get(js, t, n, 0, "NodeNames");
	if (names >= 0 && t[names].type == JSMN_ARRAY) {
		for (int c = 0, k = names + 1; c < t[names].size; c++, k++) {
			if (t[k].type == JSMN_STRING) {
				w->nodes++;
				w->name_bytes += (size_t)(t[k].end - t[k].start);
			}
		}
	}
	free(t);
	return 0;
}

#endif

/* ---- inputs ---- */

/* A request body with BIG_NODES copies of the first node object of the
 * realistic full-mode request, each renamed, or with BIG_NODES names. */
static int make_big(const char *synthetic_full, struct input *full, struct input *names)
{
	const char *needle = "gpu-node-1";
	size_t nlen = strlen(needle), len, pod_len, item_len, cap;
	char *src = read_file(synthetic_full, &len), *pod, *item, *end, *out;
	jsmn_parser p;
	jsmntok_t t[4096];
	int n, podv, items;

	if (!src)
		return -errno;
	jsmn_init(&p);
	n = jsmn_parse(&p, src, len, t, 4096);
	podv = n > 0 ? jsmn_get(src, t, n, 0, "Pod") : -1;
	items = n > 0 ? jsmn_get(src, t, n, jsmn_get(src, t, n, 0, "Nodes"), "items") : -1;
	if (podv < 0 || items < 0 || t[items].size < 1) {
		free(src);
		return -EINVAL;
	}
	pod = src + t[podv].start;
	pod_len = (size_t)(t[podv].end - t[podv].start);
	item = src + t[items + 1].start;
	item_len = (size_t)(t[items + 1].end - t[items + 1].start);

	cap = pod_len + (size_t)BIG_NODES * (item_len + 1) + 256;
	out = full->data = malloc(cap);
	names->data = malloc(pod_len + (size_t)BIG_NODES * 16 + 256);
	if (!out || !names->data) {
		free(src);
		return -ENOMEM;
	}
	end = out + sprintf(out, "{\"Pod\":%.*s,\"Nodes\":{\"metadata\":{},\"items\":[", (int)pod_len, pod);
	for (int i = 0; i < BIG_NODES; i++) {
		char name[16];

		/* Same length as the needle, so the object keeps its size. */
		snprintf(name, sizeof(name), "node-%05d", i);
		if (i)
			*end++ = ',';
		memcpy(end, item, item_len);
		for (char *s = end; (s = memmem(s, (size_t)(end + item_len - s), needle, nlen)); s += nlen)
			memcpy(s, name, nlen);
		end += item_len;
	}
	end += sprintf(end, "]},\"NodeNames\":null}");
	full->len = (size_t)(end - out);
	snprintf(full->label, sizeof(full->label), "generated: %d full nodes", BIG_NODES);

	end = names->data + sprintf(names->data, "{\"Pod\":%.*s,\"Nodes\":null,\"NodeNames\":[",
				    (int)pod_len, pod);
	for (int i = 0; i < BIG_NODES; i++)
		end += sprintf(end, "%s\"node-%05d\"", i ? "," : "", i);
	end += sprintf(end, "]}");
	names->len = (size_t)(end - names->data);
	snprintf(names->label, sizeof(names->label), "generated: %d NodeNames", BIG_NODES);
	free(src);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median seconds per parse+walk. */
static double measure(const struct input *in, struct walk *w)
{
	static double runs[MAX_RUNS];
	double start = now_s();
	int n = 0;

	while (n < MAX_RUNS && (n < 5 || now_s() - start < MIN_SECONDS)) {
		double t0 = now_s();

		memset(w, 0, sizeof(*w));
		if (walk(in->data, in->len, w))
			return -1;
		runs[n++] = now_s() - t0;
	}
	qsort(runs, (size_t)n, sizeof(runs[0]), cmp_double);
	return runs[n / 2];
}

static void print_machine(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], model[256] = "unknown";

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':');

			if (v)
				snprintf(model, sizeof(model), "%s", v + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	printf("machine: %ld CPUs (nproc), %s; library: %s %s\n", sysconf(_SC_NPROCESSORS_ONLN),
	       model, LIBRARY, VERSION);
}

static int add_dir(const char *root, const char *sub, struct input *in, size_t *n, size_t cap)
{
	char dir[512], path[1024];
	struct dirent **ents;
	int k = 0, m;

	snprintf(dir, sizeof(dir), "%s/%s", root, sub);
	m = scandir(dir, &ents, NULL, alphasort);
	if (m < 0)
		return -errno;
	for (k = 0; k < m; k++) {
		const char *name = ents[k]->d_name;
		size_t l = strlen(name);

		if (l > 5 && !strcmp(name + l - 5, ".json") && *n < cap) {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			in[*n].data = read_file(path, &in[*n].len);
			if (in[*n].data) {
				snprintf(in[*n].label, sizeof(in[*n].label), "%.63s", name);
				(*n)++;
			}
		}
		free(ents[k]);
	}
	free(ents);
	return 0;
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures/extender";
	struct input in[32];
	char path[512];
	size_t n = 0;
	int rc = 0;

	if (add_dir(root, "captured-k8s-1.20", in, &n, 30) || add_dir(root, "synthetic", in, &n, 30)) {
		fprintf(stderr, "json_candidates: cannot read fixtures under %s\n", root);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/synthetic/filter_request_nodeCacheCapable_false.json", root);
	if (make_big(path, &in[n], &in[n + 1])) {
		fprintf(stderr, "json_candidates: cannot build the large request from %s\n", path);
		return 1;
	}
	n += 2;

	print_machine();
	printf("%-8s %-44s %9s %10s %12s %6s %6s\n", "library", "input", "bytes", "MB/s",
	       "us/request", "nodes", "annot");
	for (size_t i = 0; i < n; i++) {
		struct walk w;
		double s = measure(&in[i], &w);

		if (s < 0) {
			printf("%-8.8s %-44s %9zu %10s\n", LIBRARY, in[i].label, in[i].len, "PARSE ERROR");
			rc = 1;
		} else {
			printf("%-8.8s %-44s %9zu %10.1f %12.1f %6zu %6zu\n", LIBRARY, in[i].label,
			       in[i].len, (double)in[i].len / s / 1e6, s * 1e6, w.nodes, w.annotations);
		}
		free(in[i].data);
	}
	return rc;
}
