#!/usr/bin/env bash
# The pressure policy on real kernel counters. Four "nodes" (namespaces) on
# veth pairs from a hub, each agent told its eth0 is a 100 Mbit/s link, the
# scorer on --policy pressure:
#  - a node whose eth0 drops packets (frames bigger than its MTU, sent from a
#    hub side with a larger one, are dropped and counted in rx_dropped)
#    scores 0, the lowest, while the other nodes are idle;
#  - a steady ~50 Mbit/s stream against 1 s on / 1 s off bursts at ~100
#    Mbit/s with about the same average: the bursty node scores lower;
#  - a step from idle to ~90 Mbit/s moves the node's score to the bottom
#    within two report intervals, long before its window average gets there.
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
REPORT_MS=1000

start_scorer --stale-after 5s --policy pressure
for n in a b c d; do
	start "agent-$n" "$BIN/netsched-agent" --node "node-$n" --netns "$P-$n" --interfaces eth0 \
		--link-speed eth0=100M --scorer "tcp://127.0.0.1:$LISTEN_PORT" \
		--sample-interval 200ms --window 4s --report-interval "${REPORT_MS}ms"
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
ip netns exec "$HUB" ping -q -c 30 -i 0.02 -s 3000 -W 1 10.231.4.2 >/dev/null 2>&1
d_bottom() {
	nodes | jq -e '(.nodes[] | select(.name == "node-d") | .score == 0 and .rxDropped > 0
		and .scoreInputs.drops > 0) and ([.nodes[] | select(.name != "node-d") | .score]
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

# 3. Step: node-c from idle to ~90 Mbit/s. The clock starts when the hub
# side has sent the first megabyte; the score must reach 2 or less within
# two report intervals.
hub_tx() { ip netns exec "$HUB" cat /sys/class/net/hub-3/statistics/tx_bytes; }
base=$(hub_tx)
start step ip netns exec "$HUB" iperf3 -u -c 10.231.3.2 -p 5201 -b 90M -l 1400 -t 5
wait_for 5 "the step's traffic to start" bash -c "[ \$(ip netns exec '$HUB' cat \
	/sys/class/net/hub-3/statistics/tx_bytes) -gt $((base + 1000000)) ]"
t0=$(date +%s%N)
deadline=$((t0 + 2 * REPORT_MS * 1000000))
until [ "$(field node-c .score)" -le 2 ] 2>/dev/null; do
	[ "$(date +%s%N)" -lt "$deadline" ] ||
		fail "node-c still scores $(field node-c .score) $((2 * REPORT_MS)) ms after the step: $(nodes | jq -c '.nodes[] | select(.name == "node-c")')"
	sleep 0.05
done
t1=$(date +%s%N)
echo "ok: step seen after $(((t1 - t0) / 1000000)) ms (report interval $REPORT_MS ms):" \
	"$(nodes | jq -c '.nodes[] | select(.name == "node-c") | {score, avg: .rxBytesPerSecond,
		recent: .rxRecentBytesPerSecond, p95: .rxP95BytesPerSecond}')"
echo "PASS: pressure"
