#!/usr/bin/env python3
"""node_exporter-style counters for several fake nodes, for tests.

Serves /metrics/NODE on 127.0.0.1:PORT with node_network_*_bytes_total for
eth0 (advancing at the rates the test writes into RATES_FILE) and lo (busy,
so a query that forgets its device filter is caught), plus node_uname_info.
RATES_FILE lines: "NODE RX_BYTES_PER_S TX_BYTES_PER_S"; it is re-read at every
scrape, so the test changes traffic by rewriting it.

usage: node_exporter_sim.py PORT RATES_FILE
"""
import http.server
import sys
import threading
import time

PORT = int(sys.argv[1])
RATES = sys.argv[2]
lock = threading.Lock()
state = {}  # node -> [rx, tx, last_time]


def rates():
    out = {}
    try:
        with open(RATES) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    out[parts[0]] = (float(parts[1]), float(parts[2]))
    except OSError:
        pass
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        node = self.path.rsplit("/", 1)[-1]
        now = time.monotonic()
        rx_rate, tx_rate = rates().get(node, (0.0, 0.0))
        with lock:
            rx, tx, last = state.get(node, [1e9, 2e9, now])
            rx += rx_rate * (now - last)
            tx += tx_rate * (now - last)
            state[node] = [rx, tx, now]
        body = (
            f'node_network_receive_bytes_total{{device="eth0"}} {rx:.0f}\n'
            f'node_network_transmit_bytes_total{{device="eth0"}} {tx:.0f}\n'
            f'node_network_receive_bytes_total{{device="lo"}} {now * 1e12:.0f}\n'
            f'node_network_transmit_bytes_total{{device="lo"}} {now * 1e12:.0f}\n'
            f'node_uname_info{{nodename="{node}",sysname="Linux"}} 1\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
