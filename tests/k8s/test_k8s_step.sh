#!/usr/bin/env bash
# A step, through a real kube-scheduler v1.20.2 (+ kube-apiserver + etcd on
# 127.0.0.1, tests/k8s/lib.sh) configured as deploy/ recommends: four nodes in
# network namespaces, one agent each (100 Mb/s links, 10 s windows, a report
# a second), the scorer on --policy pressure --max-utilization 80.
#  1. all idle: 8 pods spread, n1 gets its share (so n1 is a candidate like
#     any other, and what follows can fail);
#  2. n1 steps from idle to ~90 Mb/s; from two report intervals after the
#     step on, 16 pods arrive in 4 waves over ~6 s while n1's 10 s window
#     average is still far below the limit: none lands on n1.
# Bounded: iperf3 runs at most 15 s; the cluster is fresh and torn down.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
need_root k8s-step
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"
k8s_init

P="nss$$"
NODES=(n1 n2 n3 n4)
REPORT_MS=1000
LINK=12500000 # 100 Mb/s in bytes per second
make_nodes "$P-hub" "${NODES[@]/#/$P-}"
start_scorer --policy pressure --max-utilization 80 --stale-after 5s
for n in "${NODES[@]}"; do
	start "agent-$n" "$BIN/netsched-agent" --node "$n" --netns "$P-$n" --interfaces eth0 \
		--link-speed eth0=100M --scorer "tcp://127.0.0.1:$LISTEN_PORT" \
		--sample-interval 100ms --window 10s --report-interval "${REPORT_MS}ms"
done
start iperf-server ip netns exec "$P-n1" iperf3 -s -B 10.231.1.2 -p 5201
nodes() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes"; }
all_idle() { [ "$(nodes | jq '[.nodes[] | select(.source == "agent" and .score == 10)] | length')" = 4 ]; }
wait_for 15 "four idle nodes scoring 10" all_idle

k8s_ports
k8s_config "$WORK/netsched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
k8s_up "$WORK/netsched.yaml"
grep -q 'Creating extender with config' "$WORK/scheduler-$K8S_RUN.log" ||
	fail "the scheduler did not load the extender"
k8s_nodes "${NODES[@]}"

# ---------------------------------------------------------------- 1. idle
k8s_pods idle 8
k8s_wait_bound 30 idle 8
echo "ok: 8 pods while idle: $(k8s_placement idle | tr '\n' ' ')"
[ "$(k8s_on idle n1)" -ge 1 ] || fail "no pod went to n1 while it was idle: the step case proves nothing"

# ---------------------------------------------------------------- 2. step
wait_for 5 "iperf3 server in n1" bash -c "ip netns exec '$P-n1' ss -Hltn 'sport = :5201' | grep -q ."
hub_tx() { ip netns exec "$P-hub" cat /sys/class/net/hub-1/statistics/tx_bytes; }
base=$(hub_tx)
start step ip netns exec "$P-hub" iperf3 -u -c 10.231.1.2 -p 5201 -b 90M -l 1400 -t 15
wait_for 5 "the step's traffic to start" bash -c "[ \$(ip netns exec '$P-hub' cat \
	/sys/class/net/hub-1/statistics/tx_bytes) -gt $((base + 1000000)) ]"
t0=$(date +%s%N)
sleep "$((2 * REPORT_MS / 1000))"
# Each wave: n1's window average as the scorer saw it, then 4 pods.
for w in 1 2 3 4; do
	n1=$(nodes | jq -c '.nodes[] | select(.name == "n1")')
	avg=$(jq ".rxBytesPerSecond * 100 / $LINK | floor" <<<"$n1")
	echo "wave $w at +$((($(date +%s%N) - t0) / 1000000)) ms: n1 average ${avg}%," \
		"recent $(jq ".rxRecentBytesPerSecond * 100 / $LINK | floor" <<<"$n1")%," \
		"score $(jq .score <<<"$n1"), held $(jq .filterHeld <<<"$n1")"
	[ "$w" -gt 1 ] || [ "$avg" -lt 80 ] ||
		fail "n1's window average is already ${avg}% at the first wave: the case proves nothing"
	k8s_pods "step$w" 4
	k8s_wait_bound 20 "step$w" 4
	sleep 1
done
placed=0
for w in 1 2 3 4; do placed=$((placed + $(k8s_on "step$w" n1))); done
echo "ok: 16 pods after the step: $(for w in 1 2 3 4; do k8s_placement "step$w"; done |
	awk '{ c[$1] += $2 } END { for (n in c) printf "%s %d  ", n, c[n] }')"
expect "pods on n1 from two report intervals after its step" "$placed" 0
k8s_down
echo "PASS: k8s step"
