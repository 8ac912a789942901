/* netsched-forge: sends one report as an attacker (or a test) would: any
 * node name, instance id, sequence number and window time, signed or not;
 * or bytes saved earlier, sent again as they are (a captured report); or a
 * message of any size. Used by the replay and oversize integration tests.
 *
 *   netsched-forge --scorer tcp://127.0.0.1:7470 --node n1 --instance 7 --seq 18446744073709551615
 *   netsched-forge --scorer URL --node n1 --key-file k --save captured.bin
 *   netsched-forge --scorer URL --replay captured.bin
 *   netsched-forge --scorer URL --size 20000
 *
 * Exit status 0 when the message was handed to NNG; delivery is not
 * confirmed (push has no replies): tests look at the scorer's counters. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>
#include <nng/supplemental/util/platform.h>

#include "common/clock.h"
#include "common/keyfile.h"
#include "proto/report.h"

/* A message larger than this is not a test but a mistake. */
#define FORGE_MAX_SIZE (16u << 20)

struct forge {
	const char *url, *node, *key_file, *save, *replay;
	uint64_t instance, seq, rx, size;
	uint64_t link;		/* bytes per second; 0: unknown (none sent) */
	int64_t end_offset_ms;
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || s[0] == '-' ? -EINVAL : 0;
}

static int parse(int argc, char **argv, struct forge *f)
{
	static const struct option lo[] = {
		{ "scorer", required_argument, NULL, 's' },  { "node", required_argument, NULL, 'n' },
		{ "instance", required_argument, NULL, 'i' }, { "seq", required_argument, NULL, 'q' },
		{ "rx", required_argument, NULL, 'r' },	      { "end-offset-ms", required_argument, NULL, 'e' },
		{ "key-file", required_argument, NULL, 'k' }, { "save", required_argument, NULL, 'w' },
		{ "replay", required_argument, NULL, 'p' },   { "size", required_argument, NULL, 'z' },
		{ "link", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int rc = 0;
		char *end;

		switch (c) {
		case 's': f->url = optarg; break;
		case 'n': f->node = optarg; break;
		case 'i': rc = parse_u64(optarg, &f->instance); break;
		case 'q': rc = parse_u64(optarg, &f->seq); break;
		case 'r': rc = parse_u64(optarg, &f->rx); break;
		case 'z': rc = parse_u64(optarg, &f->size); break;
		case 'l': rc = parse_u64(optarg, &f->link); break;
		case 'e':
			errno = 0;
			f->end_offset_ms = strtoll(optarg, &end, 10);
			rc = errno || end == optarg || *end ? -EINVAL : 0;
			break;
		case 'k': f->key_file = optarg; break;
		case 'w': f->save = optarg; break;
		case 'p': f->replay = optarg; break;
		default: return -EINVAL;
		}
		if (rc) {
			fprintf(stderr, "netsched-forge: bad value %s\n", optarg);
			return -EINVAL;
		}
	}
	if (!f->url || strlen(f->node) > NODENAME_MAX_LEN || f->size > FORGE_MAX_SIZE) {
		fprintf(stderr, "usage: netsched-forge --scorer URL [--node NAME] [--instance ID] "
				"[--seq N] [--rx B/s] [--link B/s] [--end-offset-ms +-MS] [--key-file F] "
				"[--save F] | --replay F | --size N (at most %u)\n", FORGE_MAX_SIZE);
		return -EINVAL;
	}
	return 0;
}

/* The report f describes, encoded (signed with --key-file's first key). */
static int build(const struct forge *f, uint8_t *buf, size_t cap, size_t *len)
{
	static struct keyfile keys;
	struct report r;
	char err[256];
	int rc;

	memset(&r, 0, sizeof(r));
	snprintf(r.node, sizeof(r.node), "%s", f->node);
	r.instance_id = f->instance;
	r.seq = f->seq;
	r.window_end_unix_ms = (uint64_t)((int64_t)clock_unix_ms() + f->end_offset_ms);
	r.window_start_unix_ms = r.window_end_unix_ms - 1000;
	r.sample_interval_ms = 100;
	r.n_ifaces = 1;
	snprintf(r.ifaces[0].name, sizeof(r.ifaces[0].name), "eth0");
	report_iface_count(&r.ifaces[0], f->rx, 0, 1000);
	r.ifaces[0].samples = r.ifaces[0].samples_expected = 10;
	r.ifaces[0].traffic.link_bytes_per_second = f->link;
	if (f->key_file) {
		rc = keyfile_load(f->key_file, &keys, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "netsched-forge: %s\n", err);
			return rc;
		}
	}
	rc = report_encode_signed(&r, f->key_file ? &keys.keys[0] : NULL, buf, cap, len);
	if (rc)
		fprintf(stderr, "netsched-forge: report not encoded: %s\n", strerror(-rc));
	return rc;
}

static int read_file(const char *path, uint8_t *buf, size_t cap, size_t *len)
{
	FILE *fp = fopen(path, "rb");

	if (!fp) {
		fprintf(stderr, "netsched-forge: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	*len = fread(buf, 1, cap, fp);
	fclose(fp);
	return 0;
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	int rc = 0;

	if (!fp || fwrite(buf, 1, len, fp) != len)
		rc = -EIO;
	if (fp && fclose(fp))
		rc = -EIO;
	if (rc)
		fprintf(stderr, "netsched-forge: cannot write %s\n", path);
	return rc;
}

int main(int argc, char **argv)
{
	struct forge f = { .node = "node-1", .instance = 1, .seq = 1, .rx = 1000 };
	uint8_t *buf = NULL;
	size_t len = 0, cap;
	nng_socket sock;
	int rv, status = 1;

	if (parse(argc, argv, &f))
		return 2;
	cap = f.size > REPORT_MAX_BYTES ? f.size : REPORT_MAX_BYTES;
	buf = calloc(1, cap);
	if (!buf)
		return 1;
	if (f.size) {
		/* Not a report at all: only its size matters. */
		memset(buf, 0x5a, f.size);
		len = f.size;
	} else if (f.replay ? read_file(f.replay, buf, cap, &len) : build(&f, buf, cap, &len)) {
		goto out_free;
	}
	if (f.save && write_file(f.save, buf, len))
		goto out_free;
	if ((rv = nng_push0_open(&sock))) {
		fprintf(stderr, "netsched-forge: open push socket: %s\n", nng_strerror(rv));
		goto out_free;
	}
	if ((rv = nng_dial(sock, f.url, NULL, 0)) || (rv = nng_send(sock, buf, len, 0))) {
		fprintf(stderr, "netsched-forge: %s: %s\n", f.url, nng_strerror(rv));
		goto out_close;
	}
	/* Let the message leave before the socket goes. */
	nng_msleep(200);
	printf("sent %zu bytes to %s\n", len, f.url);
	status = 0;
out_close:
	nng_close(sock);
out_free:
	free(buf);
	return status;
}
