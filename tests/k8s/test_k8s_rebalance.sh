#!/usr/bin/env bash
# The rebalancer through a real kube-apiserver v1.20.2: a hot node, n-hot,
# sending 118 MB/s of its 125 MB/s (94%), carries four pods: agent-x of a
# DaemonSet (60 MB/s), bare-1 with no controller (50 MB/s), web-1 of the
# ReplicaSet web (30 MB/s) and guarded-1 of the ReplicaSet guarded (8 MB/s),
# which a PodDisruptionBudget with maxUnavailable 0 covers; n-cool sends
# 20 MB/s. guarded-1 is the pod the rebalancer wants (the smallest that
# brings n-hot under 90%), web-1 the next. Then:
#  - dry run (the default): the planned move is logged with its numbers and
#    said in an Event, and nothing is evicted, nothing posted to the scorer;
#  - two replicas, --dry-run=false, leader election on one Lease: only the
#    Lease's holder acts; the Eviction API refuses guarded-1 (429: the PDB
#    holds), the rebalancer backs off and evicts web-1 in the same cycle,
#    after posting its move (n-hot -> n-cool) to the scorer; the DaemonSet
#    pod and the bare pod are never evicted;
#  - the leader is killed: the other replica takes the Lease over and acts
#    (cycles as leader), and still evicts nothing else: what is left on
#    n-hot is protected (DaemonSet, bare, PDB, web-1 being deleted);
#  - a node whose agent lies (300% of its link, and a pod of another node
#    among its own) moves only its own pods, no more than the limits allow.
# The rebalancers run as deploy/rebalancer.yaml's ServiceAccount, with its
# RBAC as shipped (the apiserver authorizes with RBAC): what it grants is
# enough for all of the above.
# The scorer's side is tests/k8s/fake_pressure.py (the contract's JSON and
# POST /v1/moves), so the hot node is exact. No controller-manager runs:
# the PDB's status keeps disruptionsAllowed 0 and the apiserver answers
# 429 for guarded-1 whatever its budget; that web-1's eviction succeeds
# shows the 429 is the PDB's. Pods bound to a node without a kubelet stay
# Terminating: an evicted pod is one with a deletionTimestamp.
# tests/k8s/test_k8s_rebalance_lab.sh runs the same path against the real
# scorer, kube-controller-manager and pods whose traffic is real; this one
# stays for what that one cannot pin down: exact figures in the sentences,
# two scorer replicas, two rebalancers and the Lease's takeover, and
# deploy/'s RBAC enforced.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
[ -x "$BIN/netsched-rebalancer" ] || fail "no $BIN/netsched-rebalancer (run make)"
command -v etcd >/dev/null || { echo "SKIP: etcd not installed"; exit 77; }
k8s_init
# The rebalancer's ServiceAccount, as the apiserver will know it: a static token
# for its user name (no controller-manager mints ServiceAccount tokens here).
RB_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "$RB_TOKEN,system:serviceaccount:netsched:netsched-rebalancer,2000,system:serviceaccounts" >>"$WORK/pki/tokens.csv"
K8S_AUTHZ=RBAC
k8s_ports
k8s_up_api
k8s_nodes n-hot n-cool
kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
python3 - deploy/rebalancer.yaml "$WORK/rbac.yaml" <<'PY' || fail "cannot read deploy/rebalancer.yaml"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
keep = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
yaml.safe_dump_all([d for d in docs if d["kind"] in keep], open(sys.argv[2], "w"))
PY
kc create -f "$WORK/rbac.yaml" >/dev/null || fail "cannot create the rebalancer's RBAC from deploy/"
sed "s|token: $K8S_TOKEN|token: $RB_TOKEN|" "$WORK/kubeconfig" >"$WORK/rebalancer.kubeconfig"
[ "$(kc auth can-i delete pods --as system:serviceaccount:netsched:netsched-rebalancer)" = no ] ||
	fail "deploy/'s RBAC lets the rebalancer delete pods"

# The owners, then their pods with ownerReferences to them (nothing would
# create the pods: no controller-manager).
owner_rs() { # NAME
	cat <<YAML
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec: {containers: [{name: c, image: netsched.invalid/pause}]}
YAML
}
{
	owner_rs web
	owner_rs guarded
	cat <<'YAML'
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: netsched.invalid/pause}]}
YAML
	k8s_pdb_yaml guarded
} >"$WORK/owners.yaml"
kc create -f "$WORK/owners.yaml" >/dev/null || fail "cannot create the owners and the PDB"
uid_of() { kc get "$1" "$2" -o jsonpath='{.metadata.uid}'; }
pod() { # NAME APP [KIND OWNER]
	local owner=""
	[ -n "${3:-}" ] && owner="ownerReferences: [{apiVersion: apps/v1, kind: $3, name: $4, uid: $(uid_of "${3,,}" "$4"), controller: true}]"
	cat <<POD
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: $2}
  $owner
spec:
  nodeName: n-hot
  containers: [{name: c, image: netsched.invalid/pause}]
POD
}
{
	pod agent-x agent DaemonSet agent
	pod bare-1 bare
	pod web-1 web ReplicaSet web
	pod guarded-1 guarded ReplicaSet guarded
} >"$WORK/pods.yaml"
kc create -f "$WORK/pods.yaml" >/dev/null || fail "cannot create the pods"
# set_running POD...: Running and Ready, as a kubelet would say: the
# Eviction API ignores PDBs for Pending pods (nothing to disrupt yet).
set_running() {
	local p
	for p in "$@"; do
		curl -sf --cacert "$WORK/pki/apiserver.crt" -H "Authorization: Bearer $K8S_TOKEN" \
			-X PATCH -H 'Content-Type: application/merge-patch+json' \
			-d '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' \
			"https://127.0.0.1:$K8S_API_PORT/api/v1/namespaces/default/pods/$p/status" >/dev/null ||
			fail "cannot set $p Running"
	done
}
set_running agent-x bare-1 web-1 guarded-1

MB=1000000
pod_json() { # NAME WORKLOAD TX
	printf '{"namespace":"default","name":"%s","uid":"%s","workload":"%s","rxBytesPerSecond":100000,"txBytesPerSecond":%d}' \
		"$1" "$(uid_of pod "$1")" "$2" "$3"
}
cat >"$WORK/nodes.json" <<JSON
{"nodes":[
 {"name":"n-hot","fresh":true,"linkBytesPerSecond":$((125 * MB)),
  "rxBytesPerSecond":$((2 * MB)),"txBytesPerSecond":$((118 * MB)),
  "inflightRxBytesPerSecond":0,"inflightTxBytesPerSecond":0,"heldForWorkloads":0,
  "pods":[$(pod_json agent-x default/DaemonSet/agent $((60 * MB))),$(pod_json bare-1 "" $((50 * MB))),
          $(pod_json web-1 default/ReplicaSet/web $((30 * MB))),$(pod_json guarded-1 default/ReplicaSet/guarded $((8 * MB)))]},
 {"name":"n-cool","fresh":true,"linkBytesPerSecond":$((125 * MB)),
  "rxBytesPerSecond":$((10 * MB)),"txBytesPerSecond":$((20 * MB)),
  "inflightRxBytesPerSecond":0,"inflightTxBytesPerSecond":0,"heldForWorkloads":0}
]}
JSON
# Two scorer replicas: a move must reach both (each keeps its own holds).
SP=$(free_port)
start fake-scorer python3 tests/k8s/fake_pressure.py "$SP" "$WORK/nodes.json" "$WORK/moves.jsonl"
SP2=$(free_port)
start fake-scorer-2 python3 tests/k8s/fake_pressure.py "$SP2" "$WORK/nodes.json" "$WORK/moves-2.jsonl"
wait_for 20 "the fake scorer" curl -sf "http://127.0.0.1:$SP/v1/pressure"
wait_for 20 "the second fake scorer" curl -sf "http://127.0.0.1:$SP2/v1/pressure"

terminating() { # the pods with a deletionTimestamp, sorted
	kc get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' |
		awk 'NF == 2 { print $1 }' | sort | tr '\n' ' '
}
logged() { grep -q -- "$2" "$WORK/$1.log"; }
rebalancer() { # NAME ARGS...
	local name=$1
	shift
	start "$name" "$BIN/netsched-rebalancer" --kubeconfig "$WORK/rebalancer.kubeconfig" \
		--scorer "http://127.0.0.1:$SP,http://127.0.0.1:$SP2" --interval 1s --min-age 0 \
		--lease-namespace netsched --lease-duration 3s --identity "$name" "$@"
}

# 1. Dry run, the default.
M0=$(free_port)
rebalancer r0 --leader-elect off --metrics-listen "127.0.0.1:$M0"
R0=$LAST_PID
want="n-hot: tx 118 MB/s is 94% of 125 MB/s for 3 reports; dry run, would evict default/guarded-1 (tx 8 MB/s) for n-cool; n-cool has 105 MB/s tx free"
wait_for 30 "the dry run's planned move" logged r0 "$want"
wait_for 20 "the dry run's Event" sh -c "\"$K8S_BIN/kubectl\" --kubeconfig \"$WORK/kubeconfig\" get events \
	--field-selector reason=NetschedWouldMove,involvedObject.name=guarded-1 -o name | grep -q ."
kc get events -n default --field-selector reason=NetschedWouldMove,involvedObject.kind=Node \
	-o jsonpath='{.items[*].message}' | grep -qF "$want" || fail "no Event on node n-hot says: $want"
wait_for 20 "more dry-run cycles" sh -c "[ \$(curl -sf http://127.0.0.1:$M0/metrics | awk '/^netsched_rebalancer_cycles_total/ { print \$2 }') -ge 5 ]"
[ -z "$(terminating)" ] || fail "the dry run evicted: $(terminating)"
[ ! -s "$WORK/moves.jsonl" ] && [ ! -s "$WORK/moves-2.jsonl" ] ||
	fail "the dry run posted moves: $(cat "$WORK/moves.jsonl" "$WORK/moves-2.jsonl")"
[ "$(grep -c "dry run, would evict default/guarded-1" "$WORK/r0.log")" -ge 3 ] ||
	fail "the dry run did not say its plan every cycle"
curl -sf "http://127.0.0.1:$M0/metrics" | grep -q '^netsched_rebalancer_refusals_total{reason="dry_run"} [1-9]' ||
	fail "/metrics counts no dry-run plan: $(curl -sf "http://127.0.0.1:$M0/metrics")"
echo "ok: dry run: '$want', said in Events on the pod and the node; nothing evicted, no move posted"
stop_pids "$R0"

# 2. Two replicas acting for real; one Lease.
M1=$(free_port)
M2=$(free_port)
rebalancer r1 --dry-run=false --metrics-listen "127.0.0.1:$M1"
P1=$LAST_PID
rebalancer r2 --dry-run=false --metrics-listen "127.0.0.1:$M2"
P2=$LAST_PID
wait_for 60 "an eviction" sh -c "grep -q ': evicted$' \"$WORK/r1.log\" \"$WORK/r2.log\""
holder=$(kc -n netsched get lease netsched-rebalancer -o jsonpath='{.spec.holderIdentity}')
case $holder in
r1) leader=r1 follower=r2 LP=$P1 FM=$M2 ;;
r2) leader=r2 follower=r1 LP=$P2 FM=$M1 ;;
*) fail "the Lease is held by '$holder'" ;;
esac
logged "$leader" "evicting default/web-1 (tx 30 MB/s) for n-cool; n-cool has 105 MB/s tx free: evicted" ||
	fail "the leader $leader did not evict web-1 as planned: $(grep -E 'evict|refused' "$WORK/$leader.log")"
logged "$leader" "PodDisruptionBudget refused the eviction" ||
	fail "the leader never tried guarded-1 (the PDB's 429)"
! logged "$follower" "evicting" || fail "the follower $follower acted too: $(grep evicting "$WORK/$follower.log")"
[ "$(terminating)" = "web-1 " ] || fail "evicted: '$(terminating)', want only web-1"
jq -e -s 'map(select(.pod == "web-1" and .from == "n-hot" and .to == "n-cool" and .txBytesPerSecond == 30000000 and .holdSeconds == 300)) | length == 1' \
	"$WORK/moves.jsonl" >/dev/null || fail "the scorer was not told of web-1's move: $(cat "$WORK/moves.jsonl")"
jq -e -s 'map(select(.pod == "web-1" and .workload == "default/ReplicaSet/web" and .holdSeconds == 300)) | length == 1' \
	"$WORK/moves-2.jsonl" >/dev/null || fail "the second scorer replica was not told of web-1's move: $(cat "$WORK/moves-2.jsonl")"
# guarded-1's move was posted before its eviction was refused, then again
# held one second: the scorer holds nothing for a move not made.
jq -e -s '[.[] | select(.pod == "guarded-1") | .holdSeconds] | .[0:2] == [300, 1]' "$WORK/moves.jsonl" >/dev/null ||
	fail "guarded-1's refused move was not released: $(cat "$WORK/moves.jsonl")"
kc get events -n default --field-selector reason=NetschedMoved,involvedObject.name=web-1 -o name | grep -q . ||
	fail "no NetschedMoved Event on web-1"
echo "ok: only the Lease's holder ($leader) acted: guarded-1 refused by its PDB (429), web-1 evicted for n-cool, its move posted first to both scorer replicas; agent-x and bare-1 stay"

# 3. The leader dies; the other takes the Lease over and acts.
{ kill -9 "$LP"; wait "$LP"; } 2>/dev/null
new_holder() { [ "$(kc -n netsched get lease netsched-rebalancer -o jsonpath='{.spec.holderIdentity}')" = "$follower" ]; }
wait_for 30 "$follower to take the Lease over" new_holder
logged "$follower" "holds Lease netsched/netsched-rebalancer now, taken over from $leader" ||
	fail "$follower's log does not say it took over"
leading() {
	curl -sf "http://127.0.0.1:$FM/metrics" >"$WORK/fm.txt" &&
		grep -q '^netsched_rebalancer_is_leader 1' "$WORK/fm.txt" &&
		[ "$(awk '/^netsched_rebalancer_cycles_total/ { print $2 }' "$WORK/fm.txt")" -ge 5 ]
}
wait_for 30 "$follower acting as the leader for 5 cycles" leading
[ "$(terminating)" = "web-1 " ] || fail "after the takeover, evicted: '$(terminating)', want only web-1"
logged "$follower" "not moving default/" || fail "$follower says nothing about n-hot"
echo "ok: $follower took the Lease over from $leader and acts; what is left on n-hot is protected: $(grep -m1 'not moving' "$WORK/$follower.log" | sed 's/.*rebalancer: //')"
stop_pids "$P1" "$P2"

# 4. A node whose agent lies: n-liar reports its link 300% busy, and names
# among its pods cool-1, which runs on n-cool. The rebalancer moves only
# pods the apiserver says run on n-liar, and no more than its limits allow:
# with --max-moves-per-node 1, one of n-liar's own three pods (of three
# workloads, so no workload's cool-down is what stops the others), never
# cool-1, however long it keeps lying.
k8s_nodes n-liar
{
	for w in lw1 lw2 lw3 cool; do
		printf -- '---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: %s}\nspec:\n  replicas: 1\n' "$w"
		printf '  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n' "$w" "$w"
		printf '    spec: {containers: [{name: c, image: netsched.invalid/pause}]}\n'
	done
} | kc create -f - >/dev/null || fail "cannot create n-liar's workloads"
{
	for w in lw1 lw2 lw3; do pod "$w-1" "$w" ReplicaSet "$w"; done
	pod cool-1 cool ReplicaSet cool | sed 's/nodeName: n-hot/nodeName: n-cool/'
} | sed 's/nodeName: n-hot$/nodeName: n-liar/' >"$WORK/liar-pods.yaml"
kc create -f "$WORK/liar-pods.yaml" >/dev/null || fail "cannot create n-liar's pods"
set_running lw1-1 lw2-1 lw3-1 cool-1
[ "$(kc get pod cool-1 -o jsonpath='{.spec.nodeName}')" = n-cool ] || fail "cool-1 is not on n-cool"
python3 - "$WORK/nodes.json" "$(pod_json cool-1 default/ReplicaSet/cool $((40 * MB)))" \
	"$(pod_json lw1-1 default/ReplicaSet/lw1 $((30 * MB)))" "$(pod_json lw2-1 default/ReplicaSet/lw2 $((30 * MB)))" \
	"$(pod_json lw3-1 default/ReplicaSet/lw3 $((30 * MB)))" <<'PY' || fail "cannot write n-liar's lies"
import json, sys
path, pods = sys.argv[1], [json.loads(p) for p in sys.argv[2:]]
doc = json.load(open(path))
doc["nodes"].append({"name": "n-liar", "fresh": True, "linkBytesPerSecond": 125000000,
                     "rxBytesPerSecond": 1000000, "txBytesPerSecond": 375000000,
                     "inflightRxBytesPerSecond": 0, "inflightTxBytesPerSecond": 0,
                     "heldForWorkloads": 0, "pods": pods})
json.dump(doc, open(path + ".new", "w"))
PY
mv "$WORK/nodes.json.new" "$WORK/nodes.json"
M3=$(free_port)
rebalancer r3 --dry-run=false --leader-elect off --max-moves-per-node 1 --metrics-listen "127.0.0.1:$M3"
P3=$LAST_PID
wait_for 60 "an eviction on n-liar" logged r3 "^.*n-liar: tx 375 MB/s is 300% of 125 MB/s.*evicting default/lw.*: evicted"
cycles() { curl -sf "http://127.0.0.1:$M3/metrics" | awk '/^netsched_rebalancer_cycles_total/ { print $2 }'; }
c0=$(cycles)
wait_for 60 "10 more cycles" sh -c "[ \$(curl -sf http://127.0.0.1:$M3/metrics | awk '/^netsched_rebalancer_cycles_total/ { print \$2 }') -ge $((c0 + 10)) ]"
moved=$(terminating)
case $moved in
"lw1-1 web-1 " | "lw2-1 web-1 " | "lw3-1 web-1 ") ;;
*) fail "with n-liar lying, evicted: '$moved'; want web-1 (step 2) and one of lw1-1 lw2-1 lw3-1" ;;
esac
logged r3 "cool-1 (tx 40 MB/s) is not in the apiserver's pod list" ||
	fail "r3 never said cool-1 is not n-liar's: $(grep n-liar "$WORK/r3.log" | head -3)"
echo "ok: a lying node (n-liar at 300%, claiming n-cool's cool-1) moved one of its own pods (${moved%% *}) and no more (--max-moves-per-node 1); cool-1 never"
stop_pids "$P3"
k8s_down
echo "PASS: k8s rebalance"
