#!/usr/bin/env bash
# A learned Deployment scaled up next to graded nodes, through the real
# kube-scheduler v1.20.2 with netsched as deploy/ ships it (--direction
# included), on the closed-loop lab (tests/k8s/lab.sh): six nodes with
# 50 Mb/s uplinks shaped both ways, sending 90, 74, 58, 42, 26 and 10% of
# their links and receiving 0, 0, 20, 40, 50 and 60% (the less a node
# sends, the more it receives), the kubelet stand-in running the pods' traffic
# (bench/placement_model.py, workload "warm-tx"): four pods of a Deployment,
# each sending 20% of the link and declaring nothing, run until the
# scorer's /v1/workloads says it learned what they move (the agents' window
# scaled from deploy/'s 60 s to 6 s and the in-flight hold with it, as
# test_k8s_weight.sh does; and the pods sending for that window first: on
# a loaded machine their senders start late; 120 s at most), then the Deployment is scaled up
# by 8 at once (2.4 links asked, 2.7 free in all). Then:
#  - every pod is placed and the Deployment was learned sending what its
#    first replicas' senders counted (half the least to twice the most;
#    20% of the link when the machine lets them send it);
#  - no new replica lands on the 90% node (its 2.8 Mb/s free take none),
#    though the default plugins' spreading pulls toward it (it has none),
#    when they were learned moving more than it has free;
#  - nor did any of the first four, placed cold (nothing known of them: a
#    pod of no known demand is judged by each node's busier direction).
# A scorer that judges received traffic alone (LAB_SCORER_ARGS=
# --direction=rx) fails the last: n1 receives nothing, so it looked the
# idlest for the cold replicas. With --fit-filter=off besides (the scorer
# before fit) it fails the second too: nothing holds the learned replicas
# to the room each node has to send. make bench-placement's "warm" is the
# same with receivers next to nodes graded by what they receive. A
# placement outcome, not a timing: the bench says what the pods got.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-warm test
PY=bench/placement.py
W=warm-tx
mapfile -t SCORER_ARGS < <(python3 "$PY" netsched-args "$W" scorer)
LAB_AGENT_ARGS=$(python3 "$PY" netsched-args "$W" agent | tr '\n' ' ')
# Where netsched puts pods, not whether it answers within deploy/'s 100 ms
# while other work loads the 2 cores (test_k8s_weight.sh says why).
LAB_HTTP_TIMEOUT=2s
k8s_init

P="nsm$$"
lab_nodes "$P" 50M routed routed routed bridged bridged bridged
lab_up
lab_kubelet

lab_backgrounds < <(python3 "$PY" background "$W" 50M)
wait_for 30 "the graded background" lab_background_ok "$W" 50M
lab_netsched_up 50M "${SCORER_ARGS[@]}"
wait_for 30 "the scorer to see every node's background" lab_scorer_sees "$W" 50M
python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload "$W" --speed 50M --placement netsched \
	--out "$WORK/$W" --kubelet-state "$WORK/kubelet" --scorer "http://127.0.0.1:$LAB_SC_HEALTH" ||
	fail "the warm run failed"
R=$WORK/$W/run.json
loads=$(jq -r '[.pods | group_by(.node)[] | "\(.[0].node // "Pending"): \(length)"] | join(", ")' "$R")
skipped=$(grep -c 'Skipping extender' "$WORK/nsched-$K8S_RUN.log")
[ "$skipped" -eq 0 ] || loads+=" (the scheduler skipped netsched $skipped times)"
placed=$(jq '[.pods[] | select(.node != null)] | length' "$R")
[ "$placed" = 12 ] || fail "only $placed of 12 pods were placed: $loads"
learned=$(jq '.learned.web.learned // false' "$R")
bps=$(jq '.learned.web.txBps // 0 | floor' "$R")
[ "$learned" = true ] || fail "the scorer had not learned the Deployment before the scale-up: $(jq -c .learned "$R")"
# What the first 4 replicas really sent, by their own senders' count (the
# stand-in's results): asked 10 Mb/s, they get less when the machine's
# other work starves them, and the scorer is right to learn what they got.
# The scorer's figure is the 90th percentile of each pod's latest windowed
# rate; a loaded machine starves some senders more than others, so it is
# judged against the spread of what each replica sent (half the least to
# twice the most), not their mean (9.6 Mb/s learned from replicas that sent
# 4.0 Mb/s on average, one of them the full 10).
cold=$(jq -r --slurpfile run "$R" '. as $x | select(any($run[0].pods[]; .uid == $x.uid
	and .created < $run[0].learnAt)) | .bps' "$WORK/kubelet/results.jsonl" |
	awk 'NR == 1 { lo = hi = $1 } { s += $1; n++; if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { if (n) printf "%d %d %d %d", n, s / n, lo, hi; else print "0 0 0 0" }')
read -r cold_n cold_bps cold_lo cold_hi <<<"$cold"
[ "$cold_n" -ge 1 ] || fail "no result of the first 4 replicas' traffic: $(cat "$WORK/kubelet/results.jsonl")"
# Starved senders (under half the 10 Mb/s asked: two busy loops beside the
# suite) send unevenly over time, and their totals cover their whole run,
# not the window the scorer learned from (1.2 Mb/s learned from replicas
# that sent 3.7-4.3 over their run): then only the upper bound, and a
# figure above zero, are judged.
lower=$((cold_lo / 2))
if [ "$cold_lo" -lt 5000000 ]; then
	lower=1
	echo "note: the first replicas were starved ($cold_lo..$cold_hi b/s of 10 Mb/s asked): the learned figure is judged against their most only"
fi
[ "$bps" -ge "$lower" ] && [ "$bps" -le $((cold_hi * 2 + 1000000)) ] ||
	fail "the Deployment was learned sending $bps b/s a pod; its first $cold_n replicas sent $cold_lo..$cold_hi b/s each (asked 10 Mb/s): $(jq -c .learned "$R")"
echo "ok: learned sending $((bps / 1000)) kb/s a pod (its replicas sent $((cold_lo / 1000))..$((cold_hi / 1000)) kb/s, $((cold_bps / 1000)) on average; asked 10,000) after waiting $(jq '.learnWait | floor' "$R") s past 24 s"
# The 8 pods created at the scale-up (created at or after learnAt). n1
# sends 90% of its 50 Mb/s: at most 5 Mb/s free. Replicas learned to move
# less than that fit there (a machine too busy to let them send more).
new_n1=$(jq '. as $r | [.pods[] | select(.created >= $r.learnAt and .node == "n1")] | length' "$R")
if [ "$bps" -gt 5000000 ]; then
	[ "$new_n1" -eq 0 ] || fail "$new_n1 of the 8 new replicas went to n1, sending 90% of its link: $loads"
	echo "ok: scaled up by 8: $loads; none of the new replicas on the 90% node"
else
	echo "note: replicas learned at $((bps / 1000)) kb/s fit n1's room; $new_n1 of the new went there: $loads"
fi
cold_n1=$(jq '[.pods[] | select(.node == "n1")] | length' "$R")
[ "$cold_n1" -eq "$new_n1" ] || fail "$((cold_n1 - new_n1)) of the first 4 replicas, placed cold, went to n1, sending 90% of its link: $loads"
echo "ok: none of the first 4 (cold) on the 90% node either"
lab_netsched_down
lab_background_stop
lab_kubelet_stop
k8s_down
echo "PASS: k8s warm"
