/* Time per scheduling decision: the Go NetworkTraffic plugin's method (one
 * Prometheus query per node per pod, sum_over_time over 5 m) against
 * netsched's (one prioritize request answered from memory), same nodes,
 * same real Prometheus, one run. Both over reused keep-alive connections
 * (libcurl), so neither pays for connection set-up.
 *
 * usage: prom_vs_plugin PROMETHEUS_URL SCORER_URL NODES DECISIONS
 * Node names are node-0 .. node-(NODES-1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/clock.h"

static size_t sink(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ms(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return (double)v[n / 2] / 1e6;
}

static int get(CURL *c, const char *url)
{
	long status = 0;

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	if (curl_easy_perform(c) != CURLE_OK)
		return -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	return status == 200 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *prom, *scorer;
	size_t nodes, decisions;
	uint64_t *plugin, *ours;
	struct curl_slist *hdr = NULL;
	char url[1024], q[512], endpoint[512];
	struct buf body;
	CURL *pc, *sc;
	double p, o;

	if (argc != 5) {
		fprintf(stderr, "usage: %s PROMETHEUS_URL SCORER_URL NODES DECISIONS\n", argv[0]);
		return 2;
	}
	prom = argv[1];
	scorer = argv[2];
	nodes = strtoul(argv[3], NULL, 10);
	decisions = strtoul(argv[4], NULL, 10);
	if (!nodes || !decisions)
		return 2;
	plugin = calloc(decisions, sizeof(*plugin));
	ours = calloc(decisions, sizeof(*ours));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pc = curl_easy_init();
	sc = curl_easy_init();
	if (!plugin || !ours || !pc || !sc)
		return 1;
	curl_easy_setopt(pc, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(sc, CURLOPT_WRITEFUNCTION, sink);

	/* The plugin's query, as it sends it for every node of every pod. */
	for (size_t d = 0; d < decisions; d++) {
		uint64_t t0 = clock_mono_ns();

		for (size_t n = 0; n < nodes; n++) {
			char *e;

			snprintf(q, sizeof(q), "sum_over_time(node_network_receive_bytes_total"
				 "{kubernetes_node=\"node-%zu\",device=\"eth0\"}[5m])", n);
			e = curl_easy_escape(pc, q, 0);
			snprintf(url, sizeof(url), "%s/api/v1/query?query=%s", prom, e);
			curl_free(e);
			if (get(pc, url)) {
				fprintf(stderr, "plugin method: query for node-%zu failed\n", n);
				return 1;
			}
		}
		plugin[d] = clock_mono_ns() - t0;
	}

	/* netsched: one prioritize with every name, as kube-scheduler sends it. */
	buf_init(&body, 1 << 20);
	buf_puts(&body, "{\"Pod\":{\"metadata\":{\"name\":\"bench\"}},\"Nodes\":null,\"NodeNames\":[");
	for (size_t n = 0; n < nodes; n++)
		buf_printf(&body, "%s\"node-%zu\"", n ? "," : "", n);
	buf_puts(&body, "]}");
	snprintf(endpoint, sizeof(endpoint), "%s/prioritize", scorer);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	curl_easy_setopt(sc, CURLOPT_URL, endpoint);
	curl_easy_setopt(sc, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(sc, CURLOPT_POSTFIELDS, body.data);
	curl_easy_setopt(sc, CURLOPT_POSTFIELDSIZE, (long)body.len);
	for (size_t d = 0; d < decisions; d++) {
		uint64_t t0 = clock_mono_ns();
		long status = 0;

		if (curl_easy_perform(sc) != CURLE_OK ||
		    curl_easy_getinfo(sc, CURLINFO_RESPONSE_CODE, &status) || status != 200) {
			fprintf(stderr, "netsched: prioritize failed (HTTP %ld)\n", status);
			return 1;
		}
		ours[d] = clock_mono_ns() - t0;
	}
	p = median_ms(plugin, decisions);
	o = median_ms(ours, decisions);
	printf("per scheduling decision at %zu nodes (median of %zu):\n", nodes, decisions);
	printf("  Go plugin's method (%zu Prometheus queries): %9.3f ms\n", nodes, p);
	printf("  netsched (one prioritize from memory):     %9.3f ms\n", o);
	printf("  ratio: netsched is %.0fx faster (target: at least 1000x)\n", p / o);
	buf_free(&body);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(pc);
	curl_easy_cleanup(sc);
	free(plugin);
	free(ours);
	return 0;
}
