"""The placement bench's figures (bench/placement.py report DIR): per
workload and link speed, for each way of placing (stock, netsched, oracle):

  per pod   delivered/asked: what its iperf3 got over its run divided by its
            rate (p10, p50, min; a pod that never ran counts 0)
  aggregate everything the workload's pods got, Mb/s over the workload, and
            as a share of the oracle's (of its Mb/s: a run that waited
            for netsched to learn lasts longer)
  sat-s     link-seconds a node's uplink was saturated (>= 95% of the link,
            1 s samples of its counters) while another node had room
            (<= 75%), in the same direction (rx and tx counted apart)
  per direction  for a workload whose pods receive and send: p10, p50 and
            how many under 0.8 of each direction's pods, and sat-s of each
  learned   for a workload that learns (netsched): what the scorer's
            /v1/workloads said of each group it waited for, against what
            its pods' nodes' uplinks carried meanwhile
  cpu       spread of CPU requests across nodes (max - min cores) when the
            most pods were running
  latency   creation to binding per pod, ms (p50/max), from the scheduler's
            own log; the oracle binds at creation

For a workload that changes after placement (late, neighbour), a second
table judged from 12 s after the change (2 minutes scaled as the agents'
window) to the end, for each way including netsched+rebalancer:
  p10, aggregate  per pod, what its iperf3 counted in that window (its
            1 s intervals) over what it asked while it ran there; the
            aggregate of every judged pod's bytes in the window
  sat-s     as above, in the window
  moves     pods evicted (by anyone but the bench) or, for the oracle,
            moved by the bench; fewest: the fewest moves that bring every
            node under 90% of its link (placement_model.fewest_moves) from
            where the pods were at the change
  twice     a replacement evicted again, or a workload moved twice
  back      a replacement that landed on the node its pod left
  PDB broken  pods of a PDB-covered group evicted; 429s: the rebalancer's
            log lines saying a PodDisruptionBudget refused an eviction
Targets (issue 37) for netsched+rebalancer: >= 95% of the oracle's
aggregate, p10 >= 0.8, sat-s cut >= 80% against netsched placement only,
moves <= 1.5 x the fewest, none twice, no PDB broken.

Targets (issue 22): netsched >= 95% of the oracle's aggregate and p10 >= 0.8.
Where netsched misses one, the pods under 0.8 are listed with the reason
read from the scorer's debug log and the demands the bench knows: an
undeclared pod's in-flight weight, a tie, a stale view, the default plugins
outvoting the extender, or no room anywhere.

DIR/<speed>/ holds results.jsonl and stats.csv (the kubelet stand-in's),
sched-stock.log, sched-netsched.log and one folder per run (run.json, and
scorer.log for netsched).
"""
import json
import os
import re
import shutil
import subprocess
import time

import placement_model as model

SAT, ROOM = 0.95, 0.75
TARGET_AGG, TARGET_P10 = 0.95, 0.8
BOUND = re.compile(r'^I(\d{4}) (\d\d):(\d\d):(\d\d\.\d+).*"Successfully bound pod to node" pod="([^"]+)" node="([^"]+)"')
PRIO = re.compile(r"debug ext: prioritize (\S+): ")
PRIO_MOVES = re.compile(r"pod moves rx (\d+) B/s tx (\d+) B/s")
# "n4: rx 123 B/s, link ..." and, under --direction fit, "n4: fit 123 B/s
# (rx 1, tx 123), link 6250000 B/s, cost 869/1000 -> score 1".
PRIO_NODE = re.compile(r"debug ext:   (\S+): (?:\w+ (\d+) B/s(?: \([^)]*\))?, link (\d+) B/s[^>]*?|no data.*?) "
                       r"-> score (-?\d+)")


def nearest_rank(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(1, -(-len(v) * q // 100))
    return v[int(k) - 1]


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    out.append(json.loads(line))
    return out


def read_stats(path):
    """{node: [(t, rx_bytes, tx_bytes)]} from the stand-in's counters."""
    out = {}
    if os.path.exists(path):
        with open(path, encoding="ascii") as f:
            for line in f:
                t, node, rx, tx = line.strip().split(",")
                out.setdefault(node, []).append((float(t), int(rx), int(tx)))
    return out


def bound_times(path, day_of):
    """{"ns/name": (epoch, node)} of every binding in a kube-scheduler log;
    klog stamps local time of day (the date taken from day_of)."""
    out = {}
    if not os.path.exists(path):
        return out
    base = time.localtime(day_of)
    midnight = time.mktime((base.tm_year, base.tm_mon, base.tm_mday, 0, 0, 0, 0, 0, -1))
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = BOUND.match(line)
            if m:
                _, hh, mm, ss, pod, node = m.groups()
                out[pod] = (midnight + int(hh) * 3600 + int(mm) * 60 + float(ss), node)
    return out


def prioritize_calls(path):
    """{"ns/name": {node: (rate B/s or None, link B/s or None, score)}},
    the last prioritize call the scorer logged for each pod; what the pod
    was taken to move (rx, tx B/s, when the log says) under the key
    "moves"."""
    out, cur = {}, None
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = PRIO.search(line)
            if m:
                cur = out[m.group(1)] = {}
                mv = PRIO_MOVES.search(line)
                if mv:
                    cur["moves"] = (int(mv.group(1)), int(mv.group(2)))
                continue
            m = PRIO_NODE.search(line)
            if m and cur is not None:
                node, rate, link, score = m.groups()
                cur[node] = (int(rate) if rate else None, int(link) if link else None, int(score))
            elif "debug ext:   " not in line:
                cur = None
    return out


class Run:
    """One workload played one way, with everything measured about it."""

    def __init__(self, d, meta, results, stats, binds, prio):
        self.meta, self.w = meta, model.WORKLOADS[meta["workload"]]
        self.link, self.way = meta["link"], meta["placement"]
        by_uid = {r["uid"]: r for r in results if r["namespace"] == meta["namespace"]}
        # Pods pinned to a node (spec.nodeName whatever the way: pods
        # already running, such as co-located talkers) are the same in
        # every way: left out of the figures, which judge placement.
        self.all_pods = meta["pods"]
        pinned = {p.group.name for p in self.w.pods if p.group.node}
        self.pods = [p for p in self.all_pods if p["group"] not in pinned]
        for p in self.all_pods:
            r = by_uid.get(p["uid"])
            p["result"] = r
            p["fraction"] = min(1.0, r["bps"] / p["rate"]) if r and r["seconds"] > 0 else 0.0
            key = f"{meta['namespace']}/{p['name']}"
            p["bound"] = binds.get(key, (None, None))[0]
            sc = dict(prio.get(key) or {})
            p["moves"] = sc.pop("moves", None)
            p["scores"] = sc or None
            if not p.get("node"):
                p["node"] = (r or {}).get("node")
        fr = [p["fraction"] for p in self.pods]
        self.p10, self.p50, self.min = nearest_rank(fr, 10), nearest_rank(fr, 50), min(fr)
        # From the first judged pod's traffic (its creation and delay).
        start = min((p["created"] + self.group(p).delay for p in self.pods),
                    default=meta["t0"] + min(p.group.delay for p in self.w.pods))
        self.span = meta["end"] - start
        self.bytes = sum((p["result"] or {}).get("bytes", 0) for p in self.pods)
        self.agg = self.bytes * 8 / self.span / 1e6
        self.dirs = self.w.dirs()
        self.sat_by, self.util = {}, {}
        for d in self.dirs:
            self.sat_by[d], self.util[d] = self.saturation(stats, start + 1, meta["end"], d)
        self.sat = sum(self.sat_by.values())
        self.stats = stats
        self.cpu = self.cpu_spread()
        # A changing workload's pods are made by the controllers: the bench
        # sees them created only when it polls, so no latency is said.
        lat = [(p["bound"] - p["created"]) * 1000 for p in self.pods if p["bound"] and not meta.get("change")]
        self.lat = (nearest_rank(lat, 50), max(lat)) if lat else None

    def of_dir(self, d):
        """This run's pods that use direction d of their node's link."""
        return [p for p in self.pods if self.group(p).dir == d]

    def group(self, p):
        return next(q.group for q in self.w.pods if q.group.name == p["group"])

    def carried(self, node, t_from, t_to):
        """(rx, tx) bits per second the node's uplink carried on average
        between two times, from the stand-in's counters (None: no samples)."""
        rows = [r for r in self.stats.get(node, []) if t_from <= r[0] <= t_to]
        if len(rows) < 2 or rows[-1][0] <= rows[0][0]:
            return None
        dt = rows[-1][0] - rows[0][0]
        return tuple((rows[-1][k] - rows[0][k]) * 8 / dt for k in (1, 2))

    def saturation(self, stats, t_from, t_to, d="rx"):
        """Link-seconds saturated in direction d while another node had
        room in it, and each node's utilization per sample [(t - t0, util)]."""
        util = {}
        k = 1 if d == "rx" else 2
        for node, rows in stats.items():
            if node not in self.w.background:
                continue
            series = []
            for a, b in zip(rows, rows[1:]):
                ta, tb = a[0], b[0]
                if t_from - 5 <= ta and tb <= t_to + 1 and tb > ta:
                    series.append((tb, (b[k] - a[k]) * 8 / (tb - ta) / self.link))
            util[node] = series
        sat = 0.0
        times = sorted({round(t) for s in util.values() for t, _ in s if t_from <= t <= t_to})
        for t in times:
            now = {n: next((u for tt, u in s if round(tt) == t), None) for n, s in util.items()}
            if any(u is not None and u <= ROOM for u in now.values()):
                sat += sum(1 for u in now.values() if u is not None and u >= SAT)
        t0 = self.meta["t0"]
        return sat, {n: [(t - t0, u) for t, u in s] for n, s in util.items()}

    def cpu_spread(self):
        best, spread = -1, 0.0
        end = self.meta["end"]
        for at in sorted(p["created"] for p in self.all_pods):
            live = [p for p in self.all_pods if p["created"] <= at < (p["deleted"] or end) and p.get("node")]
            if len(live) > best:
                per = {n: 0 for n in self.w.background}
                for p in live:
                    per[p["node"]] = per.get(p["node"], 0) + p["cpu_m"]
                best, spread = len(live), (max(per.values()) - min(per.values())) / 1000
        return spread

    def mb(self, x):
        """A fraction of the link in Mb/s; below zero: how far over."""
        v = x * self.link / 1e6
        return f"{v:.0f} Mb/s" if v >= 0 else f"none ({-v:.0f} Mb/s over)"

    def room_at(self, pod):
        """Each node's free payload capacity (fraction of the link) in the
        direction of pod's traffic, from the demands the bench knows:
        background plus the pods bound there before it that overlap it and
        use that direction of the link."""
        end = self.meta["end"]
        d = self.group(pod).dir
        room = {}
        for n in self.w.background:
            load = self.w.bg(n, d) + sum(q["rate"] / self.link for q in self.pods
                                         if q is not pod and q.get("node") == n and q["created"] <= pod["created"]
                                         and (q["deleted"] or end) > pod["created"]
                                         and self.group(q).dir == d and not self.group(q).peer)
            room[n] = model.PAYLOAD - load
        return room

    def why(self, pod):
        """Why netsched put this pod on a node that could not take it."""
        n, rate = pod.get("node"), pod["rate"] / self.link
        if self.group(pod).node:
            return f"pinned to {n} (spec.nodeName, as pods already running)"
        room = self.room_at(pod)
        best = max(room, key=room.get)
        mb = self.mb
        if room[best] < rate * 0.75 and room[best] <= room[n] + rate / 2:
            return f"no room anywhere: {n} had {mb(room[n])} free, the best node {best} {mb(room[best])}"
        sc = pod["scores"]
        d = self.group(pod).dir
        other = "tx" if d == "rx" else "rx"
        if pod.get("moves") == (0, 0) and self.w.bg(n, other) < self.w.bg(n, d) + 0.3 and any(
                self.w.bg(k, other) > self.w.bg(k, d) for k in self.w.background):
            return (f"unknown direction: nothing known of the pod (declared nothing, its workload not "
                    f"learned, no pod running to average), so netsched judged each node by its busier "
                    f"direction and could not tell a node busy the other way ({other}) from one busy its "
                    f"way ({d}); {best} had {mb(room[best])} free")
        if not sc or n not in sc:
            return f"no prioritize call logged for it (one node left by the filter?); {best} had {mb(room[best])} free"
        top = max(s for _, _, s in sc.values())
        mine = sc[n][2]
        if mine < top:
            tops = [k for k, v in sc.items() if v[2] == top]
            return (f"extender weight: netsched scored {n} {mine}, {'/'.join(tops)} {top}; the default "
                    f"plugins outvoted it (weight 5: 50 points a step)")
        tied = [k for k, v in sc.items() if v[2] == top and k != n]
        roomier = [k for k in tied if room[k] > room[n] + rate / 2]
        seen = (sc[n][0] or 0) * 8 / self.link
        true = model.PAYLOAD - room[n]
        if roomier and top == 0 and len(tied) + 1 == len(sc):
            low = min(v[0] or 0 for v in sc.values()) * 8 / self.link
            return (f"tie at 0: netsched saw every node at {low:.0%} of its link or more (the pods just "
                    f"placed count in flight: a tenth of a node's free link each if nothing is known of "
                    f"them), so the default plugins chose; "
                    f"{roomier[0]} had {mb(room[roomier[0]])} free, {n} {mb(room[n])}")
        if roomier:
            return (f"tie: {n} shared the top score {top} with {', '.join(tied)}; {roomier[0]} had "
                    f"{mb(room[roomier[0]])} free, {n} {mb(room[n])}")
        end = self.meta["end"]
        earlier = [q for q in self.pods if q is not pod and q.get("node") == n
                   and q["created"] <= pod["created"] and (q["deleted"] or end) > pod["created"]]
        undeclared = [q for q in earlier if not q["declared"]]
        if undeclared and seen < true - 0.05:
            return (f"weight: the {len(undeclared)} undeclared pods already placed on {n} counted less in "
                    f"flight (a share of its free link, or what their workload learned) than they ask, "
                    f"{mb(undeclared[0]['rate'] / self.link)} each: netsched saw {n} at "
                    f"{seen:.0%} of its link, its demand was {true:.0%}; score {mine} (best {top})")
        return (f"stale view: netsched saw {n} at {seen:.0%} of its link, its demand was {true:.0%}; "
                f"score {mine}, {best} had {mb(room[best])} free")

    def shortfalls(self, cut):
        """Lines saying, per node whose pods got under cut, how full it was
        and why each pod that did not fit was put there."""
        out = []
        end = self.meta["end"]
        mb = self.mb
        for n in self.w.background:
            here = [p for p in self.pods if p.get("node") == n]
            short = [p for p in here if p["fraction"] < cut]
            if not short:
                continue
            parts = []
            for d in model.DIRS:
                mine = [p for p in here if self.group(p).dir == d and not self.group(p).peer]
                if not mine:
                    continue
                peak = max(sum(q["rate"] for q in mine if q["created"] <= p["created"] < (q["deleted"] or end))
                           for p in mine) / self.link
                free = model.PAYLOAD - self.w.bg(n, d)
                parts.append(f"up to {mb(peak)} of pods {'receiving' if d == 'rx' else 'sending'} where "
                             f"{mb(free)} was free")
            out.append(f"{n}: {'; '.join(parts) or 'pods talking on the node'}; {len(short)} of its "
                       f"{len(here)} pods got under {cut:.2f} (lowest {min(p['fraction'] for p in short):.2f})")
            rate_of = lambda p: p["rate"] / self.link  # noqa: E731
            misfits = [p for p in sorted(here, key=lambda p: p["created"]) if self.room_at(p)[n] < rate_of(p)]
            for p in misfits[:3]:
                out.append(f"  {p['name']} put there: {self.why(p)}")
            if len(misfits) > 3:
                out.append(f"  ... and {len(misfits) - 3} more put there without room")
            if not misfits:
                d = self.group(short[0]).dir
                out.append(f"  every pod fit {n} by its demand: TCP shared the link ({d}) unevenly with the "
                           f"{self.w.streams(n, d) if self.w.bg(n, d) else 0} background flows")
        unbound = [p for p in self.pods if not p.get("node")]
        if unbound:
            out.append(f"{len(unbound)} pods never bound (Pending): they count 0")
        return out


def iperf_intervals(path):
    """[(t_from, t_to, bytes)] (Unix seconds) of one pod's iperf3 JSON
    (its end of the traffic: what it received, or sent), [] if none."""
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read(16 << 20) or b"{}")
    except (OSError, ValueError):
        return []
    t0 = ((doc.get("start") or {}).get("timestamp") or {}).get("timesecs")
    if not t0:
        return []
    out = []
    for iv in doc.get("intervals") or []:
        s = iv.get("sum") or {}
        if s.get("end", 0) > s.get("start", 0):
            out.append((t0 + s["start"], t0 + s["end"], s.get("bytes", 0)))
    return out


class Window:
    """A changing workload's figures from meta["judgeFrom"] to its end: per
    pod (each that ran at least 2 s of it) bytes its own end counted in the
    window over what it asked while it ran there; the aggregate of the
    judged pods; saturated link-seconds; the moves."""

    def __init__(self, run, d):
        m = run.meta
        self.a, self.b = m["judgeFrom"], m["end"]
        self.fracs, total = [], 0
        for p in run.pods:
            iv = iperf_intervals(os.path.join(d, "iperf3", p["uid"] + ".json"))
            got = sum(by * max(0.0, min(tb, self.b) - max(ta, self.a)) / (tb - ta) for ta, tb, by in iv)
            ran = sum(max(0.0, min(tb, self.b) - max(ta, self.a)) for ta, tb, _ in iv)
            total += got
            if ran >= 2.0:
                self.fracs.append(min(1.0, got * 8 / ran / p["rate"]))
        self.agg = total * 8 / max(1e-9, self.b - self.a) / 1e6
        self.p10 = nearest_rank(self.fracs, 10) if self.fracs else 0.0
        self.sat = sum(run.saturation(run.stats, self.a, self.b, dd)[0] for dd in run.dirs)
        self.moves = m.get("moves") or []
        self.fewest = m.get("fewest")
        repl = {mv.get("replacement") for mv in self.moves}
        groups = [mv["group"] for mv in self.moves]
        # Moved twice: a replacement evicted again, or a workload moved twice.
        self.twice = sum(1 for mv in self.moves if mv["uid"] in repl) + len(groups) - len(set(groups))
        pdb = {p.group.name for p in run.w.pods if p.group.pdb}
        self.pdb_broken = sum(1 for mv in self.moves if mv["group"] in pdb)
        log = os.path.join(d, f"{m['workload']}-{m['placement']}", "rebalancer.log")
        self.pdb_refused = 0
        self.back = sum(1 for mv in self.moves if mv.get("to") and mv.get("to") == mv.get("from"))
        if os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as f:
                self.pdb_refused = sum(1 for line in f if "PodDisruptionBudget refused" in line)


def change_lines(runs, root, wk, speed):
    """The table for a workload that changes, and the rebalancer's targets."""
    w = model.WORKLOADS[wk]
    d = os.path.join(root, speed)
    wins = {way: Window(runs[(wk, speed, way)], d) for way in model.WAYS if (wk, speed, way) in runs}
    if not wins:
        return [], None
    out = [f"{speed}: from {w.change.judge:g} s after the change (2 minutes scaled) for {w.change.after:g} s:",
           f"   {'way':<11} {'p10':>5} {'aggregate Mb/s':>16} {'sat-s':>6} {'moves':>6} {'fewest':>6} "
           f"{'twice':>5} {'back':>4} {'PDB broken':>10} {'429s':>5}"]
    o = wins.get("oracle")
    for way, x in wins.items():
        share = f"({x.agg / o.agg:4.0%})" if o and o.agg else ""
        out.append(f"   {way:<11} {x.p10:5.2f} {x.agg:9.1f} {share:>6} {x.sat:6.0f} {len(x.moves):6d} "
                   f"{'-' if x.fewest is None else x.fewest:>6} {x.twice:5d} {x.back:4d} {x.pdb_broken:10d} "
                   f"{x.pdb_refused:5d}")
    r, p = wins.get("rebalancer"), wins.get("netsched")
    verdict = None
    if r and o and p:
        agg = r.agg / o.agg if o.agg else 0.0
        cut = 1 - r.sat / p.sat if p.sat else (1.0 if r.sat == 0 else 0.0)
        ratio = len(r.moves) / r.fewest if r.fewest else (0.0 if not r.moves else float("inf"))
        checks = [(agg >= TARGET_AGG, f"aggregate {agg:.1%} of the oracle's (>= 95%)"),
                  (r.p10 >= TARGET_P10, f"p10 {r.p10:.2f} (>= 0.80)"),
                  (cut >= 0.8, f"saturated-while-room seconds {r.sat:.0f} vs {p.sat:.0f} placement only: "
                               f"cut {cut:.0%} (>= 80%)"),
                  (ratio <= 1.5, f"moves {len(r.moves)} vs the fewest {r.fewest} ({ratio:.2f}x, <= 1.5x)"),
                  (r.twice == 0, f"pods moved twice {r.twice} (0)"),
                  (r.pdb_broken == 0, f"PDBs broken {r.pdb_broken} (0)")]
        verdict = all(ok for ok, _ in checks)
        out.append(f"   {speed}: netsched+rebalancer {'meets the targets' if verdict else 'MISSES'}: "
                   + "; ".join(("" if ok else "MISSED ") + t for ok, t in checks))
        for mv in r.moves:
            out.append(f"     moved {mv['pod']} ({mv['group']}) {mv['from']} -> {mv['to'] or '?'} at "
                       f"+{mv['t'] - r_meta(runs, wk, speed)['change']:.1f} s after the change")
    return out, verdict


def r_meta(runs, wk, speed):
    return runs[(wk, speed, "rebalancer")].meta


def load(root):
    runs = {}
    for speed in sorted(os.listdir(root)):
        d = os.path.join(root, speed)
        if not os.path.isfile(os.path.join(d, "results.jsonl")):
            continue
        results = read_jsonl(os.path.join(d, "results.jsonl"))
        stats = read_stats(os.path.join(d, "stats.csv"))
        for name in sorted(os.listdir(d)):
            f = os.path.join(d, name, "run.json")
            if not os.path.isfile(f):
                continue
            with open(f, encoding="utf-8") as fh:
                meta = json.load(fh)
            binds = bound_times(os.path.join(d, f"sched-{meta['placement']}.log"), meta["t0"])
            prio = prioritize_calls(os.path.join(d, name, "scorer.log"))
            runs[(meta["workload"], meta["speed"], meta["placement"])] = Run(d, meta, results, stats, binds, prio)
    return runs


def fmt_lat(lat):
    return "-" if lat is None else f"{lat[0]:.0f}/{lat[1]:.0f}"


def pod_lines(r):
    """Each pod of a run: where it went, what it asked and got."""
    out = []
    for p in sorted(r.all_pods, key=lambda p: (p.get("node") or "~", p["created"])):
        res = p["result"] or {}
        out.append(f"     {p['name']:<26} {p.get('node') or 'Pending':<8} asks {p['rate'] / 1e6:6.1f} Mb/s, "
                   f"got {res.get('bps', 0) / 1e6:6.1f} ({p['fraction']:.2f})")
    return out


def learned_lines(runs, wk, speed, ways):
    """For a workload that learns: what netsched's scorer believed of each
    group it waited for (per pod, /v1/workloads) against what the links of
    the nodes its pods ran on carried meanwhile (the stand-in's counters,
    from the first pod's traffic to the learn point)."""
    w = model.WORKLOADS[wk]
    if not w.learn:
        return []
    out = []
    for way in ways:
        r = runs.get((wk, speed, way))
        if r is None or r.meta.get("learnAt") is None or way != "netsched":
            continue
        t_from = r.meta["t0"] + min(p.group.delay for p in w.pods if p.group.name in w.learn) + 1
        t_to = r.meta["learnAt"] + r.meta.get("learnWait", 0)
        for g in w.learn:
            nodes = sorted({p.get("node") for p in r.all_pods if p["group"] == g and p.get("node")})
            link = [f"{n} {r.carried(n, t_from, t_to)[0] / 1e6:.1f} rx / {r.carried(n, t_from, t_to)[1] / 1e6:.1f} tx"
                    for n in nodes if r.carried(n, t_from, t_to)]
            seen = (r.meta.get("learned") or {}).get(g)
            grp = next(p.group for p in w.pods if p.group.name == g)
            asked = f"each {grp.dir} {grp.rate * r.link / 1e6:.0f} Mb/s" + (" to a peer on its node" if grp.peer else "")
            belief = (f"; netsched learned {seen['rxBps'] / 1e6:.1f} rx / {seen['txBps'] / 1e6:.1f} tx Mb/s a pod "
                      f"({seen['podsMeasured']} measured) after waiting {r.meta.get('learnWait', 0):.0f} s"
                      if seen and seen.get("learned") else "; netsched had NOT learned it")
            out.append(f"{speed} {way}: {g} ({asked}); its nodes' uplinks carried {', '.join(link) or '-'} Mb/s"
                       f"{belief}")
    return out


def report(root, plots, ways, detail=False):
    ways = list(dict.fromkeys(ways))
    runs = load(root)
    if not runs:
        print(f"placement: no runs under {root}")
        return 1
    speeds = sorted({k[1] for k in runs}, key=lambda s: runs[next(k for k in runs if k[1] == s)].link)
    order = [w for w in model.WORKLOADS if any(k[0] == w for k in runs)]
    misses = judged = 0
    judged_change = []
    for wk in order:
        w = model.WORKLOADS[wk]
        print(f"\n## {wk}: {w.title}")
        print(f"   {w.note}")
        print(f"   {'link':>5} {'way':<9} {'p10':>5} {'p50':>5} {'min':>5} {'<0.8':>5} {'aggregate Mb/s':>16} "
              f"{'sat-s':>6} {'cpu':>5} {'latency ms':>11} {'cpu busy':>8}")
        for speed in speeds:
            oracle = runs.get((wk, speed, "oracle"))
            for way in ways:
                r = runs.get((wk, speed, way))
                if r is None:
                    continue
                share = f"({r.agg / oracle.agg:4.0%})" if oracle and oracle.agg else ""
                low = f"{sum(1 for p in r.pods if p['fraction'] < TARGET_P10)}/{len(r.pods)}"
                print(f"   {speed:>5} {way:<9} {r.p10:5.2f} {r.p50:5.2f} {r.min:5.2f} {low:>5} {r.agg:9.1f} {share:>6} "
                      f"{r.sat:6.0f} {r.cpu:5.1f} {fmt_lat(r.lat):>11} {r.meta['cpuBusy']:8.0%}")
                if len(r.dirs) > 1:
                    for d in r.dirs:
                        fr = [p["fraction"] for p in r.of_dir(d)]
                        if fr:
                            print(f"   {'':>5} {'  ' + d + ' pods':<9} {nearest_rank(fr, 10):5.2f} "
                                  f"{nearest_rank(fr, 50):5.2f} {min(fr):5.2f} "
                                  f"{sum(1 for x in fr if x < TARGET_P10)}/{len(fr):<3} {'':>16} "
                                  f"{r.sat_by[d]:6.0f}")
                        else:
                            print(f"   {'':>5} {'  ' + d:<9} {'':>29} sat-s {r.sat_by[d]:.0f}")
                if detail:
                    print("\n".join(pod_lines(r)))
        for speed in speeds:
            for line in learned_lines(runs, wk, speed, ways):
                print(f"   {line}")
        if w.change:
            for speed in speeds:
                lines, verdict = change_lines(runs, root, wk, speed)
                for line in lines:
                    print(f"   {line}")
                if verdict is not None:
                    judged_change.append(verdict)
            continue
        for speed in speeds:
            if (wk, speed, "rebalancer") in runs:
                log = os.path.join(root, speed, f"{wk}-rebalancer", "rebalancer.log")
                n = plans = 0
                if os.path.exists(log):
                    with open(log, encoding="utf-8", errors="replace") as f:
                        for line in f:
                            n += line.rstrip().endswith(": evicted")
                            plans += " is " in line and "% of " in line and " for " in line
                print(f"   {speed}: netsched+rebalancer moved {n} pods ({plans} hot-node lines in its log; "
                      f"target 0 moves)")
            r, o = runs.get((wk, speed, "netsched")), runs.get((wk, speed, "oracle"))
            if not r or not o:
                continue
            judged += 1
            agg_ok = o.agg and r.agg >= TARGET_AGG * o.agg
            if agg_ok and r.p10 >= TARGET_P10:
                print(f"   {speed}: netsched meets the targets ({r.agg / o.agg:.1%} of the oracle, p10 {r.p10:.2f})")
                continue
            misses += 1
            print(f"   {speed}: netsched MISSES: {r.agg / max(1e-9, o.agg):.1%} of the oracle's aggregate "
                  f"(target 95%), p10 {r.p10:.2f} (target 0.80); placed "
                  + " ".join(f"{n}:{sum(1 for p in r.pods if p.get('node') == n)}" for n in w.background))
            # The pods under 0.8; when only the aggregate misses, those under 0.95.
            for line in r.shortfalls(TARGET_P10 if r.p10 < TARGET_P10 else 0.95):
                print(f"     {line}")
    if plots:
        draw(runs, speeds, order, ways, plots)
    if judged_change:
        print(f"\nnetsched+rebalancer meets every target in {sum(judged_change)} of {len(judged_change)} "
              f"changing workload x link-speed runs")
    if judged:
        print(f"\nnetsched meets both targets (>= 95% of the oracle's aggregate, p10 >= 0.8) in "
              f"{judged - misses} of {judged} workload x link-speed runs")
    return 0


def draw(runs, speeds, order, ways, plots):
    """One figure per workload and link speed (PNG and SVG): each node's
    uplink utilization over time under each way, and the per-pod
    delivered fractions, sorted."""
    if not shutil.which("gnuplot"):
        print("placement: gnuplot not installed (.ci/deps bench): no plots")
        return
    os.makedirs(plots, exist_ok=True)
    made = []
    for wk in order:
        for speed in speeds:
            have = [w for w in ways if (wk, speed, w) in runs]
            if not have:
                continue
            base = os.path.join(plots, f"{wk}-{speed}")
            dirs = model.WORKLOADS[wk].dirs()
            # Each node's uplink in each direction the workload loads.
            nodes = [(n, d) for n in model.WORKLOADS[wk].background for d in dirs]
            label = lambda n, d: n if len(dirs) == 1 else f"{n} {d}"  # noqa: E731
            for way in have:
                r = runs[(wk, speed, way)]
                with open(f"{base}-{way}.util", "w", encoding="ascii") as f:
                    f.write("# t " + " ".join(label(n, d).replace(" ", "-") for n, d in nodes) + "\n")
                    rows = {}
                    for n, d in nodes:
                        for t, u in r.util[d].get(n, []):
                            rows.setdefault(round(t), {})[(n, d)] = u * 100
                    for t in sorted(rows):
                        f.write(f"{t} " + " ".join(f"{rows[t].get(k, float('nan')):.1f}" for k in nodes) + "\n")
            with open(f"{base}.frac", "w", encoding="ascii") as f:
                cols = [sorted(p["fraction"] for p in runs[(wk, speed, w)].pods) for w in have]
                f.write("# pod " + " ".join(have) + "\n")
                for i in range(max(len(c) for c in cols)):
                    f.write(f"{i + 1} " + " ".join(f"{c[i]:.3f}" if i < len(c) else "nan" for c in cols) + "\n")
            panels = []
            for way in have:
                m = runs[(wk, speed, way)].meta
                marks = ""
                if m.get("change"):
                    marks += (f"set arrow from {m['change'] - m['t0']:.1f}, graph 0 to {m['change'] - m['t0']:.1f}, "
                              f"graph 1 nohead lc rgb 'gray' dt 2\n"
                              f"set arrow from {m['judgeFrom'] - m['t0']:.1f}, graph 0 to "
                              f"{m['judgeFrom'] - m['t0']:.1f}, graph 1 nohead lc rgb 'gray' dt 3\n")
                for k, mv in enumerate(m.get("moves") or []):
                    x = mv["t"] - m["t0"]
                    marks += (f"set arrow from {x:.1f}, graph 0 to {x:.1f}, graph 0.93 lc rgb 'red' lw 2\n"
                              f"set label '{mv['from']}>{mv.get('to') or '?'}' at {x:.1f}, graph "
                              f"{0.97 - 0.05 * (k % 4):.2f} center tc rgb 'red' font ',8'\n")
                plot = ", ".join(f"'{base}-{way}.util' using 1:{k + 2} with lines lw 2 "
                                 f"{'dt 2 ' if d == 'tx' and len(dirs) > 1 else ''}title '{label(n, d)}'"
                                 for k, (n, d) in enumerate(nodes))
                panels.append(f"set title '{way}: uplink {' and '.join(dirs)}, % of {speed}'\nset xlabel 's'\n"
                              f"set yrange [0:110]\nset key bottom right font ',8'\n{marks}plot {plot}\n"
                              f"unset arrow\nunset label")
            plot = ", ".join(f"'{base}.frac' using 1:{k + 2} with linespoints lw 2 title '{w}'"
                             for k, w in enumerate(have))
            panels.append(f"set title 'delivered / asked per pod (sorted)'\nset xlabel 'pod'\n"
                          f"set yrange [0:1.1]\nset key bottom right\nplot {plot}")
            layout = "2,2" if len(have) <= 3 else "2,3"
            body = (f"set multiplot layout {layout} title '{wk} at {speed} links: "
                    f"{model.WORKLOADS[wk].title}'\nset grid\n" + "\n".join(panels) + "\nunset multiplot\n")
            size = "1200,800" if len(have) <= 3 else "1700,800"
            script = (f"set terminal pngcairo size {size} font ',10'\nset output '{base}.png'\n{body}"
                      f"set terminal svg size {size} dynamic font ',10'\nset output '{base}.svg'\n{body}")
            p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True, timeout=60)
            if p.returncode:
                print(f"placement: gnuplot failed for {base}: {p.stderr.strip()[:300]}")
            else:
                made.append(base)
    if made:
        print(f"\nplots: {len(made)} figures, e.g. {made[0]}.png / .svg")
