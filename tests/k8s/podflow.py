#!/usr/bin/env python3
"""Pods created at a steady rate, and when each got its node.

  podflow.py --kubeconfig K --prefix P --count N --rate R [--scheduler S]
             [--namespace default] [--timeout 60] --out FILE

Creates N small pods (100m CPU, 64Mi) named P-1..P-N, labelled test=P, one
every 1/R s, with spec.schedulerName S; a watch started before the first
notes when each pod's spec.nodeName appears. A pod's latency is from just
before its create request to the watch event that shows it bound: what a
user waits, the scheduler's queue, its extender calls and the binding
included. Writes FILE as JSON ({"pods": [{"name", "node", "ms"}], ...}) and
prints one line: how many were bound, p50, p99 and max. Exit 1 when a pod
was not bound within --timeout s of the last creation.
"""
import argparse
import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kapi  # noqa: E402


def pod(name, prefix, scheduler):
    spec = {"containers": [{"name": "c", "image": "netsched.invalid/pause",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"test": prefix}}, "spec": spec}


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--scheduler", default="")
    ap.add_argument("--namespace", default="default")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not 1 <= a.count <= 10000 or not 0 < a.rate <= 1000:
        raise SystemExit("podflow: --count 1-10000 and --rate up to 1000 a second")

    api = kapi.Client.from_kubeconfig(a.kubeconfig)
    base = f"/api/v1/namespaces/{a.namespace}/pods"
    listed = api.get(f"{base}?labelSelector=test%3D{a.prefix}")
    if listed.get("items"):
        raise SystemExit(f"podflow: pods labelled test={a.prefix} exist already")
    created, bound = {}, {}
    lock = threading.Lock()
    done = threading.Event()

    def watch():
        rv = listed["metadata"]["resourceVersion"]
        w = api.clone()
        while not done.is_set():
            try:
                for _, obj in w.watch(f"{base}?labelSelector=test%3D{a.prefix}", rv, 30):
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    name = obj.get("metadata", {}).get("name")
                    node = (obj.get("spec") or {}).get("nodeName")
                    if name and node:
                        with lock:
                            bound.setdefault(name, (time.monotonic(), node))
                    if done.is_set():
                        return
            except kapi.ApiError as e:
                print(f"podflow: watch: {e}; again", file=sys.stderr)
                time.sleep(0.2)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    time.sleep(0.5)  # the watch is open before the first pod
    start = time.monotonic()
    for i in range(1, a.count + 1):
        name = f"{a.prefix}-{i}"
        delay = start + (i - 1) / a.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with lock:
            created[name] = time.monotonic()
        api.create(base, pod(name, a.prefix, a.scheduler))
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline:
        with lock:
            if len(bound) >= a.count:
                break
        time.sleep(0.1)
    done.set()
    with lock:
        rows = [{"name": n, "node": bound[n][1], "ms": (bound[n][0] - created[n]) * 1000}
                for n in created if n in bound]
        unbound = sorted(n for n in created if n not in bound)
    ms = [r["ms"] for r in rows]
    summary = {"count": a.count, "rate": a.rate, "bound": len(rows), "unbound": unbound,
               "p50_ms": percentile(ms, 0.50), "p99_ms": percentile(ms, 0.99),
               "max_ms": max(ms) if ms else 0.0}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"summary": summary, "pods": rows}, f, indent=1)
    print(f"{len(rows)} of {a.count} pods bound at {a.rate:g}/s: latency p50 {summary['p50_ms']:.1f} ms,"
          f" p99 {summary['p99_ms']:.1f} ms, max {summary['max_ms']:.1f} ms")
    return 1 if unbound else 0


if __name__ == "__main__":
    sys.exit(main())
