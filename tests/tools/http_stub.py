#!/usr/bin/env python3
"""A misbehaving HTTP server on 127.0.0.1:PORT, for tests.

  hang     accept connections and never answer
  garbage  answer 200 with a body that is not JSON
  error    answer 422 with Prometheus's error JSON
  matrix   answer 200 with a well-formed but non-vector (matrix) result
  nan      answer a vector whose values are NaN, +Inf and negative

usage: http_stub.py MODE PORT
"""
import socket
import sys
import threading

MODE, PORT = sys.argv[1], int(sys.argv[2])
BODIES = {
    "garbage": (200, b"<html>this is not Prometheus</html>"),
    "error": (422, b'{"status":"error","errorType":"execution","error":"query timed out"}'),
    "matrix": (200, b'{"status":"success","data":{"resultType":"matrix","result":[]}}'),
    "nan": (200, b'{"status":"success","data":{"resultType":"vector","result":['
                 b'{"metric":{"instance":"n1","netsched_dir":"rx"},"value":[1,"NaN"]},'
                 b'{"metric":{"instance":"n2","netsched_dir":"rx"},"value":[1,"+Inf"]},'
                 b'{"metric":{"instance":"n3","netsched_dir":"rx"},"value":[1,"-5"]}]}}'),
}


def serve(conn):
    with conn:
        if MODE == "hang":
            threading.Event().wait()  # hold the connection open, say nothing
            return
        conn.recv(65536)
        status, body = BODIES[MODE]
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (status, len(body)) + body)


srv = socket.create_server(("127.0.0.1", PORT))
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
