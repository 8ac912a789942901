#!/usr/bin/env bash
# What big status replies cost the verbs (issue 39: "four clients looping a
# 14 MB /v1/nodes: fresh prioritize p99 7.8 -> 126 ms"). The real scorer,
# its table filled with 10,000 nodes by bench/feed (/v1/nodes about 7 MB),
# answers bench/extender_latency's prioritize (1,000 names, 100 a second,
# each on a new connection) quiet and while four clients read /v1/nodes in
# a loop on keep-alive connections; both with status on the verbs' port and
# on --health-listen (as deploy/ runs it). Besides p50/p99, prints what the
# loop cost in machine-independent terms: /v1/nodes renders and replies
# during the run, and the scorer's CPU seconds. BASE_BIN=DIR runs the same
# against another build (the previous code) after this one.
# Environment: O, BINDIR, BASE_BIN, STATUS_REQUESTS (400), STATUS_NODES (10000).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
LAT=$O/rel/bench/extender_latency
FEED=$O/rel/bench/feed
N=${STATUS_REQUESTS:-400}
NODES=${STATUS_NODES:-10000}
. tests/integration/lib.sh
. bench/lib.sh
for f in "$LAT" "$FEED" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || { echo "missing $f (run: make bench-tools)"; exit 1; }
done
fix=tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json
seq 0 999 | shuf | jq -R '"node-" + .' | jq -sc . >"$WORK/order.json"
jq -c --slurpfile names "$WORK/order.json" '.NodeNames = $names[0]' "$fix" >"$WORK/real.json"

# readers PORT SECONDS: four keep-alive clients reading /v1/nodes in a loop;
# each prints how many replies it read.
readers() {
	local i
	READERS=()
	for i in 1 2 3 4; do
		python3 - "$1" "$2" >"$WORK/reader$i.out" <<'PY' &
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end, n = time.monotonic() + secs, 0
s = socket.create_connection(("127.0.0.1", port), timeout=30)
while time.monotonic() < end:
    s.sendall(b"GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(1 << 16)
    head, _, rest = data.partition(b"\r\n\r\n")
    size = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0]
    while len(rest) < size:
        rest += s.recv(1 << 20)
    n += 1
print(n)
PY
		READERS+=($!)
		PIDS+=($!)
	done
}
cpu_s() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat"; }
renders() {
	curl -s "http://127.0.0.1:$1/metrics" |
		awk '$1 == "netsched_scorer_status_renders_total{path=\"/v1/nodes\",result=\"ok\"}" { print $2 }'
}

# run BIN LABEL [--health-listen]: quiet, then with the readers.
run() {
	local bin=$1 label=$2 status_port pid c0 c1 r0 r1 replies
	shift 2
	STATUS=
	[ $# -gt 0 ] && STATUS=$(free_port)
	LISTEN_PORT=$(free_port) HTTP_PORT=$(free_port)
	start "scorer-$((++RUNS))" "$bin/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
		--http "127.0.0.1:$HTTP_PORT" --stale-after 1h --log-level warn \
		${STATUS:+--health-listen "127.0.0.1:$STATUS"}
	pid=$LAST_PID
	status_port=${STATUS:-$HTTP_PORT}
	wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
	HTTP_PORT=$status_port bench_fill_table "$FEED" "$NODES" --senders 4 --once
	echo "-- $label: /v1/nodes $(curl -s "http://127.0.0.1:$status_port/v1/nodes" | wc -c) bytes"
	"$LAT" --http "127.0.0.1:$HTTP_PORT" --path /prioritize --body "$WORK/real.json" --requests "$N" \
		--warmup 20 --rate 100 --label "$label, quiet" --new-connection --sources 127.0.0.2-127.0.0.5 \
		--timeout-ms 1000
	r0=$(renders "$status_port") c0=$(cpu_s "$pid")
	readers "$status_port" $((N / 100 + 4))
	sleep 1
	"$LAT" --http "127.0.0.1:$HTTP_PORT" --path /prioritize --body "$WORK/real.json" --requests "$N" \
		--warmup 20 --rate 100 --label "$label, 4 clients looping on /v1/nodes" --new-connection \
		--sources 127.0.0.2-127.0.0.5 --timeout-ms 1000
	wait "${READERS[@]}"
	r1=$(renders "$status_port") c1=$(cpu_s "$pid")
	replies=$(cat "$WORK"/reader*.out | paste -sd+ - | bc)
	busy=$(curl -s "http://127.0.0.1:$status_port/metrics" | awk '$1 == "netsched_scorer_http_replies_busy_total" { print $2 }')
	echo "   during the loop ($((N / 100 + 4)) s): /v1/nodes replies $replies (503 so far: $busy), renders $([ -n "$r1" ] && echo $((r1 - r0)) || echo "not counted by this build"), scorer CPU $(echo "$c1 - $c0" | bc) s"
	stop_pids "$pid"
}

echo "== status load: a real prioritize (1,000 names) on new connections, quiet and beside 4 clients reading /v1/nodes in a loop"
bench_machine
echo "(the readers share these CPUs; this: $BIN${BASE_BIN:+, base: $BASE_BIN})"
RUNS=0
for b in "$BIN" ${BASE_BIN:+"$BASE_BIN"}; do
	tag=$([ "$b" = "$BIN" ] && echo this || echo base)
	run "$b" "$tag, status on the verbs' port"
	run "$b" "$tag, --health-listen" --health-listen
done
