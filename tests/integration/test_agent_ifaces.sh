#!/usr/bin/env bash
# The agent's interfaces on real kernel counters: netlink and sysfs agree to
# the byte; `auto` picks the default-route link and nothing virtual; it runs
# unprivileged; a veth deleted and re-created mid-run gives no spike and is
# measured again; a named interface that appears later is picked up; a
# renamed one is still followed.
set -u
. "$(dirname "$0")/lib.sh"
need_root test_agent_ifaces
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"

P="nsi$$"
N="$P-n"
make_nodes "$P-hub" "$N"
ip -n "$N" route add default via 10.231.1.1 dev eth0
# Decoys auto and globs must ignore: a bridge, a veth pair without the route.
ip -n "$N" link add br0 type bridge
ip -n "$N" link add vx0 type veth peer name vy0
for l in br0 vx0 vy0; do ip -n "$N" link set "$l" up; done
ip netns exec "$P-hub" ping -c 1 -W 1 10.231.1.2 >/dev/null || fail "no connectivity in $P"

names() { jq -c '[.interfaces[].name]' "$1"; }
"$BIN/netsched-agent" --node n --netns "$N" --once --sample-interval 100ms >"$WORK/auto.json" ||
	fail "--once with auto failed"
expect "auto picks the default-route link only" "$(names "$WORK/auto.json")" '["eth0"]'
"$BIN/netsched-agent" --node n --netns "$N" --once --sample-interval 100ms --interfaces '*' \
	>"$WORK/glob.json" || fail "--once with a glob failed"
expect "a glob never picks lo, veth or bridges" "$(names "$WORK/glob.json")" '[]'
"$BIN/netsched-agent" --node n --netns "$N" --once --sample-interval 100ms \
	--interfaces auto,vx0 --exclude-interfaces 'eth*' >"$WORK/excl.json" || fail "exclude failed"
expect "a named veth is taken, an excluded route link is not" "$(names "$WORK/excl.json")" '["vx0"]'

# netlink and sysfs over the same interval: the only traffic on the link is
# the ping burst sent while both intervals run, so both must equal the
# kernel's own count.
counters() { ip -n "$N" -s -j link show eth0 | jq -r '.[0].stats64 | "\(.rx.bytes) \(.tx.bytes)"'; }
read -r rx0 tx0 <<<"$(counters)"
for src in netlink sysfs; do
	"$BIN/netsched-agent" --node n --netns "$N" --interfaces eth0 --once --source "$src" \
		--sample-interval 2s >"$WORK/$src.json" 2>"$WORK/$src.log" &
	eval "pid_$src=$!"
done
once_reading "$WORK/netlink.log"
once_reading "$WORK/sysfs.log"
ip netns exec "$P-hub" ping -c 20 -i 0.01 -s 1000 -q 10.231.1.2 >/dev/null || fail "ping failed"
wait "$pid_netlink" || fail "--source netlink exited non-zero"
wait "$pid_sysfs" || fail "--source sysfs exited non-zero"
read -r rx1 tx1 <<<"$(counters)"
for src in netlink sysfs; do
	expect "$src rx bytes" "$(jq '.interfaces[0].rxBytes' "$WORK/$src.json")" $((rx1 - rx0))
	expect "$src tx bytes" "$(jq '.interfaces[0].txBytes' "$WORK/$src.json")" $((tx1 - tx0))
done
[ $((rx1 - rx0)) -ge $((20 * 1028)) ] || fail "only $((rx1 - rx0)) B for 20 pings of 1028 B"

# Unprivileged: no root, no capabilities, only the namespace it runs in.
for src in netlink sysfs; do
	ip netns exec "$N" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$BIN/netsched-agent" --node n --once --source "$src" \
		--sample-interval 100ms >"$WORK/unpriv-$src.json" 2>"$WORK/unpriv-$src.log" ||
		fail "unprivileged agent ($src) failed: $(cat "$WORK/unpriv-$src.log")"
	expect "unprivileged, no capabilities, $src" "$(names "$WORK/unpriv-$src.json")" '["eth0"]'
done

# A running agent while links come and go.
start_scorer --stale-after 5s
start agent "$BIN/netsched-agent" --node node-i --netns "$N" --interfaces eth0,eth7 \
	--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms --window 2s \
	--report-interval 200ms
rx() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '[.nodes[] | select(.name == "node-i") | .rxBytesPerSecond][0] // -1'; }
known() { [ "$(rx)" -ge 0 ]; }
wait_for 10 "node-i in /v1/nodes" known
logged() { grep -q -- "$1" "$WORK/agent.log"; }

# Re-create the veth: its counters restart at 0. A naive delta would be
# ~2^64; the window must re-prime instead. No traffic flows, so the rate
# must stay tiny while we watch.
ip -n "$P-hub" link del hub-1
wait_for 3 "the agent to notice eth0 disappeared" logged "eth0 (ifindex .*) disappeared"
ip link add hub-1 netns "$P-hub" type veth peer name eth0 netns "$N"
ip -n "$P-hub" addr add 10.231.1.1/24 dev hub-1
ip -n "$N" addr add 10.231.1.2/24 dev eth0
ip -n "$P-hub" link set hub-1 up
ip -n "$N" link set eth0 up
measured_twice() { [ "$(grep -c "measuring eth0 (ifindex" "$WORK/agent.log")" = 2 ]; }
wait_for 3 "the agent to measure the new eth0" measured_twice
max=0
for _ in $(seq 20); do
	r=$(rx)
	[ "$r" -gt "$max" ] && max=$r
	sleep 0.1
done
[ "$max" -lt 100000 ] || fail "rx reached $max B/s after the veth was re-created: a spike"
echo "ok: no spike after re-creating eth0 (max $max B/s)"
iperf_server "$N" 10.231.1.2
start iperf-client ip netns exec "$P-hub" iperf3 -c 10.231.1.2 -p 5201 -t 2 -b 100M
busy() { [ "$(rx)" -gt 2000000 ]; }
wait_for 6 "the re-created eth0's traffic in the window" busy
echo "ok: the window recovered: rx $(rx) B/s on the new eth0"

# Hot-plug: eth7 was named but absent; it appears, is measured, is renamed.
ip -n "$N" link add eth7 type veth peer name eth7p
ip -n "$N" link set eth7 up
wait_for 3 "the agent to pick up eth7" logged "measuring eth7"
echo "ok: eth7 picked up when it appeared"
ip -n "$N" link set eth7 down
ip -n "$N" link set eth7 name eth8
wait_for 3 "the agent to follow eth7's rename" logged "eth7 (ifindex [0-9]*) renamed to eth8"
echo "ok: rename followed by ifindex"
echo "PASS: agent interfaces"
