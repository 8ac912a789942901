/* netsched-config-cost: what loading a hostile config file costs. A
 * kubeconfig (--kubeconfig, up to 1 MiB) and a YAML config (--config, up to
 * 64 KiB) are read once at start-up and by --check-config; libyaml's loader
 * grows quadratically with flow nesting (every token looks at every open
 * level) and with anchors (every alias searches them all): a 1 MiB nested
 * kubeconfig did not finish in 20 s, 0.9 MB of aliases took 15 s. Each is
 * now refused at the first level or anchor past its bound. Measured, one
 * thread, CPU time, the largest file of each shape beside a large file
 * that loads; prints ms per load with the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/machine.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/kubeaccess.h"

/* A file of at most max bytes: head, then unit repeated, then tail once
 * per repetition if close is set (nesting). */
static size_t make(char *out, size_t max, const char *head, const char *open, const char *close)
{
	size_t n = strlen(head), per = strlen(open) + (close ? strlen(close) : 0), reps;

	memcpy(out, head, n);
	reps = (max - n - 1) / per;
	for (size_t i = 0; i < reps; i++, n += strlen(open))
		memcpy(out + n, open, strlen(open));
	for (size_t i = 0; close && i < reps; i++, n += strlen(close))
		memcpy(out + n, close, strlen(close));
	out[n++] = '\n';
	return n;
}

/* "- &aN x" anchors, then aliases to the last one, up to max bytes. */
static size_t make_aliases(char *out, size_t max)
{
	size_t n = (size_t)sprintf(out, "current-context: x\nl:\n");
	unsigned k = 0;

	while (n + 40 < max / 2)
		n += (size_t)sprintf(out + n, "- &a%u x\n", k++);
	while (n + 40 < max)
		n += (size_t)sprintf(out + n, "- *a%u\n", k - 1);
	return n;
}

static int ignore(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	(void)ctx, (void)key, (void)value, (void)err, (void)errlen;
	return 0;
}

static void run(const char *what, const char *text, size_t len, bool kubeconfig)
{
	char err[512] = "";
	unsigned rounds = 0;
	uint64_t t0 = machine_cpu_ns(), spent;
	int rc;

	do {
		struct kubeaccess a;

		rc = kubeconfig ? kubeaccess_kubeconfig_buffer(&a, "kubeconfig", "", text, len, err,
							      sizeof(err))
				: config_load_buffer("config", text, len, ignore, NULL, err,
						     sizeof(err));
		if (kubeconfig && rc == 0)
			kubeaccess_free(&a);
		rounds++;
		spent = machine_cpu_ns() - t0;
	} while (spent < NS_PER_SEC / 2 && rounds < 1000);
	printf("  %-44s %8zu bytes: %9.3f ms per load (%s)\n", what, len,
	       (double)spent / rounds / 1e6, rc ? err : "loaded");
}

int main(void)
{
	size_t kmax = KUBEACCESS_FILE_MAX, cmax = CONFIG_MAX_FILE_BYTES, n;
	char *buf = malloc(kmax + 1), model[128];

	if (!buf)
		return 1;
	machine_cpu_model(model, sizeof(model));
	printf("config loading, machine: %ld cpus, %s\n", sysconf(_SC_NPROCESSORS_ONLN), model);
	n = make(buf, kmax, "current-context: x\nclusters: ", "[", "]");
	run("kubeconfig, flow sequences nested", buf, n, true);
	n = make(buf, kmax, "current-context: x\nclusters: ", "{a: ", "}");
	run("kubeconfig, flow mappings nested", buf, n, true);
	n = make(buf, kmax - 4, "", "[", "]");
	n--;
	memcpy(buf + n, ": x\n", 5);
	run("kubeconfig, a nested flow key", buf, n + 4, true);
	n = make_aliases(buf, kmax);
	run("kubeconfig, anchors then aliases", buf, n, true);
	n = make(buf, kmax, "current-context: x\nl:\n", "- {a: [b, c, {d: e}]}\n", NULL);
	run("kubeconfig, a long list (loads)", buf, n, true);
	n = make(buf, cmax, "scorer: ", "[", "]");
	run("config, flow sequences nested", buf, n, false);
	n = make(buf, cmax - 4, "", "[", "]");
	n--;
	memcpy(buf + n, ": x\n", 5);
	run("config, a nested flow key", buf, n + 4, false);
	free(buf);
	return 0;
}
