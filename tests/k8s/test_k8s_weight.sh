#!/usr/bin/env bash
# What a pod that declares nothing weighs, through the real kube-scheduler
# v1.20.2 with netsched as deploy/ ships it, on the closed-loop lab
# (tests/k8s/lab.sh: six nodes with shaped uplinks, graded background,
# the kubelet stand-in running the pods' traffic), at two link speeds, 50
# and 500 Mb/s (the 2 cores carry 500 Mb/s links, not 1 Gb/s ones: the
# lab's 10x ratio). Cold: nothing learned and nothing of the burst running
# (scorer/podweight.h: the fallback; its doubt is a share of each node's
# free link). bench/placement_model.py's "burst": background at 85, 85,
# 40, 20, 20 and 5% of the link; ten pods of a Deployment, 20% of the
# link each, created at once. At both speeds no node is pushed over its
# link by the burst while another still has room for one of these pods,
# and none lands on the 85% links. (With the old flat 10 Mb/s weight, the
# 500 Mb/s burst put 5 of the 10 on the 5% node: 105%.)
# A placement outcome with a margin, not a timing; what the pods got is
# make bench-placement's to say.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
need_root k8s-weight
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps test)"
PY=bench/placement.py
k8s_init

P="nsw$$"
lab_nodes "$P" 50M routed routed routed bridged bridged bridged

# rates_ok SPEED: every uplink carries 85% of its background (stand-in).
rates_ok() {
	local node rate streams
	while read -r node rate streams; do
		[ "$(lab_uplink_bps "$node")" -ge $((rate * 85 / 100)) ] || return 1
	done < <(python3 "$PY" background burst "$1")
}
# scorer_ok SPEED: the scorer sees 80% of each node's background.
scorer_ok() {
	local node rate streams got
	while read -r node rate streams; do
		got=$(curl -s "http://127.0.0.1:$LAB_SC_HTTP/v1/nodes" |
			jq -r ".nodes[] | select(.name == \"$node\" and .source == \"agent\") | .rxBytesPerSecond * 8 | floor")
		[ "${got:-0}" -ge $((rate * 80 / 100)) ] || return 1
	done < <(python3 "$PY" background burst "$1")
}

# Each speed on a fresh control plane and stand-in, as make bench-placement
# runs them (a run's namespace is named after its workload and way).
for speed in 50M 500M; do
	lab_shape "$speed"
	lab_up
	rm -rf "$WORK/kubelet" "$WORK/stats.csv"
	lab_kubelet
	lab_backgrounds < <(python3 "$PY" background burst "$speed")
	wait_for 20 "the background at $speed" rates_ok "$speed"
	lab_netsched_up "$speed"
	wait_for 20 "the scorer to see every node's background at $speed" scorer_ok "$speed"
	python3 "$PY" run --kubeconfig "$WORK/kubeconfig" --workload burst --speed "$speed" \
		--placement netsched --out "$WORK/burst-$speed" --kubelet-state "$WORK/kubelet" ||
		fail "the burst at $speed failed"
	lab_netsched_down
	lab_background_stop
	# Each node's load in percent of its link: background + 20 a pod.
	loads=""
	over=0 room=0 busy=0
	for n in n1 n2 n3 n4 n5 n6; do
		pods=$(jq "[.pods[] | select(.node == \"$n\")] | length" "$WORK/burst-$speed/run.json")
		case $n in n1 | n2) bg=85 ;; n3) bg=40 ;; n4 | n5) bg=20 ;; n6) bg=5 ;; esac
		load=$((bg + 20 * pods))
		loads+="$n $pods ($load%) "
		[ "$load" -gt 100 ] && over=$((over + 1))
		[ $((load + 20)) -le 100 ] && room=$((room + 1))
		case $n in n1 | n2) busy=$((busy + pods)) ;; esac
	done
	placed=$(jq '[.pods[] | select(.node != null)] | length' "$WORK/burst-$speed/run.json")
	[ "$placed" = 10 ] || fail "at $speed only $placed of 10 pods were placed: $loads"
	[ "$busy" -eq 0 ] || fail "at $speed netsched put $busy pods on the 85% links: $loads"
	[ "$over" -eq 0 ] || [ "$room" -eq 0 ] ||
		fail "at $speed the burst pushed $over node(s) over their link while $room had room: $loads"
	echo "ok: burst at $speed, nothing learned: $loads"
	lab_kubelet_stop
	k8s_down
done
echo "PASS: k8s weight"
