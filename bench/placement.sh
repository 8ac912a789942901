#!/usr/bin/env bash
# `make bench-placement`: the bandwidth pods get, placed three ways on the
# same shaped cluster, through a real kube-apiserver and kube-scheduler
# v1.20.2 whose pods really run (tests/k8s/lab.sh, kubelet.py):
#   stock     the default scheduler alone
#   netsched  a second scheduler with deploy/'s v1beta1 configuration (way
#             (a): profile netsched-scheduler, the extender with weight 5,
#             names mode, ignorable, httpTimeout 100ms), the scorer with
#             deploy/scorer.yaml's args, the agents with deploy/agent.yaml's
#             (--interfaces auto, reports signed with a key) plus
#             --link-speed; only the scorer's --log-level is debug, so the
#             bench can say why a pod went where it went
#   rebalancer  netsched as above and netsched-rebalancer with
#             deploy/rebalancer.yaml's args but acting (--dry-run=false), its
#             timing scaled as the agents' window (placement_model.py
#             SHORT_REBALANCER); only for a workload that changes after
#             placement (late, neighbour)
#   oracle    the placement that knows every pod's demand, the background
#             and the timeline (bench/placement_model.py), bound directly
#             with spec.nodeName; for a workload that changes, it moves its
#             pods itself at the change (the fewest moves that would do)
# Six nodes (n1-n3 routed, n4-n6 bridged pod networks), 4 CPUs each, at
# each link speed of PLACEMENT_SPEEDS (default "50M 500M": the machine's 2
# cores carry 500 Mb/s links with room, 1 Gb/s ones not with the bench's
# aggregate traffic; same 10x ratio). Reference workloads
# (PLACEMENT_WORKLOADS, default "burst declared steps churn egress warm
# mixed colocated"; rates are fractions of the link, so each means the same
# at both speeds): see bench/placement_model.py. A workload that learns
# (warm, colocated) runs netsched with the agents' window scaled to 6 s
# (placement.py netsched-args), as tests/k8s/test_k8s_weight.sh does. Each speed gets a fresh control plane and
# stand-in; each workload its background traffic, then the three ways one
# after the other, each in its own namespace, each starting on idle pod
# links, netsched each time with a fresh scorer and fresh agents.
# A workload that changes (late: netsched and the rebalancer start only at
# the change, the pods having been placed by the default plugins alone;
# neighbour: the nodes that took pods get a background at the change) runs
# kube-controller-manager (lab_controllers) so its Deployments' pods come
# back when evicted, with all four ways; its figures are judged from 12 s
# (2 minutes scaled) after the change.
# Prints the tables (bench/placement_report.py) with the machine line and
# writes PNG and SVG plots and the raw runs under PLACEMENT_OUT
# (default build/bench-placement).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BIN=${BINDIR:-bin}
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
. bench/lib.sh
lab_need bench-placement bench
SPEEDS=${PLACEMENT_SPEEDS:-50M 500M}
PY=bench/placement.py
WORKLOADS=${PLACEMENT_WORKLOADS:-$(python3 "$PY" list)}
WAYS=${PLACEMENT_WAYS:-stock netsched oracle}
OUT=${PLACEMENT_OUT:-${O:-build}/bench-placement}
STYLES=(${PLACEMENT_STYLES:-routed routed routed bridged bridged bridged})
T_START=$(date +%s)
k8s_init

# placement_netsched_up WORKLOAD SPEED WAY: a fresh scorer and agents (the
# workload's scaled window, debug log), and for WAY rebalancer the
# rebalancer as deploy/ ships it but acting (--dry-run=false), its timing
# scaled as the window (placement_model.SHORT_REBALANCER), then
# PLACEMENT_REBALANCER_ARGS (e.g. --min-age=0s: a workload shorter than
# --min-age could never see a move).
placement_netsched_up() {
	local extra
	mapfile -t extra < <(python3 "$PY" netsched-args "$1" scorer)
	LAB_AGENT_ARGS=$(python3 "$PY" netsched-args "$1" agent | tr '\n' ' ') \
		lab_netsched_up "$2" --log-level=debug "${extra[@]}"
	wait_for 20 "the scorer to see every node's background" lab_scorer_sees "$1" "$2"
	if [ "$3" = rebalancer ]; then
		LAB_REBALANCER_ARGS="$(python3 "$PY" netsched-args "$1" rebalancer | tr '\n' ' ') ${PLACEMENT_REBALANCER_ARGS:-}" \
			lab_rebalancer --dry-run=false
	fi
}

# placement_change_run WORKLOAD SPEED WAY late|ramp OUT: the run in the
# background; at its change (OUT/change.json) netsched and the rebalancer
# start (late), or the ramp's backgrounds (ports 5301 and up); then
# OUT/changed tells the run.
placement_change_run() {
	local w=$1 speed=$2 way=$3 change=$4 out=$5 pid node rate streams dir port=5301
	python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$w" --speed "$speed" \
		--placement "$way" --out "$out" --kubelet-state "$WORK/kubelet" >"$out/run.log" 2>&1 &
	pid=$!
	wait_for 120 "$w at $speed, $way: its change" test -s "$out/change.json"
	if [ "$change" = late ] && { [ "$way" = netsched ] || [ "$way" = rebalancer ]; }; then
		placement_netsched_up "$w" "$speed" "$way"
	fi
	while read -r node rate streams dir; do
		lab_background "$node" "$rate" "$streams" "$port" "$dir"
		port=$((port + 1))
	done < <(jq -r '.ramp[]' "$out/change.json")
	touch "$out/changed"
	wait "$pid" || fail "$w at $speed, $way: the run failed: $(tail -n 5 "$out/run.log")"
}

echo "== closed-loop placement: what pods get, stock vs netsched vs oracle"
bench_machine
rm -rf "$OUT"
mkdir -p "$OUT"
P="nsb$$"
first=${SPEEDS%% *}
lab_nodes "$P" "$first" "${STYLES[@]}"


for speed in $SPEEDS; do
	D=$OUT/$speed
	mkdir -p "$D"
	lab_shape "$speed"
	lab_up
	rm -rf "$WORK/kubelet" "$WORK/stats.csv"
	lab_kubelet
	for w in $WORKLOADS; do
		t=$(date +%s)
		change=$(python3 "$PY" change "$w")
		ways=$WAYS
		if [ "$change" != none ]; then
			# Its pods are Deployments the controllers run; the rebalancer's way too.
			lab_controllers
			ways=${PLACEMENT_CHANGE_WAYS:-stock netsched rebalancer oracle}
		fi
		lab_backgrounds < <(python3 "$PY" background "$w" "$speed")
		wait_for 40 "$w's background traffic at $speed" lab_background_ok "$w" "$speed"
		for way in $ways; do
			O=$D/$w-$way
			mkdir -p "$O"
			if [ "$way" = netsched ] || [ "$way" = rebalancer ]; then
				[ "$change" = late ] || placement_netsched_up "$w" "$speed" "$way"
			fi
			if [ "$change" = none ]; then
				python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$w" --speed "$speed" \
					--placement "$way" --out "$O" --kubelet-state "$WORK/kubelet" \
					${LAB_SC_HEALTH:+--scorer "http://127.0.0.1:$LAB_SC_HEALTH"} ||
					fail "$w at $speed, $way: the run failed"
			else
				placement_change_run "$w" "$speed" "$way" "$change" "$O"
			fi
			if [ -n "${LAB_AGENTS[*]:-}" ]; then
				lab_rebalancer_stop
				lab_netsched_down
				cp "$WORK/scorer.log" "$O/scorer.log"
				[ "$way" = rebalancer ] && cp "$WORK/$LAB_RB_LOG.log" "$O/rebalancer.log"
			fi
			if [ "$change" = ramp ]; then
				# The ramp ends with the way; the workload's own background stays.
				lab_background_stop
				lab_backgrounds < <(python3 "$PY" background "$w" "$speed")
			fi
		done
		lab_background_stop
		[ "$change" = none ] || lab_controllers_stop
		echo "  $w at $speed: $(($(date +%s) - t)) s"
	done
	lab_kubelet_stop
	cp "$WORK/kubelet/results.jsonl" "$WORK/stats.csv" "$D/"
	cp "$WORK/kubelet.log" "$D/kubelet.log"
	cp -r "$WORK/kubelet/out" "$D/iperf3"
	cp "$WORK/scheduler-$K8S_RUN.log" "$D/sched-stock.log"
	cp "$WORK/nsched-$K8S_RUN.log" "$D/sched-netsched.log"
	k8s_down
done
REPORT_WAYS=stock,netsched,rebalancer,oracle
[ -n "${PLACEMENT_WAYS:-}" ] && REPORT_WAYS="${WAYS// /,},rebalancer"
python3 "$PY" report "$OUT" --plots "$OUT" --ways "$REPORT_WAYS" ${PLACEMENT_DETAIL:+--pods} ||
	fail "the report failed"
echo "${PLACEMENT_NAME:-bench-placement}: $(($(date +%s) - T_START)) s in all; raw runs and plots in $OUT"
