#!/usr/bin/env bash
# deploy/: every manifest parses and says what Kubernetes and kube-scheduler expect,
# and what the manifests ask of the binaries is what the binaries really do:
#  1. every YAML/JSON file under deploy/ parses (multi-document); kinds, apiVersions
#     and required fields are right; kustomization.yaml's resources, generator files
#     and images resolve; the KubeSchedulerConfigurations carry exactly the extender
#     keys kube-scheduler reads (case-sensitive); ports, Services, probes and the
#     agent's --scorer name agree with each other; security settings are all there.
#  2. the real binaries ($BIN) accept the manifests' own arguments (--check-config),
#     and, started with them on loopback (0.0.0.0 -> 127.0.0.1, the ports -> free
#     ones, the headless Service's name -> 127.0.0.1, the mounted Secrets -> files
#     deploy/tls/make-certs.sh made), serve every probe path with 200, /metrics where
#     the scrape annotations say, and the extender verbs at the urlPrefix path over
#     mTLS with the scheduler's client certificate, checked against the CA in its
#     tlsConfig for the Service's name; without that certificate every verb is
#     refused, and the extender port serves no status; the agent's reports reach the
#     scorer. The cert-manager component names the same Secrets and Service.
#  3. deploy/container/build.sh builds and stages the binaries with exactly the
#     libraries they load: they run from the staged tree, and (as root) inside a
#     chroot holding only that tree and glibc, as the image's non-root UID.
# Loopback only, no container engine, no cluster; about 15-25 s.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${BIN:-}" ]; then BIN=$(cd "$BIN" && pwd) || exit 1; fi
. "$ROOT/tests/integration/lib.sh"
BIN=${BIN:-$ROOT/bin}
[ "${BIN#/}" != "$BIN" ] || BIN=$ROOT/$BIN
cd "$ROOT" || exit 1

command -v python3 >/dev/null || fail "python3 not installed (run .ci/deps test)"
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps test)"
command -v curl >/dev/null || fail "curl not installed (run .ci/deps test)"
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"
for b in netsched-agent netsched-scorer netsched-rebalancer; do
	[ -x "$BIN/$b" ] || fail "$BIN/$b not built (run make)"
done

# Free loopback ports for the manifests' 7470 (reports), 8470 (HTTP), 8471 (the
# scorer's probes), 9470 (agent), 8472 (the rebalancer's).
export P_REPORTS P_HTTP P_HEALTH P_METRICS P_REBAL
P_REPORTS=$(free_port)
P_HTTP=$(free_port)
P_HEALTH=$(free_port)
P_METRICS=$(free_port)
while [ "$P_HTTP" = "$P_REPORTS" ]; do P_HTTP=$(free_port); done
while [ "$P_HEALTH" = "$P_REPORTS" ] || [ "$P_HEALTH" = "$P_HTTP" ]; do P_HEALTH=$(free_port); done
while [ "$P_METRICS" = "$P_REPORTS" ] || [ "$P_METRICS" = "$P_HTTP" ] ||
	[ "$P_METRICS" = "$P_HEALTH" ]; do P_METRICS=$(free_port); done
P_REBAL=$(free_port)
while [ "$P_REBAL" = "$P_REPORTS" ] || [ "$P_REBAL" = "$P_HTTP" ] || [ "$P_REBAL" = "$P_HEALTH" ] ||
	[ "$P_REBAL" = "$P_METRICS" ]; do P_REBAL=$(free_port); done

# The certificates, as an operator makes them (deploy/tls/make-certs.sh).
deploy/tls/make-certs.sh -o "$WORK/tls" >"$WORK/certs.log" 2>&1 ||
	fail "deploy/tls/make-certs.sh failed: $(cat "$WORK/certs.log")"
echo "ok: $(tail -n 1 "$WORK/certs.log")"

# ---------------------------------------------------------------- 1. the manifests
python3 - "$ROOT/deploy" "$WORK" <<'PY' || fail "the manifests are not right (see above)"
import glob, json, os, re, sys
import yaml

DEPLOY, WORK = sys.argv[1], sys.argv[2]
PORTS = {7470: int(os.environ["P_REPORTS"]), 8470: int(os.environ["P_HTTP"]),
         8471: int(os.environ["P_HEALTH"]), 9470: int(os.environ["P_METRICS"]),
         8472: int(os.environ["P_REBAL"])}
errors = []


def ok(what):
    print("ok: " + what)


def check(cond, what):
    if cond:
        ok(what)
    else:
        errors.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return bool(cond)


def rel(path):
    return os.path.relpath(path, DEPLOY)


# -- every file parses ---------------------------------------------------------
files = {}
for path in sorted(glob.glob(os.path.join(DEPLOY, "**", "*"), recursive=True)):
    # The Helm chart's templates are not YAML until rendered: tests/k8s/test_k8s_chart.sh
    # renders it and holds it to these manifests, object by object.
    if rel(path).startswith("helm" + os.sep):
        continue
    if path.endswith((".yaml", ".yml")):
        try:
            with open(path) as f:
                files[rel(path)] = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            check(False, "%s parses as YAML: %s" % (rel(path), e))
    elif path.endswith(".json"):
        try:
            with open(path) as f:
                files[rel(path)] = [json.load(f)]
        except ValueError as e:
            check(False, "%s parses as JSON: %s" % (rel(path), e))
check(len(files) >= 10, "deploy/ holds the manifests (%d YAML/JSON files parse)" % len(files))
for name, docs in files.items():
    check(len(docs) >= 1, "%s has at least one document" % name)

API = {
    "Namespace": "v1", "ServiceAccount": "v1", "Service": "v1", "Secret": "v1",
    "ConfigMap": "v1", "DaemonSet": "apps/v1", "Deployment": "apps/v1",
    "PodDisruptionBudget": "policy/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "Kustomization": "kustomize.config.k8s.io/v1beta1",
}
KSC_VERSIONS = ("kubescheduler.config.k8s.io/v1", "kubescheduler.config.k8s.io/v1beta3",
                "kubescheduler.config.k8s.io/v1beta1")
NAMESPACED = {"ServiceAccount", "Service", "Secret", "ConfigMap", "DaemonSet", "Deployment",
              "PodDisruptionBudget", "Role", "RoleBinding", "NetworkPolicy"}

for name, docs in files.items():
    # monitoring/ is a kit of its own (the Prometheus operator's kinds, a
    # plain rules file): checked below and by test_monitoring.sh; so is
    # tls/cert-manager/ (cert-manager's kinds, a kustomize Component).
    if name.endswith(".json") or name.startswith(("monitoring/", "tls/")):
        continue
    for i, d in enumerate(docs):
        where = "%s[%d]" % (name, i)
        if not check(isinstance(d, dict) and "kind" in d and "apiVersion" in d,
                     "%s has kind and apiVersion" % where):
            continue
        k = d["kind"]
        if k == "KubeSchedulerConfiguration":
            check(d["apiVersion"] in KSC_VERSIONS, "%s: %s apiVersion %s is v1, v1beta3 or v1beta1"
                  % (where, k, d["apiVersion"]))
            continue
        if not check(k in API, "%s: kind %s is one we ship" % (where, k)):
            continue
        check(d["apiVersion"] == API[k], "%s: %s has apiVersion %s" % (where, k, API[k]))
        if k == "Kustomization":
            continue
        md = d.get("metadata") or {}
        check(bool(md.get("name")), "%s: %s has metadata.name" % (where, k))
        if k in NAMESPACED:
            check(bool(md.get("namespace")), "%s: %s %s names its namespace"
                  % (where, k, md.get("name")))

# -- what kustomize renders ------------------------------------------------------
kz = files.get("kustomization.yaml", [None])[0]
check(kz is not None, "deploy/kustomization.yaml exists (kubectl apply -k deploy/)")
kz = kz or {}
check("namespace" not in kz, "kustomization sets no namespace (kube-system RoleBinding)")
rendered, used_files = [], {"kustomization.yaml"}
for r in kz.get("resources", []):
    if check(r in files, "kustomization resource %s exists" % r):
        rendered += files[r]
        used_files.add(r)
generated = {}
for g in kz.get("configMapGenerator", []):
    data = {}
    for spec in g.get("files", []):
        key, _, src = spec.partition("=") if "=" in spec else (os.path.basename(spec), "", spec)
        p = os.path.join(DEPLOY, src)
        if check(os.path.isfile(p), "configMapGenerator %s: file %s exists" % (g["name"], src)):
            data[key] = open(p).read()
            used_files.add(src)
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": g["name"], "namespace": g.get("namespace")}, "data": data}
    rendered.append(cm)
    generated[g["name"]] = cm
extras = {"report-key-secret.template.yaml", "scheduler/kube-scheduler-config.v1beta3.yaml",
          "scheduler/kube-scheduler-config.v1beta1.yaml",
          "scheduler/kube-scheduler-config.prioritize-only.yaml"}
for name in files:
    if name.startswith(("control-plane/", "container/", "monitoring/", "tls/")):
        continue
    check(name in used_files or name in extras,
          "%s is applied by kustomization.yaml or is a known template" % name)
# -- deploy/monitoring: its own kustomization, the operator's kinds ---------------
MON_API = {"ServiceMonitor": "monitoring.coreos.com/v1", "PodMonitor": "monitoring.coreos.com/v1",
           "PrometheusRule": "monitoring.coreos.com/v1"}
mkz = files.get("monitoring/kustomization.yaml", [{}])[0]
check(mkz.get("kind") == "Kustomization", "monitoring/kustomization.yaml is a Kustomization")
for r in mkz.get("resources", []):
    for i, d in enumerate(files.get("monitoring/" + r, [])):
        k = d.get("kind")
        check(MON_API.get(k) == d.get("apiVersion"), "monitoring/%s[%d]: %s has apiVersion %s"
              % (r, i, k, MON_API.get(k)))
        check((d.get("metadata") or {}).get("namespace") == "netsched",
              "monitoring/%s[%d]: %s lives in namespace netsched" % (r, i, k))
    check("monitoring/" + r in files, "monitoring kustomization resource %s exists" % r)
for g in mkz.get("configMapGenerator", []):
    for spec in g.get("files", []):
        src = spec.partition("=")[2] or spec
        check(os.path.isfile(os.path.join(DEPLOY, "monitoring", src)),
              "monitoring configMapGenerator file %s exists" % src)
mons = {d["metadata"]["name"]: d for d in files.get("monitoring/monitors.yaml", [])
        if d.get("kind") == "PodMonitor"}
for mon, port, what in (("netsched-agent", "metrics", "the agents' port named metrics"),
                        ("netsched-scorer", "status", "the scorers' status port (not the extender's)"),
                        ("netsched-scheduler", "https", "the second scheduler's HTTPS port")):
    ep = mons.get(mon, {}).get("spec", {}).get("podMetricsEndpoints", [{}])[0]
    check(ep.get("port") == port and
          {"targetLabel": "job", "replacement": mon} in ep.get("relabelings", []),
          "the PodMonitor %s scrapes %s, as job %s" % (mon, what, mon))

check("report-key-secret.template.yaml" not in used_files,
      "the Secret template is not applied (re-applying would reset a real key)")


def objs(kind):
    return [o for o in rendered if o.get("kind") == kind]


def one(kind, name):
    m = [o for o in objs(kind) if o["metadata"]["name"] == name]
    check(len(m) == 1, "kustomize renders %s %s" % (kind, name))
    return m[0] if m else {}


kinds = {}
for o in rendered:
    kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
for k, n in (("Namespace", 1), ("ServiceAccount", 4), ("DaemonSet", 1), ("Deployment", 3),
             ("Service", 2), ("PodDisruptionBudget", 2), ("ConfigMap", 1),
             ("ClusterRoleBinding", 4), ("ClusterRole", 2), ("Role", 2), ("RoleBinding", 3),
             ("NetworkPolicy", 2)):
    check(kinds.get(k) == n, "kustomize renders %d %s (got %s)" % (n, k, kinds.get(k, 0)))
ns = one("Namespace", "netsched")
for o in rendered:
    if o["kind"] in NAMESPACED and not (o["kind"] == "RoleBinding" and
                                        o["metadata"].get("namespace") == "kube-system"):
        if o["metadata"].get("namespace") != "netsched":
            check(False, "%s %s is in namespace netsched" % (o["kind"], o["metadata"]["name"]))

# -- pods: the shared rules ------------------------------------------------------
sas = {o["metadata"]["name"]: o for o in objs("ServiceAccount")}


def container_port(c, ref):
    for p in c.get("ports", []):
        if ref in (p.get("name"), p.get("containerPort")):
            return p.get("containerPort")
    return None


def check_pod(owner, tmpl, want_token):
    spec = tmpl.get("spec", {})
    labels = tmpl.get("metadata", {}).get("labels", {})
    psc = spec.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, "%s: pod runAsNonRoot" % owner)
    uid = psc.get("runAsUser")
    check(isinstance(uid, int) and not isinstance(uid, bool) and uid > 0,
          "%s: pod runAsUser is a numeric non-root UID (%s)" % (owner, uid))
    check((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault",
          "%s: seccompProfile RuntimeDefault" % owner)
    san = spec.get("serviceAccountName")
    check(san in sas, "%s: its ServiceAccount %s exists" % (owner, san))
    token = spec.get("automountServiceAccountToken", True) and \
        sas.get(san, {}).get("automountServiceAccountToken", True)
    check(bool(token) == want_token, "%s: API token mounted: %s" % (owner, want_token))
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for v in vols.values():
        if "secret" in v:
            # Signing is on: the pod waits for the Secret rather than start unsigned.
            check(not v["secret"].get("optional"),
                  "%s: Secret volume %s is not optional (--key-file needs it)" % (owner, v["name"]))
            check(v["secret"].get("defaultMode") == 0o440,
                  "%s: Secret volume %s is mode 0440" % (owner, v["name"]))
        if "configMap" in v:
            check(v["configMap"]["name"] in generated,
                  "%s: ConfigMap %s is generated" % (owner, v["configMap"]["name"]))
    for c in spec.get("containers", []):
        cw = "%s/%s" % (owner, c.get("name"))
        check(bool(c.get("image")), "%s: has an image" % cw)
        sc = c.get("securityContext", {})
        check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation false" % cw)
        check(sc.get("readOnlyRootFilesystem") is True, "%s: readOnlyRootFilesystem" % cw)
        check((sc.get("capabilities") or {}).get("drop") == ["ALL"], "%s: drops ALL capabilities" % cw)
        check(not (sc.get("capabilities") or {}).get("add"), "%s: adds no capability" % cw)
        check(not sc.get("privileged"), "%s: not privileged" % cw)
        res = c.get("resources", {})
        check(all(k in res.get("requests", {}) for k in ("cpu", "memory")),
              "%s: requests cpu and memory" % cw)
        check("memory" in res.get("limits", {}), "%s: limits memory" % cw)
        for m in c.get("volumeMounts", []):
            check(m["name"] in vols, "%s: mount %s has a volume" % (cw, m["name"]))
        for kind in ("livenessProbe", "readinessProbe"):
            pr = c.get(kind)
            if check(pr and "httpGet" in pr, "%s: has an HTTP %s" % (cw, kind)):
                port = container_port(c, pr["httpGet"].get("port"))
                check(port is not None, "%s: %s port %s is a container port"
                      % (cw, kind, pr["httpGet"].get("port")))
    return labels, psc.get("runAsUser")


def args_of(c):
    return list(c.get("command", [])[1:]) + list(c.get("args", []))


def flag(args, name):
    vals = [args[i + 1] for i, a in enumerate(args[:-1]) if a == name]
    vals += [a.split("=", 1)[1] for a in args if a.startswith(name + "=")]
    return vals


probes = []  # component, what, path, real port, scheme


def collect(component, tmpl, c):
    for kind in ("livenessProbe", "readinessProbe"):
        g = c[kind]["httpGet"]
        probes.append((component, kind, g["path"], container_port(c, g["port"]),
                       g.get("scheme", "HTTP")))
    ann = tmpl.get("metadata", {}).get("annotations", {})
    if ann.get("prometheus.io/scrape") == "true":
        probes.append((component, "scrape", ann.get("prometheus.io/path", "/metrics"),
                       int(ann["prometheus.io/port"]), "HTTP"))


# -- the agent -------------------------------------------------------------------
ds = one("DaemonSet", "netsched-agent")
dspec = ds.get("spec", {})
tmpl = dspec.get("template", {})
check(dspec.get("selector", {}).get("matchLabels", {}).items() <=
      tmpl.get("metadata", {}).get("labels", {}).items(), "agent: selector matches its pods")
agent_labels, agent_uid = check_pod("agent", tmpl, False)
pspec = tmpl.get("spec", {})
check(pspec.get("hostNetwork") is True, "agent: hostNetwork")
check(pspec.get("dnsPolicy") == "ClusterFirstWithHostNet", "agent: dnsPolicy ClusterFirstWithHostNet")
check(pspec.get("priorityClassName") == "system-node-critical", "agent: system-node-critical")
check({"operator": "Exists"} in pspec.get("tolerations", []), "agent: tolerates every taint")
agent = (pspec.get("containers") or [{}])[0]
check(agent.get("command") == ["/usr/local/bin/netsched-agent"], "agent: runs netsched-agent")
env = {e["name"]: e for e in agent.get("env", [])}
check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "spec.nodeName", "agent: NODE_NAME from the downward API spec.nodeName")
res = agent.get("resources", {})
check(res.get("requests") == {"cpu": "10m", "memory": "16Mi"} and
      res.get("limits") == {"cpu": "100m", "memory": "32Mi"},
      "agent: requests 10m/16Mi, limits 100m/32Mi")
aargs = args_of(agent)
check(flag(aargs, "--interfaces") == ["auto"], "agent: --interfaces auto")
metrics = flag(aargs, "--metrics")
check(len(metrics) == 1 and metrics[0].startswith("0.0.0.0:"), "agent: --metrics 0.0.0.0:PORT")
mport = int(metrics[0].rsplit(":", 1)[1]) if metrics else None
check(container_port(agent, "metrics") == mport, "agent: metrics containerPort is --metrics' port")
for kind in ("livenessProbe", "readinessProbe"):
    g = agent.get(kind, {}).get("httpGet", {})
    check(g.get("path") == "/healthz" and container_port(agent, g.get("port")) == mport,
          "agent: %s is /healthz on the metrics port" % kind)
collect("agent", tmpl, agent)

# -- the scorer ------------------------------------------------------------------
dep = one("Deployment", "netsched-scorer")
sspec = dep.get("spec", {})
stmpl = sspec.get("template", {})
check(sspec.get("replicas") == 2, "scorer: 2 replicas")
check(sspec.get("selector", {}).get("matchLabels", {}).items() <=
      stmpl.get("metadata", {}).get("labels", {}).items(), "scorer: selector matches its pods")
# The scorer watches pods (its ClusterRole: get, list, watch pods): it needs its token.
scorer_labels, scorer_uid = check_pod("scorer", stmpl, True)
spod = stmpl.get("spec", {})
spread = [t for t in spod.get("topologySpreadConstraints", [])
          if t.get("topologyKey") == "kubernetes.io/hostname" and
          t.get("labelSelector", {}).get("matchLabels", {}).items() <= scorer_labels.items()]
anti = (spod.get("affinity") or {}).get("podAntiAffinity")
check(spread or anti, "scorer: replicas spread across nodes")
scorer = (spod.get("containers") or [{}])[0]
check(scorer.get("command") == ["/usr/local/bin/netsched-scorer"], "scorer: runs netsched-scorer")
sargs = args_of(scorer)
check(flag(sargs, "--listen") == ["tcp://0.0.0.0:7470"], "scorer: --listen tcp://0.0.0.0:7470")
check(flag(sargs, "--http") == ["0.0.0.0:8470"], "scorer: --http 0.0.0.0:8470")
check(container_port(scorer, "reports") == 7470, "scorer: containerPort reports 7470")
check(container_port(scorer, "https") == 8470, "scorer: containerPort https 8470")
# Probes and status on their own plain-HTTP port, so they work whatever TLS the
# extender uses, and the extender port answers the scheduler alone.
check(flag(sargs, "--health-listen") == ["0.0.0.0:8471"], "scorer: --health-listen 0.0.0.0:8471")
check(container_port(scorer, "status") == 8471, "scorer: containerPort status 8471")
lg = scorer.get("livenessProbe", {}).get("httpGet", {})
rg = scorer.get("readinessProbe", {}).get("httpGet", {})
check(lg.get("path") == "/healthz" and container_port(scorer, lg.get("port")) == 8471,
      "scorer: liveness /healthz on 8471")
check(rg.get("path") == "/readyz" and container_port(scorer, rg.get("port")) == 8471,
      "scorer: readiness /readyz on 8471")
collect("scorer", stmpl, scorer)
# -- secure by default (issue 14): signed reports ------------------------------------
# Both sign/verify with the key file the Secret template names, at the path where
# each pod mounts that Secret.
tpl = (files.get("report-key-secret.template.yaml") or [{}])[0]
key_names = list((tpl.get("stringData") or {}).keys()) + list((tpl.get("data") or {}).keys())
check(len(key_names) == 1, "the Secret template holds one file (%s)" % key_names)
for who, a, t, c in (("agent", aargs, tmpl, agent), ("scorer", sargs, stmpl, scorer)):
    kf = flag(a, "--key-file")
    vols = {v["name"]: v for v in t.get("spec", {}).get("volumes", [])}
    paths = ["%s/%s" % (m["mountPath"].rstrip("/"), k) for m in c.get("volumeMounts", [])
             for k in key_names
             if (vols.get(m["name"], {}).get("secret") or {}).get("secretName") ==
             tpl.get("metadata", {}).get("name")]
    check(len(kf) == 1 and kf[0] in paths,
          "%s: signing on: --key-file %s is the mounted Secret's file %s" % (who, kf, paths))
check(agent_uid == scorer_uid, "agent and scorer run as the same UID (the image's)")


# -- secure by default (issue 24): the verbs need the scheduler's certificate ---------
def secret_files(tmpl, c, secret):
    """mountPath/key for the keys of a mounted Secret, as the pod sees them."""
    vols = {v["name"]: v for v in tmpl.get("spec", {}).get("volumes", [])}
    return {k: "%s/%s" % (m["mountPath"].rstrip("/"), k) for m in c.get("volumeMounts", [])
            for k in ("tls.crt", "tls.key", "ca.crt")
            if (vols.get(m["name"], {}).get("secret") or {}).get("secretName") == secret}


sfiles = secret_files(stmpl, scorer, "netsched-scorer-tls")
cfiles = secret_files(stmpl, scorer, "netsched-client-ca")
check(flag(sargs, "--tls-cert") == [sfiles.get("tls.crt")] and
      flag(sargs, "--tls-key") == [sfiles.get("tls.key")],
      "scorer: HTTPS from the mounted Secret netsched-scorer-tls %s" % sorted(sfiles.values()))
# Issue 39: the client CA is not the serving certificate's (which cert-manager's
# namespaced Issuer holds), and only the scheduler's name is answered.
check(flag(sargs, "--tls-client-ca") == [cfiles.get("ca.crt")] and cfiles.get("ca.crt"),
      "scorer: --tls-client-ca (mTLS) is the mounted Secret netsched-client-ca's ca.crt %s"
      % flag(sargs, "--tls-client-ca"))
mc_text = open(os.path.join(DEPLOY, "tls", "make-certs.sh")).read()
check(flag(sargs, "--client-names") == ["netsched-scheduler,netsched-rebalancer"] and
      'leaf scheduler "/CN=netsched-scheduler"' in mc_text and
      'leaf rebalancer "/CN=netsched-rebalancer"' in mc_text,
      "scorer: --client-names netsched-scheduler,netsched-rebalancer, the names make-certs.sh "
      "gives the scheduler and the rebalancer")
check(stmpl.get("spec", {}).get("securityContext", {}).get("fsGroup") == scorer_uid,
      "scorer: fsGroup %s reads its Secrets (0440)" % scorer_uid)

pdb = one("PodDisruptionBudget", "netsched-scorer")
check(pdb.get("spec", {}).get("minAvailable") == 1, "PDB: minAvailable 1")
check(pdb.get("spec", {}).get("selector", {}).get("matchLabels", {}).items() <=
      scorer_labels.items() and pdb.get("spec", {}).get("selector"), "PDB: selects the scorer")

# -- Services ----------------------------------------------------------------------
def selects(svc, labels):
    sel = svc.get("spec", {}).get("selector", {})
    return bool(sel) and sel.items() <= labels.items()


cip = [s for s in objs("Service") if s["spec"].get("clusterIP") != "None"]
hl = [s for s in objs("Service") if s["spec"].get("clusterIP") == "None"]
check(len(cip) == 1 and len(hl) == 1, "one ClusterIP and one headless Service")
cip, hl = (cip or [{}])[0], (hl or [{}])[0]
for svc, port, what in ((cip, 8470, "ClusterIP"), (hl, 7470, "headless")):
    sp = (svc.get("spec", {}).get("ports") or [{}])
    check(len(sp) == 1 and sp[0].get("port") == port, "%s Service: port %d" % (what, port))
    check(container_port(scorer, sp[0].get("targetPort")) == port,
          "%s Service: targetPort %s is the scorer's containerPort %d"
          % (what, sp[0].get("targetPort"), port))
    check(selects(svc, scorer_labels) and not selects(svc, agent_labels),
          "%s Service selects the scorer pods only" % what)
check(cip.get("spec", {}).get("type", "ClusterIP") == "ClusterIP", "scheduler's Service is ClusterIP")
check(hl.get("spec", {}).get("publishNotReadyAddresses") is True,
      "headless Service publishes not-ready replicas")
hl_host = "%s.%s.svc" % (hl["metadata"]["name"], hl["metadata"]["namespace"])
scorer_urls = flag(aargs, "--scorer")
m = re.match(r"^tcp://([^:/]+):(\d+)$", scorer_urls[0]) if len(scorer_urls) == 1 else None
check(m and m.group(1) in (hl_host, hl_host + ".cluster.local") and int(m.group(2)) == 7470,
      "agent: --scorer %s is the headless Service %s:7470" % (scorer_urls, hl_host))
svc_host = "%s.%s.svc" % (cip["metadata"]["name"], cip["metadata"]["namespace"])
url_prefix = "https://%s:%d" % (svc_host, cip["spec"]["ports"][0]["port"])

# -- the rebalancer (issue 37): dry run as shipped, least RBAC, mTLS to the scorer ----
rdep = one("Deployment", "netsched-rebalancer")
rspec = rdep.get("spec", {})
rtmpl = rspec.get("template", {})
check(rspec.get("replicas") == 2, "rebalancer: 2 replicas (one acts: the Lease's holder)")
check(rspec.get("selector", {}).get("matchLabels", {}).items() <=
      rtmpl.get("metadata", {}).get("labels", {}).items(), "rebalancer: selector matches its pods")
rebal_pod_labels, rebal_uid = check_pod("rebalancer", rtmpl, True)
rebal = (rtmpl.get("spec", {}).get("containers") or [{}])[0]
check(rebal.get("command") == ["/usr/local/bin/netsched-rebalancer"], "rebalancer: runs netsched-rebalancer")
rargs = args_of(rebal)
check(flag(rargs, "--dry-run") == ["true"], "rebalancer: --dry-run true (moves nothing as shipped)")
check(flag(rargs, "--scorer") == [url_prefix], "rebalancer: --scorer %s is the scorers' Service" % url_prefix)
check(flag(rargs, "--scorer-replicas") == [hl_host],
      "rebalancer: --scorer-replicas %s, every replica, for the moves" % hl_host)
rfiles = secret_files(rtmpl, rebal, "netsched-rebalancer-tls")
check(flag(rargs, "--scorer-cert") == [rfiles.get("tls.crt")] and
      flag(rargs, "--scorer-key") == [rfiles.get("tls.key")] and
      flag(rargs, "--scorer-ca") == [rfiles.get("ca.crt")] and rfiles.get("ca.crt"),
      "rebalancer: its client certificate and the scorer's CA from the Secret netsched-rebalancer-tls")
check(flag(rargs, "--lease-namespace") == ["netsched"], "rebalancer: its Lease in namespace netsched")
rmetrics = flag(rargs, "--metrics-listen")
check(rmetrics == ["0.0.0.0:8472"] and container_port(rebal, "metrics") == 8472,
      "rebalancer: --metrics-listen 0.0.0.0:8472, its containerPort metrics")
renv = {e["name"]: e for e in rebal.get("env", [])}
check(renv.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "metadata.name", "rebalancer: POD_NAME (the Lease's holder identity) from metadata.name")
check(rtmpl.get("spec", {}).get("securityContext", {}).get("fsGroup") == rebal_uid,
      "rebalancer: fsGroup %s reads its Secret (0440)" % rebal_uid)
collect("rebalancer", rtmpl, rebal)


def rules_of(kind, name):
    o = one(kind, name)
    return sorted((tuple(r.get("apiGroups", [])), tuple(r.get("resources", [])),
                   tuple(sorted(r.get("verbs", [])))) for r in o.get("rules", []))


check(rules_of("ClusterRole", "netsched-rebalancer") == sorted([
          (("",), ("pods",), ("get", "list", "watch")), (("",), ("pods/eviction",), ("create",)),
          (("",), ("nodes",), ("get", "list", "patch")), (("",), ("events",), ("create",))]),
      "rebalancer: ClusterRole: pods get/list/watch, pods/eviction create, nodes get/list/patch "
      "(the nudge's label), "
      "events create, nothing else (no delete)")
check(rules_of("Role", "netsched-rebalancer-lease") == [
          (("coordination.k8s.io",), ("leases",), ("create", "get", "update"))] and
      one("Role", "netsched-rebalancer-lease")["metadata"].get("namespace") == "netsched",
      "rebalancer: Role: leases get/create/update in netsched only")
for kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
    b = [o for o in objs(kind) if o.get("roleRef", {}).get("name", "").startswith("netsched-rebalancer")]
    check(len(b) == 1 and b[0]["roleRef"]["kind"] == role_kind and
          b[0].get("subjects") == [{"kind": "ServiceAccount", "name": "netsched-rebalancer",
                                     "namespace": "netsched"}],
          "rebalancer: one %s binds its %s to its ServiceAccount alone" % (kind, role_kind))
rpdb = one("PodDisruptionBudget", "netsched-rebalancer")
check(rpdb.get("spec", {}).get("maxUnavailable") == 1 and
      rpdb.get("spec", {}).get("selector", {}).get("matchLabels", {}).items() <= rebal_pod_labels.items(),
      "rebalancer: PDB maxUnavailable 1 selects its pods")
rnp = one("NetworkPolicy", "netsched-rebalancer").get("spec", {})
check(rnp.get("podSelector", {}).get("matchLabels", {}).items() <= rebal_pod_labels.items() and
      all(r.get("from") and [p.get("port") for p in r.get("ports", [])] == ["metrics"]
          for r in rnp.get("ingress", [])) and rnp.get("ingress"),
      "rebalancer: NetworkPolicy admits its metrics port only, from named peers")

# -- secure by default (issue 14): the NetworkPolicy ---------------------------------
# It selects the scorer pods and admits: to the report port only ipBlocks (hostNetwork
# agents), to the extender port only the scheduler's pods, to the status port ipBlocks
# (the kubelet) and one named namespace (Prometheus); no rule is open to all.
def port_num(ref):
    return container_port(scorer, ref)


nps = [n for n in objs("NetworkPolicy")
       if n.get("spec", {}).get("podSelector", {}).get("matchLabels", {}).items() <= scorer_labels.items()
       and n.get("spec", {}).get("podSelector", {}).get("matchLabels")]
check(len(nps) == 1, "a NetworkPolicy selects the scorer pods")
np_spec = (nps or [{}])[0].get("spec", {})
check("Ingress" in np_spec.get("policyTypes", []), "NetworkPolicy: restricts ingress")
check(not np_spec.get("podSelector", {}).get("matchLabels", {}).items() <= agent_labels.items(),
      "NetworkPolicy: does not select the agents (hostNetwork: it could not apply)")
admitted = {}  # port -> list of peers
for r in np_spec.get("ingress", []):
    check(r.get("from"), "NetworkPolicy: every rule names its peers (none admits everyone)")
    check(r.get("ports"), "NetworkPolicy: every rule names its ports")
    for pt in r.get("ports", []):
        admitted.setdefault(port_num(pt.get("port")), []).extend(r.get("from") or [{}])
sched = one("Deployment", "netsched-scheduler")
sched_labels = sched.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
rebal_labels = one("Deployment", "netsched-rebalancer").get("spec", {}).get("template", {}) \
    .get("metadata", {}).get("labels", {})
check(set(admitted) == {7470, 8470, 8471},
      "NetworkPolicy: admits to the reports, https and status ports only (%s)" % sorted(map(str, admitted)))
for peer in sum(admitted.values(), []):
    cidr = (peer.get("ipBlock") or {}).get("cidr", "")
    check(not cidr.endswith("/0"), "NetworkPolicy: no ipBlock %s admits every address" % cidr)
check(admitted.get(7470) and all(set(p) == {"ipBlock"} for p in admitted[7470]),
      "NetworkPolicy: reports only from ipBlocks (the nodes: agents are hostNetwork)")
check(admitted.get(8471) and
      all(set(p) == {"ipBlock"} or (set(p) == {"namespaceSelector"} and
                                    p["namespaceSelector"].get("matchLabels"))
          for p in admitted[8471]) and any(set(p) == {"ipBlock"} for p in admitted[8471]),
      "NetworkPolicy: status from ipBlocks (the kubelet) and one named namespace (Prometheus) only")
http_peers = admitted.get(8470, [])
check(http_peers and all(set(p) == {"podSelector"} and p["podSelector"].get("matchLabels") and
                         (p["podSelector"]["matchLabels"].items() <= sched_labels.items() or
                          p["podSelector"]["matchLabels"].items() <= rebal_labels.items())
                         for p in http_peers) and
      any(p["podSelector"]["matchLabels"].items() <= rebal_labels.items() for p in http_peers),
      "NetworkPolicy: the extender port from the netsched-scheduler and netsched-rebalancer pods only")
np_text = open(os.path.join(DEPLOY, "networkpolicy.yaml")).read()
check("NODE_CIDR" in np_text and "192.0.2.0/24" in np_text,
      "NetworkPolicy: the node CIDR placeholder is marked NODE_CIDR")

# -- KubeSchedulerConfiguration ----------------------------------------------------
EXT_KEYS = {"urlPrefix", "filterVerb", "prioritizeVerb", "preemptVerb", "weight",
            "nodeCacheCapable", "ignorable", "httpTimeout", "enableHTTPS", "tlsConfig"}
TLS_KNOWN = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData",
             "caData"}
EXT_KNOWN = EXT_KEYS | {"preemptVerb", "bindVerb", "tlsConfig", "managedResources"}
TOP_KNOWN = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
             "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
             "profiles", "extenders", "delayCacheUntilActive"}
LE_KNOWN = {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
            "resourceName", "resourceNamespace"}
CC_KNOWN = {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"}
PROFILE_KNOWN = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
DUR = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")
UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def seconds(d):
    return sum(float(n) * UNIT[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)", d))


def check_ksc(c, where, want_url, want_profile, want_tls, filter_verb=True):
    check(c.get("kind") == "KubeSchedulerConfiguration" and c.get("apiVersion") in KSC_VERSIONS,
          "%s: a KubeSchedulerConfiguration v1/v1beta3/v1beta1" % where)
    check(set(c) <= TOP_KNOWN, "%s: top-level keys are real (%s)" % (where, sorted(set(c) - TOP_KNOWN)))
    check(set(c.get("leaderElection", {})) <= LE_KNOWN, "%s: leaderElection keys are real" % where)
    check(set(c.get("clientConnection", {})) <= CC_KNOWN, "%s: clientConnection keys are real" % where)
    profs = c.get("profiles", [])
    check(all(set(p) <= PROFILE_KNOWN for p in profs), "%s: profile keys are real" % where)
    check([p.get("schedulerName") for p in profs] == [want_profile],
          "%s: one profile, schedulerName %s" % (where, want_profile))
    exts = c.get("extenders", [])
    if not check(len(exts) == 1, "%s: exactly one extender" % where):
        return
    e = exts[0]
    keys = set(e)
    lower = {k.lower(): k for k in EXT_KNOWN}
    for k in keys - EXT_KNOWN:
        check(False, "%s: extender key %r is not one kube-scheduler reads%s" % (
            where, k, " (did you mean %r?)" % lower[k.lower()] if k.lower() in lower else ""))
    # preemptVerb only with a filter: without one nothing is rejected.
    want_keys = EXT_KEYS if filter_verb else EXT_KEYS - {"filterVerb", "preemptVerb"}
    check(keys == want_keys, "%s: extender keys are exactly %s" % (where, sorted(want_keys)))
    check(e.get("urlPrefix") == want_url, "%s: urlPrefix %s" % (where, want_url))
    if filter_verb:
        check(e.get("filterVerb") == "filter", "%s: filterVerb filter" % where)
        check(e.get("preemptVerb") == "preempt", "%s: preemptVerb preempt" % where)
    check(e.get("prioritizeVerb") == "prioritize", "%s: prioritizeVerb prioritize" % where)
    w = e.get("weight")
    check(isinstance(w, int) and not isinstance(w, bool) and w > 0, "%s: weight is an integer > 0" % where)
    check(e.get("nodeCacheCapable") is True, "%s: nodeCacheCapable true" % where)
    check(e.get("ignorable") is True, "%s: ignorable true" % where)
    check(e.get("enableHTTPS") is True, "%s: enableHTTPS true (the scorer requires mTLS)" % where)
    tls = e.get("tlsConfig") or {}
    check(set(tls) <= TLS_KNOWN, "%s: tlsConfig keys are real (%s)" % (where, sorted(set(tls) - TLS_KNOWN)))
    check(tls == want_tls and not tls.get("insecure"),
          "%s: tlsConfig is the client certificate and CA %s" % (where, want_tls))
    t = e.get("httpTimeout")
    check(isinstance(t, str) and DUR.match(t) and 0 < seconds(t) <= 5,
          "%s: httpTimeout %r is a duration string of at most 5s" % (where, t))
    # A hung scorer costs each pod filter + prioritize timeouts: at most 0.2 s.
    check(isinstance(t, str) and DUR.match(t) and seconds(t) <= 0.1,
          "%s: httpTimeout %r bounds a hung scorer's cost to 0.2 s per pod" % (where, t))
    return e


sched_cfg = files["scheduler/kube-scheduler-config.yaml"][0]
sched_b3 = files["scheduler/kube-scheduler-config.v1beta3.yaml"][0]
check(sched_cfg.get("apiVersion") == KSC_VERSIONS[0], "scheduler config is v1")
check(sched_b3.get("apiVersion") == KSC_VERSIONS[1], "scheduler v1beta3 config is v1beta3")
ext = None
# Way (a): the files of the Secret netsched-scheduler-tls as the scheduler's pod mounts it.
sd = one("Deployment", "netsched-scheduler")
stp = sd.get("spec", {}).get("template", {})
kc = (stp.get("spec", {}).get("containers") or [{}])[0]
tf = secret_files(stp, kc, "netsched-scheduler-tls")
tls_a = {"certFile": tf.get("tls.crt"), "keyFile": tf.get("tls.key"), "caFile": tf.get("ca.crt")}
check(None not in tls_a.values(), "netsched-scheduler mounts the Secret netsched-scheduler-tls %s" % tls_a)
for name, c in (("scheduler/kube-scheduler-config.yaml", sched_cfg),
                ("scheduler/kube-scheduler-config.v1beta3.yaml", sched_b3)):
    ext = check_ksc(c, name, url_prefix, "netsched-scheduler", tls_a) or ext
check({k: v for k, v in sched_cfg.items() if k != "apiVersion"} ==
      {k: v for k, v in sched_b3.items() if k != "apiVersion"},
      "the scheduler's v1 and v1beta3 configs differ only in apiVersion")


def without_filter(c):
    return dict(c, extenders=[{k: v for k, v in e.items() if k not in ("filterVerb", "preemptVerb")}
                              for e in c.get("extenders", [])])


def check_variants(base, prefix, url, profile, tls):
    """The v1beta1 (Kubernetes 1.20-1.22) and prioritize-only variants of a v1 config."""
    b1 = files[prefix + ".v1beta1.yaml"][0]
    po = files[prefix + ".prioritize-only.yaml"][0]
    check_ksc(b1, prefix + ".v1beta1.yaml", url, profile, tls)
    check(b1.get("apiVersion") == KSC_VERSIONS[2], "%s.v1beta1.yaml is v1beta1" % prefix)
    check({k: v for k, v in b1.items() if k != "apiVersion"} ==
          {k: v for k, v in base.items() if k != "apiVersion"},
          "%s: the v1 and v1beta1 configs differ only in apiVersion" % prefix)
    check_ksc(po, prefix + ".prioritize-only.yaml", url, profile, tls, filter_verb=False)
    check(po == without_filter(base),
          "%s.prioritize-only.yaml is the v1 config without filterVerb" % prefix)


check_variants(sched_cfg, "scheduler/kube-scheduler-config", url_prefix, "netsched-scheduler", tls_a)
cm = generated.get("netsched-scheduler-config", {"data": {}})
check(yaml.safe_load(cm["data"].get("config.yaml", "")) == sched_cfg,
      "the generated ConfigMap holds the v1 scheduler config as config.yaml")

cp = files["control-plane/scheduler-config.yaml"][0]
cp3 = files["control-plane/scheduler-config.v1beta3.yaml"][0]
check(cp.get("apiVersion") == KSC_VERSIONS[0] and cp3.get("apiVersion") == KSC_VERSIONS[1],
      "control-plane configs are v1 and v1beta3")
# Way (b): the ClusterIP, checked as the Service's name; the files on the node where
# the kubeadm patch mounts them.
tls_b = {"serverName": svc_host, "certFile": "/etc/kubernetes/netsched/tls.crt",
         "keyFile": "/etc/kubernetes/netsched/tls.key", "caFile": "/etc/kubernetes/netsched/ca.crt"}
for name, c in (("control-plane/scheduler-config.yaml", cp),
                ("control-plane/scheduler-config.v1beta3.yaml", cp3)):
    check_ksc(c, name, "https://SCORER_CLUSTER_IP:8470", "default-scheduler", tls_b)
    check(c.get("clientConnection", {}).get("kubeconfig") == "/etc/kubernetes/scheduler.conf",
          "%s: names kubeadm's scheduler kubeconfig (--kubeconfig is ignored with --config)" % name)
check({k: v for k, v in cp.items() if k != "apiVersion"} ==
      {k: v for k, v in cp3.items() if k != "apiVersion"},
      "the control-plane v1 and v1beta3 configs differ only in apiVersion")
check_variants(cp, "control-plane/scheduler-config", "https://SCORER_CLUSTER_IP:8470",
               "default-scheduler", tls_b)
check(cp["extenders"] == [dict(sched_cfg["extenders"][0], urlPrefix="https://SCORER_CLUSTER_IP:8470",
                               tlsConfig=tls_b)],
      "both ways configure the same extender but for its address and certificate files")

patch = files["control-plane/kubeadm-patches/kube-scheduler+json.json"][0]
check(isinstance(patch, list) and all(set(op) == {"op", "path", "value"} and op["op"] == "add"
                                      for op in patch), "kubeadm patch: JSON-patch add operations")
cfgflag = [op["value"] for op in patch if op["path"] == "/spec/containers/0/command/-"]
mounts = [op["value"] for op in patch if op["path"] == "/spec/containers/0/volumeMounts/-"]
pvols = [op["value"] for op in patch if op["path"] == "/spec/volumes/-"]
target = "/etc/kubernetes/scheduler-config.yaml"
check(cfgflag == ["--config=" + target], "kubeadm patch: adds --config=%s" % target)
pv = {v["name"]: v.get("hostPath") for v in pvols}
check(len(mounts) == 2 and all(m.get("readOnly") is True for m in mounts) and
      {m["mountPath"]: pv.get(m["name"]) for m in mounts} ==
      {target: {"path": target, "type": "File"},
       "/etc/kubernetes/netsched": {"path": "/etc/kubernetes/netsched", "type": "Directory"}},
      "kubeadm patch: mounts the config file and the certificate folder read-only from the host")
readme = open(os.path.join(DEPLOY, "control-plane", "README.md")).read()
check("--config=" + target in readme and "SCORER_CLUSTER_IP" in readme,
      "control-plane/README.md gives the flag and fills in the ClusterIP")

# -- the second scheduler ----------------------------------------------------------
sched_uid = check_pod("netsched-scheduler", stp, True)[1]
check(stp.get("spec", {}).get("securityContext", {}).get("fsGroup") == sched_uid,
      "netsched-scheduler: fsGroup %s reads its client certificate (0440)" % sched_uid)
check("--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics" in kc.get("command", []),
      "netsched-scheduler: /metrics without a token, for the PodMonitor")
check(kc.get("image", "").startswith("registry.k8s.io/kube-scheduler:v"),
      "netsched-scheduler runs the stock registry.k8s.io/kube-scheduler image")
cfgs = flag(kc.get("command", []) + kc.get("args", []), "--config")
vols = {v["name"]: v for v in stp.get("spec", {}).get("volumes", [])}
paths = ["%s/%s" % (m["mountPath"], "config.yaml") for m in kc.get("volumeMounts", [])
         if vols.get(m["name"], {}).get("configMap", {}).get("name") == "netsched-scheduler-config"]
check(len(cfgs) == 1 and cfgs == paths, "netsched-scheduler: --config %s is the mounted ConfigMap's config.yaml" % cfgs)
for kind in ("livenessProbe", "readinessProbe"):
    g = kc.get(kind, {}).get("httpGet", {})
    check(g.get("scheme") == "HTTPS" and container_port(kc, g.get("port")) == 10259,
          "netsched-scheduler: %s over HTTPS on 10259" % kind)
sa = stp.get("spec", {}).get("serviceAccountName")
subj = {"kind": "ServiceAccount", "name": sa, "namespace": "netsched"}
bound = {b["roleRef"]["name"] for b in objs("ClusterRoleBinding") if subj in b.get("subjects", [])}
check(bound == {"system:kube-scheduler", "system:volume-scheduler"},
      "netsched-scheduler is bound to system:kube-scheduler and system:volume-scheduler")
le = sched_cfg.get("leaderElection", {})
if le.get("leaderElect", True):
    roles = {r["metadata"]["name"]: r for r in objs("Role") if r["metadata"]["namespace"] == le.get("resourceNamespace")}
    rbs = [b for b in objs("RoleBinding") if subj in b.get("subjects", [])
           and b["roleRef"]["kind"] == "Role" and b["roleRef"]["name"] in roles]
    rules = [r for b in rbs for r in roles[b["roleRef"]["name"]].get("rules", [])]
    can = lambda verb: any("leases" in r.get("resources", []) and verb in r.get("verbs", []) and
                           le.get("resourceName") in r.get("resourceNames", [le.get("resourceName")])
                           for r in rules)
    check(le.get("resourceNamespace") == "netsched" and le.get("resourceName") and
          le.get("resourceName") != "kube-scheduler", "scheduler: its own lease in netsched")
    check(can("get") and can("update") and can("create"), "scheduler: may get, create and update its lease")
check(any(b["metadata"]["namespace"] == "kube-system" and
          b["roleRef"]["name"] == "extension-apiserver-authentication-reader" for b in objs("RoleBinding")),
      "scheduler: may read the client CA for its HTTPS port")
images = {i["name"]: i for i in kz.get("images", [])}
used = {c["image"].split(":")[0] for w in objs("DaemonSet") + objs("Deployment")
        for c in w["spec"]["template"]["spec"]["containers"]}
check(set(images) == used, "kustomization images: cover exactly the images used (%s)" % sorted(used))

# -- the certificates: cert-manager's way names what the pods mount -----------------
cmk = files.get("tls/cert-manager/kustomization.yaml", [{}])[0]
check(cmk.get("kind") == "Component" and cmk.get("apiVersion") == "kustomize.config.k8s.io/v1alpha1",
      "tls/cert-manager is a kustomize Component")
cm_objs = [d for r in cmk.get("resources", []) for d in files.get("tls/cert-manager/" + r, [])]
check(cm_objs and all(d.get("apiVersion") == "cert-manager.io/v1" and
                      d.get("kind") in ("Issuer", "Certificate") and
                      (d.get("metadata") or {}).get("namespace") == "netsched" for d in cm_objs),
      "tls/cert-manager: cert-manager.io/v1 Issuers and Certificates in namespace netsched")
issuers = {d["metadata"]["name"]: d for d in cm_objs if d["kind"] == "Issuer"}
certs = {d["spec"]["secretName"]: d["spec"] for d in cm_objs if d["kind"] == "Certificate"}
for c in certs.values():
    check(c.get("issuerRef", {}).get("name") in issuers, "tls/cert-manager: %s has its Issuer" % c["secretName"])
ca_issuer = [i for i in issuers.values() if "ca" in i["spec"]]
check(len(ca_issuer) == 1 and certs.get(ca_issuer[0]["spec"]["ca"]["secretName"], {}).get("isCA"),
      "tls/cert-manager: one CA Issuer, signing with a CA Certificate of its own")
srv = certs.get("netsched-scorer-tls", {})
check(svc_host in srv.get("dnsNames", []) and "server auth" in srv.get("usages", []) and
      "client auth" not in srv.get("usages", []),
      "tls/cert-manager: netsched-scorer-tls serves %s" % svc_host)
check(srv.get("issuerRef", {}).get("name") in [i["metadata"]["name"] for i in ca_issuer],
      "tls/cert-manager: netsched-scorer-tls is signed by the CA Issuer")
# Issue 39: a namespaced Issuer signs whatever anyone who may create Certificates in
# netsched asks: none of its certificates is a client's, and the scorer's client CA
# is a Secret no Issuer holds or writes.
check(all("client auth" not in c.get("usages", []) and "netsched-scheduler" not in
          [c.get("commonName")] + c.get("dnsNames", []) for c in certs.values()),
      "tls/cert-manager: issues no client certificate and none named netsched-scheduler")
check("netsched-client-ca" not in certs and all(
          (i["spec"].get("ca") or {}).get("secretName") != "netsched-client-ca" for i in issuers.values()),
      "tls/cert-manager: netsched-client-ca (the scorer's client CA) is no Issuer's and no Certificate's")
sec = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(os.path.join(WORK, "tls", "secrets.yaml"))) if d}
check(set(sec) == {"netsched-scorer-tls", "netsched-scheduler-tls", "netsched-rebalancer-tls",
                   "netsched-client-ca"} and
      all(set(sec[n].get("data", {})) == {"tls.crt", "tls.key", "ca.crt"}
          for n in ("netsched-scorer-tls", "netsched-scheduler-tls", "netsched-rebalancer-tls")) and
      set(sec["netsched-client-ca"].get("data", {})) == {"ca.crt"} and
      all(d["metadata"].get("namespace") == "netsched" for d in sec.values()),
      "make-certs.sh: secrets.yaml holds the four Secrets the pods mount")

# -- the container build -------------------------------------------------------------
df = open(os.path.join(DEPLOY, "container", "Dockerfile")).read()
lines = [l.strip() for l in df.splitlines() if l.strip() and not l.strip().startswith("#")]
froms = [l for l in lines if l.upper().startswith("FROM ")]
check(len(froms) == 2 and "bookworm" in froms[0].replace("${DEBIAN_RELEASE}", "bookworm")
      and froms[0].upper().endswith(" AS BUILD"), "Dockerfile: a Debian bookworm build stage")
check(froms[-1:] and ("slim" in froms[-1] or "distroless" in froms[-1]), "Dockerfile: a slim runtime stage")
check(any(l.startswith("RUN ") and "deploy/container/build.sh" in l for l in lines),
      "Dockerfile: the build stage runs deploy/container/build.sh")
check(any(l.startswith("COPY --from=build") for l in lines), "Dockerfile: copies the staged tree")
users = [l.split()[1] for l in lines if l.startswith("USER ")]
check(len(users) == 1 and re.match(r"^\d+(:\d+)?$", users[0]) and users[0].split(":")[0] == str(agent_uid),
      "Dockerfile: USER %s is numeric and the manifests' runAsUser %s" % (users, agent_uid))
ld = [l.split("=", 1)[1] for l in lines if l.startswith("ENV LD_LIBRARY_PATH=")]
check(len(ld) == 1, "Dockerfile: LD_LIBRARY_PATH names the staged libraries")
check(os.access(os.path.join(DEPLOY, "container", "build.sh"), os.X_OK), "build.sh is executable")

# -- hand the running part its arguments -------------------------------------------
TLS_LOCAL = {sfiles.get("tls.crt"): "scorer.crt", sfiles.get("tls.key"): "scorer.key",
             cfiles.get("ca.crt"): "ca.crt", rfiles.get("tls.crt"): "rebalancer.crt",
             rfiles.get("tls.key"): "rebalancer.key", rfiles.get("ca.crt"): "ca.crt"}


def local(args):
    out = []
    for a in args:
        if a.startswith("/etc/netsched/key/"):
            a = os.path.join(WORK, "report.key")
        if a in TLS_LOCAL:
            a = os.path.join(WORK, "tls", TLS_LOCAL[a])
        a = a.replace(hl_host + ".cluster.local", "127.0.0.1").replace(hl_host, "127.0.0.1")
        a = a.replace("0.0.0.0", "127.0.0.1")
        for mport, lport in PORTS.items():
            a = re.sub(r":%d$" % mport, ":%d" % lport, a)
        out.append(a)
    return out


def nul(name, args):
    with open(os.path.join(WORK, name), "w") as f:
        f.write("".join(a + "\0" for a in args))


nul("agent.args", aargs)
nul("agent.local.args", local(aargs))
nul("scorer.args", [os.path.join(WORK, "tls", TLS_LOCAL[a]) if a in TLS_LOCAL else a for a in sargs])
nul("scorer.local.args", local(sargs))
nul("rebalancer.args", [os.path.join(WORK, "tls", TLS_LOCAL[a]) if a in TLS_LOCAL else a for a in rargs])
nul("rebalancer.local.args", local(rargs))
with open(os.path.join(WORK, "probes.tsv"), "w") as f:
    for comp, kind, path, port, scheme in probes:
        f.write("%s\t%s\t%s\t%d\t%s\n" % (comp, kind, path, PORTS[port], scheme.lower()))
with open(os.path.join(WORK, "extender.tsv"), "w") as f:
    path = re.sub(r"^https?://[^/]+", "", ext["urlPrefix"] if ext else "").rstrip("/")
    for v in ("filterVerb", "prioritizeVerb", "preemptVerb"):
        f.write("%s\t%s/%s\n" % (v, path, ext[v] if ext else "?"))
with open(os.path.join(WORK, "client.env"), "w") as f:
    # What the scheduler presents and checks: tlsConfig, made local like the args.
    f.write("SVC_HOST=%s\n" % svc_host)
with open(os.path.join(WORK, "image.env"), "w") as f:
    f.write("IMAGE_UID=%s\nIMAGE_LIBDIR=%s\n" % (agent_uid, ld[0] if ld else ""))

if errors:
    print("%d manifest check(s) failed" % len(errors), file=sys.stderr)
    sys.exit(1)
PY

mapfile -d '' AGENT_ARGS <"$WORK/agent.args"
mapfile -d '' AGENT_LOCAL <"$WORK/agent.local.args"
mapfile -d '' SCORER_ARGS <"$WORK/scorer.args"
mapfile -d '' SCORER_LOCAL <"$WORK/scorer.local.args"
mapfile -d '' REBAL_ARGS <"$WORK/rebalancer.args"
mapfile -d '' REBAL_LOCAL <"$WORK/rebalancer.local.args"
. "$WORK/image.env"
. "$WORK/client.env"
NODE=netsched-deploy-test
T=$WORK/tls

# ------------------------------------------- 2. the binaries take the manifests' flags
check_config() { # WHAT BINARY ARGS...
	local what=$1 out rc
	shift
	out=$(NODE_NAME=$NODE "$@" --check-config 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && [ "$out" = "configuration OK" ] ||
		fail "$what: --check-config with the manifest's args: exit $rc: $out"
	echo "ok: $what accepts every flag (--check-config)"
}
# Signing is on in the manifests: the Secret's file format (one hex key per line)
# stands in for the mounted Secret (/etc/netsched/key/report.key, a path that does
# not exist here: the binaries would exit 2, as they should).
printf '# netsched report keys\n%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$WORK/report.key"
AGENT_MANIFEST=("${AGENT_ARGS[@]}")
AGENT_ARGS=("${AGENT_ARGS[@]//\/etc\/netsched\/key\/report.key/$WORK/report.key}")
SCORER_ARGS=("${SCORER_ARGS[@]//\/etc\/netsched\/key\/report.key/$WORK/report.key}")
check_config "agent (manifest args)" "$BIN/netsched-agent" "${AGENT_ARGS[@]}"
check_config "scorer (manifest args)" "$BIN/netsched-scorer" "${SCORER_ARGS[@]}"
check_config "agent (loopback args)" "$BIN/netsched-agent" "${AGENT_LOCAL[@]}"
check_config "scorer (loopback args)" "$BIN/netsched-scorer" "${SCORER_LOCAL[@]}"
# The rebalancer's apiserver is its pod's ServiceAccount; here a kubeconfig that
# names an apiserver nobody answers (it never acts here: no Lease).
cat >"$WORK/rebal.kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
check_config "rebalancer (manifest args)" "$BIN/netsched-rebalancer" "${REBAL_ARGS[@]}" --kubeconfig "$WORK/rebal.kubeconfig"
check_config "rebalancer (loopback args)" "$BIN/netsched-rebalancer" "${REBAL_LOCAL[@]}" --kubeconfig "$WORK/rebal.kubeconfig"

start scorer "$BIN/netsched-scorer" "${SCORER_LOCAL[@]}"
HTTP_PORT=$P_HEALTH
wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$P_HEALTH/healthz"
start agent env NODE_NAME=$NODE "$BIN/netsched-agent" "${AGENT_LOCAL[@]}"
wait_for 10 "agent /healthz" curl -sf "http://127.0.0.1:$P_METRICS/healthz"
start rebalancer "$BIN/netsched-rebalancer" "${REBAL_LOCAL[@]}" --kubeconfig "$WORK/rebal.kubeconfig"
wait_for 10 "rebalancer /healthz" curl -sf "http://127.0.0.1:$P_REBAL/healthz"

# Every probe and scrape path the manifests name answers 200 on the port they name
# (readiness may wait for the first report or the warm-up: poll, bounded).
while IFS=$'\t' read -r comp kind path port scheme; do
	url="$scheme://127.0.0.1:$port$path"
	wait_for 15 "$comp $kind $url" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$url')\" = 200 ]"
	echo "ok: $comp $kind $path answers 200"
done <"$WORK/probes.tsv"

# The agent, started with the manifest's --scorer (the headless name made loopback),
# reaches the scorer: its node shows up with agent data.
wait_for 15 "the agent's node in /v1/nodes" bash -c \
	"curl -s http://127.0.0.1:$P_HEALTH/v1/nodes | jq -e '.nodes[] | select(.name == \"$NODE\" and .source == \"agent\")'"
echo "ok: the agent's reports reach the scorer through the manifest's --scorer"
grep -q "accepting only reports signed" "$WORK/scorer.log" ||
	fail "the scorer started with the manifest's args does not require signed reports"
echo "ok: the agent's reports are signed and the scorer takes only signed ones"
# The docs' figures for deploy/ are the scorer's own: the report connections it
# logs it allows with the manifest's --max-nodes (ingest.c: an eighth more and 64
# for reconnects), and what they may hold at 36 kB each (docs/operating.md, "Sizing").
read -r conns nodes < <(sed -n 's/.*at most \([0-9]*\) report connections (--max-nodes \([0-9]*\),.*/\1 \2/p' \
	"$WORK/scorer.log" | head -n 1)
[ -n "${nodes:-}" ] || fail "the scorer logged no report connection bound"
want=$((nodes + nodes / 8 + 64))
[ "$conns" = "$want" ] || echo "note: this machine's open-file limit holds report connections to $conns (deploy/: $want)"
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }
for doc in docs/security.md docs/operating.md; do
	grep -q "$(commas "$want")" "$doc" && grep -q "$((want * 36 / 1000)) MB" "$doc" ||
		fail "$doc does not give deploy/'s $(commas "$want") report connections and $((want * 36 / 1000)) MB"
done
grep -q "1.125 + 64 ($(commas "$want") in deploy/)" docs/security.md ||
	fail "docs/security.md: the report connection bound in deploy/ is not $(commas "$want")"
echo "ok: docs/security.md and docs/operating.md give deploy/'s $(commas "$want") report connections (--max-nodes $nodes)"
curl -s "http://127.0.0.1:$P_METRICS/metrics" | grep -q '^netsched_agent_reports_failed_total{scorer="tcp://127.0.0.1:'"$P_REPORTS"'"} ' ||
	fail "agent /metrics lacks netsched_agent_reports_failed_total for its scorer"
echo "ok: agent /metrics counts failed reports per scorer"

# The extender verbs at the urlPrefix path, as the scheduler will call them: HTTPS to
# the Service's name (resolved to loopback), its certificate checked against the CA
# of the scheduler's tlsConfig, the scheduler's client certificate presented.
# sched PATH [FILE] [CURL ARGS]: "CODE BODY" from the extender port.
sched() {
	local path=$1 file=${2:-} code
	shift 2
	local args=(-s -o "$WORK/body" -w '%{http_code}' --cacert "$T/ca.crt"
		--resolve "$SVC_HOST:$P_HTTP:127.0.0.1" "$@")
	[ -n "$file" ] && args+=(-X POST -H 'Content-Type: application/json' --data-binary "@$file")
	code=$(curl "${args[@]}" "https://$SVC_HOST:$P_HTTP$path") || code=000
	echo "$code $(cat "$WORK/body" 2>/dev/null)"
}
CLIENT=(--cert "$T/scheduler.crt" --key "$T/scheduler.key")
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=evil-client \
	-keyout "$WORK/evil.key" -out "$WORK/evil.csr" 2>/dev/null &&
	openssl x509 -req -in "$WORK/evil.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
		-days 1 -out "$WORK/evil.crt" 2>/dev/null || fail "cannot make evil-client's certificate"
printf '{"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{}},"Nodes":null,"NodeNames":["%s","other"]}' \
	"$NODE" >"$WORK/names.json"
printf '{"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{}},"NodeNameToVictims":null,"NodeNameToMetaVictims":{"%s":{"Pods":[{"UID":"v1"}],"NumPDBViolations":0},"other":{"Pods":[{"UID":"v2"}],"NumPDBViolations":0}}}' \
	"$NODE" >"$WORK/preempt.json"
while IFS=$'\t' read -r verb path; do
	body=$WORK/names.json
	[ "$verb" = preemptVerb ] && body=$WORK/preempt.json
	r=$(sched "$path" "$body" "${CLIENT[@]}")
	expect "$verb $path status" "${r%% *}" 200
	case $verb in
	filterVerb) expect "$verb keeps both nodes" "$(jq -c '.NodeNames' <<<"${r#* }")" "[\"$NODE\",\"other\"]" ;;
	# --prioritize-reply compact: the idle node with data above "other" (no
	# data, neutral), which is the lowest and so left out.
	prioritizeVerb) expect "$verb lists the node above the lowest score" \
		"$(jq -c '[.[] | select(.Score >= 1 and .Score <= 10) | .Host]' <<<"${r#* }")" "[\"$NODE\"]" ;;
	preemptVerb) expect "$verb keeps both candidates" \
		"$(jq -c '.NodeNameToMetaVictims | keys' <<<"${r#* }")" "[\"$NODE\",\"other\"]" ;;
	esac
	# Anyone else: no client certificate, or one from another CA.
	r=$(sched "$path" "$body")
	expect "$verb without the scheduler's certificate" "${r%% *}" 403
	r=$(sched "$path" "$body" --cert "$T/scorer.crt" --key "$T/scorer.key")
	expect "$verb with a certificate that is not a client's (the scorer's own)" "${r%% *}" 403
	# Issue 39: from the very CA the scorer trusts, for another name, no EKU.
	r=$(sched "$path" "$body" --cert "$WORK/evil.crt" --key "$WORK/evil.key")
	expect "$verb with CN=evil-client from the scheduler's own CA" "${r%% *}" 403
done <"$WORK/extender.tsv"
# The rebalancer's certificate, from make-certs.sh, is one the scorer started with the
# manifest's args admits (its --client-names): /v1/pressure is not refused (403).
# (404 until the scorer serves /v1/pressure; 200 then.)
r=$(sched "/v1/pressure?hot=0.90" "" --cert "$T/rebalancer.crt" --key "$T/rebalancer.key")
[ "${r%% *}" != 403 ] && [ "${r%% *}" != 000 ] ||
	fail "the scorer refuses the rebalancer's certificate: ${r%% *}"
r=$(sched "/v1/pressure?hot=0.90" "" --cert "$WORK/evil.crt" --key "$WORK/evil.key")
expect "/v1/pressure with CN=evil-client" "${r%% *}" 403
echo "ok: the scorer admits the rebalancer's certificate (CN netsched-rebalancer), not another name's"
# The extender port serves the verbs and the probes, no status: that is the other port.
for path in /metrics /v1/nodes; do
	r=$(sched "$path" "" "${CLIENT[@]}")
	expect "GET $path on the extender port" "${r%% *}" 404
	expect "GET $path on the status port" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P_HEALTH$path")" 200
done

# ----------------------------------------------------------- 3. the container build
IMG=$WORK/image
deploy/container/build.sh "$IMG" >"$WORK/build.log" 2>&1 || fail "deploy/container/build.sh failed: $(tail -n 20 "$WORK/build.log")"
echo "ok: build.sh built and staged: $(tail -n 1 "$WORK/build.log")"
RFS=$IMG/rootfs
LIB=$RFS$IMAGE_LIBDIR
[ -d "$LIB" ] || fail "build.sh staged no $IMAGE_LIBDIR (the Dockerfile's LD_LIBRARY_PATH)"
glibc='^(ld-linux[-a-z0-9_.]*\.so\.[0-9]+|lib(c|m|mvec|pthread|dl|rt|resolv|util|anl|nss_[a-z]+)\.so\.[0-9.]+)$'
for b in netsched-agent netsched-scorer netsched-rebalancer; do
	[ -x "$RFS/usr/local/bin/$b" ] || fail "build.sh did not stage /usr/local/bin/$b"
	env -i LD_LIBRARY_PATH="$LIB" "$RFS/usr/local/bin/$b" --help >/dev/null 2>&1 ||
		fail "staged $b --help does not exit 0"
	echo "ok: staged $b --help exits 0 with LD_LIBRARY_PATH=$IMAGE_LIBDIR"
	LD_LIBRARY_PATH=$LIB ldd "$RFS/usr/local/bin/$b" >"$WORK/ldd.$b" || fail "ldd $b failed"
	! grep -q 'not found' "$WORK/ldd.$b" || fail "staged $b misses a library: $(grep 'not found' "$WORK/ldd.$b")"
	while read -r name arrow path _; do
		[ "$arrow" = "=>" ] || continue
		case $path in
		"$LIB"/*) ;;
		*) [[ $name =~ $glibc ]] || fail "staged $b loads $name from $path, outside the staged tree and not glibc" ;;
		esac
	done <"$WORK/ldd.$b"
	echo "ok: staged $b loads every library from the staged tree or glibc"
done
for l in "$LIB"/*; do
	n=$(basename "$l")
	grep -q "^	$n => $LIB/$n " "$WORK/ldd.netsched-agent" "$WORK/ldd.netsched-scorer" \
		"$WORK/ldd.netsched-rebalancer" || fail "build.sh staged $n, which no binary loads"
done
echo "ok: build.sh staged only libraries the binaries load ($(ls "$LIB" | wc -l))"

# The image, as far as it can be without a container engine: the staged tree over a
# root holding nothing but glibc, run as the image's UID.
if [ "$(id -u)" -eq 0 ] && command -v chroot >/dev/null && command -v dpkg-query >/dev/null; then
	CR=$WORK/chroot
	mkdir -p "$CR"
	dpkg-query -L libc6 | grep -E '\.so[.0-9]*$' | grep -v /gconv/ | while read -r f; do
		[ -e "$f" ] && cp -L --parents "$f" "$CR/"
	done
	# The program interpreter, as the binaries name it (/lib64/ld-linux-x86-64.so.2).
	interp=$(awk '$1 ~ /^\// && $2 !~ /=>/ { print $1 }' "$WORK/ldd.netsched-agent" | head -n 1)
	[ -n "$interp" ] && [ -e "$interp" ] && cp -L --parents "$interp" "$CR/"
	cp -a "$RFS/." "$CR/"
	CHROOT=$(command -v chroot)
	for b in netsched-agent netsched-scorer netsched-rebalancer; do
		env -i LD_LIBRARY_PATH="$IMAGE_LIBDIR" "$CHROOT" --userspec="$IMAGE_UID:$IMAGE_UID" "$CR" \
			"/usr/local/bin/$b" --help >/dev/null 2>&1 || fail "$b does not run in a glibc-only root"
	done
	echo "ok: the three binaries run in a root holding only glibc and the staged tree, as UID $IMAGE_UID"
	# The key where the Secret volume puts it: mode 0440 (defaultMode 288), group
	# 65532 (fsGroup), read by the image's UID.
	install -D -m 0440 -o root -g "$IMAGE_UID" "$WORK/report.key" "$CR/etc/netsched/key/report.key"
	install -D -m 0440 -o root -g "$IMAGE_UID" "$T/scorer.crt" "$CR/etc/netsched/tls/tls.crt"
	install -D -m 0440 -o root -g "$IMAGE_UID" "$T/scorer.key" "$CR/etc/netsched/tls/tls.key"
	install -D -m 0440 -o root -g "$IMAGE_UID" "$T/ca.crt" "$CR/etc/netsched/tls/ca.crt"
	out=$(env -i NODE_NAME=$NODE LD_LIBRARY_PATH="$IMAGE_LIBDIR" "$CHROOT" --userspec="$IMAGE_UID:$IMAGE_UID" "$CR" \
		/usr/local/bin/netsched-agent "${AGENT_MANIFEST[@]}" --check-config 2>&1) ||
		fail "agent --check-config in the glibc-only root: $out"
	echo "ok: the staged agent reads the key at the manifest's path as UID $IMAGE_UID"
	P2=$(free_port) P3=$(free_port)
	mapfile -t CR_ARGS < <(printf '%s\n' "${SCORER_ARGS[@]}" | sed "s/:8470\$/:$P2/;s|:7470\$|:$(free_port)|;s/:8471\$/:$P3/;s/0\.0\.0\.0/127.0.0.1/;s|^$WORK/report.key\$|/etc/netsched/key/report.key|;s|^$T/scorer.crt\$|/etc/netsched/tls/tls.crt|;s|^$T/scorer.key\$|/etc/netsched/tls/tls.key|;s|^$T/ca.crt\$|/etc/netsched/tls/ca.crt|")
	start scorer-chroot env -i LD_LIBRARY_PATH="$IMAGE_LIBDIR" "$CHROOT" --userspec="$IMAGE_UID:$IMAGE_UID" "$CR" \
		/usr/local/bin/netsched-scorer "${CR_ARGS[@]}"
	wait_for 10 "the staged scorer's /healthz" curl -sf "http://127.0.0.1:$P3/healthz"
	code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.crt" "${CLIENT[@]}" \
		--resolve "$SVC_HOST:$P2:127.0.0.1" "https://$SVC_HOST:$P2/healthz")
	expect "the staged scorer's extender port over mTLS, as UID $IMAGE_UID reading the mounted files" "$code" 200
	echo "ok: the staged scorer serves /healthz from the glibc-only root"
else
	echo "note: not root (or no chroot): skipped running the staged tree in a glibc-only root"
fi

echo "PASS: test_deploy"
