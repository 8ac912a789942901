#!/usr/bin/env python3
"""The closed-loop placement bench's driver (bench/placement.sh runs it):

  placement.py background WORKLOAD SPEED      "node bits-per-second streams rx|tx"
  placement.py netsched-args WORKLOAD agent|scorer|rebalancer   the netsched
                                              ways' extra options, one a line
                                              (the rebalancer's: its timing
                                              scaled as the agents' window)
  placement.py list                           make bench-placement's workloads
  placement.py change WORKLOAD                none, late or ramp (its change)
  placement.py run --workload W --speed S --placement P --out DIR ...
  placement.py report DIR [--plots DIR] [--ways W,...]

`run` plays one workload on the running cluster: its Deployments and
ReplicaSets (as the controller-manager would leave them: no controller
runs, so the bench creates the pods itself, each owned by its ReplicaSet
with controller: true and labelled with its pod-template-hash, as the
ReplicaSet controller makes them), then its pods at their times, placed by
the stock scheduler (stock), by netsched's scheduler (netsched:
spec.schedulerName netsched-scheduler, deploy/'s way (a)), or bound at once
to the oracle's node (oracle: spec.nodeName; a group pinned to a node is
bound there whatever the way); deletes them at their times; and writes
DIR/run.json. A workload that learns waits, under netsched (--scorer), until
the scorer's /v1/workloads says its groups are learned, from pods that have
sent for a whole agents' window, before the pods due from its learn_at on
(120 s at most; the rest of the timeline moves with it), and keeps what
the scorer believed of them then and at the end.
A workload that changes after placement (placement_model.Change: late,
neighbour) runs run_change instead: real Deployments the controller-manager
runs (bare pods for the oracle), a handshake with bench/placement.sh at the
change (OUT/change.json, then OUT/changed), every pod polled so evictions
and their replacements are known (run.json "moves").
`report` turns the runs into the tables and plots.
"""
import argparse
import json
import math
import os
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
# Nothing written into the source tree (no __pycache__).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "tests", "k8s"))
sys.path.insert(0, HERE)
import kapi  # noqa: E402
import placement_model as model  # noqa: E402
import placement_report  # noqa: E402

SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.SafeEncodeString


def speed_bps(text):
    units = {"k": 10**3, "M": 10**6, "G": 10**9}
    if text[-1:] in units and text[:-1].isdigit():
        return int(text[:-1]) * units[text[-1]]
    if text.isdigit():
        return int(text)
    raise SystemExit(f"placement: speed {text!r} is not a number with k, M or G")


def quantity(bps):
    """A bit rate as a Kubernetes quantity the scorer and the stand-in read."""
    return f"{bps // 1000}k" if bps % 10**6 else f"{bps // 10**6}M"


def template_hash(template):
    """pod-template-hash the way the Deployment controller makes it: FNV-32a
    of the template, encoded with the apimachinery's safe alphabet."""
    h = 0x811C9DC5
    for b in json.dumps(template, sort_keys=True).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    out = ""
    for _ in range(10):
        out += SAFE[h % len(SAFE)]
        h //= len(SAFE)
        if h == 0:
            break
    return out


# ---------------------------------------------------------------- run
def workloads_seen(scorer, ns):
    """What the scorer's /v1/workloads says of the namespace's workloads:
    {name: {"learned", "pods", "podsMeasured", "rxBps", "txBps"}} (bits per
    second per pod), {} when it cannot say."""
    try:
        with urllib.request.urlopen(f"{scorer}/v1/workloads", timeout=5) as r:
            doc = json.loads(r.read(16 << 20))
    except (OSError, ValueError):
        return {}
    return {w["name"]: {"learned": w.get("learned", False), "pods": w.get("pods", 0),
                        "podsMeasured": w.get("podsMeasured", 0),
                        "rxBps": w.get("rxBytesPerSecond", 0) * 8, "txBps": w.get("txBytesPerSecond", 0) * 8}
            for w in doc.get("workloads", []) if w.get("namespace") == ns}


def wait_learned(scorer, ns, groups, limit=120.0, ready=lambda: True):
    """Until the scorer has learned every group and ready() holds
    (bounded); returns the seconds waited and what it said last."""
    t = time.time()
    seen = {}
    while time.time() - t < limit:
        seen = workloads_seen(scorer, ns)
        if all(seen.get(g, {}).get("learned") for g in groups) and ready():
            break
        time.sleep(0.5)
    else:
        print(f"placement: {ns}: the scorer had not learned {', '.join(groups)} from pods sending for "
              f"a window after {limit:g} s: {json.dumps(seen)}", file=sys.stderr)
    return time.time() - t, seen


def agent_window(w):
    """The agents' --window of workload w in seconds (deploy/'s 60 s)."""
    for a in w.agent_args:
        if a.startswith("--window=") and a.endswith("s"):
            return float(a[len("--window="):-1])
    return 60.0


def cpu_busy():
    with open("/proc/stat", encoding="ascii") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return sum(v) - v[3] - v[4], sum(v)


def sent_for(state, uids, seconds, ended_counts=False):
    """Whether each of these pods' traffic (the kubelet stand-in's records
    in state) has been sending for seconds at least (or, ended_counts, has
    ended: a result recorded)."""
    now = time.time()
    for uid in uids:
        try:
            with open(os.path.join(state, "pods", uid + ".json"), encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError):
            return False
        if ended_counts and rec.get("result_done"):
            continue
        since = rec.get("sending")
        if not since or now - since < seconds:
            return False
    return True


def run_for(api, ns, pods, seconds, state):
    """Tests judge what each pod moved, not how soon it started: on a loaded
    machine the stand-in may wire a pod and start its traffic late, so the
    run lasts until every live pod has been Running and then sending for
    seconds, by the kubelet stand-in's records in state (its traffic's
    start delay included; one whose traffic already ended counts), bounded
    at 120 s."""
    deadline = time.time() + 120
    live = {r["uid"] for r in pods.values() if r["deleted"] is None}
    while time.time() < deadline:
        running = {i["metadata"]["uid"] for i in api.get(f"/api/v1/namespaces/{ns}/pods").get("items", [])
                   if i.get("status", {}).get("phase") == "Running"}
        if live <= running:
            break
        time.sleep(0.2)
    else:
        raise SystemExit(f"placement: {len(live - running)} pods of {ns} not Running after 120 s")
    while not sent_for(state, live, seconds, ended_counts=True):
        if time.time() >= deadline:
            raise SystemExit(f"placement: the traffic of {ns}'s pods had not run {seconds:g} s after 120 s")
        time.sleep(0.2)


def run(args):
    w = model.WORKLOADS[args.workload]
    link = speed_bps(args.speed)
    api = kapi.Client.from_kubeconfig(args.kubeconfig)
    ns = args.namespace or f"{w.key}-{args.placement}"
    api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    if w.change:
        run_change(args, w, api, ns, link)
    else:
        run_placed(args, w, api, ns, link)
    # Its Deployments and ReplicaSets go with it: a controller-manager
    # started later (a workload that changes) must not recreate their pods.
    try:
        api.request("DELETE", f"/api/v1/namespaces/{ns}")
    except (OSError, ValueError, kapi.ApiError) as e:
        print(f"placement: cannot delete namespace {ns}: {e}", file=sys.stderr)


def run_placed(args, w, api, ns, link):
    assign = model.oracle(w) if args.placement == "oracle" else {}

    # Deployments and their ReplicaSets, as the controllers would leave them.
    owners, templates = {}, {}
    for g in {p.group.name: p.group for p in w.pods}.values():
        n = sum(1 for p in w.pods if p.group is g)
        rate = round(g.rate * link)
        # Traffic until the pod is deleted (the hour is only a bound).
        ann = {"netsched.test/traffic": f"rate={quantity(rate)},dir={g.dir},delay={g.delay:g}s,duration=3600s"
                                        + (",peer=app" if g.peer else "")}
        if g.declared:
            ann[f"kubernetes.io/{'ingress' if g.dir == 'rx' else 'egress'}-bandwidth"] = quantity(rate)
        template = {"metadata": {"labels": {"app": g.name}, "annotations": ann},
                    "spec": {"containers": [{"name": g.name, "image": "netsched.invalid/pause",
                                             "resources": {"requests": {"cpu": f"{g.cpu_m}m",
                                                                        "memory": "64Mi"}}}]}}
        if args.placement in ("netsched", "rebalancer"):
            template["spec"]["schedulerName"] = "netsched-scheduler"
        dep = api.create(f"/apis/apps/v1/namespaces/{ns}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": g.name, "namespace": ns},
            "spec": {"replicas": n, "selector": {"matchLabels": {"app": g.name}}, "template": template}})
        h = template_hash(template)
        rs_template = json.loads(json.dumps(template))
        rs_template["metadata"]["labels"]["pod-template-hash"] = h
        rs = api.create(f"/apis/apps/v1/namespaces/{ns}/replicasets", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{g.name}-{h}", "namespace": ns,
                         "labels": rs_template["metadata"]["labels"],
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": g.name, "uid": dep["metadata"]["uid"],
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": n, "selector": {"matchLabels": {"app": g.name, "pod-template-hash": h}},
                     "template": rs_template}})
        owners[g.name] = rs
        templates[g.name] = rs_template

    actions = sorted([(p.create, 0, p) for p in w.pods]
                     + [(p.delete, 1, p) for p in w.pods if p.delete is not None], key=lambda a: (a[0], a[1]))
    pods = {}
    busy0 = cpu_busy()
    t0 = time.time()
    shift, learned, gated = 0.0, {}, not (w.learn and args.placement in ("netsched", "rebalancer")
                                                     and args.scorer)
    for at, kind, p in actions:
        if not gated and at >= w.learn_at:
            time.sleep(max(0.0, t0 + at - time.time()))
            # What the scorer learns is what the pods sent over the
            # agents' last window: a figure from before their traffic
            # started (late, on a loaded machine: the stand-in starts each
            # sender after its pod runs) is not what they move. So the
            # learned figure is taken once every pod of the learned groups
            # has sent for a whole window (or its traffic ended).
            uids = [r["uid"] for r in pods.values() if r["group"] in w.learn and r["deleted"] is None]
            win = agent_window(w)
            shift, learned = wait_learned(args.scorer, ns, w.learn,
                                          ready=lambda: sent_for(args.kubelet_state, uids, win, ended_counts=True))
            gated = True
        delay = t0 + shift + at - time.time()
        if delay > 0:
            time.sleep(delay)
        if kind == 0:
            rs = owners[p.group.name]
            tpl = json.loads(json.dumps(templates[p.group.name]))
            obj = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": dict(tpl["metadata"], generateName=rs["metadata"]["name"] + "-", namespace=ns,
                                    ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                      "name": rs["metadata"]["name"],
                                                      "uid": rs["metadata"]["uid"], "controller": True,
                                                      "blockOwnerDeletion": True}]),
                   "spec": tpl["spec"]}
            if args.placement == "oracle" or p.group.node:
                obj["spec"]["nodeName"] = assign.get(p.idx) or p.group.node
            created = time.time()
            got = api.create(f"/api/v1/namespaces/{ns}/pods", obj)
            pods[p.idx] = {"idx": p.idx, "group": p.group.name, "name": got["metadata"]["name"],
                           "uid": got["metadata"]["uid"], "created": created, "deleted": None,
                           "rate": int(p.group.rate * link), "declared": p.group.declared,
                           "cpu_m": p.group.cpu_m}
        else:
            pods[p.idx]["deleted"] = time.time()
            api.delete_pod(ns, pods[p.idx]["name"])
    delay = t0 + shift + w.end - time.time()
    if delay > 0:
        time.sleep(delay)
    if args.run_for:
        run_for(api, ns, pods, args.run_for, args.kubelet_state)
    end = time.time()
    busy1 = cpu_busy()
    believed = (workloads_seen(args.scorer, ns) if args.scorer and args.placement in ("netsched", "rebalancer")
                else {})
    for item in api.get(f"/api/v1/namespaces/{ns}/pods").get("items", []):
        for rec in pods.values():
            if rec["uid"] == item["metadata"]["uid"]:
                rec["node"] = item["spec"].get("nodeName")
                rec["phase"] = item.get("status", {}).get("phase")
    for item in api.get(f"/api/v1/namespaces/{ns}/pods").get("items", []):
        api.delete_pod(ns, item["metadata"]["name"], grace=0)
    # The stand-in tears each pod down (and records its traffic) once it
    # sees the deletion: the next run starts on idle pod links.
    deadline = time.time() + 60
    state = os.path.join(args.kubelet_state, "pods")
    while os.listdir(state) and time.time() < deadline:
        time.sleep(0.2)
    if os.listdir(state):
        raise SystemExit(f"placement: {len(os.listdir(state))} pods of {ns} still set up after 60 s")
    with open(os.path.join(args.out, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"workload": w.key, "speed": args.speed, "link": link, "placement": args.placement,
                   "namespace": ns, "t0": t0, "end": end, "oracle": {str(k): v for k, v in assign.items()},
                   "cpuBusy": (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]),
                   "learnAt": t0 + w.learn_at if w.learn_at is not None else None, "learnWait": shift,
                   "learned": learned, "believedAtEnd": believed,
                   "pods": sorted(pods.values(), key=lambda r: r["idx"])}, f, indent=1)


# ------------------------------------------------------- run (a change)
def owner_group(item):
    return (item["metadata"].get("labels") or {}).get("app")


class Watcher:
    """Every pod of the namespace seen by polling (0.5 s): uid -> name,
    group, node, created, when a deletion was first seen (and whether the
    bench made it). An eviction is a deletion the bench did not make."""

    def __init__(self, api, ns, rates, cpus):
        self.api, self.ns, self.rates, self.cpus = api, ns, rates, cpus
        self.pods, self.ours = {}, set()

    def poll(self):
        try:
            items = self.api.get(f"/api/v1/namespaces/{self.ns}/pods").get("items", [])
        except (OSError, ValueError, kapi.ApiError):
            return
        now = time.time()
        live = set()
        for i in items:
            m, uid = i["metadata"], i["metadata"]["uid"]
            live.add(uid)
            g = owner_group(i)
            rec = self.pods.setdefault(uid, {"idx": len(self.pods), "group": g, "name": m["name"], "uid": uid,
                                             "created": now, "deleted": None, "rate": self.rates.get(g, 0),
                                             "declared": False, "cpu_m": self.cpus.get(g, 0), "node": None,
                                             "evicted": False})
            rec["node"] = rec["node"] or i["spec"].get("nodeName")
            if m.get("deletionTimestamp") and rec["deleted"] is None:
                rec["deleted"] = now
                rec["evicted"] = uid not in self.ours
        for uid, rec in self.pods.items():
            if uid not in live and rec["deleted"] is None:
                rec["deleted"] = now
                rec["evicted"] = uid not in self.ours

    def wait(self, until):
        while time.time() < until:
            self.poll()
            time.sleep(max(0.0, min(0.5, until - time.time())))
        self.poll()

    def nodes_of(self, groups):
        return {r["node"] for r in self.pods.values() if r["group"] in groups and r["node"] and not r["deleted"]}

    def moves(self):
        """[{t, pod, group, from, to}] for each eviction (to: the next pod of
        its group bound after it, or None)."""
        out = []
        for r in sorted(self.pods.values(), key=lambda r: r["deleted"] or 0):
            if not r["evicted"]:
                continue
            nxt = [q for q in self.pods.values() if q["group"] == r["group"] and q["created"] >= r["deleted"] - 1
                   and q["uid"] != r["uid"]]
            nxt.sort(key=lambda q: q["created"])
            out.append({"t": r["deleted"], "pod": r["name"], "uid": r["uid"], "group": r["group"],
                        "from": r["node"], "to": nxt[0]["node"] if nxt else None,
                        "replacement": nxt[0]["uid"] if nxt else None})
        return out


def run_change(args, w, api, ns, link):
    """A workload that changes after placement (model.Change): its groups
    are real Deployments (the controller-manager makes their pods and
    replaces evicted ones), except under the oracle, which binds bare pods
    with spec.nodeName and moves them itself at the change (deleted and
    created again on its node: the fewest moves that would do, knowing the
    timeline). At the change the bench writes OUT/change.json ({"ramp":
    ["node bits streams rx", ...]}) and waits for OUT/changed (the script
    started what the change brings: backgrounds, netsched, the
    rebalancer), then runs for judge + after seconds."""
    ch = w.change
    groups = {p.group.name: p.group for p in w.pods}
    rates = {g: round(x.rate * link) for g, x in groups.items()}
    cpus = {g: x.cpu_m for g, x in groups.items()}
    watch = Watcher(api, ns, rates, cpus)
    pre = model.oracle(w) if args.placement == "oracle" else {}
    for g in groups.values():
        if g.pdb:
            api.create(f"/apis/policy/v1beta1/namespaces/{ns}/poddisruptionbudgets", {
                "apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
                "metadata": {"name": g.name, "namespace": ns},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": g.name}}}})

    def template(g, node=None):
        ann = {"netsched.test/traffic": f"rate={quantity(rates[g.name])},dir={g.dir},delay={g.delay:g}s,"
                                        "duration=3600s"}
        spec = {"containers": [{"name": g.name, "image": "netsched.invalid/pause",
                                "resources": {"requests": {"cpu": f"{g.cpu_m}m", "memory": "64Mi"}}}]}
        if args.placement in ("netsched", "rebalancer"):
            spec["schedulerName"] = "netsched-scheduler"
        if node:
            spec["nodeName"] = node
        return {"metadata": {"labels": {"app": g.name}, "annotations": ann}, "spec": spec}

    def bare(p, node):
        t = template(p.group, node)
        got = api.create(f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": dict(t["metadata"], name=f"{p.group.name}-{p.idx}-{int(time.time() * 10) % 100000}",
                                                                 namespace=ns), "spec": t["spec"]})
        return got["metadata"]["uid"]

    t0 = time.time()
    if args.placement == "oracle":
        for p in w.pods:
            bare(p, pre.get(p.idx) or p.group.node)
    else:
        for g in groups.values():
            n = sum(1 for p in w.pods if p.group is g)
            api.create(f"/apis/apps/v1/namespaces/{ns}/deployments", {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": g.name, "namespace": ns},
                "spec": {"replicas": n, "selector": {"matchLabels": {"app": g.name}},
                         "template": template(g, g.node)}})
    watch.wait(t0 + ch.at)
    movable = [g for g, x in groups.items() if not x.node]
    took = sorted(watch.nodes_of(movable))
    at_change = {r["uid"]: r["node"] for r in watch.pods.values() if not r["deleted"]}
    bg = model.ramped(w, took)
    ramp = []
    if ch.ramp:
        for n in took:
            rate = round(ch.ramp * link)
            ramp.append(f"{n} {rate} {max(1, math.ceil(ch.ramp * 10 - 1e-9))} rx")
    with open(os.path.join(args.out, "change.json"), "w", encoding="utf-8") as f:
        json.dump({"ramp": ramp}, f)
    flag = os.path.join(args.out, "changed")
    deadline = time.time() + 180
    while not os.path.exists(flag) and time.time() < deadline:
        watch.wait(time.time() + 0.5)
    if not os.path.exists(flag):
        raise SystemExit(f"placement: {ns}: nothing said the change was made after 180 s")
    t_change = time.time()
    oracle_moves = []
    if args.placement == "oracle":
        # By the model's index: the bare pods' names carry it.
        placed = {}
        for r in watch.pods.values():
            if not r["deleted"]:
                placed[int(r["name"].split("-")[1])] = (r["node"], r)
        k, new = model.fewest_moves(w, bg, {i: v[0] for i, v in placed.items()})
        for idx, node in (new or {}).items():
            node_from, rec = placed[idx]
            watch.ours.add(rec["uid"])
            api.delete_pod(ns, rec["name"], grace=0)
            p = next(q for q in w.pods if q.idx == idx)
            uid = bare(p, node)
            oracle_moves.append({"t": time.time(), "pod": rec["name"], "uid": rec["uid"], "group": p.group.name,
                                 "from": node_from, "to": node, "replacement": uid})
    watch.wait(t_change + ch.judge + ch.after)
    end = time.time()
    # Deployments scaled to 0 (their pods deleted gracefully, the stand-in
    # finalizes them), bare pods deleted; then the namespace.
    for uid in list(watch.pods):
        watch.ours.add(uid)
    if args.placement != "oracle":
        for g in groups:
            api.request("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/{g}",
                        {"spec": {"replicas": 0}}, content_type="application/merge-patch+json")
    for item in api.get(f"/api/v1/namespaces/{ns}/pods").get("items", []):
        if args.placement == "oracle":
            api.delete_pod(ns, item["metadata"]["name"], grace=0)
    deadline = time.time() + 90
    state = os.path.join(args.kubelet_state, "pods")
    while (os.listdir(state) or api.get(f"/api/v1/namespaces/{ns}/pods").get("items")) and time.time() < deadline:
        time.sleep(0.3)
    if os.listdir(state):
        raise SystemExit(f"placement: {len(os.listdir(state))} pods of {ns} still set up after 90 s")
    moves = oracle_moves if args.placement == "oracle" else watch.moves()
    # One pod a group in these workloads: a pod's group names its index.
    idx_of = {p.group.name: p.idx for p in w.pods}
    fewest, _ = model.fewest_moves(w, bg, {idx_of[watch.pods[u]["group"]]: n for u, n in at_change.items()
                                           if watch.pods[u]["group"] in idx_of})
    pods = sorted(watch.pods.values(), key=lambda r: r["created"])
    for i, r in enumerate(pods):
        r["idx"] = i
    with open(os.path.join(args.out, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"workload": w.key, "speed": args.speed, "link": link, "placement": args.placement,
                   "namespace": ns, "t0": t0, "end": end, "change": t_change,
                   "judgeFrom": t_change + ch.judge, "oracle": {str(k): v for k, v in pre.items()},
                   "cpuBusy": 0.0, "learnAt": None, "learnWait": 0, "learned": {}, "believedAtEnd": {},
                   "took": took, "ramp": ramp, "background": {n: list(v) for n, v in bg.items()},
                   "atChange": at_change, "fewest": fewest, "moves": moves, "pods": pods}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("background")
    b.add_argument("workload", choices=sorted(model.WORKLOADS))
    b.add_argument("speed")
    r = sub.add_parser("run")
    r.add_argument("--kubeconfig", required=True)
    r.add_argument("--workload", required=True, choices=sorted(model.WORKLOADS))
    r.add_argument("--speed", required=True)
    r.add_argument("--placement", required=True, choices=model.WAYS)
    r.add_argument("--out", required=True)
    r.add_argument("--kubelet-state", required=True)
    r.add_argument("--run-for", type=float, default=0,
                   help="after the timeline, until every pod has run this long (tests)")
    r.add_argument("--namespace", help="the run's namespace (default WORKLOAD-PLACEMENT)")
    r.add_argument("--scorer", help="the scorer's status URL (http://ADDR:PORT): netsched's learning")
    na = sub.add_parser("netsched-args")
    na.add_argument("workload", choices=sorted(model.WORKLOADS))
    na.add_argument("kind", choices=("agent", "scorer", "rebalancer"))
    sub.add_parser("list")
    cg = sub.add_parser("change", help="none, late or ramp: what the workload's change is")
    cg.add_argument("workload", choices=sorted(model.WORKLOADS))
    rep = sub.add_parser("report")
    rep.add_argument("dir")
    rep.add_argument("--plots")
    rep.add_argument("--ways", default=",".join(model.WAYS))
    rep.add_argument("--pods", action="store_true", help="each pod's node, rate asked and got")
    a = ap.parse_args()
    if a.cmd == "background":
        w, link = model.WORKLOADS[a.workload], speed_bps(a.speed)
        for node in w.background:
            for d in model.DIRS:
                if w.bg(node, d) > 0:
                    print(node, round(w.bg(node, d) * link), w.streams(node, d), d)
    elif a.cmd == "netsched-args":
        w = model.WORKLOADS[a.workload]
        if a.kind == "rebalancer":
            args = model.SHORT_REBALANCER
        else:
            args = w.agent_args if a.kind == "agent" else w.scorer_args
        for arg in args:
            print(arg)
    elif a.cmd == "list":
        print(" ".join(model.BENCH))
    elif a.cmd == "change":
        ch = model.WORKLOADS[a.workload].change
        print("none" if not ch else "late" if ch.late else "ramp")
    elif a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        run(a)
    else:
        return placement_report.report(a.dir, a.plots, a.ways.split(","), a.pods)
    return 0


if __name__ == "__main__":
    sys.exit(main())
