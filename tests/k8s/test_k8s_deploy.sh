#!/usr/bin/env bash
# deploy/ against a real Kubernetes 1.20 control plane (v1.20.2 apiserver and
# scheduler, Debian's kubectl 1.20), so the versions docs/operating.md claims
# are tested where we can:
#  1. the v1beta1 scheduler configs of both ways, as shipped (leader election
#     included; only the kubeconfig, the scorer's address, the certificate
#     files and the health port are made local): the scorer runs with mTLS
#     and certificates deploy/tls/make-certs.sh made, kube-scheduler 1.20
#     loads each config, logs the extender it created (HTTPS, preempt verb,
#     httpTimeout 100ms), checks the scorer's certificate for the Service's
#     name, presents its client certificate, and places pods through netsched;
#     the prioritize-only config with its apiVersion set to v1beta1 (as
#     documented) places pods without a single filter call; the scheduler's
#     own scheduler_schedule_attempts_total carries the profile and result
#     labels the alert NetschedNotAnswering reads;
#  2. every object `kubectl apply -k deploy/` would create, rendered here,
#     passes the 1.20 apiserver's server-side dry run, except the
#     PodDisruptionBudget (policy/v1 is 1.21+), which passes as
#     policy/v1beta1, as docs/operating.md says;
#  3. kubectl 1.20's built-in kustomize cannot read deploy/ (`labels:`), as
#     docs/operating.md says.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps test)"
k8s_init
# The scorer as deploy/ runs it: the verbs over mTLS, status on its own port.
deploy/tls/make-certs.sh -o "$WORK/tls" >"$WORK/certs.log" 2>&1 ||
	fail "deploy/tls/make-certs.sh: $(cat "$WORK/certs.log")"
T=$WORK/tls
LISTEN_PORT=$(free_port) HTTP_PORT=$(free_port) STATUS_PORT=$(free_port)
start scorer "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
	--http "127.0.0.1:$HTTP_PORT" --health-listen "127.0.0.1:$STATUS_PORT" --stale-after 3s \
	--tls-cert "$T/scorer.crt" --tls-key "$T/scorer.key" --tls-client-ca "$T/ca.crt"
wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$STATUS_PORT/healthz"
metric() { curl -s "http://127.0.0.1:$STATUS_PORT/metrics" |
	awk -v v="$1" '$1 == "netsched_scorer_requests_total{verb=\"" v "\"}" { print $2 }'; }

# local_config SRC DST [APIVERSION]: the shipped config, made to run here: the
# scorer's address (its certificate still checked for the Service's name, as
# the shipped URL or serverName has it) and the certificate files made above.
local_config() {
	python3 - "$1" "$2" "$WORK/kubeconfig" "https://127.0.0.1:$HTTP_PORT" \
		"127.0.0.1:$K8S_SCHED_PORT" "${3:-}" "$T" <<'PY'
import os, sys, urllib.parse, yaml
src, dst, kubeconfig, url, health, api, certs = sys.argv[1:8]
c = yaml.safe_load(open(src))
c.setdefault("clientConnection", {})["kubeconfig"] = kubeconfig
local = {"tls.crt": "scheduler.crt", "tls.key": "scheduler.key", "ca.crt": "ca.crt"}
for e in c["extenders"]:
    tls = e["tlsConfig"]
    host = urllib.parse.urlsplit(e["urlPrefix"]).hostname
    tls.setdefault("serverName", host)
    for k in ("certFile", "keyFile", "caFile"):
        tls[k] = os.path.join(certs, local[os.path.basename(tls[k])])
    e["urlPrefix"] = url
# 1.20 serves insecure health and metrics on 0.0.0.0:10251 by default.
c["healthzBindAddress"] = c["metricsBindAddress"] = health
if api:
    c["apiVersion"] = api
yaml.safe_dump(c, open(dst, "w"))
PY
}

# extender_loaded FILTERVERB PREEMPTVERB: the scheduler's log line for the extender.
extender_loaded() {
	local line want
	line=$(grep -m1 'Creating extender with config' "$WORK/scheduler-$K8S_RUN.log")
	echo "  ${line#*] }"
	for want in "FilterVerb:$1 " "PreemptVerb:$2 " PrioritizeVerb:prioritize Weight:5 \
		EnableHTTPS:true \
		'HTTPTimeout:{Duration:100ms}' NodeCacheCapable:true Ignorable:true; do
		[[ $line == *"$want"* ]] || fail "the 1.20 scheduler did not load '$want' from the config"
	done
}

# through CONFIG PREFIX SCHEDULER: 5 pods placed by that scheduler; prints
# the scorer's filter and prioritize calls meanwhile.
through() {
	local f0 p0
	f0=$(metric filter) p0=$(metric prioritize)
	k8s_pods "$2" 5 "" "$3"
	k8s_wait_bound 30 "$2" 5
	CALLS_F=$(($(metric filter) - f0)) CALLS_P=$(($(metric prioritize) - p0))
}

# --------------------------------------------- 1a. way (a): the second scheduler
k8s_ports
local_config deploy/scheduler/kube-scheduler-config.v1beta1.yaml "$WORK/a.yaml"
k8s_up "$WORK/a.yaml"
# Its leader election takes the lease netsched/netsched-scheduler.
kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
k8s_nodes n1 n2 n3
extender_loaded filter preempt
through "$WORK/a.yaml" a netsched-scheduler
[ "$CALLS_F" -ge 5 ] && [ "$CALLS_P" -ge 5 ] ||
	fail "$CALLS_F filter and $CALLS_P prioritize calls for 5 pods through netsched-scheduler"
grep -q 'Skipping extender' "$WORK/scheduler-$K8S_RUN.log" &&
	fail "the scheduler skipped netsched: $(grep -m1 'Skipping extender' "$WORK/scheduler-$K8S_RUN.log")"
# The series the alert NetschedNotAnswering reads, as this scheduler exports it.
attempts=$(curl -s "http://127.0.0.1:$K8S_SCHED_PORT/metrics" |
	awk '$1 == "scheduler_schedule_attempts_total{profile=\"netsched-scheduler\",result=\"scheduled\"}" { print $2 }')
[ "${attempts:-0}" -ge 5 ] ||
	fail "scheduler_schedule_attempts_total{profile=\"netsched-scheduler\",result=\"scheduled\"} is '$attempts' after 5 pods"
echo "ok: the 1.20 scheduler exports scheduler_schedule_attempts_total{profile=\"netsched-scheduler\",result=\"scheduled\"} $attempts"
# Anyone else is refused: the verbs need the scheduler's certificate.
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.crt" \
	--resolve "netsched-scorer.netsched.svc:$HTTP_PORT:127.0.0.1" -X POST --data-binary '{"NodeNames":["n1"]}' \
	"https://netsched-scorer.netsched.svc:$HTTP_PORT/prioritize")
expect "prioritize without the scheduler's certificate" "$code" 403
holder() { [ -n "$(kc -n netsched get lease netsched-scheduler -o jsonpath='{.spec.holderIdentity}')" ]; }
wait_for 10 "the lease netsched/netsched-scheduler" holder
echo "ok: way (a), v1beta1: 5 pods placed by netsched-scheduler ($CALLS_F filter, $CALLS_P prioritize calls), lease netsched/netsched-scheduler held"

# ----------------------------------- 1b. way (b): the control plane's own scheduler
kill "${K8S_PIDS[2]}"
wait "${K8S_PIDS[2]}" 2>/dev/null
K8S_RUN_B=$K8S_RUN
local_config deploy/control-plane/scheduler-config.v1beta1.yaml "$WORK/b.yaml"
start "scheduler-$K8S_RUN-b" "$K8S_BIN/kube-scheduler" --config "$WORK/b.yaml" --secure-port 0 --v 2
K8S_PIDS[2]=$LAST_PID
wait_for 30 "kube-scheduler /healthz" curl -sf "http://127.0.0.1:$K8S_SCHED_PORT/healthz"
mv "$WORK/scheduler-$K8S_RUN.log" "$WORK/scheduler-$K8S_RUN-a.log"
ln -sf "scheduler-$K8S_RUN_B-b.log" "$WORK/scheduler-$K8S_RUN.log"
wait_for 10 "the extender in the scheduler's log" grep -q 'Creating extender' "$WORK/scheduler-$K8S_RUN.log"
extender_loaded filter preempt
through "$WORK/b.yaml" b ""
[ "$CALLS_F" -ge 5 ] && [ "$CALLS_P" -ge 5 ] ||
	fail "$CALLS_F filter and $CALLS_P prioritize calls for 5 pods through default-scheduler"
echo "ok: way (b), v1beta1: 5 pods placed by default-scheduler ($CALLS_F filter, $CALLS_P prioritize calls)"

# ------------------------------------------- 1c. prioritize only, as v1beta1
kill "${K8S_PIDS[2]}"
wait "${K8S_PIDS[2]}" 2>/dev/null
rm -f "$WORK/scheduler-$K8S_RUN.log"
local_config deploy/control-plane/scheduler-config.prioritize-only.yaml "$WORK/c.yaml" \
	kubescheduler.config.k8s.io/v1beta1
start "scheduler-$K8S_RUN" "$K8S_BIN/kube-scheduler" --config "$WORK/c.yaml" --secure-port 0 --v 2
K8S_PIDS[2]=$LAST_PID
wait_for 30 "kube-scheduler /healthz" curl -sf "http://127.0.0.1:$K8S_SCHED_PORT/healthz"
extender_loaded "" ""
through "$WORK/c.yaml" c ""
[ "$CALLS_F" -eq 0 ] && [ "$CALLS_P" -ge 5 ] ||
	fail "prioritize only: $CALLS_F filter and $CALLS_P prioritize calls for 5 pods"
echo "ok: prioritize only, v1beta1: 5 pods placed with 0 filter and $CALLS_P prioritize calls"

# ------------------------------------------- 2. server-side dry run of deploy/
python3 - deploy "$WORK/rendered.yaml" <<'PY' || fail "cannot render deploy/"
# What kustomize builds from deploy/kustomization.yaml: resources, the
# configMapGenerator, `labels:` (metadata only) and `images:`.
import os, sys, yaml
d, out = sys.argv[1:3]
kz = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
objs = []
for r in kz["resources"]:
    objs += [o for o in yaml.safe_load_all(open(os.path.join(d, r))) if o]
for g in kz.get("configMapGenerator", []):
    data = {}
    for spec in g["files"]:
        key, _, src = spec.partition("=")
        data[key] = open(os.path.join(d, src)).read()
    objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": g["name"], "namespace": g["namespace"]}, "data": data})
labels = {}
for l in kz.get("labels", []):
    labels.update(l["pairs"])
images = {i["name"]: i for i in kz.get("images", [])}
for o in objs:
    o["metadata"].setdefault("labels", {}).update(labels)
    spec = (o.get("spec") or {}).get("template", {}).get("spec", {})
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        name, _, tag = c["image"].partition(":")
        if name in images:
            i = images[name]
            c["image"] = "%s:%s" % (i.get("newName", name), i.get("newTag", tag))
yaml.safe_dump_all(objs, open(out, "w"))
print("rendered %d objects" % len(objs))
PY
# Every object, one at a time, so each failure names its object (the
# namespace netsched exists since 1a: a dry run of namespaced objects needs it).
# Every object but the PDB in one dry run (kubectl names each refused one;
# the namespace netsched exists since 1a: namespaced objects need it).
python3 - "$WORK/rendered.yaml" "$WORK/objs" "$WORK/pdb.yaml" <<'PY'
import sys, yaml
objs = list(yaml.safe_load_all(open(sys.argv[1])))
yaml.safe_dump_all([o for o in objs if o["kind"] != "PodDisruptionBudget"], open(sys.argv[2] + ".yaml", "w"))
yaml.safe_dump_all([o for o in objs if o["kind"] == "PodDisruptionBudget"], open(sys.argv[3], "w"))
PY
out=$(kc apply --dry-run=server -f "$WORK/objs.yaml" 2>&1) ||
	fail "the 1.20 apiserver's server-side dry run refused part of deploy/: $out"
n=$(grep -c 'server dry run' <<<"$out")
[ "$n" -ge 15 ] || fail "only $n objects in the dry run: $out"
echo "ok: $n objects of deploy/ pass the 1.20 apiserver's server-side dry run"
out=$(kc apply --dry-run=server -f "$WORK/pdb.yaml" 2>&1) && fail "the 1.20 apiserver took a policy/v1 PDB: update docs/operating.md"
[[ $out == *'no matches for kind "PodDisruptionBudget" in version "policy/v1"'* ]] ||
	fail "PodDisruptionBudget: unexpected error from the 1.20 apiserver: $out"
sed -i 's|^apiVersion: policy/v1$|apiVersion: policy/v1beta1|' "$WORK/pdb.yaml"
out=$(kc apply --dry-run=server -f "$WORK/pdb.yaml" 2>&1) ||
	fail "the PDB as policy/v1beta1 refused by the 1.20 apiserver: $out"
echo "ok: the PodDisruptionBudget: policy/v1 is 1.21+; as policy/v1beta1 the 1.20 apiserver takes it"

# ------------------------------------- 3. kubectl 1.20's kustomize and deploy/
out=$(kc apply --dry-run=server -k deploy/ 2>&1) && fail "kubectl 1.20 now reads deploy/: update docs/operating.md"
[[ $out == *'unknown field "labels"'* ]] || fail "kubectl 1.20 -k deploy/: unexpected error: $out"
echo "ok: kubectl 1.20's kustomize refuses deploy/ (labels:), as documented"
k8s_down
echo "PASS: k8s deploy"
