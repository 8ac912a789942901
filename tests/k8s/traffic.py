"""A pod's workload for the lab (kubelet.py): traffic described by the
test-only annotation netsched.test/traffic, run with iperf3 between the
pod's namespace and the far side beyond its node's uplink (the hub).

    netsched.test/traffic: "rate=300M,dir=rx,delay=2s,duration=60s,streams=1"

rate      bits per second the pod asks, SI suffix k, M or G (required);
          1k to 100G, at most 3 decimals ("12.5M")
dir       rx (the pod receives: iperf3 -R, counted on its node's uplink as
          rx) or tx; default rx
delay     from the pod's start to its traffic, 0s to 600s; default 0s
duration  how long it sends, 1s to 3600s; default 60s
streams   TCP connections sharing the rate, 1 to 16; default 1
peer      a label key, e.g. app: the traffic runs between the pod and
          another running pod of its namespace with the same value of that
          label (the next by name, on any node: pods of one Deployment that
          talk to each other) instead of the hub; on one node it never
          crosses the uplink

Bounded: 256 characters at most, each key once, nothing else. A malformed
value raises BadTraffic, whose text says which part and why.

The sender is always the iperf3 client (rx: in the hub, sending to a server
in the pod; tx: in the pod), paced twice: -b keeps its average at the rate,
and --fq-rate (the kernel's pacing, 5% above the rate for the TCP/IP
headers) keeps a flow that fell behind on a congested link from catching
up in a burst later, which -b alone does (it paces to the average since
the start). What the pod got is what the pod's own end counted: the
receiver's bytes for rx, the server's report (or what the pod sent, when
stopped early) for tx.
"""
import json
import os
import re
import signal
import subprocess
import time

ANNOTATION = "netsched.test/traffic"
# TCP payload per full-size Ethernet frame (MSS 1448 of 1514 bytes).
PAYLOAD = 1448 / 1514
MAX_LEN = 256
_RATE = re.compile(r"(\d{1,12})(?:\.(\d{1,3}))?([kMG]?)")
_TIME = re.compile(r"(\d{1,7})(ms|s|m)")
_UNIT = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}
_SECONDS = {"ms": 0.001, "s": 1, "m": 60}
# A label key: an optional DNS prefix and "/", then a name of 1-63 characters.
_LABEL = re.compile(r"(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


class BadTraffic(ValueError):
    pass


class Spec:
    def __init__(self, rate, direction, delay, duration, streams, peer=None):
        self.rate, self.dir, self.delay = rate, direction, delay
        self.duration, self.streams, self.peer = duration, streams, peer

    def as_dict(self):
        return {"rate": self.rate, "dir": self.dir, "delay": self.delay,
                "duration": self.duration, "streams": self.streams, "peer": self.peer}

    @classmethod
    def from_dict(cls, d):
        return cls(d["rate"], d["dir"], d["delay"], d["duration"], d["streams"], d.get("peer"))


def _rate(v):
    m = _RATE.fullmatch(v)
    if not m:
        raise BadTraffic(f"rate {v!r} is not a number of bits per second such as 300M")
    whole, frac, unit = m.groups()
    scale = _UNIT[unit]
    bps = int(whole) * scale + (int(frac.ljust(3, "0")) * scale // 1000 if frac else 0)
    if not 1000 <= bps <= 100 * 10**9:
        raise BadTraffic(f"rate {v!r} is outside 1k..100G")
    return bps


def _seconds(key, v, low, high):
    m = _TIME.fullmatch(v)
    if not m:
        raise BadTraffic(f"{key} {v!r} is not a duration such as 2s, 500ms or 1m")
    s = int(m.group(1)) * _SECONDS[m.group(2)]
    if not low <= s <= high:
        raise BadTraffic(f"{key} {v!r} is outside {low:g}s..{high:g}s")
    return s


def parse(text):
    """The Spec of an annotation value; BadTraffic says what is wrong."""
    if len(text) > MAX_LEN:
        raise BadTraffic(f"{len(text)} characters, over the limit of {MAX_LEN}")
    seen = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not key or not value:
            raise BadTraffic(f"{part.strip()!r} is not key=value")
        if key not in ("rate", "dir", "delay", "duration", "streams", "peer"):
            raise BadTraffic(f"unknown key {key!r} (rate, dir, delay, duration, streams, peer)")
        if key in seen:
            raise BadTraffic(f"{key} given twice")
        seen[key] = value
    if "rate" not in seen:
        raise BadTraffic("no rate")
    direction = seen.get("dir", "rx")
    if direction not in ("rx", "tx"):
        raise BadTraffic(f"dir {direction!r} is neither rx nor tx")
    streams = seen.get("streams", "1")
    if not streams.isdigit() or not 1 <= int(streams) <= 16:
        raise BadTraffic(f"streams {streams!r} is not 1..16")
    peer = seen.get("peer")
    if peer is not None and not _LABEL.fullmatch(peer):
        raise BadTraffic(f"peer {peer!r} is not a label key such as app")
    return Spec(_rate(seen["rate"]), direction, _seconds("delay", seen.get("delay", "0s"), 0, 600),
                _seconds("duration", seen.get("duration", "60s"), 1, 3600), int(streams), peer)


class Proc:
    """A traffic process: ours (a Popen) or adopted after a restart (a pid
    checked against its command line, never signalled if it differs)."""

    def __init__(self, pid, popen=None, tag=None):
        self.pid, self.popen, self.tag = pid, popen, tag

    def alive(self):
        if self.popen is not None:
            return self.popen.poll() is None
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{self.pid}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, IndexError):
            return False
        return state != b"Z" and b"iperf3" in cmd and (self.tag is None or self.tag.encode() in cmd)

    def stop(self, wait=3.0, hard=False):
        """SIGTERM (iperf3 then writes what it measured so far), SIGKILL
        after wait seconds: iperf3 leaves its signal handler by longjmp and
        then allocates, so now and then it deadlocks there. hard: SIGKILL
        at once (a peer whose output nobody reads)."""
        if not self.alive():
            return
        try:
            os.kill(self.pid, signal.SIGKILL if hard else signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.popen is not None:
            try:
                self.popen.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass


def _spawn(netns, args, out_path, port):
    with open(out_path or os.devnull, "wb") as out:
        p = subprocess.Popen(["ip", "netns", "exec", netns, "iperf3", *args], stdin=subprocess.DEVNULL,
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return Proc(p.pid, p, f"{port}")


def start_listener(netns, addr, port, out_path=None):
    """A one-test iperf3 server bound to addr in netns (JSON to out_path
    when it measures the pod: written when the test ends or it is
    stopped)."""
    return _spawn(netns, ["-s", "-1", "-B", addr, "-p", str(port)] + (["-J"] if out_path else []),
                  out_path, port)


def start_sender(netns, addr, port, spec, out_path=None):
    """The iperf3 client that sends the pod's traffic to addr; -b and
    --fq-rate are per stream."""
    per = max(1, spec.rate // spec.streams)
    return _spawn(netns, ["-c", addr, "-p", str(port), "-t", str(max(1, round(spec.duration))),
                          "-P", str(spec.streams), "-b", str(per), "--fq-rate", str(per * 105 // 100),
                          "-C", "cubic", "--connect-timeout", "3000"] + (["-J"] if out_path else []),
                  out_path, port)


def result(out_path, spec):
    """(bytes, seconds, error) that the pod's end measured: bytes received
    in the pod's direction (rx: what the pod's server received; tx: what
    the far server received, or what the pod sent when stopped before the
    server could say). (None, None, why) when iperf3 wrote no result."""
    try:
        with open(out_path, "rb") as f:
            doc = json.loads(f.read(16 << 20) or b"{}")
    except (OSError, ValueError) as e:
        return None, None, f"no iperf3 result: {e}"
    if "end" not in doc and "error" not in doc:
        return None, None, "no iperf3 result: its JSON is cut short"
    end = doc.get("end") or {}
    recv, sent = end.get("sum_received") or {}, end.get("sum_sent") or {}
    got = recv if spec.dir == "rx" or recv.get("bytes") else sent
    err = doc.get("error")
    if err and ("interrupt" in err or (got.get("bytes") and "terminated" in err)):
        err = None  # stopped on purpose: its numbers so far stand
    if not err and not got.get("bytes"):
        err = "no traffic reached the pod's end"
    return int(got.get("bytes") or 0), float(got.get("seconds") or 0.0), err
