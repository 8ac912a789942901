/* netsched-sink: takes reports where a scorer would and prints each one it
 * decodes as a JSON line (the agent's --once form), so a test can watch
 * what a running agent sends, pods included, through the real wire:
 *
 *   netsched-sink tcp://127.0.0.1:7470 [SECONDS]
 *
 * A report that does not decode is printed as {"rejected": "reason"}. Runs
 * SECONDS (default 600, at most a day), or until SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>

#include "agent/reportjson.h"
#include "common/buf.h"
#include "common/clock.h"
#include "proto/report.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static struct report r;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long secs = argc > 2 ? strtoul(argv[2], NULL, 10) : 600;
	uint64_t deadline;
	nng_socket sock;
	int rv;

	if (argc < 2 || argc > 3 || secs == 0 || secs > 86400) {
		fprintf(stderr, "usage: %s URL [SECONDS]\n", argv[0]);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((rv = nng_pull0_open(&sock)) ||
	    (rv = nng_setopt_size(sock, NNG_OPT_RECVMAXSZ, 2 * REPORT_MAX_BYTES)) ||
	    (rv = nng_setopt_ms(sock, NNG_OPT_RECVTIMEO, 100)) ||
	    (rv = nng_listen(sock, argv[1], NULL, 0))) {
		fprintf(stderr, "netsched-sink: %s: %s\n", argv[1], nng_strerror(rv));
		return 1;
	}
	deadline = clock_mono_ns() + secs * NS_PER_SEC;
	while (!stop && clock_mono_ns() < deadline) {
		char err[512];
		nng_msg *msg;
		struct buf b;

		if (nng_recvmsg(sock, &msg, 0))
			continue;
		buf_init(&b, 256 * 1024);
		if (report_decode(nng_msg_body(msg), nng_msg_len(msg), &r, err, sizeof(err))) {
			buf_puts(&b, "{\"rejected\":");
			buf_json_cstr(&b, err);
			buf_puts(&b, "}");
		} else {
			reportjson_write(&b, &r);
		}
		buf_puts(&b, "\n");
		nng_msg_free(msg);
		if (!buf_failed(&b))
			fwrite(b.data, 1, b.len, stdout);
		fflush(stdout);
		buf_free(&b);
	}
	nng_close(sock);
	return 0;
}
