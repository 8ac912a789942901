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
# (tests/tools/hostile_mix.sh: idle, slow headers, slow bodies, silent TCP,
# one byte, deep and 32 MiB bodies on the extender port; /v1/nodes unread
# and in a loop, idle on the probe port; NNG idle, part-sent messages and
# raw TCP on the report port; hundreds of addresses; each reopens what the
# scorer closes).
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
N=${HOSTILE_REQUESTS:-400}
. tests/integration/lib.sh
. bench/lib.sh
. tests/tools/hostile_mix.sh
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
# /v1/nodes is on the status port alone (--health-listen).
HTTP_PORT=$PROBE_PORT bench_fill_table "$FEED" "$nodes" --senders 4 --once

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

queued() {	# bytes the kernel holds in the scorer's connections' queues
	ss -Htn state established "( sport = :$http_port or sport = :$LISTEN_PORT or sport = :$PROBE_PORT )" |
		awk '{ q += $1 + $2 } END { print q + 0 }'
}

# Status lives on the probe port (--health-listen, as deploy/ runs it).
hostile_mix "$http_port" "$PROBE_PORT" "$LISTEN_PORT"
sleep 4	# every kind of client is at it
probe=$(for _ in 1 2 3 4 5; do curl -s -m 2 -o /dev/null -w '%{http_code} ' \
	"http://127.0.0.1:$PROBE_PORT/healthz"; sleep 0.2; done)
q1=$(queued)
real "every attack, new connections"
keepalive "every attack, keep-alive"
q2=$(queued)
echo "liveness probes during the mix: $probe"
echo "the mix, during the runs:"
hostile_stop
hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$scorer_pid/status")
q=$((q1 > q2 ? q1 : q2))
echo "scorer peak RSS $((hwm >> 20)) MiB + socket queues $((q >> 20)) MiB (deploy/ limit $((limit >> 20)) MiB)"
curl -s "http://127.0.0.1:$PROBE_PORT/metrics" |
	awk '$1 ~ /^netsched_scorer_(http_busy_total|http_replies_busy_total|http_deadline_closes_total|http_connections_reclaimed_total|report_connections_closed_total|report_accept_pauses_total|log_lines_dropped_total)/ { printf "  %s %s\n", $1, $2 }'

hostile_start "$PROBE_PORT" status-loop 127.0.3.1-127.0.3.4 1
sleep 2
real "4 clients looping on /v1/nodes, new connections"
hostile_stop
if ! kill -0 "$scorer_pid" 2>/dev/null; then
	echo "scorer died:"; tail -n 20 "$tmp/scorer.log"; rc=1
fi
exit "$rc"
