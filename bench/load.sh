#!/usr/bin/env bash
# `make load`: the scorer under a cluster's steady load, loopback only, for
# LOAD_SECONDS (120): 5,000 simulated agents (bench/feed, 8 NNG senders)
# at one report per node per second, plus 200 prioritize requests per second
# with 5,000 node names over one keep-alive connection (the scheduler's).
# Prints the scorer's RSS every 10 s, the error counts and the latencies;
# exits non-zero on any error or if RSS grew more than 10% after warm-up.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
SECS=${LOAD_SECONDS:-120}
NODES=5000
RATE=200
FEED=$O/rel/bench/feed
LAT=$O/rel/bench/extender_latency
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK
for f in "$FEED" "$LAT" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || { echo "missing $f (run: make bench-tools)"; exit 1; }
done

echo "== load: $NODES agents at 1 report/s + $RATE prioritize/s ($NODES names) for ${SECS}s"
bench_machine
start_scorer --stale-after 6s --log-level warn
scorer=$LAST_PID lp=$LISTEN_PORT hp=$HTTP_PORT
seq 0 $((NODES - 1)) | shuf | jq -R '"node-" + .' | jq -sc . >"$tmp/names.json"
jq -c --slurpfile n "$tmp/names.json" '.NodeNames = $n[0]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json >"$tmp/prio.json"

"$FEED" --scorer "tcp://127.0.0.1:$lp" --nodes "$NODES" --senders 8 --rate 1 \
	--duration "$((SECS + 5))s" >"$tmp/feed.txt" &
PIDS+=($!)
feed=$!
sleep 5 # every node reported once: the table is full, RSS should be flat from here
"$LAT" --http "127.0.0.1:$hp" --path /prioritize --body "$tmp/prio.json" --rate "$RATE" \
	--requests $((RATE * SECS)) --label "prioritize at ${RATE}/s" >"$tmp/lat.txt" 2>&1 &
lat=$!
PIDS+=("$lat")
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$scorer/status"; }
first=$(rss) last=$first
echo "RSS after warm-up: $first kB"
for t in $(seq 10 10 "$SECS"); do
	sleep 10
	last=$(rss)
	echo "  t=${t}s  scorer RSS $last kB"
done
rc=0
wait "$lat" || { echo "prioritize load failed:"; rc=1; }
cat "$tmp/lat.txt"
wait "$feed" || rc=1
cat "$tmp/feed.txt"
m=$(curl -s "http://127.0.0.1:$hp/metrics")
grep -E '^netsched_scorer_(reports_total|bad_requests_total|nodes\{)' <<<"$m"
bad=$(awk '/^netsched_scorer_bad_requests_total / { print $2 }' <<<"$m")
rej=$(grep -E '^netsched_scorer_reports_total\{result="(malformed|wrong_version|absurd|table_full|unsigned|forged|replayed)"\}' <<<"$m" |
	awk '{ s += $2 } END { print s + 0 }')
echo "errors: $bad bad requests, $rej rejected reports"
[ "$bad" = 0 ] && [ "$rej" = 0 ] || rc=1
if [ "$last" -gt $((first + first / 10)) ]; then
	echo "RSS grew from $first kB to $last kB (> 10%)"
	rc=1
else
	echo "RSS flat: $first kB -> $last kB"
fi
kill -0 "$scorer" || { echo "the scorer died"; rc=1; }
exit "$rc"
