#!/usr/bin/env python3
"""A misbehaving Kubernetes apiserver for the pod watch, over HTTPS on
127.0.0.1:PORT: what a real apiserver does not do on demand.

  gone   lists answer a PodList (one bound pod); every watch is told its
         resourceVersion is gone: HTTP 410 with a Status, or (every other
         watch) 200 with an ERROR 410 event, as the watch cache sends it
  pods   lists answer NODES x PODS running pods, the ones bench/feed --pods
         reports traffic for (bench/podfeed.h: node-<n>'s pod j is feed/p-<n>-<j>,
         a replica of Deployment feed/d<j % 8>, at 10.<n/256>.<n%256>.<j+1>,
         started an hour ago); every watch gets a bookmark and ends after 5 s

Writes one line per request to LOG: "list" or "watch", and the time.

usage: apiserver_stub.py MODE PORT CERT KEY LOG [NODES PODS]
"""
import http.server
import json
import ssl
import sys
import threading
import time

MODE, PORT, CERT, KEY, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
lock = threading.Lock()
watches = 0

POD = {"metadata": {"uid": "6a1c3f1e-0000-4000-8000-000000000001", "namespace": "default",
                    "name": "p1", "resourceVersion": "90"}, "spec": {"nodeName": "w1"}}
PAGE = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "100"},
        "items": [POD]}
def feed_pods(nodes, pods):
    """What bench/podfeed.h says node-<n> runs."""
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    items = []
    for n in range(nodes):
        for j in range(pods):
            ip = "10.%d.%d.%d" % (n >> 8 & 255, n & 255, j + 1)
            items.append({
                "metadata": {"uid": "feed-%d-%d" % (n, j), "namespace": "feed",
                             "name": "p-%d-%d" % (n, j), "resourceVersion": "90",
                             "labels": {"pod-template-hash": "abc12"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                  "name": "d%d-abc12" % (j % 8), "uid": "rs",
                                                  "controller": True}]},
                "spec": {"nodeName": "node-%d" % n},
                "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                           "startTime": started,
                           "conditions": [{"type": "Ready", "status": "True",
                                           "lastTransitionTime": started}]}})
    return items


if MODE == "pods":
    PAGE = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "100"},
            "items": feed_pods(int(sys.argv[6]), int(sys.argv[7]))}
BOOKMARK = {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "100"}}}
GONE = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired",
        "message": "too old resource version: 100 (200)", "code": 410}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        global watches
        watch = "watch=1" in self.path
        with lock:
            with open(LOG, "a") as f:
                f.write("%s %.3f\n" % ("watch" if watch else "list", time.monotonic()))
            watches += watch
            n = watches
        if not watch:
            self.send(200, json.dumps(PAGE))
        elif MODE == "pods":
            # A quiet cluster: a bookmark (progress), then the server ends it.
            data = (json.dumps(BOOKMARK) + "\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            time.sleep(5)
        elif n % 2:
            self.send(410, json.dumps(GONE))
        else:
            self.send(200, json.dumps({"type": "ERROR", "object": GONE}) + "\n")


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
