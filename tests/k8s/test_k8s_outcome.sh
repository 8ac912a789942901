#!/usr/bin/env bash
# The closed loop's outcome (tests/k8s/lab.sh): four nodes with 50 Mb/s
# shaped uplinks, n1 and n2 saturated by background traffic, n3 and n4
# idle; a real kube-apiserver and two kube-schedulers v1.20.2, the stock one
# and netsched's as deploy/ ships it (scorer and agents with deploy/'s args);
# the kubelet stand-in runs the pods' traffic. A Deployment's burst of 6
# pods that each receive 10 Mb/s and declare nothing (bench/placement.py
# run, workload "outcome"):
#  1. the stock scheduler spreads them evenly, so some land on the
#     saturated links (else the test proves nothing);
#  2. through netsched, none is stacked on a saturated link while the idle
#     ones have room (at most one, a generous margin), and the pods really
#     ran: their traffic crossed n3's and n4's links.
# A placement outcome, not a timing: the bench (make bench-placement) says
# how much bandwidth each way delivers.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-outcome test
k8s_init

P="nso$$"
lab_nodes "$P" 50M routed routed bridged bridged
lab_up
lab_kubelet
lab_backgrounds < <(python3 bench/placement.py background outcome 50M)
saturated() { [ "$(lab_uplink_bps n1)" -ge 43000000 ] && [ "$(lab_uplink_bps n2)" -ge 43000000 ]; }
wait_for 20 "n1 and n2 above 86% of their 50 Mb/s links" saturated
echo "ok: background: n1 $(lab_uplink_bps n1) b/s, n2 $(lab_uplink_bps n2) b/s, n3 $(lab_uplink_bps n3) b/s"

# burst WAY: the workload placed that way; prints "n1 n2 n3 n4" pod counts.
burst() {
	python3 bench/placement.py run --kubeconfig "$WORK/kubeconfig" --workload outcome --speed 50M \
		--placement "$1" --out "$WORK/outcome-$1" --kubelet-state "$WORK/kubelet" --run-for 2 ||
		fail "the $1 burst failed"
}
on() { jq "[.pods[] | select(.node == \"$2\")] | length" "$WORK/outcome-$1/run.json"; }
placed() { echo "n1 $(on "$1" n1), n2 $(on "$1" n2), n3 $(on "$1" n3), n4 $(on "$1" n4)"; }

# ------------------------------------------------------------- 1. stock
burst stock
busy=$(($(on stock n1) + $(on stock n2)))
[ "$busy" -ge 2 ] || fail "the stock scheduler put only $busy of 6 pods on n1 and n2 ($(placed stock)): the comparison proves nothing"
echo "ok: stock: $(placed stock): $busy of 6 on the saturated links"

# ---------------------------------------------------------- 2. netsched
lab_netsched_up 50M
sees() {
	curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/nodes" |
		jq -e '[.nodes[] | select((.name == "n1" or .name == "n2") and .source == "agent" and .rxBytesPerSecond * 8 > 40000000)] | length == 2' >/dev/null
}
wait_for 20 "the scorer to see n1 and n2 saturated" sees
burst netsched
busy=$(($(on netsched n1) + $(on netsched n2)))
[ "$busy" -le 1 ] || fail "netsched stacked $busy of 6 pods on the saturated n1 and n2 ($(placed netsched)) while n3 and n4 had room"
ran=$(jq -s "[.[] | select(.namespace == \"outcome-netsched\" and .bytes > 0 and (.node == \"n3\" or .node == \"n4\"))] | length" \
	"$WORK/kubelet/results.jsonl")
[ "$ran" -ge 5 ] || fail "only $ran of netsched's pods moved traffic over n3's and n4's links: $(cat "$WORK/kubelet/results.jsonl")"
echo "ok: netsched: $(placed netsched): $busy on the saturated links; $ran pods' traffic crossed n3 and n4"
lab_netsched_down
k8s_down
echo "PASS: k8s outcome"
