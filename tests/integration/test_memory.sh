#!/usr/bin/env bash
# Peak memory with every limit the shipped deploy/ sets full at once must stay
# under the container's memory limit (deploy/scorer.yaml, 256Mi), or the
# kubelet kills the scorer: the table holds --max-nodes (10,000) nodes, the
# in-flight table --inflight-max-pods (10,000) pods, clients send bodies of
# --max-body (32 MiB) made of the tiniest JSON tokens on every connection the
# body budget admits and more, and connections from many addresses fill their
# header buffers. Peak RSS is the kernel's VmHWM for the process.
set -u
. "$(dirname "$0")/lib.sh"

FEED=${FEED:-${O:-build}/rel/bench/feed}
[ -x "$FEED" ] || fail "feed tool not found at $FEED (make unit builds it)"
limit=$(python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open("deploy/scorer.yaml")):
    if d and d.get("kind") == "Deployment":
        q = d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
        assert q.endswith("Mi"), q
        print(int(q[:-2]) * 1024 * 1024)')
[ -n "$limit" ] || fail "no memory limit in deploy/scorer.yaml"

start_scorer --stale-after 1h
SCORER=$LAST_PID
"$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes 10000 --senders 4 --once \
	>"$WORK/feed.log" 2>&1 || fail "feed: $(cat "$WORK/feed.log")"
metric() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
wait_for 20 "10,000 nodes in the table" bash -c \
	"[ \"\$(curl -s http://127.0.0.1:$HTTP_PORT/v1/nodes | jq '.nodes | length')\" = 10000 ]"
echo "ok: 10,000 nodes in the table"

# 10,000 pods placed: each prioritize assumes its pod in flight.
python3 - "$HTTP_PORT" <<'PY' || fail "prioritize for 10,000 pods failed"
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
for i in range(10000):
    body = json.dumps({"Pod": {"metadata": {"name": "p%d" % i, "namespace": "d", "uid": "uid-%d" % i}},
                       "NodeNames": ["node-%d" % (i % 10000), "node-%d" % ((i + 1) % 10000)]})
    c.request("POST", "/prioritize", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
PY
expect "pods in flight" "$(metric netsched_scorer_inflight_pods)" 10000

echo "RSS before the mix: $(awk "/^VmRSS:/ { print int(\$2 / 1024) }" /proc/$SCORER/status) MiB"
# The worst mix, twice over: 8 addresses x 32 connections each sending 120 KB
# of headers (every connection's buffer full), and 12 clients each posting
# 32 MiB bodies of tiny tokens, all at once.
python3 - "$HTTP_PORT" <<'PY'
import socket, sys, threading, time
port = int(sys.argv[1])
held = []
def headers(src):
    for _ in range(32):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 120000 + b"\r\n")
            held.append(s)
        except OSError:
            pass
# Two shapes of 32 MiB: one-byte tokens (16 Mi, over the 4 Mi token limit),
# and 9-byte ones (3.7 Mi tokens: all tokenized, 75 MiB of them, before the
# node count refuses it).
M = 32 * 1024 * 1024
dense = b'{"NodeNames":[' + b",".join([b"1"] * ((M - 16) // 2)) + b"]}"
names = b'{"NodeNames":[' + b",".join([b'"abcdef"'] * ((M - 16) // 9)) + b"]}"
def big(body):
    for _ in range(2):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body))
            s.sendall(body)
            s.recv(4096)
            s.close()
        except OSError:
            pass
ts = [threading.Thread(target=headers, args=("127.0.0.%d" % (2 + i),)) for i in range(8)]
ts += [threading.Thread(target=big, args=(dense,)) for _ in range(6)]
ts += [threading.Thread(target=big, args=(names,)) for _ in range(6)]
for t in ts: t.start()
for t in ts: t.join()
PY
kill -0 "$SCORER" || fail "the scorer died under the mix"
hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$SCORER/status")
echo "peak RSS (VmHWM) $((hwm / 1048576)) MiB, limit $((limit / 1048576)) MiB"
[ "$hwm" -lt "$limit" ] || fail "peak RSS $((hwm / 1048576)) MiB is over the deploy limit $((limit / 1048576)) MiB"
code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")
expect "/healthz after the mix" "$code" 200
