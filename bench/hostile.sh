#!/usr/bin/env bash
# A real scheduler request's latency while hostile clients hold what they
# can (issue: "a real scheduler request still completes within 10 ms").
# The real scorer, its table filled with 5,000 nodes by bench/feed; the
# scheduler is bench/extender_latency on ONE keep-alive connection from
# 127.0.0.1, posting the captured kube-scheduler 1.20 prioritize request
# (tests/fixtures/extender/captured-k8s-1.20) with 1,000 of the table's
# names, 100 requests a second. The worst mix, from other loopback
# addresses, all at once and all the time:
#   - slow headers: 8 addresses x 32 connections (the per-address cap),
#     a header line every 2 s, reconnecting when closed;
#   - slow bodies: 16 connections announcing 32 MiB and sending 1 KB a second;
#   - one byte and close: a client connecting, sending a byte and closing in
#     a loop, and another closing without sending;
#   - deep JSON: 2 clients posting 400 KB bodies nested 200,000 deep;
#   - big bodies: 2 clients posting 32 MiB bodies of one-byte tokens
#     ([1,1,...]: 64 MiB of JSON tokens each).
# Prints p50/p99/max over HOSTILE_REQUESTS (400) requests with the mix and,
# for reference, without it, plus what the mix did, and the machine.
# Environment: O, BINDIR, FIXTURES, HOSTILE_REQUESTS, HOSTILE_MIX (a comma
# list of slow-headers, slow-bodies, one-byte, deep, big; default all).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
FIX=${FIXTURES:-tests/fixtures/extender}
LAT=$O/rel/bench/extender_latency
FEED=$O/rel/bench/feed
N=${HOSTILE_REQUESTS:-400}
MIX=${HOSTILE_MIX:-slow-headers,slow-bodies,one-byte,deep,big}
TABLE_NODES=5000
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK

for f in "$LAT" "$FEED" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || { echo "missing $f (run: make bench)"; exit 1; }
done
fix=$FIX/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json
[ -f "$fix" ] || { echo "fixture not found: $fix"; exit 1; }
seq 0 999 | shuf | jq -R '"node-" + .' | jq -sc . >"$tmp/order.json"
jq -c --slurpfile names "$tmp/order.json" '.NodeNames = $names[0]' "$fix" >"$tmp/real.json"

echo "== hostile worst mix: a real prioritize (1,000 names) while every kind of bad client holds on"
bench_machine
echo "(the hostile clients share these CPUs too)"

start_scorer --stale-after 1h --log-level warn
scorer_pid=$LAST_PID http_port=$HTTP_PORT
bench_fill_table "$FEED" "$TABLE_NODES" --senders 4 --once

rc=0
real() {
	"$LAT" --http "127.0.0.1:$http_port" --path /prioritize --body "$tmp/real.json" \
		--requests "$N" --warmup 20 --rate 100 --label "$1" --target-us 10000 || rc=1
}
real "quiet (no hostile clients)"

python3 - "$http_port" "$tmp/mix.txt" "$MIX" <<'PY' &
import os, signal, socket, sys, threading, time
port, out, kinds = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
stop = threading.Event()
stats = {k: 0 for k in ("slow-header conns", "slow-body conns", "one-byte closes",
                        "deep bodies", "big bodies", "refused connects")}
lock = threading.Lock()
def count(k, n=1):
    with lock:
        stats[k] += n
def conn(src, timeout=5):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(src, 0))

def trickle(src, limit, opening, every, more, what):
    """Holds `limit` connections from src, each sending `opening` once and
    then `more` every `every` seconds; reconnects those the scorer closes."""
    socks = []
    while not stop.is_set():
        while len(socks) < limit and not stop.is_set():
            try:
                s = conn(src)
                s.sendall(opening)
                socks.append(s)
                count(what)
            except OSError:
                count("refused connects")
                break
        time.sleep(every)
        alive = []
        for s in socks:
            try:
                s.sendall(more)
                alive.append(s)
            except OSError:
                s.close()
        socks = alive

def slow_headers(src):
    trickle(src, 32, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", 2, b"X-Slow: 1\r\n",
            "slow-header conns")

def slow_body(src):
    trickle(src, 16, b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 33554432\r\n\r\n[", 1, b"1," * 512, "slow-body conns")

def one_byte(src, data):
    while not stop.is_set():
        try:
            s = conn(src, 1)
            if data:
                s.send(data)
            s.close()
            count("one-byte closes")
        except OSError:
            count("refused connects")
            time.sleep(0.01)

def post(src, body, what):
    head = (b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))
    while not stop.is_set():
        try:
            s = conn(src, 30)
            s.sendall(head)
            s.sendall(body)
            s.recv(4096)
            s.close()
            count(what)
        except OSError:
            count("refused connects")
            time.sleep(0.01)

d = 200000
deep = b'{"NodeNames":' + b"[" * d + b"]" * d + b"}"
big = (b'{"NodeNames":[' + b"1," * (16 * 1024 * 1024 - 8))[:32 * 1024 * 1024 - 2] + b"]}"
ts = []
if "slow-headers" in kinds:
    ts += [threading.Thread(target=slow_headers, args=("127.0.0.%d" % (10 + i),)) for i in range(8)]
if "slow-bodies" in kinds:
    ts.append(threading.Thread(target=slow_body, args=("127.0.0.20",)))
if "one-byte" in kinds:
    ts.append(threading.Thread(target=one_byte, args=("127.0.0.21", b"P")))
    ts.append(threading.Thread(target=one_byte, args=("127.0.0.22", b"")))
if "deep" in kinds:
    ts += [threading.Thread(target=post, args=("127.0.0.23", deep, "deep bodies")) for _ in range(2)]
if "big" in kinds:
    ts += [threading.Thread(target=post, args=("127.0.0.24", big, "big bodies")) for _ in range(2)]
for t in ts:
    t.daemon = True
    t.start()
def finish(*_):
    stop.set()
    with lock:
        open(out, "w").write(", ".join("%s %d" % kv for kv in stats.items()) + "\n")
    os._exit(0)
signal.signal(signal.SIGTERM, finish)
while True:
    time.sleep(1)
PY
mix_pid=$!
PIDS+=("$mix_pid")
sleep 3	# every kind of client is at it
real "worst mix"
kill "$mix_pid" && wait "$mix_pid" 2>/dev/null
echo "the mix, during the run: $(cat "$tmp/mix.txt" 2>/dev/null)"
curl -s "http://127.0.0.1:$http_port/metrics" |
	awk '$1 ~ /^netsched_scorer_(bad_requests_total|http_busy_total|http_deadline_closes_total|log_lines_dropped_total)$/ { printf "%s %s  ", $1, $2 } END { print "" }'
if ! kill -0 "$scorer_pid" 2>/dev/null; then
	echo "scorer died:"; tail -n 20 "$tmp/scorer.log"; rc=1
fi
exit "$rc"
