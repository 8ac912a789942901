#!/usr/bin/env bash
# Pods' traffic on real kernel counters, pods wired the two ways CNIs do in
# a simulated node: routed (a host-side veth with a /32 and a /128 route,
# like Calico, kindnet/ptp or the AWS VPC CNI) and bridged (the host-side
# veth on a bridge, like flannel or the bridge plugin), IPv4 and IPv6:
#   - iperf3 through the node's uplink: each pod's rx and tx, from the
#     pod's point of view, land on the right pod and direction;
#   - 110 pods on one node: the report lists the busiest N, busiest first,
#     each equal to the kernel's count to the byte, and sums the rest;
#   - the agent as nobody with no capabilities finds them all;
#   - a running agent (reports read off the wire): pod churn, an IP reused
#     by a new pod and a re-created interface (no carry-over, no spike), an
#     IP moved to another pod's interface (starts fresh).
set -u
[ -n "${DEBUG_PODS:-}" ] && set -x
. "$(dirname "$0")/lib.sh"
need_root test_agent_pods
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"
SINK=${SINK:-$(dirname "$BIN")/bench/sink}
[ -x "$SINK" ] || SINK=${O:-build}/rel/bench/sink
[ -x "$SINK" ] || fail "missing $SINK (run: make unit-build)"

P="nsp$$"
HUB="$P-hub" NODE="$P-node"
for ns in "$HUB" "$NODE"; do
	ip netns add "$ns" || fail "cannot create namespace $ns"
	NETNS+=("$ns")
	ip -n "$ns" link set lo up
done
# The node's uplink to the hub, where traffic from beyond the node comes from.
ip link add hub0 netns "$HUB" type veth peer name eth0 netns "$NODE" || fail "no veth"
ip -n "$HUB" addr add 10.231.1.1/24 dev hub0
ip -n "$HUB" addr add fd00:231::1/64 dev hub0 nodad
ip -n "$NODE" addr add 10.231.1.2/24 dev eth0
ip -n "$NODE" addr add fd00:231::2/64 dev eth0 nodad
ip -n "$HUB" link set hub0 up
ip -n "$NODE" link set eth0 up
ip -n "$NODE" route add default via 10.231.1.1
ip -n "$NODE" -6 route add default via fd00:231::1
ip -n "$HUB" route add 10.244.0.0/16 via 10.231.1.2
ip -n "$HUB" -6 route add fd00:244::/32 via fd00:231::2
ip netns exec "$NODE" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

new_pod_ns() {
	ip netns add "$1" || fail "cannot create namespace $1"
	NETNS+=("$1")
	ip -n "$1" link set lo up
}
# pod_routed POD HOSTIF V4 V6: the ptp way (kindnet): the host side keeps the
# node's gateway address, the node routes the pod's /32 and /128 to it.
pod_routed() {
	new_pod_ns "$1"
	ip link add "$2" netns "$NODE" type veth peer name eth0 netns "$1" || fail "no veth $2"
	ip -n "$NODE" addr add 10.244.0.1/32 dev "$2"
	ip -n "$NODE" addr add fd00:244::1/128 dev "$2" nodad
	ip -n "$NODE" link set "$2" up
	ip -n "$1" link set eth0 up
	ip -n "$1" addr add "$3/32" dev eth0
	ip -n "$1" addr add "$4/128" dev eth0 nodad
	ip -n "$1" route add 10.244.0.1/32 dev eth0
	ip -n "$1" route add default via 10.244.0.1
	ip -n "$1" -6 route add fd00:244::1/128 dev eth0
	ip -n "$1" -6 route add default via fd00:244::1
	ip -n "$NODE" route add "$3/32" dev "$2"
	ip -n "$NODE" -6 route add "$4/128" dev "$2"
}
# pod_bridged POD HOSTIF V4 V6: the bridge plugin's way: a port of br0
# (10.244.1.1/24, fd00:244:1::1/64, the pods' gateway).
pod_bridged() {
	if ! ip -n "$NODE" link show br0 >/dev/null 2>&1; then
		ip -n "$NODE" link add br0 type bridge
		ip -n "$NODE" link set br0 up
		ip -n "$NODE" addr add 10.244.1.1/24 dev br0
		ip -n "$NODE" addr add fd00:244:1::1/64 dev br0 nodad
	fi
	new_pod_ns "$1"
	ip link add "$2" netns "$NODE" type veth peer name eth0 netns "$1" || fail "no veth $2"
	ip -n "$NODE" link set "$2" master br0
	ip -n "$NODE" link set "$2" up
	ip -n "$1" link set eth0 up
	ip -n "$1" addr add "$3/24" dev eth0
	ip -n "$1" addr add "$4/64" dev eth0 nodad
	ip -n "$1" route add default via 10.244.1.1
	ip -n "$1" -6 route add default via fd00:244:1::1
}
# reach ADDR...: pings from beyond the node to each, one answer enough (the
# first to a new IPv6 neighbour may be lost). A bridged pod's address is
# known once the node has a neighbour entry for it.
reach() {
	local a
	for a in "$@"; do
		ip netns exec "$HUB" ping -c 3 -i 0.2 -W 2 "$a" >/dev/null || fail "no way to $a"
	done
}
# pod JSON IP: the listed pod that has IP, or null.
pod() { jq -c --arg ip "$2" '[.pods.listed[]? | select(.ips | index($ip))][0]' "$1"; }
# agent_once FILE ARGS...: one --once report of the node, 2 s, to FILE.
agent_once() {
	local out=$1
	shift
	"$BIN/netsched-agent" --node pods-node --netns "$NODE" --once --link-speed eth0=1G "$@" \
		>"$out" 2>"$out.log" || fail "--once failed: $(cat "$out.log")"
}

pod_routed "$P-a" vetha 10.244.0.10 fd00:244::10
pod_bridged "$P-b" vethb 10.244.1.10 fd00:244:1::10
reach 10.244.0.10 fd00:244::10 10.244.1.10 fd00:244:1::10

# Direction: the hub sends to pod a over IPv4 at 40 Mb/s (a receives), pod
# b sends to the hub over IPv6 at 16 Mb/s (iperf3 -R: b transmits). A
# pod's rx is its veth's host-side tx: a swap here would show a's 5 MB/s
# as tx.
iperf_server "$P-a" 10.244.0.10
iperf_server "$P-b" fd00:244:1::10
start iperf-a ip netns exec "$HUB" iperf3 -c 10.244.0.10 -p 5201 -t 8 -b 40M --forceflush
flow_a=$LAST_PID
start iperf-b ip netns exec "$HUB" iperf3 -6 -c fd00:244:1::10 -p 5201 -t 8 -b 16M -R --forceflush
flow_b=$LAST_PID
# Both flows at their rate before the reading: each has reported its first
# second (a late start on a busy machine once showed as a low rate below).
flowing() { grep -q ' sec ' "$WORK/iperf-a.log" && grep -q ' sec ' "$WORK/iperf-b.log"; }
wait_for 20 "both flows' first second" flowing
agent_once "$WORK/dir.json" --sample-interval 2s
a=$(pod "$WORK/dir.json" 10.244.0.10)
b=$(pod "$WORK/dir.json" fd00:244:1::10)
[ "$a" != null ] && [ "$b" != null ] || fail "pods missing: $(jq -c .pods "$WORK/dir.json")"
expect "routed pod: both its addresses" "$(jq -c '.ips | sort' <<<"$a")" '["10.244.0.10","fd00:244::10"]'
expect "bridged pod: both its addresses" "$(jq -c '.ips | sort' <<<"$b")" '["10.244.1.10","fd00:244:1::10"]'
# 40 Mb/s = 5 MB/s and 16 Mb/s = 2 MB/s of payload, headers on top; the
# other way only ACKs (under a tenth).
a_rx=$(jq .rxBytesPerSecond <<<"$a") a_tx=$(jq .txBytesPerSecond <<<"$a")
b_rx=$(jq .rxBytesPerSecond <<<"$b") b_tx=$(jq .txBytesPerSecond <<<"$b")
[ "$a_rx" -gt 4000000 ] && [ "$a_rx" -lt 6500000 ] || fail "pod a received $a_rx B/s, want ~5 MB/s"
[ "$a_tx" -lt $((a_rx / 10)) ] || fail "pod a sent $a_tx B/s, want ACKs only (rx $a_rx)"
[ "$b_tx" -gt 1600000 ] && [ "$b_tx" -lt 2600000 ] || fail "pod b sent $b_tx B/s, want ~2 MB/s"
[ "$b_rx" -lt $((b_tx / 10)) ] || fail "pod b received $b_rx B/s, want ACKs only (tx $b_tx)"
echo "ok: pod a received $a_rx B/s (sent $a_tx), pod b sent $b_tx B/s (received $b_rx)"
expect "pods seen" "$(jq .pods.seen "$WORK/dir.json")" 2
wait "$flow_a" && wait "$flow_b" || fail "an iperf3 flow failed: $(tail -n 3 "$WORK"/iperf-*.log)"

# Unprivileged: routes, neighbours and the FDB are readable by anyone.
ip netns exec "$NODE" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	--bounding-set=-all "$BIN/netsched-agent" --node pods-node --once --link-speed eth0=1G \
	--sample-interval 200ms >"$WORK/unpriv.json" 2>"$WORK/unpriv.log" ||
	fail "unprivileged agent failed: $(cat "$WORK/unpriv.log")"
expect "unprivileged, no capabilities: every pod address" \
	"$(jq -c '[.pods.listed[].ips[]] | sort' "$WORK/unpriv.json")" \
	'["10.244.0.10","10.244.1.10","fd00:244:1::10","fd00:244::10"]'

# 110 pods on a node of their own (the kubelet's default maximum), their
# ends in the node's hub namespace, IPv6 off so nothing talks unasked. Pods 1 to 12
# get pings of growing size while one 2 s reading runs: the report lists
# the busiest 8 in order, each to the byte the kernel counted, and sums
# the other 102.
M="$P-m" MP="$P-mpods"
make_nodes "$MP" "$M"
for i in $(seq 110); do echo "link add m$i type veth peer name e$i netns $MP"; done |
	ip -n "$M" -batch - || fail "cannot create 110 veth pairs"
{
	for i in $(seq 110); do
		echo "link set m$i up"
		echo "addr add 10.244.9.1/32 dev m$i"
		echo "route add 10.244.$((10 + i / 200)).$((i % 200 + 1))/32 dev m$i"
	done
} | ip -n "$M" -batch - || fail "cannot wire 110 pods"
{
	for i in $(seq 110); do
		echo "link set e$i up"
		echo "addr add 10.244.$((10 + i / 200)).$((i % 200 + 1))/32 dev e$i"
	done
} | ip -n "$MP" -batch - || fail "cannot address 110 pods"
for i in $(seq 110); do echo "route add 10.244.9.1/32 dev e$i table $((100 + i))"; done |
	ip -n "$MP" -batch - || fail "cannot route 110 pods"
for i in $(seq 110); do echo "rule add from 10.244.$((10 + i / 200)).$((i % 200 + 1)) table $((100 + i))"; done |
	ip -n "$MP" -batch - || fail "cannot route 110 pods back"
tx_of() { ip -n "$M" -s -j link show | jq -c 'map({(.ifname): [.stats64.tx.bytes, .stats64.rx.bytes]}) | add'; }
# many_reading SECONDS: one --once reading of that interval with pods 1 to
# 12's pings inside it, all at once; fails when the reading ended before the
# pings did (a loaded machine: then the counts prove nothing, and the
# caller tries a longer one).
many_reading() {
	local s=$1 pings=() p
	before=$(tx_of)
	"$BIN/netsched-agent" --node many --netns "$M" --interfaces eth0 --once --sample-interval "${s}s" \
		--report-interval "${s}s" --pods-reported 8 >"$WORK/many.json" 2>"$WORK/many.log" &
	many=$!
	once_reading "$WORK/many.log"
	for i in $(seq 12); do
		ip netns exec "$M" ping -q -c 5 -i 0.02 -s $((100 * i)) "10.244.10.$((i + 1))" >/dev/null &
		pings+=($!)
	done
	for p in "${pings[@]}"; do wait "$p" || fail "no way to a pod (ping $p)"; done
	kill -0 "$many" 2>/dev/null
	local inside=$?
	wait "$many" || fail "--once with 110 pods failed: $(cat "$WORK/many.log")"
	after=$(tx_of)
	return "$inside"
}
# Every byte counts, so the order is exact once every ping is inside the
# reading: its length grows until they are (at load 15 a 4 s one was not).
for s in 4 8 16 32; do
	many_reading "$s" && break
	echo "note: the pings outlasted a ${s} s reading (a busy machine); again, longer"
	[ "$s" = 32 ] && fail "the pings outlasted even a 32 s reading"
done
expect "110 pods seen" "$(jq .pods.seen "$WORK/many.json")" 110
expect "8 listed (--pods-reported 8)" "$(jq '.pods.listed | length' "$WORK/many.json")" 8
expect "the busiest first: pods 12 down to 5" "$(jq -c '[.pods.listed[].ips[0]]' "$WORK/many.json")" \
	'["10.244.10.13","10.244.10.12","10.244.10.11","10.244.10.10","10.244.10.9","10.244.10.8","10.244.10.7","10.244.10.6"]'
for i in $(seq 5 12); do
	got=$(jq -c --arg ip "10.244.10.$((i + 1))" '.pods.listed[] | select(.ips[0] == $ip) | [.rxBytes, .txBytes]' "$WORK/many.json")
	want=$(jq -nc --argjson b "$before" --argjson a "$after" --arg m "m$i" \
		'[$a[$m][0] - $b[$m][0], $a[$m][1] - $b[$m][1]]')
	expect "pod $i: rx is its veth's tx, to the byte" "$got" "$want"
done
want=$(jq -nc --argjson b "$before" --argjson a "$after" \
	'[range(1; 111) | select(. < 5 or . > 12) | "m\(.)" as $m | [$a[$m][0] - $b[$m][0], $a[$m][1] - $b[$m][1]]] |
	 [(map(.[0]) | add), (map(.[1]) | add)]')
expect "the other 102 summed" "$(jq -c '[.pods.rest.rxBytes, .pods.rest.txBytes]' "$WORK/many.json")" "$want"
[ "$(jq '.pods.rest.rxBytes' "$WORK/many.json")" -gt 0 ] || fail "the rest holds pods 1-4's pings: not 0"

# A running agent, its reports read off the wire by a sink.
SINK_PORT=$(free_port)
start sink "$SINK" "tcp://127.0.0.1:$SINK_PORT" 120
sink_pid=$LAST_PID
start agent "$BIN/netsched-agent" --node pods-node --netns "$NODE" --link-speed eth0=1G \
	--scorer "tcp://127.0.0.1:$SINK_PORT" --sample-interval 200ms --pod-interval 400ms \
	--report-interval 400ms --window 4s
# last: the newest report; fresh: reports after the mark (a line count).
last() { grep '"node"' "$WORK/sink.log" | tail -n 1 >"$WORK/last.json" && [ -s "$WORK/last.json" ]; }
mark() { MARK=$(wc -l <"$WORK/sink.log"); }
fresh() { tail -n +"$((MARK + 1))" "$WORK/sink.log" | grep '"node"'; }
wait_for 10 "reports with pods" bash -c "grep -q '\"pods\"' '$WORK/sink.log'"
has() { last && [ "$(pod "$WORK/last.json" "$1")" != null ]; }
hasnt() { last && [ "$(pod "$WORK/last.json" "$1")" = null ]; }
seen() { last && [ "$(jq .pods.seen "$WORK/last.json")" = "$1" ]; }

# Pod a moves 40 Mb/s, then goes; a new pod comes with its addresses and its
# interface's name: nothing of a's traffic may show on it.
# rx_of IP: the rx bytes of the pod listing IP in the newest report (0: none).
rx_of() { jq --arg ip "$1" '[.pods.listed[]? | select(.ips | index($ip))][0].rxBytes // 0' "$WORK/last.json"; }
# flow POD IP: 2 s of 40 Mb/s from the hub into the pod, then until a report
# shows its 10 MB in the window (at least 5).
flow() {
	iperf_server "$1" "$2"
	ip netns exec "$HUB" iperf3 -c "$2" -p 5201 -t 2 -b 40M >/dev/null || fail "no flow to $2"
	wait_for 5 "$2's 40 Mb/s in a report" busy "$2"
}
busy() { last && [ "$(rx_of "$1")" -gt 5000000 ]; }
flow "$P-a" 10.244.0.10
echo "ok: pod a moved $(rx_of 10.244.0.10) B in the window"
ip netns del "$P-a"
wait_for 5 "pod a gone from the reports" hasnt 10.244.0.10
wait_for 5 "one pod seen" seen 1
echo "ok: a deleted pod leaves the reports at once"
pod_routed "$P-a2" vetha 10.244.0.10 fd00:244::10
reach 10.244.0.10 fd00:244::10
wait_for 5 "the new pod with a's addresses" has 10.244.0.10
mark
sleep 2 # five readings of the new pod, all asserted on
n=0
while read -r line; do
	rx=$(jq '[.pods.listed[]? | select(.ips | index("10.244.0.10"))][0].rxBytes // 0' <<<"$line")
	[ "$rx" -lt 100000 ] || fail "the new pod at a's address shows $rx B: a's traffic carried over"
	n=$((n + 1))
done < <(fresh)
[ "$n" -ge 3 ] || fail "only $n reports in 2 s"
echo "ok: an address reused by a new pod on a re-created interface starts from nothing ($n reports)"

# Churn: a bridged pod goes, another comes.
ip netns del "$P-b"
wait_for 5 "pod b gone" hasnt 10.244.1.10
pod_bridged "$P-c" vethc 10.244.1.11 fd00:244:1::11
reach 10.244.1.11 fd00:244:1::11
wait_for 5 "bridged pod c" has fd00:244:1::11
wait_for 5 "two pods seen" seen 2
echo "ok: churn followed (b gone, c measured)"

# An address moved to another pod's interface takes none of the old one's
# traffic: pod d (routed) moves 40 Mb/s, then its /32 is routed to pod e.
pod_routed "$P-d" vethd 10.244.0.30 fd00:244::30
pod_routed "$P-e" vethe 10.244.0.31 fd00:244::31
flow "$P-d" 10.244.0.30
ip -n "$NODE" route del 10.244.0.30/32 dev vethd
ip -n "$NODE" route add 10.244.0.30/32 dev vethe
moved() { last && jq -e '.pods.listed[] | select(.ips | index("10.244.0.30")) | .ips | index("10.244.0.31")' "$WORK/last.json"; }
wait_for 5 "10.244.0.30 on pod e's interface" moved
rx=$(rx_of 10.244.0.30)
[ "$rx" -lt 100000 ] || fail "10.244.0.30 on its new interface shows $rx B: pod d's traffic went with it"
echo "ok: an address moved to another interface starts fresh ($rx B)"

kill -TERM "$sink_pid"
grep -q rejected "$WORK/sink.log" && fail "a report was rejected: $(grep rejected "$WORK/sink.log" | head -n 1)"
echo "PASS: agent pods"
