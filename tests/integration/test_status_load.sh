#!/usr/bin/env bash
# Big status replies beside the verbs (issue 39): four clients reading
# /v1/nodes (2 MB, 3,000 nodes) in a loop while the scheduler's calls come
# in. A big reply is rendered at most once a second, however often it is
# asked for (once every client got its own render within 4x the render's
# time: tens a second, each taking CPU from the verbs), and only on the
# status thread. The assertions are counts (renders per second of the
# loop, the answers' codes), never a latency: bench/status_load.sh
# measures what the loop costs the verbs' p99.
set -u
. "$(dirname "$0")/lib.sh"

FEED=${FEED:-$(dirname "$BIN")/bench/feed}
[ -x "$FEED" ] || FEED=${O:-build}/rel/bench/feed
[ -x "$FEED" ] || fail "missing $FEED (run: make unit-build)"
jq -c '.NodeNames = ["node-1", "node-2"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"

start_scorer --stale-after 60s
"$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes 3000 --senders 2 --once >"$WORK/feed.log" 2>&1 ||
	fail "feed: $(tail -n 3 "$WORK/feed.log")"
held() {
	[ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length')" -ge 3000 ]
}
wait_for 10 "3000 nodes in the table" held
size=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | wc -c)
[ "$size" -ge $((1024 * 1024)) ] || fail "/v1/nodes is $size bytes: not a big reply"
renders() {
	curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
		awk '$1 == "netsched_scorer_status_renders_total{path=\"/v1/nodes\",result=\"ok\"}" { print $2 }'
}
r0=$(renders)
[ -n "$r0" ] || fail "/metrics has no netsched_scorer_status_renders_total for /v1/nodes"

# Four keep-alive readers for 3 s; each prints its replies' status codes.
t0=$(date +%s%N)
for i in 1 2 3 4; do
	python3 - "$HTTP_PORT" 3 >"$WORK/loop$i.out" <<'PY' &
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.monotonic() + secs
s = socket.create_connection(("127.0.0.1", port), timeout=10)
codes = []
while time.monotonic() < end:
    s.sendall(b"GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(1 << 16)
    head, _, rest = data.partition(b"\r\n\r\n")
    codes.append(head.split(b" ")[1].decode())
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0]
    while len(rest) < n:
        rest += s.recv(1 << 20)
print(" ".join(codes))
PY
	PIDS+=($!)
	LOOPS+=($!)
done
codes=()
for _ in $(seq 10); do
	codes+=("$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$WORK/prio.json" "http://127.0.0.1:$HTTP_PORT/prioritize")")
	sleep 0.2
done
wait "${LOOPS[@]}" || fail "a /v1/nodes reader failed"
secs=$((($(date +%s%N) - t0 + 999999999) / 1000000000))
r1=$(renders)
replies=$(cat "$WORK"/loop*.out | wc -w)
expect "new-connection prioritize calls beside the readers" "${codes[*]}" "200 200 200 200 200 200 200 200 200 200"
bad=$(cat "$WORK"/loop*.out | tr ' ' '\n' | grep -cv '^200$')
expect "/v1/nodes replies other than 200 (of $replies)" "$bad" 0
[ "$replies" -ge 4 ] || fail "only $replies /v1/nodes replies in $secs s"
# The loop's renders: at most one a second of it, and one more for the
# second in progress when it began.
n=$((r1 - r0))
[ "$n" -le $((secs + 1)) ] || fail "/v1/nodes rendered $n times for $replies replies in $secs s: want at most $((secs + 1))"
echo "ok: /v1/nodes rendered $n times for $replies replies in $secs s"
echo "PASS: status load"
