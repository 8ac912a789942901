#!/usr/bin/env bash
# Extender latency as kube-scheduler sees it: the real scorer, its table
# filled with 5,000 nodes by bench/feed (NNG, as agents do), and
# bench/extender_latency posting the same request over ONE keep-alive
# connection, as the scheduler reuses its connection. Latency is first byte
# sent to last byte of the reply received; loopback, client and scorer share
# the machine's CPUs.
#   1. NodeNames mode (nodeCacheCapable: true): prioritize with 100, 1,000
#      and 5,000 names, and filter with 5,000.
#   2. Full Node objects (nodeCacheCapable: false): filter and prioritize
#      with 500 nodes, the synthetic fixture's three nodes replicated with
#      unique names (~1.6 MB body).
# Environment: O, BINDIR, FIXTURES, EXT_REQUESTS (names mode, 2000),
# EXT_FULL_REQUESTS (full mode, 300). Each run starts after a warm-up of a
# tenth as many requests (at least 20).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
FIX=${FIXTURES:-tests/fixtures/extender}
LAT=$O/rel/bench/extender_latency
FEED=$O/rel/bench/feed
NAMES_N=${EXT_REQUESTS:-2000}
FULL_N=${EXT_FULL_REQUESTS:-300}
TABLE_NODES=5000
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK

for f in "$LAT" "$FEED" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || { echo "missing $f (run: make bench)"; exit 1; }
done
command -v jq >/dev/null || { echo "jq not installed (run .ci/deps bench)"; exit 1; }
names_fix=$FIX/synthetic/filter_request_nodeCacheCapable_true.json
full_fix=$FIX/synthetic/filter_request_nodeCacheCapable_false.json
[ -f "$names_fix" ] && [ -f "$full_fix" ] || { echo "fixtures not found under $FIX"; exit 1; }

# Request bodies: the synthetic pod, with names the feed fills in
# (node-0 .. node-4999) in random order, as the scheduler's order changes
# from call to call and a sorted list would flatter the table's caches; full
# mode copies the fixture's nodes round-robin, renamed, hostname label
# included.
for n in 100 1000 5000; do
	seq 0 $((n - 1)) | shuf | jq -R '"node-" + .' | jq -sc . >"$tmp/order.json"
	jq -c --slurpfile names "$tmp/order.json" '.NodeNames = $names[0]' "$names_fix" >"$tmp/names$n.json"
done
jq -c '.Nodes.items as $src | .Nodes.items = [range(500) as $i | $src[$i % ($src | length)]
	| .metadata.name = "node-\($i)" | .metadata.labels["kubernetes.io/hostname"] = "node-\($i)"]' \
	"$full_fix" >"$tmp/full500.json"

start_scorer --stale-after 1h --log-level warn
scorer_pid=$LAST_PID http_port=$HTTP_PORT
# Every node's report twice a second for 2 s.
bench_fill_table "$FEED" "$TABLE_NODES" --senders 8 --rate 2 --duration 2s

echo "== extender latency: one keep-alive connection, scorer table holding $TABLE_NODES fresh nodes"
bench_machine
echo "(latency is wall-clock, so other work on the machine shows in it)"
rc=0
# CPU time of every thread of a process, in ns (schedstat's first field).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { printf "%.0f", t }'; }
# run LABEL PATH BODY REQUESTS [TARGET_US]: the latency line, then the
# scorer's own CPU per request, which other load on the machine moves far
# less than it moves wall-clock latency.
run() {
	local warm=$(($4 / 10)) c0 out
	[ "$warm" -ge 20 ] || warm=20
	c0=$(cpu_ns "$scorer_pid")
	out=$("$LAT" --http "127.0.0.1:$http_port" --label "$1" --path "$2" --body "$tmp/$3.json" \
		--requests "$4" --warmup "$warm" ${5:+--target-us "$5"}) || rc=1
	echo "$out  scorer CPU $((($(cpu_ns "$scorer_pid") - c0) / ($4 + warm) / 1000)) us/req"
}
run "prioritize names 100" /prioritize names100 "$NAMES_N"
run "prioritize names 1000" /prioritize names1000 "$NAMES_N"
run "prioritize names 5000" /prioritize names5000 "$NAMES_N" 1000
run "filter names 5000" /filter names5000 "$NAMES_N"
run "filter full 500" /filter full500 "$FULL_N" 5000
run "prioritize full 500" /prioritize full500 "$FULL_N" 5000
if ! kill -0 "$scorer_pid" 2>/dev/null; then
	echo "scorer died:"; tail -n 20 "$tmp/scorer.log"; rc=1
fi
exit "$rc"
