#!/usr/bin/env python3
"""netsched as deploy/ ships it, made to run in the lab (tests/k8s/lab.sh):

  shipped.py args scorer|agent|rebalancer [-- --option=value ...]
      the container args of deploy/scorer.yaml, deploy/agent.yaml or
      deploy/rebalancer.yaml, one a
      line, with the options given replaced by these local values (value
      "drop": left out) and those the file lacks appended
  shipped.py scheduler-config OUT KUBECONFIG URL HEALTH CERTS
      deploy/scheduler/kube-scheduler-config.v1beta1.yaml with only the
      kubeconfig, the scorer's URL, a loopback health port and the
      certificate files (CERTS: the directory deploy/tls/make-certs.sh
      wrote) made local, as tests/k8s/test_k8s_deploy.sh does: profile
      netsched-scheduler, leader election, the extender's verbs, weight,
      httpTimeout and mTLS stay (the scorer's certificate still checked for
      the Service's name)

Reads deploy/ each time, so a change there is what the lab runs.
Needs python3-yaml.
"""
import os
import sys
import urllib.parse

import yaml

DEPLOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy")


def container_args(kind):
    with open(os.path.join(DEPLOY, f"{kind}.yaml"), encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") in ("Deployment", "DaemonSet")]
    if not docs:
        raise SystemExit(f"shipped: deploy/{kind}.yaml has no Deployment or DaemonSet")
    return [str(a) for a in docs[0]["spec"]["template"]["spec"]["containers"][0]["args"]]


def localized(args, subst):
    """args with each option in subst given its values (None: dropped)."""
    out, seen, i = [], set(), 0
    while i < len(args):
        opt = args[i]
        has_value = i + 1 < len(args) and not args[i + 1].startswith("--")
        value = args[i + 1] if has_value else None
        i += 2 if has_value else 1
        if opt in subst:
            seen.add(opt)
            for v in subst[opt] or []:
                out += [opt, v]
        else:
            out += [opt] + ([value] if has_value else [])
    for opt, values in subst.items():
        if opt not in seen:
            for v in values or []:
                out += [opt, v]
    return out


def scheduler_config(out, kubeconfig, url, health, certs):
    path = os.path.join(DEPLOY, "scheduler", "kube-scheduler-config.v1beta1.yaml")
    with open(path, encoding="utf-8") as f:
        c = yaml.safe_load(f)
    c.setdefault("clientConnection", {})["kubeconfig"] = kubeconfig
    local = {"tls.crt": "scheduler.crt", "tls.key": "scheduler.key", "ca.crt": "ca.crt"}
    for e in c["extenders"]:
        tls = e.get("tlsConfig")
        if tls:
            tls.setdefault("serverName", urllib.parse.urlsplit(e["urlPrefix"]).hostname)
            for k in ("certFile", "keyFile", "caFile"):
                tls[k] = os.path.join(certs, local[os.path.basename(tls[k])])
        e["urlPrefix"] = url
    c["healthzBindAddress"] = c["metricsBindAddress"] = health
    with open(out, "w", encoding="utf-8") as f:
        yaml.safe_dump(c, f)


def main(argv):
    if len(argv) >= 2 and argv[0] == "args" and argv[1] in ("scorer", "agent", "rebalancer"):
        subst = {}
        for item in argv[2:]:
            if item == "--":
                continue
            opt, sep, value = item.partition("=")
            if not sep or not opt.startswith("--"):
                raise SystemExit(f"shipped: {item!r} is not --option=value")
            if value == "drop":
                subst[opt] = None
            elif subst.get(opt, []) is not None:
                subst.setdefault(opt, []).append(value)
        print("\n".join(localized(container_args(argv[1]), subst)))
        return 0
    if len(argv) == 6 and argv[0] == "scheduler-config":
        scheduler_config(*argv[1:])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
