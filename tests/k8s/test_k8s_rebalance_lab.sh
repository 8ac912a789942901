#!/usr/bin/env bash
# The rebalancer through the real control plane with the real scorer, on
# the closed-loop lab (tests/k8s/lab.sh): kube-apiserver, kube-scheduler
# (stock and netsched's, deploy/'s config) and kube-controller-manager
# v1.20.2 (lab_controllers: the ReplicaSet recreates an evicted pod, the
# disruption controller computes the PDB's status), the kubelet stand-in
# running every pod's traffic, an agent per node reporting to the scorer
# as deploy/ ships them (window scaled to 6 s), the rebalancer with
# deploy/rebalancer.yaml's args and its timing scaled the same way
# (bench/placement_model.py SHORT_REBALANCER; --min-age 10 s here).
#
# Four nodes with 50 Mb/s uplinks. Every node runs a pod of the DaemonSet
# ds (receiving 4 Mb/s). Placed by netsched's scheduler while every link
# is idle, the ReplicaSet web's 2 pods (8 Mb/s each) and guarded's 1
# (6 Mb/s, a PDB with maxUnavailable 0) land on n1, where a required node
# affinity puts them (a preference alone lost to netsched's score for the
# second web pod in some runs). Then web's template only prefers n1, so its
# replacement may go elsewhere but is drawn back. Neighbours ramp up: n1 receives a
# background of 22 Mb/s (its link saturated: 48 Mb/s asked), n2 25 and n3
# 12 Mb/s; n4 stays idle. Then:
#  - dry run (deploy/'s default): the rebalancer says what it would move
#    and changes nothing: no pod evicted, no hold or reservation in the
#    scorer's GET /v1/moves;
#  - --dry-run=false: it evicts one pod of n1, a web pod (ds is a
#    DaemonSet's, guarded's PDB answers 429 if tried); the ReplicaSet's
#    replacement lands on the destination the rebalancer planned, not on
#    n1, where its affinity pulls it (the default plugins' 100 points
#    against the extender's 50 at most). What keeps it off n1: the scorer
#    drops n1 for web in its filter, held by the move (and, as n1 is still
#    counted with the evicted pod's rate, by the fit filter and the
#    saturation filter too: with --hold=1s this test still passes; the
#    hold alone is tests/unit/test_moves_extender's);
#  - for the cycles after (n1 relieved: 40 of 50 Mb/s asked), no other
#    pod is evicted, no pod twice, the DaemonSet's pods and guarded stay
#    (the PDB's status, computed by the disruption controller, never
#    allowed a disruption).
# A placement outcome and a count of evictions, not a timing: every wait
# is a bounded poll.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-rebalance-lab test
[ -x "$BIN/netsched-rebalancer" ] || fail "no $BIN/netsched-rebalancer (run make)"
PY=bench/placement.py
mapfile -t SCORER_ARGS < <(python3 "$PY" netsched-args warm scorer)
LAB_AGENT_ARGS=$(python3 "$PY" netsched-args warm agent | tr '\n' ' ')
LAB_REBALANCER_ARGS="$(python3 "$PY" netsched-args warm rebalancer | tr '\n' ' ') --min-age=10s"
LAB_HTTP_TIMEOUT=2s
k8s_init

P="nrb$$"
lab_nodes "$P" 50M routed routed bridged bridged
lab_up
lab_controllers
lab_kubelet
lab_netsched_up 50M "${SCORER_ARGS[@]}"

traffic() { # RATE: the stand-in's annotation, received from the hub
	echo "{netsched.test/traffic: \"rate=$1,dir=rx,delay=1s,duration=3600s\"}"
}
rs() { # NAME REPLICAS RATE
	cat <<YAML
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata:
      labels: {app: $1}
      annotations: $(traffic "$3")
    spec:
      schedulerName: netsched-scheduler
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]
      containers: [{name: c, image: netsched.invalid/pause, resources: {requests: {cpu: 100m}}}]
YAML
}
{
	cat <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata:
      labels: {app: ds}
      annotations: $(traffic 4M)
    spec: {containers: [{name: c, image: netsched.invalid/pause, resources: {requests: {cpu: 100m}}}]}
YAML
	k8s_pdb_yaml guarded
	rs web 2 8M
	rs guarded 1 6M
} >"$WORK/apps.yaml"
kc create -f "$WORK/apps.yaml" >/dev/null || fail "cannot create the DaemonSet, the ReplicaSets and the PDB"

# name uid node deletionTimestamp, one a line, every pod.
pods() {
	kc get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid} {.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp}{"\n"}{end}'
}
running_on() { # APP NODE COUNT
	[ "$(pods | awk -v a="$1-" -v n="$2" 'index($1, a) == 1 && $3 == n && $4 == "Running" && NF == 4' | wc -l)" -eq "$3" ]
}
wait_for 60 "4 DaemonSet pods Running" sh -c "[ \$(\"$K8S_BIN/kubectl\" --kubeconfig \"$WORK/kubeconfig\" get pods -l app=ds \
	-o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running) -eq 4 ]"
wait_for 60 "web's 2 pods Running on n1" running_on web n1 2
wait_for 60 "guarded's pod Running on n1" running_on guarded n1 1
pods | sort >"$WORK/pods-before.txt"
healthy() { [ "$(kc get pdb guarded -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = 1/0 ]; }
wait_for 30 "the disruption controller's status of PDB guarded (1 healthy, 0 disruptions allowed)" healthy
echo "ok: placed while idle: web x2 and guarded on n1 (affinity), a ds pod on every node; PDB guarded: 1 healthy, 0 disruptions allowed"
kc patch rs web --type merge -p '{"spec": {"template": {"spec": {"affinity": {"nodeAffinity": {
	"requiredDuringSchedulingIgnoredDuringExecution": null,
	"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": [
		{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}}]}}}}}}' >/dev/null ||
	fail "cannot make web's affinity a preference"

lab_backgrounds <<'BG'
n1 22000000 4
n2 25000000 5
n3 12000000 3
BG
n1_hot() {
	lab_scorer_api '/v1/pressure?hot=0.90' | jq -e '.nodes[] | select(.name == "n1") | .pods | length >= 3' >/dev/null
}
wait_for 40 "the scorer to see n1 hot with its pods" n1_hot

# 1. Dry run, as deploy/ ships it.
lab_rebalancer
wait_for 40 "the dry run's plans" sh -c "[ \$(grep -c 'n1: rx .*dry run, would evict' \"$WORK/$LAB_RB_LOG.log\") -ge 3 ]"
lab_rebalancer_stop
[ "$(lab_scorer_api /v1/moves | jq '.moves | length')" = 0 ] || fail "the dry run posted moves: $(lab_scorer_api /v1/moves)"
diff <(pods | sort) "$WORK/pods-before.txt" >/dev/null || fail "the dry run changed pods: $(diff <(pods | sort) "$WORK/pods-before.txt")"
echo "ok: dry run: $(grep -m1 'dry run, would evict' "$WORK/$LAB_RB_LOG.log" | sed 's/.*rebalancer: //'); no pod changed, no move in the scorer"

# 2. Acting.
lab_rebalancer --dry-run=false
RB=$WORK/$LAB_RB_LOG.log
wait_for 60 "an eviction" grep -q ': evicted$' "$RB"
line=$(grep -m1 ': evicted$' "$RB")
victim=$(sed -n 's/.*evicting default\/\([^ ]*\) .*/\1/p' <<<"$line")
dest=$(sed -n 's/.*) for \([^;]*\);.*/\1/p' <<<"$line")
case $victim in web-*) ;; *) fail "evicted '$victim', want a web pod: $line" ;; esac
[ -n "$dest" ] && [ "$dest" != n1 ] || fail "no destination other than n1 read from: $line"
grep -q "^$victim .* n1 " "$WORK/pods-before.txt" || fail "evicted $victim was not one of n1's pods"
landed() { running_on web "$dest" 1; }
wait_for 60 "web's replacement Running on $dest" landed
echo "ok: $(sed 's/.*rebalancer: //' <<<"$line"); the ReplicaSet's replacement landed on $dest"
moves=$(lab_scorer_api /v1/moves)
jq -e --arg d "$dest" '.moves[] | select(.from == "n1" and .to == $d and (.workload | endswith("/web")))' <<<"$moves" >/dev/null ||
	fail "the scorer holds no move n1 -> $dest for web: $moves"

# 3. Cycles after: nothing else moves.
cycles() { curl -sf "http://127.0.0.1:$LAB_RB_METRICS/metrics" | awk '/^netsched_rebalancer_cycles_total/ { print $2 }'; }
c0=$(cycles)
wait_for 60 "15 more cycles" sh -c "[ \$(curl -sf http://127.0.0.1:$LAB_RB_METRICS/metrics | awk '/^netsched_rebalancer_cycles_total/ { print \$2 }') -ge $((c0 + 15)) ]"
n_ev=$(grep -c ': evicted$' "$RB")
[ "$n_ev" -eq 1 ] || fail "$n_ev evictions, want 1: $(grep ': evicted$' "$RB")"
pods | sort >"$WORK/pods-after.txt"
for app in ds guarded; do
	before=$(awk -v a="$app-" 'index($1, a) == 1 { print $2 }' "$WORK/pods-before.txt" | sort)
	after=$(awk -v a="$app-" 'index($1, a) == 1 && NF == 4 { print $2 }' "$WORK/pods-after.txt" | sort)
	[ "$before" = "$after" ] || fail "$app's pods changed: before $(echo $before), after $(echo $after)"
done
healthy || fail "PDB guarded: $(kc get pdb guarded -o jsonpath='{.status}')"
[ "$(awk 'index($1, "web-") == 1 && $3 == "n1"' "$WORK/pods-after.txt" | wc -l)" -eq 1 ] ||
	fail "n1 should keep one web pod: $(cat "$WORK/pods-after.txt")"
pdb=$(grep -c "PodDisruptionBudget refused" "$RB")
echo "ok: 15 cycles later still 1 eviction; ds and guarded untouched (PDB refused the eviction $pdb times), web on n1 and $dest"
lab_rebalancer_stop
lab_netsched_down
lab_background_stop
lab_kubelet_stop
k8s_down
echo "PASS: k8s rebalance lab"
