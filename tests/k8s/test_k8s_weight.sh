#!/usr/bin/env bash
# What a pod that declares nothing weighs, through the real kube-scheduler
# v1.20.2 with netsched as deploy/ ships it, on the closed-loop lab
# (tests/k8s/lab.sh: six nodes with shaped uplinks, background at 85, 85,
# 40, 20, 20 and 5% of the link, the kubelet stand-in running the pods'
# traffic and wiring them routed or bridged, the agents measuring pods'
# interfaces), at 50 and 500 Mb/s (the 2 cores carry 500 Mb/s links, not
# 1 Gb/s ones: the lab's 10x ratio). Two runs (bench/placement_model.py),
# the first at both speeds, the second at 500 Mb/s only (it takes 40 s;
# its figures are shares of the link like the first's):
#  1. cold ("burst"): nothing learned, nothing of it running; ten pods of
#     a Deployment, 20% of the link each, at once: they weigh the fallback
#     (scorer/pods/podweight.h: a share of each node's free link);
#  2. learned ("learned"): two pods each of a heavy (20%) and a light (2%)
#     Deployment run until netsched has learned what they move (the agents
#     here use a 6 s window, deploy/ 60 s), then each is scaled up by 8 at
#     once: the new pods weigh their workload's learned demand.
# Each time no node is pushed over its link while another still has room
# for a heavy pod, and no heavy pod lands on the 85% links; in run 2 the
# scaled-up pods weighed what was learned (/v1/nodes says so of each pod in
# flight) and the light ones brought no doubt, so they may pack, and the
# pods that ran gave way to their agents' measurement (/metrics). Run 1 fails
# with the old flat 10 Mb/s weight at 500 Mb/s (5 pods on the 5% node).
# A placement outcome with a margin, not a timing; what the pods got is
# make bench-placement's to say.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-weight test
PY=bench/placement.py
# Learned within the run: the agents' window is deploy/'s 60 s scaled to
# the lab's 6 s, and the scorer's in-flight hold and fade with it (deploy/:
# 10 s of start-up plus a window, then a window), so a pod that runs is not
# weighed twice, measured and in flight, for 130 s of a 40 s run. A pod is
# learned from 10 s of start-up and a window and a half after it started.
LAB_AGENT_ARGS="--window=6s --pod-interval=3s"
SCORER_ARGS=(--inflight-hold=16s --inflight-fade=6s)
# Where netsched puts pods, not whether it answers within deploy/'s 100 ms
# while other work loads the 2 cores: an extender that times out is skipped
# (ignorable) and the default scheduler places that pod alone.
# test_k8s_deploy.sh and test_k8s_failures.sh hold the shipped timeout.
LAB_HTTP_TIMEOUT=2s
k8s_init

P="nsw$$"
lab_nodes "$P" 50M routed routed routed bridged bridged bridged
lab_up
lab_kubelet

# run WORKLOAD SPEED: netsched places it, in namespace WORKLOAD-SPEED.
run() {
	python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$1" --speed "$2" \
		--placement netsched --namespace "$1-${2,,}" --out "$WORK/$1-$2" \
		--kubelet-state "$WORK/kubelet"
}
# check WORKLOAD SPEED PODS: every pod placed, none on the 85% links, and no
# node over its link while another has room for a heavy pod (20%); each
# node's load is its background plus 20 (heavy) or 2 (light) a pod.
check() {
	local n bg heavy light load over=0 room=0 busy=0 placed loads="" skipped
	placed=$(jq '[.pods[] | select(.node != null)] | length' "$WORK/$1-$2/run.json")
	for n in n1 n2 n3 n4 n5 n6; do
		heavy=$(jq "[.pods[] | select(.node == \"$n\" and .group == \"heavy\")] | length" "$WORK/$1-$2/run.json")
		light=$(jq "[.pods[] | select(.node == \"$n\" and .group == \"light\")] | length" "$WORK/$1-$2/run.json")
		case $n in n1 | n2) bg=85 ;; n3) bg=40 ;; n4 | n5) bg=20 ;; n6) bg=5 ;; esac
		load=$((bg + 20 * heavy + 2 * light))
		loads+="$n ${heavy}h${light}l ($load%) "
		[ "$load" -gt 100 ] && over=$((over + 1))
		[ $((load + 20)) -le 100 ] && room=$((room + 1))
		case $n in n1 | n2) busy=$((busy + heavy)) ;; esac
	done
	# Placed without netsched's answers, if the scheduler skipped it.
	skipped=$(grep -c 'Skipping extender' "$WORK/nsched-$K8S_RUN.log")
	[ "$skipped" -eq 0 ] || loads+="(the scheduler skipped netsched $skipped times so far) "
	[ "$placed" = "$3" ] || fail "$1 at $2: only $placed of $3 pods were placed: $loads"
	[ "$busy" -eq 0 ] || fail "$1 at $2: netsched put $busy heavy pods on the 85% links: $loads"
	[ "$over" -eq 0 ] || [ "$room" -eq 0 ] ||
		fail "$1 at $2: $over node(s) pushed over their link while $room had room: $loads"
	echo "ok: $1 at $2: $loads"
}
# weighed HOW: distinct pods in flight that weigh HOW (/v1/nodes).
weighed() {
	curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/nodes" |
		jq "[.nodes[].inflight.list[] | select(.weighs == \"$1\") | .pod] | unique | length"
}
scaled_up_learned() { [ "$(weighed learned)" -ge 16 ]; }

for speed in 50M 500M; do
	lab_shape "$speed"
	lab_backgrounds < <(python3 "$PY" background burst "$speed")
	wait_for 40 "the background at $speed" lab_background_ok burst "$speed"
	lab_netsched_up "$speed" "${SCORER_ARGS[@]}"
	wait_for 40 "the scorer to see every node's background at $speed" lab_scorer_sees burst "$speed"

	run burst "$speed" || fail "the cold burst at $speed failed"
	check burst "$speed" 10

	if [ "$speed" != 500M ]; then
		lab_netsched_down
		lab_background_stop
		continue
	fi
	run learned "$speed" &
	RUN=$!
	PIDS+=("$RUN")
	wait_for 60 "the 16 scaled-up pods in flight, weighing what was learned" \
		scaled_up_learned
	guessed=$(weighed guessed)
	wait "$RUN" || fail "the learned run at $speed failed"
	# The workloads as learned from the two pods each and the scaled-up ones.
	learned=$(curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/workloads" |
		jq -r --arg ns "learned-${speed,,}" '[.workloads[] | select(.namespace == $ns) |
			"\(.name) \(.rxBytesPerSecond * 8 / 1000000 | floor) Mb/s"] | join(", ")')
	heavy_bps=$(curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/workloads" |
		jq --arg ns "learned-${speed,,}" '[.workloads[] | select(.namespace == $ns and .name == "heavy") | .rxBytesPerSecond * 8][0] // 0 | floor')
	link=$(lab_bps "$speed")
	[ "$heavy_bps" -ge $((link / 10)) ] && [ "$heavy_bps" -le $((link * 3 / 10)) ] ||
		fail "learned at $speed: heavy learned $heavy_bps b/s, asked 20% of $link ($learned)"
	[ "$guessed" -le 4 ] || fail "learned at $speed: $guessed pods in flight weighed a guess; only the first 4 may"
	check learned "$speed" 20
	# The pods that ran were measured by their agents, so their weight
	# gave way to it (README.md, "Pods in flight"): at least the four
	# that ran before the scale-up, measured whole within their hold.
	measured=$(curl -s "http://127.0.0.1:$LAB_SC_HEALTH/metrics" |
		awk '$1 == "netsched_scorer_inflight_total{event=\"measured\"}" { print $2 }')
	[ "${measured:-0}" -ge 4 ] ||
		fail "learned at $speed: ${measured:-no} pods in flight gave way to their agents' measurement; the 4 that ran first must"
	echo "ok: learned at $speed: $learned; the scaled-up pods weighed it, $guessed earlier ones a guess; $measured measured whole"
	lab_netsched_down
	lab_background_stop
done
lab_kubelet_stop
k8s_down
echo "PASS: k8s weight"
