#!/usr/bin/env bash
# The scorer's pod watch against a real kube-apiserver v1.20.2 and
# kube-scheduler (tests/k8s/lib.sh). Three nodes without agents: every node
# scores neutral, so each pod is assumed on all three (a tie) until the
# watch says where it went.
# The apiserver checks RBAC, and the scorer uses a token of the ServiceAccount
# deploy/scorer.yaml ships, bound to the ClusterRole it ships: those grant
# exactly what the watch needs (and no writes, no Secrets).
#  1. at start the watch lists and syncs; pods bound by hand (another
#     scheduler) are observed, and their deletion drops them;
#  2. pods the scheduler places through the extender are confirmed on the
#     node they were bound to, and counted there only;
#  3. an assumption never bound expires while the watch is in sync;
#  4. the apiserver stops: the watch says it is out of sync, the extender
#     still answers at once, and nothing expires; the apiserver returns on
#     the same etcd: the watch resumes or lists again and sees new pods;
#  5. a token the apiserver refuses: a clear error, backoff, no sync;
#     a kubeconfig that cannot work stops the scorer at start;
#  6. SIGTERM ends the scorer promptly while a watch is open;
#  7. a list page over the 8 MiB a page may have (60 pods of 190 KB): the
#     watch asks for fewer pods a page until they fit, then syncs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"
k8s_init

# metric NAME: its value on the scorer under test (0 when absent).
metric() {
	curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
		awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }'
}
metric_is() { [ "$(metric "$1")" = "$2" ]; }
metric_at_least() { [ "$(metric "$1")" -ge "$2" ]; }
W='netsched_scorer_pod_watch_total{what='
I='netsched_scorer_inflight_total{event='

# pinned NAME NODE: a pod created bound to NODE, as another scheduler would.
pinned() {
	kc apply -f - >/dev/null <<POD || fail "cannot create pod $1"
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {test: pinned}, annotations: {kubernetes.io/ingress-bandwidth: 50M}}
spec:
  nodeName: $2
  containers: [{name: c, image: netsched.invalid/pause}]
POD
}

# sa_kubeconfig: $WORK/kubeconfig-sa, the scorer's ServiceAccount token
# (TokenRequest: no controller-manager runs to make token Secrets).
sa_kubeconfig() {
	local token
	python3 - deploy/scorer.yaml >"$WORK/scorer-rbac.yaml" <<'PY' || fail "cannot read deploy/scorer.yaml"
import sys, yaml
keep = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding"}
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] in keep]
assert len(docs) == 3, [d["kind"] for d in docs]
yaml.safe_dump_all(docs, sys.stdout)
PY
	kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
	kc apply -f "$WORK/scorer-rbac.yaml" >/dev/null || fail "the shipped RBAC does not apply"
	token=$(echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}' |
		kc create --raw /api/v1/namespaces/netsched/serviceaccounts/netsched-scorer/token -f - |
		jq -r .status.token) || fail "no token for the scorer's ServiceAccount"
	sed "s/token: .*/token: $token/" "$WORK/kubeconfig" >"$WORK/kubeconfig-sa"
}
can() { kc auth can-i --as=system:serviceaccount:netsched:netsched-scorer "$@" 2>/dev/null; }

K8S_AUTHZ=RBAC
k8s_ports
k8s_config "$WORK/sched.yaml" names "http://127.0.0.1:0" 100ms
k8s_up_api
k8s_nodes w1 w2 w3
sa_kubeconfig
for verb in get list watch; do
	expect "the scorer may $verb pods" "$(can "$verb" pods --all-namespaces)" yes
done
expect "may the scorer create pods" "$(can create pods)" no
expect "may the scorer read secrets" "$(can get secrets -n netsched)" no
expect "may the scorer list nodes" "$(can list nodes)" no
pinned before-1 w1
echo "ok: apiserver up, pod before-1 bound to w1 before the scorer starts"

start_scorer --kubeconfig "$WORK/kubeconfig-sa" --inflight-expire 2s --log-level debug
SCORER_PID=$LAST_PID
# ------------------------------------------------- 1. list, observe, drop
wait_for 20 "the pod watch in sync" metric_is netsched_scorer_pod_watch_synced 1
expect "a list at start" "$(metric "${W}\"lists\"}")" 1
wait_for 5 "before-1 observed" metric_is "${I}\"observed\"}" 1
grep -q "listed 1 bound pods" "$WORK/scorer.log" || fail "the list's log line is missing"
pinned after-1 w2
pinned after-2 w2
wait_for 10 "after-1 and after-2 observed from the watch" metric_is "${I}\"observed\"}" 3
expect "in-flight pods" "$(metric netsched_scorer_inflight_pods)" 3
expect "nodes with in-flight pods" "$(metric netsched_scorer_inflight_nodes)" 2
kc delete pod before-1 after-1 after-2 --wait=false >/dev/null
wait_for 10 "three pods dropped" metric_is "${I}\"dropped\"}" 3
expect "in-flight pods after deletion" "$(metric netsched_scorer_inflight_pods)" 0

# ------------------------------- 2. assume through the scheduler, confirm
k8s_config "$WORK/sched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
k8s_up_scheduler "$WORK/sched.yaml"
k8s_pods placed 6
k8s_wait_bound 30 placed 6
wait_for 10 "six assumptions confirmed" metric_is "${I}\"confirmed\"}" 6
expect "assumed by prioritize" "$(metric "${I}\"assumed\"}")" 6
expect "moved" "$(metric "${I}\"moved\"}")" 0
expect "pods counted in flight" "$(metric netsched_scorer_inflight_pods)" 6
echo "ok: placement $(k8s_placement placed | tr '\n' ' ')"
# The lab's own apiserver: a JSON list of labelled pods over HTTP/1.1 killed
# one built with the tree's vendored reflect2 ("fatal error: fault" in Go
# 1.19's map iteration; tests/k8s/build.sh), every time.
expect "a JSON list of labelled pods over HTTP/1.1" "$(curl -sk --http1.1 -o /dev/null -w '%{http_code}' \
	-H "Authorization: Bearer $K8S_TOKEN" "https://127.0.0.1:$K8S_API_PORT/api/v1/pods?labelSelector=test%3Dplaced")" 200

# -------------------------------------- 3. an assumption never bound expires
# ghost N: a prioritize request for a pod that will never exist.
ghost() {
	printf '{"Pod":{"metadata":{"name":"ghost-%s","namespace":"default","uid":"6a1c3f1e-0000-4000-8000-%012d"}},"NodeNames":["w1","w2","w3"]}' \
		"$1" "$1" >"$WORK/ghost.json"
}
ghost 1
expect "prioritize for a pod never bound" "$(http POST /prioritize "$WORK/ghost.json" | cut -c1-3)" 200
wait_for 10 "the ghost assumption expired" metric_is "${I}\"expired\"}" 1

# --------------------------------------------------- 4. apiserver restart
# Writes to other resources move etcd's revision past the watch's, so the
# restarted apiserver's fresh watch cache may no longer reach back to it.
for i in 1 2 3; do kc create configmap "bump-$i" --from-literal=i="$i" >/dev/null; done
k8s_api_stop
wait_for 15 "the watch out of sync" metric_is netsched_scorer_pod_watch_synced 0
# Nothing can confirm now, so nothing may expire.
ghost 2
t0=$(date +%s%N)
got=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary "@$WORK/ghost.json" "http://127.0.0.1:$HTTP_PORT/prioritize")
expect "prioritize while the apiserver is down" "$got" 200
echo "ok: answered in $(( ($(date +%s%N) - t0) / 1000000 )) ms with the apiserver down"
sleep 3
expect "expired while out of sync" "$(metric "${I}\"expired\"}")" 1
errors_before=$(metric "${W}\"errors\"}")
[ "$errors_before" -ge 1 ] || fail "the lost watch was not counted as an error"
k8s_api_start
wait_for 40 "the pod watch back in sync" metric_is netsched_scorer_pod_watch_synced 1
echo "ok: back in sync; lists $(metric "${W}\"lists\"}"), watches $(metric "${W}\"watches\"}")"
# The restarted apiserver's watch cache starts past the watch's version:
# 410 Gone, and a fresh list.
expect "410s seen after the restart" "$(metric "${W}\"expired\"}")" 1
expect "lists after the restart" "$(metric "${W}\"lists\"}")" 2
pinned after-restart w3
wait_for 10 "a pod created after the restart observed" metric_is "${I}\"observed\"}" 4
# In sync again: the assumption made during the outage now expires.
wait_for 10 "the outage's assumption expired" metric_is "${I}\"expired\"}" 2
grep -q "in-flight pods count where they were assumed until the watch is back" \
	"$WORK/scorer.log" || fail "the outage was not logged"
grep -q "the apiserver answers again" "$WORK/scorer.log" || fail "the recovery was not logged"

# ------------------------------------------------------- 6. prompt stop
t0=$(date +%s%N)
kill -TERM "$SCORER_PID"
wait "$SCORER_PID"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "scorer exit status on SIGTERM with a watch open" "$rc" 0
[ "$ms" -lt 5000 ] || fail "SIGTERM took ${ms} ms with a watch open"
echo "ok: stopped in ${ms} ms with a watch open"

# ---------------------------------------------------- 5. refused, broken
sed "s/token: .*/token: not-a-valid-token/" "$WORK/kubeconfig-sa" >"$WORK/bad-token"
start_scorer --kubeconfig "$WORK/bad-token"
wait_for 10 "a refused list counted" metric_at_least "${W}\"errors\"}" 1
expect "synced with a refused token" "$(metric netsched_scorer_pod_watch_synced)" 0
grep -q "listing pods: HTTP 401" "$WORK/scorer.log" || fail "the 401 was not logged"
echo "ok: a refused token: $(grep -m1 'HTTP 401' "$WORK/scorer.log" | sed 's/.*podwatch: //')"

printf 'apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n' >"$WORK/broken"
out=$("$BIN/netsched-scorer" --kubeconfig "$WORK/broken" --check-config 2>&1)
expect "exit status with a broken kubeconfig" "$?" 2
case $out in
*"current-context nowhere is not among its contexts"*) echo "ok: $out" ;;
*) fail "unclear error for a broken kubeconfig: $out" ;;
esac
out=$("$BIN/netsched-scorer" --check-config 2>&1) || fail "without access: $out"

# ------------------------------------------- 7. a list page over its bound
# Annotations may hold 256 KiB: 60 bound pods of ~190 KB make the first page
# (500 pods asked) 11 MB.
python3 - >"$WORK/big-pods.json" <<'PY'
import json
pad = "x" * (190 * 1024)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "big-%d" % i, "annotations": {"netsched.test/pad": pad}},
     "spec": {"nodeName": "w1", "containers": [{"name": "c", "image": "netsched.invalid/pause"}]}}
    for i in range(60)]}))
PY
kc create -f "$WORK/big-pods.json" >/dev/null || fail "cannot create 60 pods of 190 KB"
start_scorer --kubeconfig "$WORK/kubeconfig-sa"
wait_for 30 "the pod watch in sync past pages over 8 MiB" metric_is netsched_scorer_pod_watch_synced 1
grep -q "pages of 500, 62 pods were larger than 8388608 bytes: asking for 7 a page" \
	"$WORK/scorer.log" || fail "no smaller pages (62, then 7) after a page over 8 MiB"
listed=$(sed -n 's/.*listed \([0-9]*\) bound pods in \([0-9]*\) page.*/\1 \2/p' "$WORK/scorer.log")
read -r pods pages <<<"$listed"
[ "${pods:-0}" -ge 60 ] && [ "${pages:-0}" -ge 9 ] ||
	fail "after pages over 8 MiB: listed '$listed' (pods, pages), want 60+ pods in 9+ pages"
echo "ok: pages over 8 MiB: asked for 62, then 7 pods a page; listed $pods pods in $pages pages"
echo "PASS: k8s-watch"
