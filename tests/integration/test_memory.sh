#!/usr/bin/env bash
# Peak memory with every limit the shipped deploy/ sets full at once must stay
# under the container's memory limit (deploy/scorer.yaml), or the kubelet
# kills the scorer. The scorer runs with deploy/'s limits (--max-nodes,
# --max-body); its table holds --max-nodes nodes, the in-flight table
# --inflight-max-pods (10,000) pods; then, all at once:
#   - clients send bodies of --max-body made of the tiniest JSON tokens on
#     every connection the body budget admits and more;
#   - connections from many addresses fill their header buffers;
#   - 32 clients ask for /v1/nodes (the table and every pod in flight) and
#     never read it, asking again all the time (it once held 465 MB);
#   - report connections from many addresses, every one the scorer keeps and
#     more, each sending the length of a message at NNG's receive limit
#     (32 KiB, allocated whole at once) and all of it but its last byte;
#   - the Prometheus fallback is asked every 100 ms (--prometheus-refresh's
#     least) and every reply is at the scorer's caps: 32 MiB and 4 Mi JSON
#     tokens (80 MiB of them). A stand-in serves it: a real Prometheus
#     would need about 400,000 series stored to answer that much.
# Peak RSS is the kernel's VmHWM for the process. First, on its own: while
# clients hold the request memory budget with bodies, Prometheus replies at
# the caps must not raise the peak (they once added 112 MiB outside every
# budget); the kernel's peak is reset for it (/proc/PID/clear_refs).
set -u
. "$(dirname "$0")/lib.sh"

FEED=${FEED:-${O:-build}/rel/bench/feed}
[ -x "$FEED" ] || fail "feed tool not found at $FEED (make unit builds it)"
read -r limit deploy_args < <(python3 -c '
import yaml
for d in yaml.safe_load_all(open("deploy/scorer.yaml")):
    if d and d.get("kind") == "Deployment":
        c = d["spec"]["template"]["spec"]["containers"][0]
        q = c["resources"]["limits"]["memory"]
        assert q.endswith("Mi"), q
        args, keep = c["args"], []
        for i, a in enumerate(args):
            if a in ("--max-nodes", "--max-body", "--inflight-max-pods"):
                keep += [a, args[i + 1]]
        print(int(q[:-2]) * 1024 * 1024, " ".join(keep))')
[ -n "$limit" ] || fail "no memory limit in deploy/scorer.yaml"
# shellcheck disable=SC2086
set -- $deploy_args
nodes=10000
while [ $# -gt 1 ]; do
	[ "$1" = --max-nodes ] && nodes=$2
	shift 2
done
echo "deploy/: memory limit $((limit / 1048576)) MiB, ${deploy_args:-no limits set}; filling $nodes nodes"

# The Prometheus stand-in: every query answered with a success of one
# series; while $WORK/prom.big exists, padded to the caps (scorer/prom/prom.h,
# scorer/prom/promquery.c) with one array of 1-byte numbers and one long
# string: the most memory a reply may make the scorer hold. Counts the
# replies at the caps it sent in $WORK/prom.count.
PROM_PORT=$(free_port)
cat >"$WORK/prom_standin.py" <<'PY'
import http.server, os, sys
MAX_BYTES, MAX_TOKENS = 32 << 20, 4 << 20
series = b'{"metric":{"instance":"node-0","netsched_dir":"rx"},"value":[1,"1"]}'
head = b'{"status":"success","data":{"resultType":"vector","result":[' + series + b']}'
small = head + b'}'
n = MAX_TOKENS - 64
big = head + b',"pad":[' + b",".join([b"1"] * n) + b'],"text":"'
big += b"a" * (MAX_BYTES - 16 - len(big)) + b'"}'
assert len(big) <= MAX_BYTES
flag = os.path.join(os.path.dirname(sys.argv[2]), "prom.big")
count = 0
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global count
        body = big if os.path.exists(flag) else small
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            return
        if body is big:
            count += 1
            open(sys.argv[2], "w").write("%d\n" % count)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
start prom-standin python3 "$WORK/prom_standin.py" "$PROM_PORT" "$WORK/prom.count"
wait_for 20 "the Prometheus stand-in" bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROM_PORT"
prom_count() { cat "$WORK/prom.count" 2>/dev/null || echo 0; }

# shellcheck disable=SC2086
start_scorer --stale-after 1h $deploy_args --prometheus "http://127.0.0.1:$PROM_PORT" \
	--prometheus-refresh 100ms --prometheus-timeout 10s
SCORER=$LAST_PID
"$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes "$nodes" --senders 4 --once \
	>"$WORK/feed.log" 2>&1 || fail "feed: $(cat "$WORK/feed.log")"
metric() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
wait_for 20 "$nodes nodes in the table" bash -c \
	"[ \"\$(curl -s http://127.0.0.1:$HTTP_PORT/v1/nodes | jq '.nodes | length')\" = $nodes ]"
echo "ok: $nodes nodes in the table"

# 10,000 pods placed: each prioritize assumes its pod in flight.
python3 - "$HTTP_PORT" "$nodes" <<'PY' || fail "prioritize for 10,000 pods failed"
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
n = int(sys.argv[2])
for i in range(10000):
    body = json.dumps({"Pod": {"metadata": {"name": "p%d" % i, "namespace": "d", "uid": "uid-%d" % i}},
                       "NodeNames": ["node-%d" % (i % n), "node-%d" % ((i + 1) % n)]})
    c.request("POST", "/prioritize", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
PY
expect "pods in flight" "$(metric netsched_scorer_inflight_pods)" 10000
pipes=$(metric netsched_scorer_report_connections_capacity)
[ -n "$pipes" ] || pipes=$((nodes + nodes / 8 + 64))	# a scorer that keeps no count
max_body=$(python3 -c "
import sys
a = '$deploy_args'.split()
v = a[a.index('--max-body') + 1] if '--max-body' in a else '32Mi'
print(int(v[:-2]) << {'Ki': 10, 'Mi': 20}[v[-2:]] if v[-2:] in ('Ki', 'Mi') else int(v))")

# Peak RSS and what the kernel queued for the scorer's connections at the
# end, together under the limit.
hwm_under_limit() {
	local hwm queued
	kill -0 "$SCORER" || fail "the scorer died under $1"
	hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$SCORER/status")
	queued=$(cat "$WORK/queued")
	echo "after $1: peak RSS (VmHWM) $((hwm / 1048576)) MiB + socket queues $((queued / 1048576)) MiB, limit $((limit / 1048576)) MiB"
	[ "$((hwm + queued))" -lt "$limit" ] ||
		fail "after $1, $(((hwm + queued) / 1048576)) MiB is over the deploy limit $((limit / 1048576)) MiB"
}

prom_ok() { [ "$(metric 'netsched_scorer_prometheus_refreshes_total{result="ok"}')" -gt 0 ]; }
wait_for 10 "a Prometheus reply used" prom_ok

# Clients hold the request budget (4 x max-body, of which 7/8 for holders of
# more than 1 MiB) with bodies of half the largest size, sent but for the
# last byte: seven fill it, an eighth is refused. Then the peak is reset and
# Prometheus replies at the caps come in; the budget has no room for them.
# The rise allowed is for libcurl and the allocator, not for any reply.
rise_max=$((8 << 20))
python3 - "$HTTP_PORT" "$max_body" "$WORK/bodies.ready" <<'PY' &
import socket, sys, time
port, M = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(8):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (M // 2 + 1) + b" " * (M // 2))
    held.append(s)
open(sys.argv[3], "w").write("ready\n")
time.sleep(8)
PY
BODIES=$!
PIDS+=("$BODIES")
wait_for 20 "bodies holding the request budget" test -s "$WORK/bodies.ready"
# The scorer has read all the kernel queued for it.
queues_empty() {
	[ -z "$(ss -Htn state established "( sport = :$HTTP_PORT or dport = :$HTTP_PORT )" |
		awk '$1 + $2 > 0')" ]
}
wait_for 20 "the scorer reading the bodies" queues_empty
echo 5 >"/proc/$SCORER/clear_refs" || fail "cannot reset the peak RSS (clear_refs)"
rss0=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$SCORER/status")
asked=$(prom_count)
touch "$WORK/prom.big"
wait_for 20 "3 Prometheus replies at the caps" bash -c "[ \$(cat $WORK/prom.count) -ge $((asked + 3)) ]"
hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$SCORER/status")
echo "Prometheus replies at the caps while bodies hold the budget: peak RSS $((rss0 / 1048576)) -> $((hwm / 1048576)) MiB" \
	"($(($(prom_count) - asked)) replies)"
[ "$((hwm - rss0))" -le "$rise_max" ] ||
	fail "Prometheus replies raised the peak RSS by $(((hwm - rss0) / 1048576)) MiB with the request budget full (at most $((rise_max / 1048576)) MiB: they must take from the budget)"
grep -q "no room for" "$WORK/scorer.log" ||
	fail "the scorer did not say the reply found no room in the request budget"
stop_pids "$BODIES"

echo "RSS before the mix: $(awk "/^VmRSS:/ { print int(\$2 / 1024) }" /proc/$SCORER/status) MiB"
# The mix below, in parts (MIX: status, all); each part runs 10 s.
mix() {
python3 - "$HTTP_PORT" "$LISTEN_PORT" "$max_body" "$((pipes + 500))" "$1" "$WORK/queued" <<'PY'
import socket, struct, subprocess, sys, threading, time
port, report_port, M, n_pipes = (int(a) for a in sys.argv[1:5])
part = sys.argv[5]
held, lock = [], threading.Lock()
def keep(s):
    with lock:
        held.append(s)
def headers(src):
    for _ in range(32):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 120000 + b"\r\n")
            keep(s)
        except OSError:
            pass
# Two shapes of the largest body: one-byte tokens (over the 4 Mi token
# limit at 32 MiB), and 9-byte ones (all tokenized before the node count
# refuses it).
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
def unread_status(src, until):
    # Asks for /v1/nodes on a fresh connection every 0.2 s, never reads.
    while time.monotonic() < until:
        try:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)	# a small window
            s.settimeout(5)
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n")
            keep(s)
        except OSError:
            pass
        time.sleep(0.2)
def partial_reports(first, n):
    # NNG's handshake, then a message of 32 KiB announced and all but its
    # last byte sent: NNG holds the whole message for each.
    for i in range(first, first + n):
        try:
            s = socket.create_connection(("127.0.0.1", report_port), timeout=5,
                                         source_address=("127.0.%d.%d" % (10 + i // 250, 1 + i % 250), 0))
            s.sendall(b"\x00SP\x00\x00\x50\x00\x00")
            s.recv(8)
            s.sendall(struct.pack(">Q", 32768) + b"\xff" * 32767)
            keep(s)
        except OSError:
            pass
until = time.monotonic() + 10
ts = [threading.Thread(target=unread_status, args=("127.0.1.%d" % (1 + i), until)) for i in range(32)]
if part == "all":
    ts += [threading.Thread(target=headers, args=("127.0.0.%d" % (2 + i),)) for i in range(8)]
    ts += [threading.Thread(target=big, args=(dense,)) for _ in range(6)]
    ts += [threading.Thread(target=big, args=(names,)) for _ in range(6)]
    ts += [threading.Thread(target=partial_reports, args=(k * (n_pipes // 4), n_pipes // 4))
           for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
# What the kernel holds for the scorer's connections (unsent replies,
# unread requests): the container is charged for it too.
q = 0
for p in (port, report_port):
    out = subprocess.run(["ss", "-Htn", "state", "established", "( sport = :%d )" % p],
                         capture_output=True, text=True).stdout
    q += sum(int(l.split()[0]) + int(l.split()[1]) for l in out.splitlines() if l.strip())
print("held %d connections at the end; the scorer's socket queues hold %d MiB" % (len(held), q >> 20))
open(sys.argv[6], "w").write("%d\n" % q)
PY
}
mix status
hwm_under_limit "32 clients asking for /v1/nodes and never reading"
echo "status replies refused: $(metric netsched_scorer_http_replies_busy_total)"
mix all
hwm_under_limit "every limit at once"
echo "report connections kept: $(metric netsched_scorer_report_connections) of $pipes;" \
	"status replies refused: $(metric netsched_scorer_http_replies_busy_total)"
code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")
expect "/healthz after the mix" "$code" 200
