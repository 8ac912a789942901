#!/usr/bin/env bash
# The pressure policy on real kernel counters. Four "nodes" (namespaces) on
# veth pairs from a hub, each agent told its eth0 is a 100 Mbit/s link, the
# scorer on --policy pressure:
#  - a node whose eth0 drops a trickle of packets (frames bigger than its
#    MTU, sent from a hub side with a larger one, are dropped and counted in
#    rx_dropped), 2 a second, under --drop-threshold (10/s), keeps its score;
#  - dropping 25 a second, it scores 0, the lowest, while the other nodes
#    are idle;
#  - a steady ~50 Mbit/s stream against 1 s on / 1 s off bursts at ~100
#    Mbit/s with about the same average: the bursty node scores lower;
#  - a step from idle to ~90 Mbit/s moves the node's score to the bottom
#    and fails it in /filter (--max-utilization 80%) within two report
#    intervals, long before its window average gets there;
#  - once the step is over the node stays filtered (hysteresis) until it is
#    at most 70% and has been filtered --filter-hold (6 s), then passes.
# Traffic is bounded (iperf3 UDP, a few seconds each, inside our namespaces).
set -u
. "$(dirname "$0")/lib.sh"
need_root pressure
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"
command -v ping >/dev/null || fail "ping not installed (run .ci/deps test)"

P="nsp$$"
make_nodes "$P-hub" "$P-a" "$P-b" "$P-c" "$P-d"
HUB="$P-hub"
LINK=12500000 # 100 Mbit/s in bytes per second
# 100 ms samples: at a report the recent rate covers 1 s of whole samples,
# so a step that began anywhere before the previous report shows in full
# (but for at most one partial sample, 10% of it) at the next one.
REPORT_MS=1000

start_scorer --stale-after 5s --policy pressure --max-utilization 80 --filter-hold 6s
for n in a b c d; do
	start "agent-$n" "$BIN/netsched-agent" --node "node-$n" --netns "$P-$n" --interfaces eth0 \
		--link-speed eth0=100M --scorer "tcp://127.0.0.1:$LISTEN_PORT" \
		--sample-interval 100ms --window 4s --report-interval "${REPORT_MS}ms"
done
for i in 1 2 3; do
	start "iperf-server-$i" ip netns exec "$P-$(echo abc | cut -c$i)" \
		iperf3 -s -B "10.231.$i.2" -p 5201
done

nodes() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes"; }
field() { nodes | jq -r ".nodes[] | select(.name == \"$1\") | $2"; }
agents_known() { [ "$(nodes | jq '[.nodes[] | select(.source == "agent")] | length')" = 4 ]; }
wait_for 10 "the four agents' reports in /v1/nodes" agents_known
all_idle() { [ "$(nodes | jq '[.nodes[] | select(.score == 10)] | length')" = 4 ]; }
wait_for 10 "four idle nodes scoring 10" all_idle
echo "ok: idle: every node scores 10"
for i in 1 2 3; do
	wait_for 5 "iperf3 server $i" \
		bash -c "ip netns exec '$P-$(echo abc | cut -c$i)' ss -Hltn 'sport = :5201' | grep -q ."
done

# 1. Drops: 3028-byte frames from a 9000-byte-MTU hub side to a 1500-byte eth0.
ip -n "$HUB" link set hub-4 mtu 9000
# A trickle: 8 drops in 2 s, at most 2 a second over the 4 s window.
ip netns exec "$HUB" ping -q -c 8 -i 0.25 -s 3000 -W 1 10.231.4.2 >/dev/null 2>&1
d_counted() { nodes | jq -e '.nodes[] | select(.name == "node-d") | .scoreInputs.drops > 0' >/dev/null; }
wait_for 4 "node-d's trickle of drops in /v1/nodes" d_counted
d=$(nodes | jq -c '.nodes[] | select(.name == "node-d") | {score, drops: .scoreInputs.drops,
	dropping: .scoreInputs.dropping}')
[ "$(echo "$d" | jq '.score == 10 and .dropping == false')" = true ] ||
	fail "node-d dropping under --drop-threshold lost its score: $d"
echo "ok: a trickle of drops under the threshold keeps node-d's score: $d"
# Overflowing: 100 drops in 1 s, 25 a second over the window.
ip netns exec "$HUB" ping -q -c 100 -i 0.01 -s 3000 -W 1 10.231.4.2 >/dev/null 2>&1
d_bottom() {
	nodes | jq -e '(.nodes[] | select(.name == "node-d") | .score == 0 and .rxDropped > 0
		and .scoreInputs.dropping) and ([.nodes[] | select(.name != "node-d") | .score]
		| min > 0)' >/dev/null
}
wait_for 4 "node-d (dropping packets) to score lowest" d_bottom
echo "ok: dropping node-d: $(nodes | jq -c '.nodes[] | {name, score, rxDropped}' | tr '\n' ' ')"

# 2. Steady ~50 Mbit/s into node-a, 1 s bursts at ~100 Mbit/s every 2 s into node-b.
start steady ip netns exec "$HUB" iperf3 -u -c 10.231.1.2 -p 5201 -b 50M -l 1400 -t 12
start bursty bash -c "for i in 1 2 3 4 5 6; do ip netns exec '$HUB' iperf3 -u -c 10.231.2.2 \
	-p 5201 -b 100M -l 1400 -t 1 >/dev/null || exit 1; sleep 1; done"
# Judged on one snapshot once both windows hold several bursts: averages
# alike (30..70 % of the link, the bursty one at most 1.2x the steady one)
# and the bursty node below the steady one.
bursty_lower() {
	nodes >"$WORK/snap.json"
	jq -e --argjson link "$LINK" '
		(.nodes[] | select(.name == "node-a")) as $a |
		(.nodes[] | select(.name == "node-b")) as $b |
		$a.rxBytesPerSecond > 0.3 * $link and $a.rxBytesPerSecond < 0.7 * $link and
		$b.rxBytesPerSecond > 0.3 * $link and $b.rxBytesPerSecond < 1.2 * $a.rxBytesPerSecond and
		$b.score < $a.score' "$WORK/snap.json" >/dev/null
}
sleep 4 # a full window of both patterns
wait_for 8 "bursty node-b to score below steady node-a at a similar average" bursty_lower
for n in a b; do
	jq -c --arg n "node-$n" '.nodes[] | select(.name == $n) | {name, score,
		avg: .rxBytesPerSecond, recent: .rxRecentBytesPerSecond, p95: .rxP95BytesPerSecond,
		scored: .scoreInputs.scoredBytesPerSecond}' "$WORK/snap.json"
done
echo "ok: bursty below steady at a similar average"

# 3. Step: node-c from idle to ~90 Mbit/s for 2 s. The clock starts when the
# hub side has sent the first megabyte; within two report intervals the
# score must be 2 or less and /filter must fail node-c.
jq -c '.NodeNames = ["node-a", "node-b", "node-c", "node-d"]' \
	tests/fixtures/extender/captured-k8s-1.20/filter-request.nodeCacheCapable-true.json \
	>"$WORK/filter.json"
c_filtered() { http POST /filter "$WORK/filter.json" | cut -d' ' -f2- | jq -e '.FailedNodes["node-c"]'; }
hub_tx() { ip netns exec "$HUB" cat /sys/class/net/hub-3/statistics/tx_bytes; }
base=$(hub_tx)
start step ip netns exec "$HUB" iperf3 -u -c 10.231.3.2 -p 5201 -b 90M -l 1400 -t 2
STEP_PID=$LAST_PID
wait_for 5 "the step's traffic to start" bash -c "[ \$(ip netns exec '$HUB' cat \
	/sys/class/net/hub-3/statistics/tx_bytes) -gt $((base + 1000000)) ]"
t0=$(date +%s%N)
# The report that changed the score arrived ageSeconds before the snapshot:
# judged on its arrival, the polling's own delay does not count.
until c=$(nodes | jq -c '.nodes[] | select(.name == "node-c")') &&
	jq -e '.score <= 2 and .filterHeld' <<<"$c" >/dev/null; do
	[ "$(date +%s%N)" -lt $((t0 + 5000000000)) ] ||
		fail "node-c not at the bottom and held 5 s after the step: $c"
	sleep 0.05
done
t1=$(date +%s%N)
seen_ms=$(((t1 - t0) / 1000000 - $(jq '.ageSeconds * 1000 | floor' <<<"$c")))
[ "$seen_ms" -le $((2 * REPORT_MS)) ] ||
	fail "node-c's score changed with a report $seen_ms ms after the step, over two report intervals ($((2 * REPORT_MS)) ms): $c"
echo "ok: step seen in a report $seen_ms ms after it began (report interval $REPORT_MS ms):" \
	"$(jq -c '{score, avg: .rxBytesPerSecond, recent: .rxRecentBytesPerSecond,
		p95: .rxP95BytesPerSecond, filterHeld}' <<<"$c")"
echo "ok: /filter fails node-c: $(c_filtered)"

# 4. Hysteresis: the step is over and node-c is well under the limit, yet
# it stays filtered (held) until --filter-hold has passed since it crossed.
wait "$STEP_PID" 2>/dev/null
c_quiet() {
	nodes | jq -e --argjson link "$LINK" '.nodes[] | select(.name == "node-c") |
		.rxBytesPerSecond <= 0.7 * $link and .rxRecentBytesPerSecond <= 0.7 * $link' >/dev/null
}
wait_for 6 "node-c's rates to fall to 70% of the link or less" c_quiet
expect "node-c still held although quiet" "$(c_filtered)" \
	'"netsched: was above 80 percent of link, held until 70"'
c_passes() { ! c_filtered; }
wait_for 9 "node-c to pass /filter again after the hold" c_passes
t2=$(date +%s%N)
[ $(((t2 - t0) / 1000000)) -ge 6000 ] || fail "node-c released $(((t2 - t0) / 1000000)) ms after the step, before the 6 s hold"
echo "ok: node-c held, then released $(((t2 - t0) / 1000000)) ms after the step (hold 6 s)"
echo "PASS: pressure"
