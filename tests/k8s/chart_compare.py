#!/usr/bin/env python3
"""Compares two renderings of netsched, object by object and field by field.

    chart_compare.py objects KUSTOMIZE.yaml HELM.yaml
        every object `kubectl kustomize` renders must be in the chart's render
        with the same fields, and the chart must render nothing else, but for
        the INTENDED differences below, each with its reason. Prints one line
        per object compared and one per difference; exit 1 on any other.
    chart_compare.py config HELM.yaml CONFIGMAP KEY FILE
        the KubeSchedulerConfiguration the chart renders into CONFIGMAP's KEY
        equals FILE (a shipped config of deploy/), compared as parsed YAML:
        the chart's copy has shorter comments, nothing else may differ.

Reads YAML with python3-yaml only.
"""
import json
import re
import sys

import yaml

# The ConfigMaps deploy/'s configMapGenerator makes: kustomize appends a hash of
# their content to the name (and to every reference to it).
GENERATED = ("netsched-scheduler-config",)

# Intended differences between `kubectl kustomize deploy/` and the chart with
# default values, each with its reason. Every one is applied to both sides
# before comparing; anything else that differs fails the test.
INTENDED = [
    ("Namespace netsched: only in deploy/",
     "the chart leaves it to `helm install --create-namespace` (Helm cannot adopt a "
     "namespace it did not create); namespace.create=true renders the same object, "
     "which the test checks separately"),
    ("metadata.labels app.kubernetes.io/managed-by: kustomize -> Helm",
     "each tool states itself (deploy/kustomization.yaml's labels:, the chart's "
     "netsched.labels)"),
    ("metadata.labels app.kubernetes.io/instance and helm.sh/chart: chart only",
     "Helm's conventions, on object metadata only: never on selectors or pod "
     "templates, so a release can take over objects deploy/ created"),
    ("ConfigMap netsched-scheduler-config: no hash suffix in the chart",
     "kustomize's configMapGenerator appends a content hash to roll the scheduler "
     "on a change; the chart rolls it by the pod annotation checksum/config"),
    ("Deployment netsched-scheduler: pod annotation checksum/config, chart only",
     "the same roll on a config change, the Helm way"),
    ("ConfigMap netsched-scheduler-config data config.yaml: compared parsed",
     "the chart generates the config from values; its comments are shorter"),
]

HASHED = re.compile(r"^(%s)-[a-z0-9]{10}$" % "|".join(re.escape(n) for n in GENERATED))
DROP_LABELS = ("app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "helm.sh/chart")


def load(path):
    with open(path) as f:
        return [o for o in yaml.safe_load_all(f) if o]


def unhash(o):
    """Names and references of generated ConfigMaps without kustomize's hash."""
    if isinstance(o, dict):
        return {k: unhash(v) for k, v in o.items()}
    if isinstance(o, list):
        return [unhash(v) for v in o]
    if isinstance(o, str):
        m = HASHED.match(o)
        return m.group(1) if m else o
    return o


def normalise(o):
    o = unhash(o)
    md = o.setdefault("metadata", {})
    labels = md.get("labels") or {}
    for k in DROP_LABELS:
        labels.pop(k, None)
    if labels:
        md["labels"] = labels
    else:
        md.pop("labels", None)
    if o.get("kind") == "Deployment" and md.get("name") == "netsched-scheduler":
        ann = o["spec"]["template"]["metadata"].get("annotations") or {}
        ann.pop("checksum/config", None)
        if ann:
            o["spec"]["template"]["metadata"]["annotations"] = ann
        else:
            o["spec"]["template"]["metadata"].pop("annotations", None)
    if o.get("kind") == "ConfigMap" and md.get("name") in GENERATED:
        o["data"] = {k: yaml.safe_load(v) for k, v in o["data"].items()}
    return o


def key(o):
    md = o["metadata"]
    return "%s %s/%s" % (o["kind"], md.get("namespace", "-"), md["name"])


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            p = "%s.%s" % (path, k) if path else str(k)
            if k not in a:
                out.append("%s: only in the chart: %s" % (p, json.dumps(b[k])[:200]))
            elif k not in b:
                out.append("%s: only in deploy/: %s" % (p, json.dumps(a[k])[:200]))
            else:
                diff(a[k], b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, "%s[%d]" % (path, i), out)
    elif a != b or type(a) is not type(b):
        out.append("%s: deploy/ %s, chart %s" % (path, json.dumps(a)[:200], json.dumps(b)[:200]))


def objects(kz_path, helm_path, allow_missing=("Namespace",)):
    kz = {key(o): o for o in map(normalise, load(kz_path))}
    hm = {key(o): o for o in map(normalise, load(helm_path))}
    bad = []
    for k in sorted(set(kz) | set(hm)):
        if k not in hm:
            if k.split()[0] in allow_missing:
                print("intended: %s only in deploy/ (see INTENDED)" % k)
                continue
            bad.append("%s: in deploy/, not rendered by the chart" % k)
            continue
        if k not in kz:
            bad.append("%s: rendered by the chart, not in deploy/" % k)
            continue
        out = []
        diff(kz[k], hm[k], "", out)
        bad += ["%s: %s" % (k, d) for d in out]
        if not out:
            print("same: %s" % k)
    print("%d objects from kustomize, %d from the chart" % (len(kz), len(hm)))
    for name, why in INTENDED:
        print("intended difference: %s (%s)" % (name, why))
    for b in bad:
        print("DIFFERENT: %s" % b)
    return 1 if bad else 0


def config(helm_path, cm, data_key, shipped):
    found = [o for o in load(helm_path) if o["kind"] == "ConfigMap" and o["metadata"]["name"] == cm]
    if len(found) != 1:
        print("DIFFERENT: %d ConfigMaps %s rendered" % (len(found), cm))
        return 1
    got = yaml.safe_load(found[0]["data"][data_key])
    want = yaml.safe_load(open(shipped))
    out = []
    diff(want, got, "", out)
    for d in out:
        print("DIFFERENT: %s vs %s: %s" % (cm, shipped, d.replace("deploy/", "file")))
    return 1 if out else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "objects":
        sys.exit(objects(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 6 and sys.argv[1] == "config":
        sys.exit(config(*sys.argv[2:]))
    sys.exit(__doc__)
