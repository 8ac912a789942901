#!/usr/bin/env python3
"""A kubelet stand-in for the lab: runs the pods bound to its simulated
nodes (network namespaces), so placement feeds back into the counters.

  kubelet.py run --kubeconfig F --nodes NODES.json --state DIR [options]
  kubelet.py cleanup --nodes NODES.json --state DIR

One process serves every node of NODES.json (written by tests/k8s/lab.sh):
{"prefix": P, "hub": HUB-NETNS, "far4": ADDR, "nodes": [{"name", "netns",
"style": "routed"|"bridged", "hostIP", "uplink"}]}. It lists and watches
the pods bound to them and, per pod, as a kubelet with a CNI plugin would:
  - creates the pod's namespace P-<uid> and wires it (podnet.py) with an
    address from the Node object's spec.podCIDRs (IPv4, and IPv6 if given);
  - reports it through pods/status: phase Running, hostIP, podIP/podIPs,
    startTime, the Initialized/ContainersReady/Ready conditions, a running
    status per container;
  - runs the traffic its netsched.test/traffic annotation asks (traffic.py)
    between the pod and the hub's far address (or, with its peer key,
    another pod of its group: pod to pod, on one node never crossing the
    uplink); a malformed annotation gets a
    Warning event (reason InvalidTraffic) and a log line, and no traffic;
  - when the pod is deleted: stops its traffic, removes its namespace and,
    for a graceful delete, finalizes it (DELETE with grace 0 and the UID
    as precondition), as the kubelet does once the containers are gone.
Each finished traffic run is one JSON line in DIR/results.jsonl (what the
pod asked and got); --stats FILE gets each node's uplink byte counters
every --stats-interval: "unix-time,node,rx-bytes,tx-bytes".

Restart: what it set up is recorded in DIR/pods/<uid>.json. A new process
re-lists, adopts every recorded pod still bound to its node (namespace,
address and traffic kept), tears down those deleted meanwhile, sets up those
bound meanwhile, and removes namespaces under its prefix that no record
explains. SIGTERM or SIGINT: tears every pod down locally and exits (the
apiserver is left as it is); --keep-on-exit leaves them running, as a real
kubelet restart does. `cleanup` removes whatever a killed process left.

Bounded: --max-pods-per-node (110, then the pod is Failed/OutOfpods as a
kubelet reports it), --max-pods in all (400), every `ip` call (10 s), every
API request (10 s), a watch (60 s, then resumed), traffic (1 h at most).
"""
import argparse
import heapq
import json
import os
import queue
import signal
import sys
import threading
import time

# Nothing written into the source tree (no __pycache__).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kapi  # noqa: E402
import nsread  # noqa: E402
import podnet  # noqa: E402
import traffic  # noqa: E402

PODS_BOUND = "/api/v1/pods?fieldSelector=spec.nodeName%21%3D"
PORT_BASE = 20000
# How long a pod's iperf3 server may take to listen before its traffic is
# given up: a bound for one that never will, not a speed (starting iperf3
# in a namespace took over 5 s on a loaded machine, and the pod then sent
# nothing).
LISTEN_S = 60


def log(msg):
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} kubelet: {msg}\n")
    sys.stderr.flush()


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def pod_id(pod):
    m = pod["metadata"]
    return f"{m.get('namespace')}/{m.get('name')}"


class Watcher(threading.Thread):
    """Lists, then watches from the list's resourceVersion (bookmarks on;
    410 Gone lists again; a failure backs off 0.5 s doubling to 5 s); puts
    ("SYNC", items) and (type, pod) on the queue."""

    def __init__(self, api, events):
        super().__init__(name="watch", daemon=True)
        self.api, self.events = api.clone(), events

    def run(self):
        backoff = 0.5
        while True:
            try:
                doc = self.api.get(PODS_BOUND)
                self.events.put(("SYNC", doc.get("items") or []))
                rv = doc["metadata"]["resourceVersion"]
                backoff = 0.5
                while True:
                    for kind, obj in self.api.watch(PODS_BOUND, rv, 60):
                        rv = obj.get("metadata", {}).get("resourceVersion", rv)
                        if kind != "BOOKMARK":
                            self.events.put((kind, obj))
            except kapi.ApiError as e:
                if e.status != 410:
                    log(f"pod watch: {e}; again in {backoff:g} s")
                    time.sleep(backoff)
                    backoff = min(backoff * 2, 5)
            except (OSError, ValueError, KeyError) as e:
                log(f"pod watch: {e}; again in {backoff:g} s")
                time.sleep(backoff)
                backoff = min(backoff * 2, 5)


class Kubelet:
    def __init__(self, args, lab):
        self.args, self.lab = args, lab
        self.prefix, self.hub, self.far4 = lab["prefix"], lab["hub"], lab["far4"]
        self.api = kapi.Client.from_kubeconfig(args.kubeconfig)
        self.reader = nsread.Reader()
        self.state = args.state
        os.makedirs(os.path.join(self.state, "pods"), exist_ok=True)
        os.makedirs(os.path.join(self.state, "out"), exist_ok=True)
        self.results = open(os.path.join(self.state, "results.jsonl"), "a", buffering=1)
        self.stats = open(args.stats, "a", buffering=1) if args.stats else None
        self.nodes = {}
        self.uplink = {}
        self.pods = {}  # uid -> record (dict, saved as DIR/pods/<uid>.json)
        # (uid, "pod"|"far") -> traffic.Proc: the pod's own iperf3 (whose
        # JSON says what the pod got) and its peer in the hub (or in the
        # pod it talks to: the traffic annotation's peer key).
        self.procs = {}
        self.finalized = set()
        self.timers = []
        self.events = queue.Queue()
        self.stop = False
        self.synced = False

    # ---------------------------------------------------------------- setup
    def load_nodes(self):
        """Each node's pod CIDRs from its Node object (waits up to 30 s for
        it), and the bridge cni0 on bridged nodes, made as the bridge plugin
        makes it for the first pod: the first address of each CIDR."""
        deadline = time.monotonic() + 30
        for spec in self.lab["nodes"]:
            while True:
                try:
                    node = self.api.get(f"/api/v1/nodes/{spec['name']}")
                    break
                except kapi.ApiError as e:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"kubelet: node {spec['name']}: {e}")
                    time.sleep(0.5)
            cidrs = node.get("spec", {}).get("podCIDRs") or [node.get("spec", {}).get("podCIDR")]
            if not cidrs or not cidrs[0]:
                raise SystemExit(f"kubelet: node {spec['name']} has no spec.podCIDRs")
            n = podnet.Node(dict(spec, podCIDRs=cidrs))
            self.nodes[n.name] = n
            self.uplink[n.name] = spec.get("uplink", "eth0")
            if n.style == "bridged" and "cni0" not in self.reader.counters(n.netns):
                cmds = ["link add cni0 type bridge", f"addr add {n.cidr4[1]}/{n.cidr4.prefixlen} dev cni0"]
                if n.cidr6:
                    cmds.append(f"addr add {n.cidr6[1]}/{n.cidr6.prefixlen} dev cni0 nodad")
                cmds.append("link set cni0 up")
                podnet.run_ip(["-n", n.netns, "-batch", "-"], "\n".join(cmds) + "\n")
            log(f"node {n.name}: {n.style}, pod CIDRs {', '.join(str(c) for c in (n.cidr4, n.cidr6) if c)}, "
                f"namespace {n.netns}")

    def load_records(self):
        for f in sorted(os.listdir(os.path.join(self.state, "pods"))):
            if not f.endswith(".json"):
                continue  # a write cut short (.tmp)
            try:
                with open(os.path.join(self.state, "pods", f), encoding="utf-8") as fh:
                    rec = json.load(fh)
                self.pods[rec["uid"]] = rec
            except (OSError, ValueError, KeyError) as e:
                log(f"state file {f}: {e}: ignored")
        if self.pods:
            log(f"{len(self.pods)} pods recorded by an earlier run: adopting what is still bound")

    def save(self, rec):
        path = os.path.join(self.state, "pods", rec["uid"] + ".json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(rec, f)
        os.replace(path + ".tmp", path)

    def forget(self, uid):
        try:
            os.unlink(os.path.join(self.state, "pods", uid + ".json"))
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------ apiserver
    def event(self, pod, kind, reason, message):
        m = pod["metadata"]
        now = rfc3339(time.time())
        try:
            self.api.create(f"/api/v1/namespaces/{m['namespace']}/events", {
                "metadata": {"generateName": m["name"] + ".", "namespace": m["namespace"]},
                "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": m["namespace"],
                                   "name": m["name"], "uid": m["uid"]},
                "reason": reason, "message": message[:1000], "type": kind,
                "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
                "firstTimestamp": now, "lastTimestamp": now, "count": 1})
        except kapi.ApiError as e:
            log(f"{pod_id(pod)}: event {reason} not posted: {e}")

    def report(self, rec):
        """pods/status as a kubelet reports a running pod."""
        rec["report_at"] = time.monotonic()
        started = rfc3339(rec["started"])
        ips = [ip for ip in (rec["ip4"], rec.get("ip6")) if ip]
        cond = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
                for t in ("Initialized", "ContainersReady", "Ready")]
        containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "",
                       "containerID": f"lab://{rec['uid']}/{c['name']}", "ready": True,
                       "started": True, "restartCount": 0, "state": {"running": {"startedAt": started}}}
                      for c in rec["containers"]]
        status = {"phase": "Running", "hostIP": self.nodes[rec["node"]].host_ip,
                  "podIP": ips[0], "podIPs": [{"ip": ip} for ip in ips], "startTime": started,
                  "conditions": cond, "containerStatuses": containers}
        try:
            self.api.patch_status(rec["namespace"], rec["name"], status)
            rec["reported"] = True
        except kapi.ApiError as e:
            rec["reported"] = e.status == 404  # gone: nothing left to report
            log(f"{rec['namespace']}/{rec['name']}: status not reported: {e}")

    def reject(self, pod, message):
        log(f"{pod_id(pod)}: {message}")
        try:
            self.api.patch_status(pod["metadata"]["namespace"], pod["metadata"]["name"],
                                  {"phase": "Failed", "reason": "OutOfpods", "message": message})
        except kapi.ApiError as e:
            log(f"{pod_id(pod)}: status not reported: {e}")

    # ------------------------------------------------------------ pods
    def handle(self, pod):
        m, spec = pod["metadata"], pod["spec"]
        uid = m["uid"]
        if spec.get("nodeName") not in self.nodes:
            return
        if m.get("deletionTimestamp"):
            self.teardown(uid)
            if uid not in self.finalized:
                self.finalized.add(uid)
                try:
                    self.api.delete_pod(m["namespace"], m["name"], grace=0, uid=uid)
                except kapi.ApiError as e:
                    log(f"{pod_id(pod)}: final delete: {e}")
            return
        if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            self.teardown(uid)
            return
        rec = self.pods.get(uid)
        if rec is None:
            self.setup(pod)
        elif not rec.get("reported"):
            st = pod.get("status", {})
            if st.get("phase") == "Running" and st.get("podIP") == rec["ip4"]:
                rec["reported"] = True
            else:
                self.report(rec)
            self.save(rec)

    def setup(self, pod):
        m, spec = pod["metadata"], pod["spec"]
        node = self.nodes[spec["nodeName"]]
        on_node = sum(1 for r in self.pods.values() if r["node"] == node.name)
        if on_node >= self.args.max_pods_per_node:
            self.reject(pod, f"Pod Node didn't have enough resource: pods, requested: 1, used: {on_node}, "
                             f"capacity: {self.args.max_pods_per_node} (node {node.name})")
            return
        if len(self.pods) >= self.args.max_pods:
            self.reject(pod, f"the lab's kubelet runs {len(self.pods)} pods, its limit (--max-pods "
                             f"{self.args.max_pods}); node {node.name}")
            return
        rec = {"uid": m["uid"], "namespace": m["namespace"], "name": m["name"], "node": node.name,
               "started": time.time(), "reported": False, "traffic": None,
               "containers": [{"name": c.get("name", ""), "image": c.get("image", "")}
                              for c in spec.get("containers", [])[:16]]}
        if spec.get("hostNetwork"):
            rec.update(netns=None, host=None, index=None, ip4=node.host_ip, ip6=None)
        else:
            try:
                index, ip4, ip6 = node.allocate()
            except podnet.PodNetError as e:
                self.reject(pod, str(e))
                return
            netns = f"{self.prefix}-{m['uid']}"
            try:
                host = podnet.wire(node, netns, m["uid"], ip4, ip6)
            except podnet.PodNetError as e:
                node.release(index)
                log(f"{pod_id(pod)}: on {node.name}: {e}")
                self.event(pod, "Warning", "FailedCreatePodSandBox", f"wiring the pod's network: {e}")
                return
            rec.update(netns=netns, host=host, index=index, ip4=ip4, ip6=ip6)
        self.pods[m["uid"]] = rec
        log(f"{pod_id(pod)}: on {node.name} ({node.style}{', ' + rec['host'] if rec['host'] else ''}): "
            f"{rec['ip4']}{' ' + rec['ip6'] if rec['ip6'] else ''}")
        self.report(rec)
        ann = (m.get("annotations") or {}).get(traffic.ANNOTATION)
        if ann is not None:
            try:
                t = traffic.parse(ann)
                if rec["netns"] is None:
                    raise traffic.BadTraffic("a hostNetwork pod runs no traffic here")
            except traffic.BadTraffic as e:
                msg = f"{traffic.ANNOTATION} {ann[:80]!r}: {e}: no traffic"
                log(f"{pod_id(pod)}: {msg}")
                self.event(pod, "Warning", "InvalidTraffic", msg)
                t = None
            if t is not None:
                rec["traffic"] = t.as_dict()
                rec["port"] = self.free_port()
                rec["due"] = rec["started"] + t.delay
                rec["out"] = os.path.join(self.state, "out", rec["uid"] + ".json")
                if t.peer:
                    rec["group"] = (m.get("labels") or {}).get(t.peer)
                # The receiver listens from the start (a peer's, once the
                # peer is known); the sender starts after the delay.
                if t.dir == "rx":
                    self.track(rec, "pod", traffic.start_listener(rec["netns"], rec["ip4"], rec["port"],
                                                                  rec["out"]))
                elif not t.peer:
                    self.track(rec, "far", traffic.start_listener(self.hub, self.far4, rec["port"]))
                self.at(t.delay, "send", rec["uid"])
        self.save(rec)

    def free_port(self):
        used = {r.get("port") for r in self.pods.values()}
        for p in range(PORT_BASE, PORT_BASE + 10000):
            if p not in used:
                return p
        raise podnet.PodNetError("no free iperf3 port")

    def track(self, rec, role, proc):
        self.procs[(rec["uid"], role)] = proc
        rec[f"{role}_pid"] = proc.pid

    def start_sender(self, uid, since=None):
        rec = self.pods.get(uid)
        if rec is None or rec.get("sending") or rec.get("result_done"):
            return
        spec = traffic.Spec.from_dict(rec["traffic"])
        since = since or time.monotonic()
        if spec.peer and not rec.get("peer"):
            peer = self.find_peer(rec, spec.peer)
            if peer is None:
                if time.monotonic() - since < 10:
                    self.at(0.2, "send", uid, since)
                    return
                log(f"{rec['namespace']}/{rec['name']}: no running pod with label {spec.peer}="
                    f"{rec.get('group')!r} to talk to after 10 s: no traffic")
                self.record_result(rec, 0, 0.0, f"no peer with label {spec.peer} after 10 s", None)
                self.save(rec)
                return
            rec["peer"] = {"uid": peer["uid"], "name": peer["name"], "node": peer["node"],
                           "netns": peer["netns"], "ip4": peer["ip4"]}
            if spec.dir == "tx":
                # The pod sends to a server in its peer's namespace.
                self.track(rec, "far", traffic.start_listener(peer["netns"], peer["ip4"], rec["port"]))
            log(f"{rec['namespace']}/{rec['name']}: talks to {peer['name']} on {peer['node']} ({spec.dir})")
            self.save(rec)
            self.at(0.05, "send", uid)  # its receiver's LISTEN_S to listen start now
            return
        peer = rec.get("peer")
        if spec.dir == "rx":
            listener = rec["netns"]
        else:
            listener = peer["netns"] if peer else self.hub
        try:
            up = self.reader.listening(listener, rec["port"])
        except OSError as e:
            up = False
            log(f"{rec['namespace']}/{rec['name']}: {e}")
        if not up:
            if time.monotonic() - since < LISTEN_S:
                self.at(0.05, "send", uid, since)
                return
            log(f"{rec['namespace']}/{rec['name']}: iperf3 on port {rec['port']} in {listener} not listening "
                f"after {LISTEN_S} s: no traffic")
            self.record_result(rec, 0, 0.0, f"receiver not listening after {LISTEN_S} s", None)
            self.save(rec)
            return
        rec["wire0"] = self.wire_bytes(rec)
        if spec.dir == "rx":
            self.track(rec, "far", traffic.start_sender(peer["netns"] if peer else self.hub, rec["ip4"],
                                                        rec["port"], spec))
        else:
            self.track(rec, "pod", traffic.start_sender(rec["netns"], peer["ip4"] if peer else self.far4,
                                                        rec["port"], spec, rec["out"]))
        rec["sending"] = time.time()
        self.save(rec)

    def find_peer(self, rec, key):
        """The pod rec talks to: among the running pods of its namespace
        with the same value of label key (rec["group"]), the next after it
        by name (a ring, so two pods talk to each other)."""
        if rec.get("group") is None:
            return None
        ring = sorted((r for r in self.pods.values()
                       if r["namespace"] == rec["namespace"] and r.get("netns") and r.get("traffic")
                       and r["traffic"].get("peer") == key and r.get("group") == rec["group"]),
                      key=lambda r: r["name"])
        if len(ring) < 2:
            return None
        i = next(k for k, r in enumerate(ring) if r["uid"] == rec["uid"])
        return ring[(i + 1) % len(ring)]

    def wire_bytes(self, rec):
        """Bytes on the pod's host end in its traffic's direction (the
        host end's tx is the pod's rx)."""
        try:
            rx, tx = self.reader.counters(self.nodes[rec["node"]].netns)[rec["host"]]
        except (OSError, KeyError):
            return None
        return tx if rec["traffic"]["dir"] == "rx" else rx

    def finish_traffic(self, rec):
        spec = traffic.Spec.from_dict(rec["traffic"])
        got, secs, err = traffic.result(rec["out"], spec)
        w1, w0 = self.wire_bytes(rec), rec.get("wire0")
        wire = w1 - w0 if w1 is not None and w0 is not None else None
        if got is None:
            # iperf3 died without a word (SIGKILL after a hung SIGTERM):
            # count the host end instead, as payload of full-size frames.
            got, secs = int((wire or 0) * traffic.PAYLOAD), time.time() - (rec.get("sending") or time.time())
            err = f"{err}; counted from {rec['host']} instead"
        self.record_result(rec, got, secs, err, wire)

    def record_result(self, rec, got, secs, err, wire):
        t = rec["traffic"]
        bps = got * 8 / secs if secs > 0 else 0.0
        self.results.write(json.dumps({
            "namespace": rec["namespace"], "name": rec["name"], "uid": rec["uid"], "node": rec["node"],
            "dir": t["dir"], "rate": t["rate"], "streams": t["streams"], "delay": t["delay"],
            "duration": t["duration"], "start": rec.get("sending"), "end": time.time(),
            "peer": (rec.get("peer") or {}).get("name"), "peerNode": (rec.get("peer") or {}).get("node"),
            "seconds": round(secs, 3), "bytes": got, "bps": round(bps), "wireBytes": wire,
            "fraction": round(min(1.0, bps / t["rate"]), 4), "error": err}) + "\n")
        rec["result_done"] = True

    def teardown(self, uid, quiet=False):
        rec = self.pods.pop(uid, None)
        if rec is None:
            return
        # The pod's end first: stopped, it writes what it measured so far.
        for role in ("pod", "far"):
            proc = self.procs.pop((uid, role), None)
            if proc is not None:
                proc.stop(wait=1.0, hard=role == "far")
        if rec.get("sending") and not rec.get("result_done"):
            self.finish_traffic(rec)
        if rec.get("netns"):
            for pid in podnet.netns_pids(rec["netns"]):
                traffic.Proc(pid).stop()
            podnet.unwire(self.nodes[rec["node"]], rec["netns"], rec["host"])
            self.nodes[rec["node"]].release(rec["index"])
        self.forget(uid)
        if not quiet:
            log(f"{rec['namespace']}/{rec['name']}: torn down on {rec['node']}")

    # ------------------------------------------------------------ restart
    def adopt(self, live):
        """First list after start: keep recorded pods still bound here,
        tear down the others and namespaces no record explains."""
        present = set(podnet.netns_list(self.prefix + "-"))
        for uid, rec in list(self.pods.items()):
            pod = live.get(uid)
            if rec["node"] not in self.nodes:
                # A node this run does not serve: nothing of it may stay.
                self.pods.pop(uid)
                self.forget(uid)
                discard(rec)
                continue
            if rec.get("index") is not None:
                self.nodes[rec["node"]].claim(rec["index"])
            if (pod is None or pod["metadata"].get("deletionTimestamp")
                    or (rec.get("netns") and rec["netns"] not in present)):
                self.teardown(uid)
                continue
            rec["reported"] = False
            if rec.get("traffic"):
                port = str(rec["port"])
                for role in ("pod", "far"):
                    pid = rec.get(f"{role}_pid") or 0
                    if pid > 0 and traffic.Proc(pid, tag=port).alive():
                        self.procs[(uid, role)] = traffic.Proc(pid, tag=port)
                if not rec.get("sending"):
                    self.at(max(0.0, rec["due"] - time.time()), "send", uid)
                elif (uid, "pod") not in self.procs and not rec.get("result_done"):
                    self.finish_traffic(rec)  # it ended while we were away
                self.save(rec)
            log(f"{rec['namespace']}/{rec['name']}: adopted on {rec['node']} ({rec['ip4']})")
        known = {r.get("netns") for r in self.pods.values()}
        for ns in podnet.netns_list(self.prefix + "-"):
            if ns not in known and ns not in (self.hub, *[n.netns for n in self.nodes.values()]):
                discard({"netns": ns})
                log(f"namespace {ns}: no pod of ours: removed")

    # ------------------------------------------------------------ loop
    def at(self, delay, what, uid, *extra):
        heapq.heappush(self.timers, (time.monotonic() + delay, id(extra), what, uid, extra))

    def poll(self):
        for rec in self.pods.values():
            if not rec.get("reported") and time.monotonic() - rec.get("report_at", 0) > 2:
                self.report(rec)
                self.save(rec)
        for (uid, role), proc in list(self.procs.items()):
            if proc.alive():
                continue
            self.procs.pop((uid, role))  # and reaped
            rec = self.pods.get(uid)
            if role == "pod" and rec is not None and not rec.get("result_done"):
                self.finish_traffic(rec)
                self.save(rec)

    def sample(self):
        now = time.time()
        for name, node in self.nodes.items():
            try:
                rx, tx = self.reader.counters(node.netns)[self.uplink[name]]
            except (OSError, KeyError) as e:
                log(f"node {name}: no counters for {self.uplink[name]}: {e}")
                continue
            self.stats.write(f"{now:.3f},{name},{rx},{tx}\n")

    def run(self):
        self.load_nodes()
        self.load_records()
        Watcher(self.api, self.events).start()
        next_sample = time.monotonic()
        while not self.stop:
            now = time.monotonic()
            wake = min([0.5] + ([self.timers[0][0] - now] if self.timers else [])
                       + ([next_sample - now] if self.stats else []))
            try:
                kind, obj = self.events.get(timeout=max(0.0, wake))
                self.dispatch(kind, obj)
            except queue.Empty:
                pass
            while self.timers and self.timers[0][0] <= time.monotonic():
                _, _, what, uid, extra = heapq.heappop(self.timers)
                if what == "send":
                    self.start_sender(uid, *extra)
            self.poll()
            if self.stats and time.monotonic() >= next_sample:
                self.sample()
                next_sample += self.args.stats_interval
                if next_sample < time.monotonic():
                    next_sample = time.monotonic() + self.args.stats_interval
        if self.args.keep_on_exit:
            log(f"stopping; {len(self.pods)} pods left running (--keep-on-exit)")
            return
        n = len(self.pods)
        for uid in list(self.pods):
            self.teardown(uid, quiet=True)
        log(f"stopped; {n} pods torn down")

    def dispatch(self, kind, obj):
        if kind == "SYNC":
            live = {p["metadata"]["uid"]: p for p in obj if p["spec"].get("nodeName") in self.nodes}
            if not self.synced:
                self.synced = True
                self.adopt(live)
            for uid in [u for u in self.pods if u not in live]:
                self.teardown(uid)
            for pod in live.values():
                self.handle(pod)
        elif kind in ("ADDED", "MODIFIED"):
            if self.synced:
                self.handle(obj)
        elif kind == "DELETED":
            self.teardown(obj["metadata"]["uid"])
            self.finalized.discard(obj["metadata"]["uid"])


def discard(rec):
    """Stops a recorded pod's processes and removes its namespace, with
    no node or apiserver at hand (cleanup, or a node no longer served)."""
    for role in ("pod", "far"):
        pid = rec.get(f"{role}_pid") or 0
        if pid > 0:
            traffic.Proc(pid, tag=str(rec.get("port"))).stop(wait=1.0)
    if rec.get("netns"):
        for pid in podnet.netns_pids(rec["netns"]):
            traffic.Proc(pid).stop(wait=1.0)
        try:
            podnet.run_ip(["netns", "del", rec["netns"]])
        except podnet.PodNetError:
            pass


def cleanup(lab, state):
    """What a killed stand-in left: its pods' processes and namespaces."""
    n = 0
    pods = os.path.join(state, "pods")
    for f in sorted(os.listdir(pods)) if os.path.isdir(pods) else []:
        try:
            with open(os.path.join(pods, f), encoding="utf-8") as fh:
                rec = json.load(fh)
        except (OSError, ValueError):
            continue
        discard(rec)
        os.unlink(os.path.join(pods, f))
        n += 1
    for ns in podnet.netns_list(lab["prefix"] + "-"):
        if ns != lab["hub"] and ns not in [x["netns"] for x in lab["nodes"]]:
            for pid in podnet.netns_pids(ns):
                traffic.Proc(pid).stop(wait=1.0)
            podnet.run_ip(["netns", "del", ns])
            n += 1
    if n:
        log(f"cleanup: {n} pods or namespaces left by an earlier run removed")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "cleanup"))
    ap.add_argument("--nodes", required=True, help="the lab's nodes (JSON, tests/k8s/lab.sh)")
    ap.add_argument("--state", required=True, help="directory for records, results, iperf3 output")
    ap.add_argument("--kubeconfig")
    ap.add_argument("--stats", help="append each node's uplink counters here")
    ap.add_argument("--stats-interval", type=float, default=1.0)
    ap.add_argument("--max-pods-per-node", type=int, default=110)
    ap.add_argument("--max-pods", type=int, default=400)
    ap.add_argument("--keep-on-exit", action="store_true")
    args = ap.parse_args()
    with open(args.nodes, encoding="utf-8") as f:
        lab = json.load(f)
    if args.command == "cleanup":
        cleanup(lab, args.state)
        return 0
    if not args.kubeconfig:
        ap.error("run needs --kubeconfig")
    if not 0.1 <= args.stats_interval <= 60:
        ap.error(f"--stats-interval {args.stats_interval} is outside 0.1..60 s")
    k = Kubelet(args, lab)

    def on_signal(signum, _frame):
        k.stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    k.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
