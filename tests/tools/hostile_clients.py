#!/usr/bin/env python3
"""Hostile clients holding a server's connections, from many source addresses.

Each of the addresses keeps PER connections of one KIND open for SECONDS,
opening a new one whenever the server closes one (they hold all they can),
or runs PER clients of a busy KIND:

  idle           an HTTP GET /healthz, its reply read, then nothing (keep-alive)
  slow-headers   a request line, then a header line every EVERY s
  slow-body      POST headers announcing a 32 MiB body, then a byte every EVERY s
  silent         a TCP connection that sends nothing (also: TLS without a ClientHello)
  unread-status  GET /v1/nodes with a tiny receive window, never read; the
                 oldest is dropped and a new one asked every EVERY s
  nng-idle       NNG's SP handshake (a push socket), then nothing
  nng-partial    the SP handshake, then a 32 KiB message announced and all of it
                 but its last byte sent
  nng-raw        a TCP connection to the report port that never sends the handshake
and clients that keep the server busy rather than hold it:
  status-loop    GET /v1/nodes on a keep-alive connection, read whole, again at once
  one-byte       connect, send one byte, close, again
  deep           POST a 400 KB body nested 200,000 deep, read the answer, again
  big            POST a 32 MiB body of one-byte tokens ([1,1,...]), read the answer, again
  made-up-pod    POST --body FILE (a prioritize request for a pod nobody made) to
                 /prioritize, read the answer, again; counts the answers by status

--tls: every connection starts with a TLS handshake, without a client
certificate and without checking the server's (what anyone who reaches an
mTLS port can do); silent stays silent (TLS without a ClientHello).

SIGTERM ends it early. ADDRS is FIRST-LAST of 127.x.y.z addresses (127.0.0.10-127.0.0.18), or a count
N for N addresses from 127.1.0.1 on. Prints one line of counts when done (and to
--stats FILE): connections opened, closed by the server, refused.

usage: hostile_clients.py --port P --kind KIND --addrs ADDRS --per N --seconds S
                          [--every 2] [--stats FILE] [--no-reopen] [--tls] [--body FILE]
"""
import argparse
import ipaddress
import signal
import socket
import ssl
import struct
import sys
import threading
import time

# SIGTERM: stop now, and still say what was done, even when it comes
# before any client started (a slow start on a loaded machine).
stop = None


def finish(*_):
    global stop
    stop = 0


signal.signal(signal.SIGTERM, finish)

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--kind", required=True)
ap.add_argument("--addrs", required=True)
ap.add_argument("--per", type=int, required=True)
ap.add_argument("--seconds", type=float, required=True)
ap.add_argument("--every", type=float, default=2.0)
ap.add_argument("--stats")
ap.add_argument("--no-reopen", action="store_true", help="open PER once, never again")
ap.add_argument("--tls", action="store_true", help="a TLS handshake first, no client certificate")
ap.add_argument("--body", help="made-up-pod: the request body")
a = ap.parse_args()
TLS = None
if a.tls:
    TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    TLS.check_hostname = False
    TLS.verify_mode = ssl.CERT_NONE


def wrap(s):
    """s with TLS on it if asked (the handshake done here, s blocking)."""
    if TLS is None or a.kind == "silent":
        return s
    s.settimeout(5)
    return TLS.wrap_socket(s)

if "-" in a.addrs:
    lo, hi = (int(ipaddress.IPv4Address(x)) for x in a.addrs.split("-"))
    addrs = [str(ipaddress.IPv4Address(i)) for i in range(lo, hi + 1)]
else:
    base = int(ipaddress.IPv4Address("127.1.0.1"))
    addrs = [str(ipaddress.IPv4Address(base + i)) for i in range(int(a.addrs))]

if stop is None:
    stop = time.monotonic() + a.seconds
counts = {"opened": 0, "closed by the server": 0, "refused": 0}
lock = threading.Lock()


def count(k):
    with lock:
        counts[k] = counts.get(k, 0) + 1


def opening(kind):
    if kind == "idle":
        return b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind == "slow-headers":
        return b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    if kind == "slow-body":
        return (b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 33554432\r\n\r\n[")
    if kind == "unread-status":
        return b"GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind in ("nng-idle", "nng-partial"):
        return b"\x00SP\x00\x00\x50\x00\x00"	# SP over TCP, protocol push0
    return b""


MORE = {"slow-headers": b"X-Slow: 1\r\n", "slow-body": b"1"}


def connect(src):
    s = socket.socket()
    if a.kind == "unread-status":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(0.5)	# a full backlog: try again soon
    s.bind((src, 0))
    s.connect(("127.0.0.1", a.port))
    s = wrap(s)
    s.sendall(opening(a.kind))
    if a.kind == "idle":
        s.recv(65536)
    elif a.kind == "nng-partial":
        s.recv(8)
        s.sendall(struct.pack(">Q", 32768) + b"\xff" * 32767)
    s.setblocking(False)
    return s


def closed(s):
    try:
        return s.recv(1 << 16) == b""
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except OSError:
        return True


BUSY = ("status-loop", "one-byte", "deep", "big", "made-up-pod")
BODIES = {}


def post(body):
    return (b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


def read_reply(s):
    """Reads one HTTP reply with a Content-Length: its status, or 0 if the
    server closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return 0
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    while len(rest) < n:
        chunk = s.recv(1 << 20)
        if not chunk:
            return 0
        rest += chunk
    return status


def busy(src):
    s = None
    while time.monotonic() < stop:
        try:
            if a.kind == "one-byte":
                s = socket.create_connection(("127.0.0.1", a.port), timeout=1, source_address=(src, 0))
                s.send(b"P")
                s.close()
                count("opened")
                continue
            if s is None or a.kind != "status-loop":
                s = wrap(socket.create_connection(("127.0.0.1", a.port), timeout=30,
                                                  source_address=(src, 0)))
                count("opened")
            s.sendall(b"GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n" if a.kind == "status-loop"
                      else post(BODIES[a.kind]))
            status = read_reply(s)
            if a.kind == "made-up-pod":
                count("answered %d" % status if status else "closed by the server")
            if not status or a.kind != "status-loop":
                s.close()
                s = None
        except OSError:
            count("refused")
            s = None
            time.sleep(0.01)


def hold(src):
    socks, next_more, opened = [], time.monotonic() + a.every, 0
    while time.monotonic() < stop:
        if a.kind == "unread-status":
            # Never read, so never know: ask anew every EVERY s instead.
            if time.monotonic() >= next_more and socks:
                socks.pop(0).close()
        else:
            alive = []
            for s in socks:
                if closed(s):
                    count("closed by the server")
                    s.close()
                else:
                    alive.append(s)
            socks = alive
        while len(socks) < a.per and time.monotonic() < stop and not (a.no_reopen and opened >= a.per):
            try:
                socks.append(connect(src))
                opened += 1
                count("opened")
            except OSError:
                count("refused")
                break
        if time.monotonic() >= next_more:
            next_more = time.monotonic() + a.every
            for s in socks if a.kind in MORE else []:
                try:
                    s.send(MORE[a.kind])
                except OSError:
                    pass
        time.sleep(0.05)
    for s in socks:
        s.close()


if a.kind == "deep":
    BODIES["deep"] = b'{"NodeNames":' + b"[" * 200000 + b"]" * 200000 + b"}"
if a.kind == "big":
    BODIES["big"] = (b'{"NodeNames":[' + b"1," * (16 * 1024 * 1024 - 8))[:32 * 1024 * 1024 - 2] + b"]}"
if a.kind == "made-up-pod":
    BODIES["made-up-pod"] = open(a.body, "rb").read()
threads = [threading.Thread(target=busy if a.kind in BUSY else hold, args=(src,), daemon=True)
           for src in addrs for _ in range(a.per if a.kind in BUSY else 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
line = "%s from %d addresses x %d: %s" % (a.kind, len(addrs), a.per,
                                          ", ".join("%s %d" % kv for kv in counts.items()))
print(line)
if a.stats:
    open(a.stats, "w").write(line + "\n")
