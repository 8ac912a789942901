#!/usr/bin/env bash
# Traffic both ways through the real kube-scheduler v1.20.2 with netsched as
# deploy/ ships it (scorer and agents with deploy/'s args, --direction
# included), on the closed-loop lab (tests/k8s/lab.sh): four nodes with
# 50 Mb/s uplinks shaped both ways, background traffic into some nodes and
# out of others, the kubelet stand-in running the pods' traffic, each pod
# receiving (dir=rx) or sending (dir=tx), declaring nothing
# (bench/placement_model.py):
#  1. "senders": n1 and n2 send 95% of their links, n3 and n4 receive 60%
#     and send nothing; 6 pods that send 20% each, at once: at most one
#     lands on the two nodes whose tx is saturated while n3's and n4's tx is
#     idle, and the pods' traffic crossed n3's and n4's links;
#  2. "oneway": n1 and n2 receive 50%, n3 and n4 send 50%; 3 pods that
#     receive and 3 that send 20% each, at once, declaring it
#     (kubernetes.io/ingress- and egress-bandwidth: a pod of no known
#     demand is judged by each node's busier direction, all alike here):
#     at most one pod in all lands where its own direction is the busy one
#     (a receiver on n1 or n2, a sender on n3 or n4) while the other side
#     is idle in it. Every node has room for one pod of each kind, so the
#     bandwidth filter passes them all: this is netsched's scores.
# A scorer that judges received traffic alone (LAB_SCORER_ARGS=
# --direction=rx) fails both: it sees n1 and n2 idle in 1 and n3 and n4
# idle in 2. A fresh scorer and fresh agents for each part, so one part's
# background is not in the other's averages. A placement outcome with a
# margin, not a timing: make bench-placement says what the pods got.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-direction test
PY=bench/placement.py
# Where netsched puts pods, not whether it answers within deploy/'s 100 ms
# while other work loads the 2 cores (test_k8s_weight.sh says why).
LAB_HTTP_TIMEOUT=2s
k8s_init

P="nsd$$"
lab_nodes "$P" 50M routed routed bridged bridged
lab_up
lab_kubelet

# part WORKLOAD: its background, a fresh netsched, the burst placed by it.
part() {
	lab_backgrounds < <(python3 "$PY" background "$1" 50M)
	wait_for 30 "$1's background" lab_background_ok "$1" 50M
	lab_netsched_up 50M
	wait_for 30 "the scorer to see $1's background" lab_scorer_sees "$1" 50M
	python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$1" --speed 50M \
		--placement netsched --out "$WORK/$1" --kubelet-state "$WORK/kubelet" --run-for 2 ||
		fail "the $1 burst failed"
	lab_netsched_down
	lab_background_stop
}
# on WORKLOAD GROUP NODE...: how many of the group's pods went to those nodes.
on() {
	local w=$1 g=$2
	shift 2
	jq --arg g "$g" --arg nodes " $* " \
		'[.pods[] | select(.group == $g and ((.node // "-") as $n | $nodes | contains(" \($n) ")))] | length' "$WORK/$w/run.json"
}
placed() {
	jq -r '[.pods | group_by(.node)[] | "\(.[0].node // "Pending"): \(map(.group[0:1]) | join(""))"] | join(", ")' \
		"$WORK/$1/run.json"
}
skipped() {
	local n
	n=$(grep -c 'Skipping extender' "$WORK/nsched-$K8S_RUN.log")
	[ "$n" -eq 0 ] || echo " (the scheduler skipped netsched $n times so far)"
}

# ------------------------------------------------ 1. senders next to senders
part senders
all=$(jq '[.pods[] | select(.node != null)] | length' "$WORK/senders/run.json")
[ "$all" = 6 ] || fail "senders: only $all of 6 pods were placed: $(placed senders)$(skipped)"
busy=$(on senders upload n1 n2)
[ "$busy" -le 1 ] ||
	fail "senders: $busy of 6 senders on n1 and n2, whose tx was saturated, while n3's and n4's was idle: $(placed senders)$(skipped)"
ran=$(jq -s '[.[] | select(.namespace == "senders-netsched" and .dir == "tx" and .bytes > 0 and (.node == "n3" or .node == "n4"))] | length' \
	"$WORK/kubelet/results.jsonl")
[ "$ran" -ge 5 ] || fail "senders: only $ran pods sent over n3's and n4's links: $(cat "$WORK/kubelet/results.jsonl")"
echo "ok: senders: $(placed senders) (u: sends): $busy on the tx-saturated links; $ran sent over n3 and n4"

# --------------------------------------- 2. receivers and senders, one way busy
part oneway
all=$(jq '[.pods[] | select(.node != null)] | length' "$WORK/oneway/run.json")
[ "$all" = 6 ] || fail "oneway: only $all of 6 pods were placed: $(placed oneway)$(skipped)"
wrong=$(($(on oneway reader n1 n2) + $(on oneway writer n3 n4)))
[ "$wrong" -le 1 ] ||
	fail "oneway: $wrong pods where their own direction was the busy one (receivers on n1/n2, senders on n3/n4) while the other side was idle in it: $(placed oneway)$(skipped)"
echo "ok: oneway: $(placed oneway) (r: receives, w: sends): $wrong where its own direction was busy"
lab_kubelet_stop
k8s_down
echo "PASS: k8s direction"
