#!/usr/bin/env python3
"""A stand-in for the scorer's side of the rebalancer's contract, for
tests/k8s/test_k8s_rebalance.sh while the real routes are built elsewhere:
GET /v1/pressure serves the nodes of a JSON file (re-read on every request,
so a test can change them), each node's `reports` counter one higher on
every request (a new report each time, as a scorer fed every 2 s looks to a
rebalancer polling every second); POST /v1/moves appends the body as one
line to a file and answers as the contract says (200, 400 for from == to);
GET /v1/moves lists them.

Usage: fake_pressure.py PORT NODES.json MOVES.jsonl
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PORT, NODES, MOVES = int(sys.argv[1]), sys.argv[2], sys.argv[3]
LOCK = threading.Lock()
REPORTS = {}


class Handler(BaseHTTPRequestHandler):
    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/v1/pressure":
            hot = float(parse_qs(url.query).get("hot", ["0.9"])[0])
            if not 0.05 <= hot <= 1.0:
                return self.reply(400, {"error": "hot must be in [0.05, 1.0]"})
            with open(NODES) as f:
                nodes = json.load(f)["nodes"]
            with LOCK:
                for n in nodes:
                    REPORTS[n["name"]] = REPORTS.get(n["name"], 0) + 1
                    n["reports"] = REPORTS[n["name"]]
            for n in nodes:
                link = n["linkBytesPerSecond"]
                if max(n["rxBytesPerSecond"], n["txBytesPerSecond"]) < hot * link:
                    n.pop("pods", None)
            nodes.sort(key=lambda n: n["name"])
            return self.reply(200, {"hot": hot, "windowSeconds": 30, "nodes": nodes})
        if url.path == "/v1/moves":
            with open(MOVES) as f:
                return self.reply(200, {"moves": [json.loads(l) for l in f if l.strip()]})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        if self.path != "/v1/moves":
            return self.reply(404, {"error": "not found"})
        n = int(self.headers.get("Content-Length", "0"))
        if n > 4096:
            return self.reply(413, {"error": "body over 4 KiB"})
        body = json.loads(self.rfile.read(n))
        if body.get("from") == body.get("to"):
            return self.reply(400, {"error": "from == to"})
        with LOCK, open(MOVES, "a") as f:
            f.write(json.dumps(body) + "\n")
        self.reply(200, {"accepted": True, "holdSeconds": body.get("holdSeconds", 0)})

    def log_message(self, fmt, *args):
        sys.stderr.write("fake_pressure: " + fmt % args + "\n")


open(MOVES, "a").close()
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
