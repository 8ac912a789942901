/* The Prometheus fallback's client (scorer/prom/prom.c) against a real HTTP
 * server (fake_prometheus.h): the first refresh runs at once and sends the
 * bearer token; a failed refresh is counted and keeps the last good
 * snapshot; dropped values are counted; a snapshot older than max_age is
 * not served; a non-200 status is never data; a token file that cannot go
 * in a header sends nothing; a bad URL or query is refused at start. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "scorer/counters/registry.h"
#include "scorer/prom/prom.h"
#include "tests/unit/fake_prometheus.h"

#define START_NS (1000ULL * NS_PER_SEC)
#define MAX_AGE_MS 20000u

static uint64_t now_ns = START_NS;

static uint64_t fake_clock(void)
{
	return __atomic_load_n(&now_ns, __ATOMIC_RELAXED);
}

static struct prom_config config(const char *url)
{
	struct prom_config c = { .refresh_ms = 100, .timeout_ms = 5000, .connect_timeout_ms = 5000,
				 .max_age_ms = MAX_AGE_MS, .max_nodes = 16 };

	snprintf(c.url, sizeof(c.url), "%s", url);
	snprintf(c.query.device, sizeof(c.query.device), "eth0");
	snprintf(c.query.range, sizeof(c.query.range), "1m");
	return c;
}

static void test_prom_refresh(void **state)
{
	static const char *const nodes[] = { "node-b", "node-a" };
	static const double rx[] = { 2000, 1000 }, tx[] = { 20, 10 };
	char token[] = "/tmp/netsched-test-prom-XXXXXX", err[256];
	char names[4][NODENAME_MAX_LEN + 1], longname[NODENAME_MAX_LEN + 2];
	struct fake_prometheus *fp = fake_prometheus_start();
	struct registry c = { 0 };
	struct prom_config cfg;
	uint64_t rxv = 0, txv = 0, age = 1;
	unsigned long fails;
	unsigned queries;
	struct prom *p;
	int fd;

	(void)state;
	assert_non_null(fp);
	fd = mkstemp(token);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "s3cret\n", 7), 7);
	close(fd);
	fake_prometheus_vector(fp, nodes, rx, tx, 2);
	cfg = config(fp->url);
	snprintf(cfg.token_file, sizeof(cfg.token_file), "%s", token);
	p = prom_start(&cfg, &c, fake_clock, err, sizeof(err));
	assert_non_null(p);

	/* The first refresh, at once. */
	assert_true(fake_prometheus_wait(&c.prom_refreshes, 1));
	assert_true(prom_get(p, "node-a", 6, START_NS, &rxv, &txv, &age));
	assert_int_equal(rxv, 1000);
	assert_int_equal(txv, 10);
	assert_int_equal(age, 0);
	assert_false(prom_get(p, "node-c", 6, START_NS, &rxv, &txv, &age));
	assert_false(prom_get(p, "node", 4, START_NS, &rxv, &txv, &age)); /* a prefix is not a name */
	memset(longname, 'a', sizeof(longname));
	assert_false(prom_get(p, longname, sizeof(longname), START_NS, &rxv, &txv, &age));
	assert_int_equal(prom_nodes(p, START_NS, names, 4), 2);
	assert_string_equal(names[0], "node-a");
	assert_string_equal(names[1], "node-b");
	pthread_mutex_lock(&fp->lock);
	assert_string_equal(fp->authorization, "Bearer s3cret");
	pthread_mutex_unlock(&fp->lock);
	assert_true(atomic_load(&c.latency_prometheus.count) >= 1);

	/* A failure is counted and keeps the last good data. */
	fake_prometheus_set(fp, 500, "{\"status\":\"error\",\"error\":\"boom\"}");
	assert_true(fake_prometheus_wait(&c.prom_failures, 1));
	assert_true(prom_get(p, "node-b", 6, START_NS, &rxv, &txv, &age));
	assert_int_equal(rxv, 2000);

	/* Values no NIC can carry are dropped and counted. */
	fake_prometheus_set(fp, 200,
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"instance\":\"node-a\",\"netsched_dir\":\"rx\"},\"value\":[1,\"NaN\"]},"
		"{\"metric\":{\"instance\":\"node-a\",\"netsched_dir\":\"tx\"},\"value\":[1,\"5\"]}]}}");
	assert_true(fake_prometheus_wait(&c.prom_values_dropped, 1));
	assert_true(fake_prometheus_wait(&c.prom_refreshes, 2));
	assert_false(prom_get(p, "node-b", 6, START_NS, &rxv, &txv, &age));
	assert_true(prom_get(p, "node-a", 6, START_NS, &rxv, &txv, &age));
	assert_int_equal(txv, 5);

	/* Too old to serve. */
	assert_true(prom_get(p, "node-a", 6, START_NS + MAX_AGE_MS * NS_PER_MS, &rxv, &txv, &age));
	assert_int_equal(age, MAX_AGE_MS * NS_PER_MS);
	assert_false(prom_get(p, "node-a", 6, START_NS + MAX_AGE_MS * NS_PER_MS + 1, &rxv, &txv,
			      &age));
	assert_int_equal(prom_nodes(p, START_NS + MAX_AGE_MS * NS_PER_MS + 1, names, 4), 0);

	/* Data with a status other than 200 is no data. */
	fake_prometheus_vector(fp, nodes, rx, tx, 2);
	fake_prometheus_set(fp, 503, fp->body);
	fails = atomic_load(&c.prom_failures);
	assert_true(fake_prometheus_wait(&c.prom_failures, fails + 1));

	/* A token file with a second line: no request is sent with it
	 * (common/bearertoken.h), every refresh fails until it is fixed. */
	fd = open(token, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "s3cret\nX-Injected: 1\n", 22), 22);
	close(fd);
	fails = atomic_load(&c.prom_failures);
	assert_true(fake_prometheus_wait(&c.prom_failures, fails + 2));
	queries = atomic_load(&fp->queries);
	assert_true(fake_prometheus_wait(&c.prom_failures, fails + 3));
	assert_int_equal(atomic_load(&fp->queries), queries);

	prom_stop(p);
	fake_prometheus_stop(fp);
	unlink(token);
}

/* A URL given with trailing slashes still asks /api/v1/query (the fake
 * answers 404 anywhere else); a CA file and insecure-skip-verify are taken
 * (plain HTTP here: they only matter to https://). */
static void test_prom_url_slashes(void **state)
{
	struct fake_prometheus *fp = fake_prometheus_start();
	static const char *const nodes[] = { "node-a" };
	static const double rx[] = { 1 }, tx[] = { 2 };
	struct registry c = { 0 };
	struct prom_config cfg;
	char url[80], err[256];
	struct prom *p;

	(void)state;
	assert_non_null(fp);
	fake_prometheus_vector(fp, nodes, rx, tx, 1);
	snprintf(url, sizeof(url), "%s//", fp->url);
	cfg = config(url);
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "/etc/ssl/certs/ca-certificates.crt");
	cfg.insecure = true;
	p = prom_start(&cfg, &c, fake_clock, err, sizeof(err));
	assert_non_null(p);
	assert_true(fake_prometheus_wait(&c.prom_refreshes, 1));
	assert_int_equal(atomic_load(&c.prom_failures), 0);
	prom_stop(p);
	fake_prometheus_stop(fp);
}

struct start_row {
	const char *name;
	const char *url;
	const char *device;
	const char *error;
};

static const struct start_row start_rows[] = {
	{ "not http", "ftp://127.0.0.1:9090", "eth0", "expected an http:// or https:// URL" },
	{ "no scheme", "127.0.0.1:9090", "eth0", "expected an http:// or https:// URL" },
	{ "a quote in the device", "http://127.0.0.1:9090", "eth\"0", "prometheus query" },
};

static void test_prom_start_refused(void **state)
{
	struct registry c = { 0 };

	(void)state;
	for (size_t r = 0; r < sizeof(start_rows) / sizeof(start_rows[0]); r++) {
		const struct start_row *row = &start_rows[r];
		struct prom_config cfg = config(row->url);
		char err[256] = "";
		struct prom *p;

		snprintf(cfg.query.device, sizeof(cfg.query.device), "%s", row->device);
		p = prom_start(&cfg, &c, fake_clock, err, sizeof(err));
		if (p || !strstr(err, row->error))
			fail_msg("%s: %s, \"%s\" does not say \"%s\"", row->name,
				 p ? "started" : "refused", err, row->error);
		prom_stop(p);
	}
	/* Never started, nothing counted; prom_stop() and the lookups take NULL. */
	assert_int_equal(atomic_load(&c.prom_refreshes) + atomic_load(&c.prom_failures), 0);
	assert_false(prom_get(NULL, "a", 1, START_NS, NULL, NULL, NULL));
	assert_int_equal(prom_nodes(NULL, START_NS, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom_refresh),
		cmocka_unit_test(test_prom_url_slashes),
		cmocka_unit_test(test_prom_start_refused),
	};

	log_init("test_prom");
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
