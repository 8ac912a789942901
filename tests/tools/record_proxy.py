#!/usr/bin/env python3
"""An HTTP/1.1 proxy on 127.0.0.1:PORT that forwards every request to
UPSTREAM (http://HOST:PORT) and writes each request body it forwards to
DIR/<last path element>-<n>.json, byte for byte, before forwarding it: how
tests capture what a real kube-scheduler sends an extender (the preempt
verb's request in tests/fixtures/extender/captured-k8s-1.20/).

usage: record_proxy.py PORT UPSTREAM DIR
"""
import http.client
import http.server
import os
import sys
import threading
import urllib.parse

PORT, UPSTREAM, DIR = int(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
counts = {}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self, body):
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=10)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "content-length")}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "content-length", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        verb = self.path.rstrip("/").rsplit("/", 1)[-1] or "root"
        with lock:
            counts[verb] = counts.get(verb, 0) + 1
            name = os.path.join(DIR, "%s-%d.json" % (verb, counts[verb]))
        with open(name, "wb") as f:
            f.write(body)
        self.forward(body)

    def do_GET(self):
        self.forward(None)


os.makedirs(DIR, exist_ok=True)
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
