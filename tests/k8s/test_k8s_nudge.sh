#!/usr/bin/env bash
# A pod netsched refused for its declared bandwidth is placed as soon as a
# node has room for it, through a real kube-scheduler v1.20.2, because the
# rebalancer labels that node (netsched.io/room-nudge) and the scheduler
# retries its unschedulable pods on a Node label change; without the label
# it waits for the scheduler's own 60 s flush.
# Two nodes, n1 and n2, with 100 Mb/s links, each receiving 88 Mb/s as
# forged reports tell the real scorer (a report per node every half second,
# rates from $WORK/rx); pods ask kubernetes.io/ingress-bandwidth: 40M, more
# than the 12 Mb/s either has free. The rebalancer runs with deploy/'s RBAC
# as shipped (the apiserver authorizes with RBAC), leader election off.
#  1. nudge off: the pod is refused with netsched's reason; the nodes' rate
#     falls to 8 Mb/s (92 Mb/s free, as the scorer shows); 20 s later the
#     pod is still pending, and no node was labelled;
#  2. nudge on: the same with a new pod; it is bound within 20 s of the room
#     appearing, and the rebalancer says which node it labelled and why.
# The 20 s are well under the 60 s the scheduler would wait by itself, and
# the first case shows that nothing else moved the pod in that time.
# K8S_NUDGE_MEASURE_OFF=1 also waits (up to 150 s) for case 1's pod and
# prints how long it waited without the nudge.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
FORGE=${FORGE:-${O:-build}/rel/bench/forge}
[ -x "$FORGE" ] || fail "forge tool not found at $FORGE (make unit-build builds it)"
[ -x "$BIN/netsched-rebalancer" ] || fail "no $BIN/netsched-rebalancer (run make)"
command -v etcd >/dev/null || { echo "SKIP: etcd not installed"; exit 77; }
k8s_init
RB_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "$RB_TOKEN,system:serviceaccount:netsched:netsched-rebalancer,2000,system:serviceaccounts" >>"$WORK/pki/tokens.csv"

LINK=12500000  # 100 Mb/s
BUSY=11000000  # 88 Mb/s: 12 Mb/s free
QUIET=1000000  # 8 Mb/s: 92 Mb/s free
ASK=40M
BOUND_S=20
start_scorer --policy utilization --stale-after 10s
echo "$BUSY" >"$WORK/rx"
reports() {
	local seq=1 n
	while :; do
		for n in n1 n2; do
			"$FORGE" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --node "$n" --instance 7 \
				--seq "$seq" --rx "$(cat "$WORK/rx")" --link "$LINK" >/dev/null 2>&1
		done
		seq=$((seq + 1))
		sleep 0.5
	done
}
start reporter reports
rx_is() { # RATE: both nodes' rx, as the scorer has it
	[ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" |
		jq "[.nodes[] | select(.rxBytesPerSecond == $1 and .linkBytesPerSecond == $LINK)] | length")" = 2 ]
}
wait_for 15 "n1 and n2 at 88 Mb/s of 100 Mb/s in the scorer" rx_is "$BUSY"

k8s_ports
k8s_config "$WORK/netsched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
K8S_AUTHZ=RBAC
k8s_up "$WORK/netsched.yaml"
k8s_nodes n1 n2
kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
python3 - deploy/rebalancer.yaml "$WORK/rbac.yaml" <<'PY' || fail "cannot read deploy/rebalancer.yaml"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
keep = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
yaml.safe_dump_all([d for d in docs if d["kind"] in keep], open(sys.argv[2], "w"))
PY
kc create -f "$WORK/rbac.yaml" >/dev/null || fail "cannot create the rebalancer's RBAC from deploy/"
sed "s|token: $K8S_TOKEN|token: $RB_TOKEN|" "$WORK/kubeconfig" >"$WORK/rebalancer.kubeconfig"

rebalancer() { # NAME ARGS...
	local name=$1
	shift
	start "$name" "$BIN/netsched-rebalancer" --kubeconfig "$WORK/rebalancer.kubeconfig" \
		--scorer "http://127.0.0.1:$HTTP_PORT" --interval 1s --leader-elect off \
		--nudge-interval 1s --identity "$name" "$@"
	RB_PID=$LAST_PID
}
cycles() { # PORT: the rebalancer's cycles so far
	curl -sf "http://127.0.0.1:$1/metrics" | awk '/^netsched_rebalancer_cycles_total/ { print $2 }'
}
cycled() { [ "$(cycles "$1")" -ge "$2" ] 2>/dev/null; }
refused() { # POD: its FailedScheduling event names netsched's reason
	kc get events --field-selector "involvedObject.name=$1,reason=FailedScheduling" \
		-o jsonpath='{.items[*].message}' | grep -q "netsched: free rx below the 40 Mb/s the pod asks"
}
bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}')" ]; }
labelled() { kc get nodes -o jsonpath='{.items[*].metadata.labels.netsched\.io/room-nudge}' | grep -q .; }
ms() { echo $(($(date +%s%N) / 1000000)); }

# ---------------------------------------------------------- 1. nudge off
M1=$(free_port)
rebalancer r-off --nudge off --metrics-listen "127.0.0.1:$M1"
R1=$RB_PID
wait_for 20 "the rebalancer's first cycles" cycled "$M1" 2
k8s_pods waits 1 "kubernetes.io/ingress-bandwidth=$ASK"
wait_for 30 "waits-1 refused by netsched" refused waits-1
echo "ok: waits-1 refused: $(kc get events --field-selector involvedObject.name=waits-1,reason=FailedScheduling -o jsonpath='{.items[0].message}')"
echo "$QUIET" >"$WORK/rx"
wait_for 15 "n1 and n2 at 8 Mb/s in the scorer" rx_is "$QUIET"
t0=$(ms)
c0=$(cycles "$M1")
deadline=$((t0 + BOUND_S * 1000))
while [ "$(ms)" -lt "$deadline" ]; do
	bound waits-1 && fail "waits-1 was bound $(($(ms) - t0)) ms after the room appeared with the nudge off: the case proves nothing"
	sleep 1
done
[ "$(($(cycles "$M1") - c0))" -ge 3 ] || fail "the rebalancer ran fewer than 3 cycles meanwhile"
! labelled || fail "a node was labelled with the nudge off"
echo "ok: nudge off: waits-1 still pending ${BOUND_S} s after 92 Mb/s became free on both nodes; no node labelled"
if [ "${K8S_NUDGE_MEASURE_OFF:-0}" = 1 ]; then
	wait_for 150 "waits-1 bound by the scheduler's own timer" bound waits-1
	echo "measured: nudge off: waits-1 bound $(($(ms) - t0)) ms after the room appeared"
fi
stop_pids "$R1"
kc delete pod waits-1 --grace-period 0 --force >/dev/null 2>&1
echo "$BUSY" >"$WORK/rx"
wait_for 15 "n1 and n2 back at 88 Mb/s in the scorer" rx_is "$BUSY"

# ----------------------------------------------------------- 2. nudge on
M2=$(free_port)
rebalancer r-on --metrics-listen "127.0.0.1:$M2"
wait_for 20 "the rebalancer's first cycles" cycled "$M2" 2
k8s_pods nudged 1 "kubernetes.io/ingress-bandwidth=$ASK"
wait_for 30 "nudged-1 refused by netsched" refused nudged-1
! bound nudged-1 || fail "nudged-1 was bound before the room appeared"
echo "$QUIET" >"$WORK/rx"
wait_for 15 "n1 and n2 at 8 Mb/s in the scorer" rx_is "$QUIET"
t1=$(ms)
wait_for "$BOUND_S" "nudged-1 bound within ${BOUND_S} s of the room appearing" bound nudged-1
waited=$(($(ms) - t1))
node=$(kc get pod nudged-1 -o jsonpath='{.spec.nodeName}')
grep -q "enough for default/nudged-1 (asks rx 40 Mb/s), which netsched refused and is pending: labelled netsched.io/room-nudge=" "$WORK/r-on.log" ||
	fail "the rebalancer does not say it labelled a node for nudged-1: $(grep -i nudge "$WORK/r-on.log")"
labelled || fail "no node carries the label netsched.io/room-nudge"
curl -sf "http://127.0.0.1:$M2/metrics" | grep -q '^netsched_rebalancer_nudges_total [1-9]' ||
	fail "/metrics counts no nudge"
echo "ok: nudge on: nudged-1 bound to $node ${waited} ms after the room appeared: $(grep -m1 'labelled netsched.io/room-nudge' "$WORK/r-on.log" | sed 's/.*rebalancer: //')"
echo "measured: nudge on: bound ${waited} ms after the room appeared (bound asserted: ${BOUND_S} s; off: still pending at ${BOUND_S} s)"
stop_pids "$RB_PID"
k8s_down
echo "PASS: k8s nudge"
