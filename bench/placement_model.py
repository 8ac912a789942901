"""The placement bench's workloads and its model of a shaped link
(bench/placement.py): what each reference workload asks, and what a set of
flows on one link gets, used by the oracle and to explain shortfalls.

Every rate is a fraction of the link speed L, so a workload means the same
at 50 Mb/s and 500 Mb/s. Rates are TCP payload (what iperf3 -b asks and
counts); a link shaped to L on the wire carries PAYLOAD x L of it.

A link has two directions, each its own capacity: tests/k8s/lab.sh shapes
both ends of every uplink with a tbf at L (the hub side's egress is what the
node receives, rx; the node side's what it sends, tx), and the ACKs of one
direction's TCP flows are a few percent of the other's at most. A workload's
background and each of its pods' traffic go one way (rx or tx); the model
shares each direction of each link among the flows that use it.
"""
import math
import random

# TCP payload per full-size frame on the wire: 1448 of 1514 bytes (tbf and
# the interface counters count the Ethernet header; the MSS is 1448).
PAYLOAD = 1448 / 1514
NODES = ("n1", "n2", "n3", "n4", "n5", "n6")
NODE_CPU_M = 4000
NODE_PODS = 110


DIRS = ("rx", "tx")


class Group:
    """A Deployment: its pods' requests and traffic (every pod of it the
    same, as a Deployment's template makes them): rate, a fraction of the
    link, from `delay` s after the pod starts until it is deleted, received
    (dir rx) or sent (tx). declared: the rate as kubernetes.io/ingress-
    bandwidth (rx) or egress-bandwidth (tx). peer: the pods talk to each
    other (the traffic annotation's peer key), not to the hub; such a group
    is pinned to one node (node: bound there with spec.nodeName whatever
    the way, as pods already running), so its traffic never crosses a
    link."""

    def __init__(self, name, cpu_m, rate, declared, delay, direction="rx", peer=False, node=None, pdb=False):
        self.name, self.cpu_m, self.rate, self.declared = name, cpu_m, rate, declared
        self.delay, self.dir, self.peer, self.node = delay, direction, peer, node
        # pdb: a PodDisruptionBudget with maxUnavailable 0 covers its pods.
        self.pdb = pdb
        assert direction in DIRS and (node or not peer)


class PodPlan:
    """One pod of a workload: created at `create` s, deleted at `delete`
    s (None: at the workload's end)."""

    def __init__(self, idx, group, create, delete=None):
        self.idx, self.group, self.create, self.delete = idx, group, create, delete

    def traffic(self, end):
        start = self.create + self.group.delay
        stop = self.delete if self.delete is not None else end
        return start, max(start, stop)


class Workload:
    """background: {node: fraction of the link received} or {node: (rx,
    tx)}. learn: groups netsched must have learned before the pods created
    from learn_at on (the bench waits for the scorer's /v1/workloads to say
    so, 60 s at most, under netsched; the timeline is the same for every
    way otherwise). agent_args, scorer_args: what the netsched way runs
    with besides deploy/'s (a workload that learns scales the window down
    as tests/k8s/test_k8s_weight.sh does)."""

    def __init__(self, key, title, background, pods, end, note, learn=(), learn_at=None,
                 agent_args=(), scorer_args=(), change=None):
        self.key, self.title, self.pods = key, title, pods
        self.background = {n: tuple(v) if isinstance(v, (tuple, list)) else (v, 0.0)
                           for n, v in background.items()}
        self.end, self.note = end, note
        self.learn, self.learn_at = tuple(learn), learn_at
        self.agent_args, self.scorer_args = tuple(agent_args), tuple(scorer_args)
        # A workload that changes after placement (Change): its pods are
        # Deployments the controller-manager runs, so evicted ones come back.
        self.change = change

    def bg(self, node, direction="rx"):
        return self.background[node][DIRS.index(direction)]

    def dirs(self):
        """The directions this workload loads: background or pods."""
        used = {d for v in self.background.values() for d, x in zip(DIRS, v) if x > 0}
        used |= {p.group.dir for p in self.pods if not p.group.peer}
        return tuple(d for d in DIRS if d in used)

    def streams(self, node, direction="rx"):
        """Background flows into (rx) or out of (tx) a node: one per tenth
        of the link, so a busy link carries many flows, as it does in a
        cluster, and a new pod's fair share on it is small."""
        return max(1, math.ceil(self.bg(node, direction) * 10 - 1e-9))


GRADED = {"n1": 0.85, "n2": 0.85, "n3": 0.40, "n4": 0.20, "n5": 0.20, "n6": 0.05}


def _burst(key, title, declared):
    heavy = Group("heavy", 500, 0.20, declared, 2.0)
    pods = [PodPlan(i, heavy, 0.0) for i in range(10)]
    return Workload(key, title, GRADED, pods, 15.0,
                    "graded background (85, 85, 40, 20, 20, 5% of the link); 10 pods asking 20% each, "
                    "created at once" + (", declared as kubernetes.io/ingress-bandwidth" if declared
                                         else ", declaring nothing"))


def _steps():
    heavy = Group("ingest", 500, 0.25, False, 1.0)
    light = Group("web", 100, 0.02, False, 1.0)
    pods = []
    for t in (0.0, 6.0, 12.0):
        for g, n in ((heavy, 3), (light, 4)):
            pods += [PodPlan(len(pods) + k, g, t) for k in range(n)]
    bg = {"n1": 0.80, "n2": 0.80, "n3": 0.30, "n4": 0.10, "n5": 0.10, "n6": 0.05}
    return Workload("steps", "heavy and light Deployments scaled up in steps", bg, pods, 26.0,
                    "n1, n2 at 80%, n3 30%, the rest 5-10%; every 6 s +3 heavy pods (25% each) and "
                    "+4 light ones (2%), declaring nothing; 3 steps")


def _churn():
    batch = Group("batch", 250, 0.20, False, 1.0)
    rng = random.Random(22)
    pods = [PodPlan(i, batch, float(i), float(i + rng.randint(6, 10))) for i in range(24)]
    bg = {"n1": 0.85, "n2": 0.85, "n3": 0.50, "n4": 0.30, "n5": 0.10, "n6": 0.10}
    return Workload("churn", "churn: pods created and deleted", bg, pods, 35.0,
                    "n1, n2 at 85%, n3 50%, n4 30%, n5, n6 10%; a pod asking 20% created every second "
                    "for 24 s, each deleted 6-10 s later (about 8 at a time), declaring nothing")


def _demo():
    heavy = Group("heavy", 500, 0.20, False, 2.0)
    pods = [PodPlan(i, heavy, 0.0) for i in range(8)]
    bg = {"n1": 0.85, "n2": 0.85, "n3": 0.05, "n4": 0.05}
    return Workload("demo", "a burst on 4 nodes, two of them busy", bg, pods, 13.0,
                    "n1 and n2 at 85% of their links, n3 and n4 at 5%; 8 pods asking 20% each, created "
                    "at once, declaring nothing")


def _learned():
    """tests/k8s/test_k8s_weight.sh: two replicas of each Deployment run
    long enough for netsched to learn what they move (with the test's short
    agent window), then both are scaled up at once."""
    heavy = Group("heavy", 500, 0.20, False, 1.0)
    light = Group("light", 100, 0.02, False, 1.0)
    scale = 30.0
    pods = [PodPlan(i, heavy, 0.0) for i in range(2)] + [PodPlan(2 + i, light, 0.0) for i in range(2)]
    pods += [PodPlan(4 + i, heavy, scale) for i in range(8)]
    pods += [PodPlan(12 + i, light, scale + 1.0) for i in range(8)]
    return Workload("learned", "tests/k8s/test_k8s_weight.sh: Deployments scaled up once learned", GRADED,
                    pods, scale + 8.0,
                    "graded background; 2 heavy pods (20% each) and 2 light ones (2%) running, then "
                    f"+8 of each at {scale:g} s, declaring nothing")


def _outcome():
    heavy = Group("heavy", 500, 0.20, False, 1.0)
    pods = [PodPlan(i, heavy, 0.0) for i in range(6)]
    bg = {"n1": 0.95, "n2": 0.95, "n3": 0.0, "n4": 0.0}
    return Workload("outcome", "tests/k8s/test_k8s_outcome.sh: a burst next to saturated links", bg, pods,
                    6.0, "n1 and n2 saturated, n3 and n4 idle; 6 pods asking 20% each, at once")


# A workload that learns runs netsched with the agents' window and the
# scorer's in-flight hold scaled from deploy/'s 60 s to 6 s, as
# tests/k8s/test_k8s_weight.sh does: a pod is learned about 10 s of
# start-up and a window and a half after it started.
SHORT_AGENT = ("--window=6s", "--pod-interval=3s")
SHORT_SCORER = ("--inflight-hold=16s", "--inflight-fade=6s")
LEARN_AT = 24.0
# The rebalancer's timing scaled the same way (deploy/rebalancer.yaml /
# 10), in this one place for the bench and tests/k8s/test_k8s_rebalance_lab.sh
# (placement.py netsched-args W rebalancer): a cycle every 1 s (10 s), pods
# younger than 30 s stay (5 m), a workload moved is not moved again for
# 60 s (10 m), a relieved node is not a source again for 12 s (120 s), a
# pod a PDB refused is not tried again for 30 s (5 m), the scorer's hold
# and reservation last 30 s (5 m). --debounce counts reports, not seconds:
# the agents still report every 2 s, so it stays 3 (6 s, as deployed).
# The per-hour limits are counts and stay as shipped.
SHORT_REBALANCER = ("--interval=1s", "--min-age=30s", "--cooldown=60s", "--node-cooldown=12s",
                    "--pdb-backoff=30s", "--hold=30s")


def _egress():
    send = Group("upload", 500, 0.20, False, 2.0, "tx")
    pods = [PodPlan(i, send, 0.0) for i in range(8)]
    bg = {"n1": (0.0, 0.90), "n2": (0.0, 0.90), "n3": (0.0, 0.50), "n4": (0.0, 0.30), "n5": (0.0, 0.20),
          "n6": (0.0, 0.05)}
    return Workload("egress", "a burst of senders next to nodes busy sending", bg, pods, 15.0,
                    "nodes sending 90, 90, 50, 30, 20, 5% of the link (receiving nothing); 8 pods sending "
                    "20% each, created at once, declaring nothing")


def _warm(key, direction, title, other=(0.0,) * 6):
    """4 pods of a Deployment learned, then +8 at once next to nodes busy
    90% to 10% in the pods' direction (and `other` in the other one): room
    for the 12 (2.7 links of it for 2.4 asked), none on the 90% node."""
    web = Group("web", 500, 0.20, False, 1.0, direction)
    pods = [PodPlan(i, web, 0.0) for i in range(4)] + [PodPlan(4 + i, web, LEARN_AT) for i in range(8)]
    grade = (0.90, 0.74, 0.58, 0.42, 0.26, 0.10)
    bg = {f"n{i + 1}": (x, y) if direction == "rx" else (y, x) for i, (x, y) in enumerate(zip(grade, other))}
    verb, noun = ("receiving", "sending") if direction == "rx" else ("sending", "receiving")
    busy = [f"{y:.0%}" for y in other if y]
    return Workload(key, title, bg, pods, LEARN_AT + 10.0,
                    f"nodes {verb} 90, 74, 58, 42, 26, 10% of the link"
                    + (f" ({noun} {', '.join(busy)} on the last {len(busy)})" if busy else "")
                    + f"; 4 pods of a Deployment {verb} 20% each run until netsched learned them (agents' "
                    f"window 6 s), then +8 at once (at {LEARN_AT:g} s or once learned), declaring nothing; "
                    f"the room left in all takes them",
                    learn=("web",), learn_at=LEARN_AT, agent_args=SHORT_AGENT, scorer_args=SHORT_SCORER)


class Change:
    """What happens after the pods landed, at `at` s (or once the bench
    says it happened): late, netsched (and the rebalancer) start only then,
    the pods having been placed by the default plugins alone; ramp, the
    nodes that took pods of the workload (pinned ones aside) receive this
    fraction of the link more from then on, and keep it. Figures are
    judged from `judge` s after the change (2 minutes scaled as the
    agents' window, 60 s -> 6 s) for `after` s."""

    def __init__(self, at, late=False, ramp=0.0, judge=12.0, after=36.0):
        self.at, self.late, self.ramp, self.judge, self.after = at, late, ramp, judge, after


def _services(n, rate):
    """n Deployments of one pod each (separate services: the rebalancer
    moves one pod of a workload per cool-down), and db, one pod pinned to
    n1 (as a database's local volume would), receiving 2% of the link,
    covered by a PodDisruptionBudget with maxUnavailable 0."""
    pods = [PodPlan(i, Group(f"svc{i + 1}", 500, rate, False, 1.0), 0.0) for i in range(n)]
    db = Group("db", 100, 0.02, False, 1.0, node="n1", pdb=True)
    return pods + [PodPlan(n, db, 0.0)]


def _late():
    ch = Change(20.0, late=True)
    bg = {"n1": 0.75, "n2": 0.75, "n3": 0.40, "n4": 0.20, "n5": 0.20, "n6": 0.05}
    return Workload("late", "installed late: pods placed by the default scheduler alone, then netsched starts",
                    bg, _services(6, 0.30), ch.at + ch.judge + ch.after,
                    "background 75, 75, 40, 20, 20, 5% of the link; 6 Deployments of one pod "
                    "receiving 30% each and db (2%, pinned to n1, a PDB with maxUnavailable 0), placed "
                    "while netsched is not running (its scheduler's extender ignorable: the default "
                    f"plugins alone); at {ch.at:g} s netsched and its rebalancer start",
                    agent_args=SHORT_AGENT, scorer_args=SHORT_SCORER, change=ch)


def _neighbour():
    ch = Change(20.0, ramp=0.75)
    return Workload("neighbour", "neighbour: background ramps up on the nodes that took pods, and stays",
                    {n: 0.0 for n in NODES}, _services(4, 0.30), ch.at + ch.judge + ch.after,
                    "idle links; 4 Deployments of one pod receiving 30% each and db (2%, pinned to n1, "
                    f"a PDB with maxUnavailable 0) placed; at {ch.at:g} s every node that took one of the "
                    f"4 receives a background of {ch.ramp:.0%} of its link from then on",
                    agent_args=SHORT_AGENT, scorer_args=SHORT_SCORER, change=ch)


def _mixed():
    reader = Group("reader", 500, 0.20, True, 2.0, "rx")
    writer = Group("writer", 500, 0.20, True, 2.0, "tx")
    pods = [PodPlan(i, reader if i % 2 == 0 else writer, 0.0) for i in range(10)]
    bg = {"n1": (0.85, 0.0), "n2": (0.85, 0.0), "n3": (0.0, 0.85), "n4": (0.0, 0.85), "n5": (0.60, 0.0),
          "n6": (0.0, 0.60)}
    return Workload("mixed", "receivers and senders on nodes busy one way each", bg, pods, 15.0,
                    "n1, n2 receiving 85% of the link, n3, n4 sending 85%, n5 receiving 60%, n6 sending "
                    "60%; 5 pods receiving and 5 sending 20% each, created at once, each declaring "
                    "what it moves (kubernetes.io/ingress-bandwidth or egress-bandwidth): the oracle "
                    "puts receivers where nodes send and senders where they receive; judged by each "
                    "node's busier side, n5 and n6 look the least busy and have room for 1 of each "
                    "kind. (Declaring nothing, on a cluster where nothing has run yet, no scheduler "
                    "can know which way a pod goes: fit then judges each node by its busier side)")


def _colocated():
    chat = Group("chat", 500, 0.30, False, 1.0, "tx", peer=True, node="n6")
    heavy = Group("heavy", 500, 0.20, False, 1.0)
    pods = [PodPlan(i, chat, 0.0) for i in range(2)] + [PodPlan(2 + i, heavy, LEARN_AT) for i in range(6)]
    bg = {"n1": 0.85, "n2": 0.85, "n3": 0.70, "n4": 0.50, "n5": 0.50, "n6": 0.0}
    return Workload("colocated", "co-located talkers: pod-to-pod traffic that never crosses the link", bg, pods,
                    LEARN_AT + 10.0,
                    "n1-n5 receiving 85, 85, 70, 50, 50% of the link, n6 idle but for 2 pods of a "
                    "Deployment on it sending 30% each to each other (never on its uplink); once netsched "
                    f"learned them (agents' window 6 s), 6 pods receiving 20% each at once "
                    f"(at {LEARN_AT:g} s or once learned), declaring nothing: n6's link has room for 4",
                    learn=("chat",), learn_at=LEARN_AT, agent_args=SHORT_AGENT, scorer_args=SHORT_SCORER)


def _senders():
    send = Group("upload", 500, 0.20, False, 1.0, "tx")
    pods = [PodPlan(i, send, 0.0) for i in range(6)]
    bg = {"n1": (0.0, 0.95), "n2": (0.0, 0.95), "n3": (0.60, 0.0), "n4": (0.60, 0.0)}
    return Workload("senders", "tests/k8s/test_k8s_direction.sh: senders next to saturated senders", bg, pods,
                    6.0, "n1, n2 sending 95% of the link, n3, n4 receiving 60% (sending nothing); 6 pods "
                    "sending 20% each, at once")


def _oneway():
    reader = Group("reader", 500, 0.20, True, 1.0, "rx")
    writer = Group("writer", 500, 0.20, True, 1.0, "tx")
    pods = [PodPlan(i, reader if i % 2 == 0 else writer, 0.0) for i in range(6)]
    bg = {"n1": (0.50, 0.0), "n2": (0.50, 0.0), "n3": (0.0, 0.50), "n4": (0.0, 0.50)}
    return Workload("oneway", "tests/k8s/test_k8s_direction.sh: receivers and senders on nodes busy one way",
                    bg, pods, 6.0, "n1, n2 receiving 50% of the link, n3, n4 sending 50%; 3 pods receiving "
                    "and 3 sending 20% each, at once, declared (kubernetes.io/ingress- or egress-bandwidth)")


WORKLOADS = {w.key: w for w in (_burst("burst", "a burst of pods that declare nothing", False),
                                _burst("declared", "the same burst, bandwidth declared", True),
                                _steps(), _churn(), _egress(),
                                _warm("warm", "rx", "a learned Deployment scaled up next to graded nodes"),
                                _mixed(), _colocated(),
                                _warm("warm-tx", "tx", "tests/k8s/test_k8s_warm.sh: a learned Deployment of "
                                      "senders scaled up next to nodes graded by what they send",
                                      (0.0, 0.0, 0.20, 0.40, 0.50, 0.60)),
                                _demo(), _outcome(), _learned(), _senders(), _oneway(),
                                _late(), _neighbour())}
# make bench-placement's default list (PLACEMENT_WORKLOADS).
BENCH = ("burst", "declared", "steps", "churn", "egress", "warm", "mixed", "colocated", "late", "neighbour")
# The ways; netsched+rebalancer (rebalancer) only for a workload that changes.
WAYS = ("stock", "netsched", "rebalancer", "oracle")


# ------------------------------------------------------------------ model
def waterfill(demands, capacity):
    """Max-min fair shares of capacity among flows with these demands."""
    alloc = [0.0] * len(demands)
    left, n = capacity, len(demands)
    for i in sorted(range(len(demands)), key=lambda k: demands[k]):
        share = left / n if n else 0.0
        alloc[i] = min(demands[i], share)
        left -= alloc[i]
        n -= 1
    return alloc


def node_model(w, node, pods):
    """What each of these pods (all on node) gets over its traffic, by
    the fluid model: per direction of the link and per interval between
    traffic starts and stops, that direction's payload capacity shared
    max-min among its background flows and the pods using it (a pod that
    talks to a peer on its node uses neither: it gets what it asks).
    Returns ({idx: (delivered, asked)} in link-seconds, peak load /
    capacity of the busier direction)."""
    cap = PAYLOAD
    spans = {p.idx: p.traffic(w.end) for p in pods}
    got = {p.idx: [0.0, 0.0] for p in pods}
    for p in pods:
        if p.group.peer:
            a, b = spans[p.idx]
            got[p.idx] = [p.group.rate * (b - a)] * 2
    peak = 0.0
    for d in DIRS:
        bg = w.bg(node, d) if node in w.background else 0.0
        nbg = w.streams(node, d) if bg > 0 else 0
        mine = [p for p in pods if p.group.dir == d and not p.group.peer]
        cuts = sorted({t for p in mine for t in spans[p.idx]})
        peak = max(peak, bg / cap)
        for a, b in zip(cuts, cuts[1:]):
            live = [p for p in mine if spans[p.idx][0] <= a and b <= spans[p.idx][1]]
            if not live:
                continue
            demands = ([bg / nbg] * nbg if nbg else []) + [p.group.rate for p in live]
            alloc = waterfill(demands, cap)[nbg:]
            for p, x in zip(live, alloc):
                got[p.idx][0] += x * (b - a)
                got[p.idx][1] += p.group.rate * (b - a)
            peak = max(peak, sum(demands) / cap)
    return {k: tuple(v) for k, v in got.items()}, peak


def model(w, assign):
    """{idx: fraction} and per node peak load for a whole assignment."""
    frac, peaks = {}, {}
    for node in w.background:
        pods = [p for p in w.pods if assign.get(p.idx) == node]
        got, peaks[node] = node_model(w, node, pods)
        for k, (d, a) in got.items():
            frac[k] = d / a if a else 1.0
    return frac, peaks


def cpu_fits(w, assign, pod, node):
    """Whether pod fits node's CPU and pod count while it exists."""
    end = lambda p: p.delete if p.delete is not None else w.end  # noqa: E731
    others = [q for q in w.pods if assign.get(q.idx) == node and q.create < end(pod) and pod.create < end(q)]
    return (sum(q.group.cpu_m for q in others) + pod.group.cpu_m <= NODE_CPU_M
            and len(others) + 1 <= NODE_PODS)


def oracle(w):
    """The placement a scheduler that knew every pod's demand, the
    background and the timeline would choose: greedy in creation order
    (each pod to the node that keeps the worst pod's fraction highest,
    then the most delivered, then the evenest peak loads: the least sum of
    their squares), then single moves and swaps while they raise that."""
    nodes = tuple(w.background)
    cache = {}

    def node_score(node, members):
        key = (node, members)
        if key not in cache:
            got, peak = node_model(w, node, [p for p in w.pods if p.idx in members])
            cache[key] = (min([d / a for d, a in got.values() if a] or [1.0]),
                          sum(d for d, _ in got.values()), peak)
        return cache[key]

    def score(assign):
        parts = [node_score(n, frozenset(k for k, v in assign.items() if v == n)) for n in nodes]
        return (round(min(p[0] for p in parts), 4), round(sum(p[1] for p in parts), 4),
                -round(sum(p[2] ** 2 for p in parts), 4))

    assign = {p.idx: p.group.node for p in w.pods if p.group.node}
    for p in sorted(w.pods, key=lambda p: (p.create, -p.group.rate, p.idx)):
        if p.group.node:
            continue
        best = None
        for n in nodes:
            if not cpu_fits(w, assign, p, n):
                continue
            s = score({**assign, p.idx: n})
            if best is None or s > best[0]:
                best = (s, n)
        assign[p.idx] = best[1]
    current = score(assign)
    for _ in range(20):
        improved = False
        free = [p for p in w.pods if not p.group.node]
        for p in free:
            for n in nodes:
                if n == assign[p.idx]:
                    continue
                trial = dict(assign)
                del trial[p.idx]
                if not cpu_fits(w, trial, p, n):
                    continue
                trial[p.idx] = n
                s = score(trial)
                if s > current:
                    assign, current, improved = trial, s, True
        for p in free:
            for q in free:
                if q.idx <= p.idx or assign[p.idx] == assign[q.idx]:
                    continue
                trial = {k: v for k, v in assign.items() if k not in (p.idx, q.idx)}
                if not cpu_fits(w, trial, p, assign[q.idx]):
                    continue
                trial[p.idx] = assign[q.idx]
                if not cpu_fits(w, trial, q, assign[p.idx]):
                    continue
                trial[q.idx] = assign[p.idx]
                s = score(trial)
                if s > current:
                    assign, current, improved = trial, s, True
        if not improved:
            break
    return assign


def ramped(w, nodes_with_pods):
    """The background after a workload's change: {node: (rx, tx)}."""
    bg = dict(w.background)
    if w.change and w.change.ramp:
        for n in nodes_with_pods:
            rx, tx = bg.get(n, (0.0, 0.0))
            bg[n] = (rx + w.change.ramp, tx)
    return bg


def fewest_moves(w, bg, placed, limit=0.90):
    """The fewest pods to move so that no node's demand in a direction is
    over `limit` of the link on the wire (the rebalancer's --hot: payload
    demand over limit x PAYLOAD), given the background bg ({node: (rx,
    tx)}) and where the pods are (placed: {idx: node}); pinned pods stay.
    Returns (k, {idx: new node}) with, among the ways to move k pods, the
    one leaving the busiest node the least busy; (None, {}) when no set of
    up to 4 moves does."""
    import itertools
    nodes = tuple(bg)
    byidx = {p.idx: p for p in w.pods}

    def worst(assign):
        load = {(n, d): bg[n][DIRS.index(d)] for n in nodes for d in DIRS}
        for idx, n in assign.items():
            p = byidx[idx]
            if not p.group.peer:
                load[(n, p.group.dir)] = load.get((n, p.group.dir), 0.0) + p.group.rate
        return max(load.values()) / PAYLOAD, sum(v * v for v in load.values())

    movable = [i for i in placed if not byidx[i].group.node]
    for k in range(0, min(4, len(movable)) + 1):
        best = None
        for subset in itertools.combinations(movable, k):
            for dests in itertools.product(nodes, repeat=k):
                if any(placed[i] == d for i, d in zip(subset, dests)):
                    continue
                trial = dict(placed)
                trial.update(zip(subset, dests))
                wv = worst(trial)
                if wv[0] <= limit and (best is None or wv < best[0]):
                    best = (wv, dict(zip(subset, dests)))
        if best:
            return k, best[1]
    return None, {}
