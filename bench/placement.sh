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
#   oracle    the placement that knows every pod's demand, the background
#             and the timeline (bench/placement_model.py), bound directly
#             with spec.nodeName
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
		lab_backgrounds < <(python3 "$PY" background "$w" "$speed")
		wait_for 40 "$w's background traffic at $speed" lab_background_ok "$w" "$speed"
		for way in $WAYS; do
			if [ "$way" = netsched ]; then
				mapfile -t extra < <(python3 "$PY" netsched-args "$w" scorer)
				LAB_AGENT_ARGS=$(python3 "$PY" netsched-args "$w" agent | tr '\n' ' ') \
					lab_netsched_up "$speed" --log-level=debug "${extra[@]}"
				wait_for 20 "the scorer to see every node's background" lab_scorer_sees "$w" "$speed"
			fi
			python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$w" --speed "$speed" \
				--placement "$way" --out "$D/$w-$way" --kubelet-state "$WORK/kubelet" \
				${LAB_SC_HEALTH:+--scorer "http://127.0.0.1:$LAB_SC_HEALTH"} ||
				fail "$w at $speed, $way: the run failed"
			if [ "$way" = netsched ]; then
				lab_netsched_down
				cp "$WORK/scorer.log" "$D/$w-$way/scorer.log"
			fi
		done
		lab_background_stop
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
python3 "$PY" report "$OUT" --plots "$OUT" --ways "${WAYS// /,}" ${PLACEMENT_DETAIL:+--pods} ||
	fail "the report failed"
echo "${PLACEMENT_NAME:-bench-placement}: $(($(date +%s) - T_START)) s in all; raw runs and plots in $OUT"
