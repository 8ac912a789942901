#!/usr/bin/env bash
# A real scheduler call while hostile clients from many source addresses hold
# and hammer everything they can (issue 24: "the scheduler's calls always get
# a connection and an answer within its timeout"). The real scorer, run with
# deploy/'s limits (--max-nodes, --max-body) and --health-listen, its table
# filled with --max-nodes nodes by bench/feed. The scheduler is
# bench/extender_latency posting the captured kube-scheduler 1.20 prioritize
# request with 1,000 of the table's names, 100 requests a second, each on a
# NEW connection from one of 127.0.0.2-127.0.0.5 (a scheduler whose
# keep-alive connection was closed), counting a call not answered within the
# shipped httpTimeout (100 ms) as timed out; and, for reference, on one
# keep-alive connection. The mix, all at once and all the time
# (tests/tools/hostile_clients.py; each reopens what the scorer closes):
#   on the extender port   idle after a GET, 9 addresses x 32; slow headers,
#                          9 x 32; slow bodies (32 MiB announced, a byte every
#                          2 s), 9 x 32; silent TCP, 250 x 2; /v1/nodes asked
#                          and never read, 32 x 2; /v1/nodes in a loop, 4
#                          clients; one byte and close; 400 KB bodies nested
#                          200,000 deep, 2 clients; 32 MiB bodies of one-byte
#                          tokens, 2 clients
#   on the probe port      idle, 100 addresses x 2
#   on the report port     NNG handshake then idle, 200 x 4; part-sent 32 KiB
#                          messages, 200 x 4; raw TCP, 200 x 4
# Then the same with only the 4 clients looping on /v1/nodes (issue 24's
# "status CPU": they once pushed a real prioritize's p99 to 73-93 ms).
# Prints p50/p99/max and timeouts quiet and under each, what the mix did,
# the scorer's peak RSS and socket queues against deploy/'s limit, and the
# machine.
# Environment: O, BINDIR, FIXTURES, HOSTILE_REQUESTS (400).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
FIX=${FIXTURES:-tests/fixtures/extender}
LAT=$O/rel/bench/extender_latency
FEED=$O/rel/bench/feed
HOSTILE=tests/tools/hostile_clients.py
N=${HOSTILE_REQUESTS:-400}
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK

for f in "$LAT" "$FEED" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || { echo "missing $f (run: make bench)"; exit 1; }
done
fix=$FIX/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json
[ -f "$fix" ] || { echo "fixture not found: $fix"; exit 1; }
read -r limit deploy_args < <(python3 -c '
import yaml
for d in yaml.safe_load_all(open("deploy/scorer.yaml")):
    if d and d.get("kind") == "Deployment":
        c = d["spec"]["template"]["spec"]["containers"][0]
        args, keep = c["args"], []
        for i, a in enumerate(args):
            if a in ("--max-nodes", "--max-body"):
                keep += [a, args[i + 1]]
        print(int(c["resources"]["limits"]["memory"][:-2]) << 20, " ".join(keep))')
nodes=$(awk '{ for (i = 1; i < NF; i++) if ($i == "--max-nodes") print $(i + 1) }' <<<"$deploy_args")
nodes=${nodes:-10000}
seq 0 999 | shuf | jq -R '"node-" + .' | jq -sc . >"$tmp/order.json"
jq -c --slurpfile names "$tmp/order.json" '.NodeNames = $names[0]' "$fix" >"$tmp/real.json"

echo "== hostile: a real prioritize (1,000 names) on new connections while clients from many addresses hold and hammer every port"
bench_machine
echo "(the hostile clients share these CPUs too; deploy/ limits: ${deploy_args:-none}, memory $((limit >> 20)) MiB)"

PROBE_PORT=$(free_port)
# shellcheck disable=SC2086
start_scorer --stale-after 1h --log-level warn --health-listen "127.0.0.1:$PROBE_PORT" $deploy_args
scorer_pid=$LAST_PID http_port=$HTTP_PORT
bench_fill_table "$FEED" "$nodes" --senders 4 --once

rc=0
real() {
	"$LAT" --http "127.0.0.1:$http_port" --path /prioritize --body "$tmp/real.json" \
		--requests "$N" --warmup 20 --rate 100 --label "$1" --new-connection \
		--sources 127.0.0.2-127.0.0.5 --timeout-ms 100 || rc=1
}
keepalive() {
	"$LAT" --http "127.0.0.1:$http_port" --path /prioritize --body "$tmp/real.json" \
		--requests "$N" --warmup 20 --rate 100 --label "$1" --timeout-ms 100 || rc=1
}
real "quiet, new connections"
keepalive "quiet, keep-alive"

mix=()
# hostile PORT KIND ADDRS PER [EVERY]
hostile() {
	local name="$2-${#mix[@]}"
	python3 "$HOSTILE" --port "$1" --kind "$2" --addrs "$3" --per "$4" --every "${5:-2}" \
		--seconds 600 --stats "$tmp/$name.stats" >/dev/null &
	PIDS+=("$!")
	mix+=("$!:$name")
}
stop_mix() {
	local m
	for m in "${mix[@]}"; do kill "${m%%:*}" 2>/dev/null; done
	for m in "${mix[@]}"; do wait "${m%%:*}" 2>/dev/null; done
	for m in "${mix[@]}"; do echo "  $(cat "$tmp/${m#*:}.stats" 2>/dev/null)"; done
	mix=()
}
queued() {	# bytes the kernel holds in the scorer's connections' queues
	ss -Htn state established "( sport = :$http_port or sport = :$LISTEN_PORT or sport = :$PROBE_PORT )" |
		awk '{ q += $1 + $2 } END { print q + 0 }'
}

hostile "$http_port" idle 127.0.0.10-127.0.0.18 32
hostile "$http_port" slow-headers 127.0.0.20-127.0.0.28 32
hostile "$http_port" slow-body 127.0.0.30-127.0.0.38 32
hostile "$http_port" silent 250 2
# Status lives on the probe port (--health-listen, as deploy/ runs it).
hostile "$PROBE_PORT" unread-status 127.0.2.1-127.0.2.32 2
hostile "$PROBE_PORT" status-loop 127.0.3.1-127.0.3.4 1
hostile "$http_port" one-byte 127.0.3.10-127.0.3.10 1
hostile "$http_port" deep 127.0.3.11-127.0.3.11 2
hostile "$http_port" big 127.0.3.12-127.0.3.12 2
hostile "$PROBE_PORT" idle 127.0.4.1-127.0.4.100 2
hostile "$LISTEN_PORT" nng-idle 127.0.5.1-127.0.5.200 4
hostile "$LISTEN_PORT" nng-partial 127.0.6.1-127.0.6.200 4
hostile "$LISTEN_PORT" nng-raw 127.0.7.1-127.0.7.200 4
sleep 4	# every kind of client is at it
probe=$(for _ in 1 2 3 4 5; do curl -s -m 2 -o /dev/null -w '%{http_code} ' \
	"http://127.0.0.1:$PROBE_PORT/healthz"; sleep 0.2; done)
q1=$(queued)
real "every attack, new connections"
keepalive "every attack, keep-alive"
q2=$(queued)
echo "liveness probes during the mix: $probe"
echo "the mix, during the runs:"
stop_mix
hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$scorer_pid/status")
q=$((q1 > q2 ? q1 : q2))
echo "scorer peak RSS $((hwm >> 20)) MiB + socket queues $((q >> 20)) MiB (deploy/ limit $((limit >> 20)) MiB)"
curl -s "http://127.0.0.1:$PROBE_PORT/metrics" |
	awk '$1 ~ /^netsched_scorer_(http_busy_total|http_replies_busy_total|http_deadline_closes_total|http_connections_reclaimed_total|report_connections_closed_total|report_accept_pauses_total|log_lines_dropped_total)/ { printf "  %s %s\n", $1, $2 }'

hostile "$PROBE_PORT" status-loop 127.0.3.1-127.0.3.4 1
sleep 2
real "4 clients looping on /v1/nodes, new connections"
stop_mix
if ! kill -0 "$scorer_pid" 2>/dev/null; then
	echo "scorer died:"; tail -n 20 "$tmp/scorer.log"; rc=1
fi
exit "$rc"
