#!/usr/bin/env python3
"""Pods for bench/podwatch.sh: many bound pods in the test apiserver, then
churn at a steady rate (Python 3 standard library and tests/k8s/kapi.py).

  podwatch_load.py fill  --kubeconfig K --pods 20000 --nodes 200 [--threads 4]
  podwatch_load.py churn --kubeconfig K --rate 100 --seconds 20 --nodes 200

Every pod looks like one a Deployment's ReplicaSet made (labels with a
pod-template-hash, a controlling ownerReference, CPU and memory requests,
an annotation) and is bound to a node (spec.nodeName), as the scorer's pod
watch sees pods in a running cluster; the apiserver adds managedFields as it
does for every client. There is no kubelet, so they stay Pending without
status.podIPs: a running pod is ~150 bytes larger.

churn creates RATE pods a second and deletes each one 2 s after it was
created, so the count stays level and the watch sees 2 x RATE events a
second. It prints what it achieved: the apiserver on a small machine may not
keep up, and the bench must say so rather than claim the asked rate.
"""
import argparse
import os
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "k8s"))
import kapi  # noqa: E402

NS = "default"
RS_UID = str(uuid.uuid4())


def pod(name, node):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"app": "web", "pod-template-hash": "5d8f9c7b6"},
                         "annotations": {"example.com/owner-team": "storage"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "web-5d8f9c7b6", "uid": RS_UID,
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"nodeName": node,
                     "containers": [{"name": "web", "image": "registry.example/web:1.4.2",
                                     "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                   "limits": {"memory": "256Mi"}}}]}}


def fill(args):
    api = kapi.Client.from_kubeconfig(args.kubeconfig)
    errors = []

    def worker(first):
        c = api.clone()
        for i in range(first, args.pods, args.threads):
            try:
                c.create(f"/api/v1/namespaces/{NS}/pods", pod(f"p-{i}", f"node-{i % args.nodes}"))
            except kapi.ApiError as e:
                errors.append(f"p-{i}: {e}")
                if len(errors) > 10:
                    return

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    if errors:
        raise SystemExit(f"fill: {len(errors)} creates failed, first: {errors[0]}")
    print(f"fill: {args.pods} pods on {args.nodes} nodes in {took:.1f} s ({args.pods / took:.0f}/s)")


def churn(args):
    api = kapi.Client.from_kubeconfig(args.kubeconfig)
    deleter = api.clone()
    pending = []  # (delete at, name)
    lock = threading.Lock()
    done = threading.Event()
    counts = {"created": 0, "deleted": 0, "errors": 0}

    def deletes():
        while not done.is_set() or pending:
            with lock:
                # One reading of the clock: a pod due between two would be
                # in neither list, never deleted, and its name's next
                # create (the next churn) would fail.
                now = time.monotonic()
                due = [n for at, n in pending if at <= now]
                pending[:] = [(at, n) for at, n in pending if at > now]
            for n in due:
                try:
                    deleter.delete_pod(NS, n, grace=0)
                    counts["deleted"] += 1
                except kapi.ApiError:
                    counts["errors"] += 1
            time.sleep(0.01)

    # A daemon, and told to stop whatever ends the loop: a deleter left
    # waiting would keep the interpreter, and the bench, alive for ever.
    t = threading.Thread(target=deletes, daemon=True)
    t.start()
    t0 = time.monotonic()
    i = 0
    try:
        while time.monotonic() - t0 < args.seconds:
            # One reading of the clock: between two, the wait can go negative.
            wait = t0 + i / args.rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            name = f"c-{i}"
            try:
                api.create(f"/api/v1/namespaces/{NS}/pods", pod(name, f"node-{i % args.nodes}"))
                counts["created"] += 1
                with lock:
                    pending.append((time.monotonic() + 2.0, name))
            except kapi.ApiError:
                counts["errors"] += 1
            i += 1
    finally:
        took = time.monotonic() - t0
        done.set()
        t.join(timeout=30)
    print(f"churn: asked {args.rate:g}/s for {args.seconds:g} s; created {counts['created']} "
          f"({counts['created'] / took:.0f}/s), deleted {counts['deleted']}, failed {counts['errors']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill")
    f.add_argument("--kubeconfig", required=True)
    f.add_argument("--pods", type=int, required=True)
    f.add_argument("--nodes", type=int, required=True)
    f.add_argument("--threads", type=int, default=4)
    c = sub.add_parser("churn")
    c.add_argument("--kubeconfig", required=True)
    c.add_argument("--rate", type=float, required=True)
    c.add_argument("--seconds", type=float, required=True)
    c.add_argument("--nodes", type=int, required=True)
    args = ap.parse_args()
    if args.cmd == "fill":
        fill(args)
    else:
        churn(args)


if __name__ == "__main__":
    main()
