#!/usr/bin/env bash
# Through a real kube-scheduler v1.20.2 (+ kube-apiserver + etcd on 127.0.0.1,
# tests/k8s/lib.sh), configured as deploy/ recommends (weight 5, names mode,
# ignorable, httpTimeout 100ms): six nodes in network namespaces, one agent
# each, real iperf3 traffic into two of them at 95% of a 100 Mb/s link and
# into one at 40%.
#  1. 30 pods: none lands on a busy node while the others have room;
#  2. a pod asking kubernetes.io/ingress-bandwidth: 200M stays Pending and
#     its event is the text the scheduler really writes, reasons grouped;
#     one asking 70M goes to a node with 70M free;
#  3. the same 30 pods with no extender (fresh cluster): the busy nodes get
#     their share, so it was the extender that kept them off;
#  4. the agents killed, traffic still on: once their reports are stale the
#     scorer has nothing to judge by, filters nothing, scores every node
#     neutral, and the default placement puts pods on the busy nodes again.
# Bounded: iperf3 runs at most 60 s, each cluster is fresh and torn down.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
need_root k8s-placement
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"
k8s_init

P="nsk$$"
NODES=(n1 n2 n3 n4 n5 n6)
make_nodes "$P-hub" "${NODES[@]/#/$P-}"
start_scorer --policy utilization --max-utilization 80 --stale-after 3s --log-level debug
AGENTS=()
for n in "${NODES[@]}"; do
	start "agent-$n" "$BIN/netsched-agent" --node "$n" --netns "$P-$n" --interfaces eth0 \
		--link-speed eth0=100M --scorer "tcp://127.0.0.1:$LISTEN_PORT" \
		--sample-interval 200ms --window 3s --report-interval 500ms
	AGENTS+=("$LAST_PID")
done

# n1, n2 at 95 Mb/s, n3 at 40 Mb/s of their 100 Mb/s links, for at most 60 s.
i=0
for rate in 95M 95M 40M; do
	i=$((i + 1))
	iperf_server "$P-n$i" "10.231.$i.2"
	start "iperf-n$i" ip netns exec "$P-hub" iperf3 -c "10.231.$i.2" -p 5201 -t 60 -b "$rate"
done
util() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" |
	jq -r ".nodes[] | select(.name == \"$1\" and .source == \"agent\") | .rxBytesPerSecond * 100 / .linkBytesPerSecond | floor"; }
busy_ok() {
	local u1 u2 u3
	u1=$(util n1) u2=$(util n2) u3=$(util n3)
	[ -n "$u1" ] && [ -n "$u2" ] && [ -n "$u3" ] && [ "$u1" -gt 82 ] && [ "$u2" -gt 82 ] &&
		[ "$u3" -ge 30 ] && [ "$u3" -le 50 ] && [ -n "$(util n6)" ]
}
wait_for 15 "n1, n2 above 82% and n3 near 40% of their links in /v1/nodes" busy_ok
echo "ok: traffic measured: n1 $(util n1)%, n2 $(util n2)%, n3 $(util n3)%, n4 $(util n4)%"

# ---------------------------------------------------------- 1. with netsched
k8s_ports
k8s_config "$WORK/netsched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
k8s_up "$WORK/netsched.yaml"
grep -q 'Creating extender with config' "$WORK/scheduler-$K8S_RUN.log" ||
	fail "the scheduler did not load the extender"
k8s_nodes "${NODES[@]}"
busy_ok || fail "traffic no longer as set up: n1 $(util n1)% n2 $(util n2)% n3 $(util n3)%"
k8s_pods with 30
k8s_wait_bound 30 with 30
echo "ok: 30 pods bound with netsched: $(k8s_placement with | tr '\n' ' ')"
expect "pods on the busy n1 and n2 with netsched" "$(($(k8s_on with n1) + $(k8s_on with n2)))" 0

# ------------------------------------------------ 2. the bandwidth annotation
busy_ok || fail "traffic no longer as set up: n1 $(util n1)% n2 $(util n2)% n3 $(util n3)%"
k8s_pods big 1 kubernetes.io/ingress-bandwidth=200M
k8s_pods mid 1 kubernetes.io/ingress-bandwidth=70M
k8s_wait_bound 20 mid 1
mid=$(kc get pod mid-1 -o jsonpath='{.spec.nodeName}')
case $mid in
n4 | n5 | n6) echo "ok: the pod asking 70M went to $mid (100M free)" ;;
*) fail "the pod asking 70M went to $mid, which has less than 70M free" ;;
esac
event() {
	kc get events --field-selector "involvedObject.name=big-1,reason=FailedScheduling" \
		-o jsonpath='{.items[0].message}'
}
has_event() { [ -n "$(event)" ]; }
wait_for 20 "the FailedScheduling event of the pod asking 200M" has_event
msg=$(event)
echo "event: $msg"
# Two rules, two groups: the busy nodes fail maxUtilization first, the four
# others have less than 200M free. No '%' (the scheduler formats the message
# printf-style: "%!o(MISSING)"), no per-node numbers.
expect "FailedScheduling event text" "$msg" \
	"0/6 nodes are available: 2 netsched: rx above 80 percent of link, 4 netsched: free rx below the 200 Mb/s the pod asks."
expect "the pod asking 200M is Pending" "$(kc get pod big-1 -o jsonpath='{.status.phase}/{.spec.nodeName}')" "Pending/"
kc describe pod big-1 | grep -q 'Warning  FailedScheduling .*4 netsched: free rx below the 200 Mb/s the pod asks' ||
	fail "kubectl describe pod does not show the event: $(kc describe pod big-1 | tail -n 5)"
echo "ok: kubectl describe pod shows the event"
# Each node's own numbers are in the scorer's debug log beside the shared reason.
grep -qE 'n1 filtered out: netsched: rx above 80 percent of link \(eth0 rx [0-9.]+ Mb/s is [0-9]+% of 100 Mb/s' "$WORK/scorer.log" ||
	fail "the scorer's debug log lacks n1's numbers: $(grep -m2 'filtered out' "$WORK/scorer.log")"
grep -qE 'n4 filtered out: netsched: free rx below the 200 Mb/s the pod asks \(eth0 rx .* free [0-9.]+ Mb/s, pod asks 200 Mb/s' "$WORK/scorer.log" ||
	fail "the scorer's debug log lacks n4's numbers: $(grep -m4 'filtered out' "$WORK/scorer.log")"
echo "ok: the debug log has each node's numbers: $(grep -m1 'n1 filtered out' "$WORK/scorer.log" | sed 's/.*filtered out: //')"
k8s_down

# ------------------------------------------------- 3. the same, no extender
busy_ok || fail "traffic no longer as set up: n1 $(util n1)% n2 $(util n2)% n3 $(util n3)%"
k8s_ports
k8s_config "$WORK/plain.yaml" none "" 100ms
k8s_up "$WORK/plain.yaml"
k8s_nodes "${NODES[@]}"
k8s_pods without 30
k8s_wait_bound 30 without 30
echo "ok: 30 pods bound without an extender: $(k8s_placement without | tr '\n' ' ')"
busy=$(($(k8s_on without n1) + $(k8s_on without n2)))
[ "$busy" -ge 6 ] || fail "without netsched only $busy of 30 pods went to n1 and n2: the comparison proves nothing"
echo "ok: without netsched $busy of 30 pods went to the busy n1 and n2; with it, 0"
k8s_down
# ------------------------------------------------------------ 4. agents dead
kill "${AGENTS[@]}"
stale() { [ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length')" = 0 ]; }
wait_for 10 "every node stale after its agent stopped" stale
busy_traffic() { ip -n "$P-n1" -s link show eth0 | awk '/RX:/ { getline; print $1 }'; }
b0=$(busy_traffic)
k8s_ports
k8s_config "$WORK/netsched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
k8s_up "$WORK/netsched.yaml"
k8s_nodes "${NODES[@]}"
k8s_pods nodata 30
k8s_wait_bound 30 nodata 30
echo "ok: 30 pods bound with every agent dead: $(k8s_placement nodata | tr '\n' ' ')"
[ $(($(busy_traffic) - b0)) -gt 1000000 ] || fail "the traffic into n1 stopped: the case proves nothing"
busy=$(($(k8s_on nodata n1) + $(k8s_on nodata n2)))
[ "$busy" -ge 6 ] || fail "with the agents dead only $busy of 30 pods went to n1 and n2"
calls=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk '/^netsched_scorer_requests_total/ { s += $2 } END { print s + 0 }')
echo "ok: agents dead: $busy of 30 pods on the still busy n1 and n2 (default placement); scorer answered $calls calls in all"
k8s_down
echo "PASS: k8s placement"
