#!/usr/bin/env bash
# A log reader that stops reading (a stopped log shipper, a full pipe) must
# not stall the scorer: its stderr goes into a FIFO whose reader is
# SIGSTOPped while a client makes a log line per request (404s at debug
# level). Every request still gets its answer, the lines that did not fit
# are counted in /metrics, and once the reader resumes the log says how
# many were dropped.
set -u
. "$(dirname "$0")/lib.sh"

mkfifo "$WORK/stderr.fifo"
cat "$WORK/stderr.fifo" >"$WORK/scorer.log" &
READER=$!
PIDS+=("$READER")
# A stopped reader would never see the TERM that cleanup sends it.
trap 'kill -CONT "$READER" 2>/dev/null; cleanup' EXIT

LISTEN_PORT=$(free_port)
HTTP_PORT=$(free_port)
"$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" --http "127.0.0.1:$HTTP_PORT" \
	--log-level debug 2>"$WORK/stderr.fifo" &
PIDS+=($!)
wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"

kill -STOP "$READER"
# 6,000 requests, one debug line each: far more than the pipe and the
# log buffer hold. Each must be answered within two seconds.
answered=$(python3 - "$HTTP_PORT" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
n = 0
try:
    for i in range(6000):
        c.request("GET", "/no-such-path-%d" % i)
        r = c.getresponse()
        r.read()
        n += r.status == 404
finally:
    print(n)
PY
)
expect "404s answered while nobody reads the log" "$answered" 6000
read -r code _ <<<"$(http POST /prioritize "$WORK/prio.json")"
expect "a real prioritize while the log reader is stopped" "$code" 200
dropped=$(curl -s -m 2 "http://127.0.0.1:$HTTP_PORT/metrics" |
	awk '$1 == "netsched_scorer_log_lines_dropped_total" { print $2 }')
[ "${dropped:-0}" -gt 1000 ] 2>/dev/null ||
	fail "netsched_scorer_log_lines_dropped_total is '$dropped', want over 1000"
echo "ok: $dropped log lines dropped and counted"

kill -CONT "$READER"
wait_for 10 "the log to report the dropped lines" \
	grep -q 'warn log: [0-9]* lines dropped while stderr was blocked' "$WORK/scorer.log"
echo "ok: $(grep -o 'log: [0-9]* lines dropped while stderr was blocked' "$WORK/scorer.log")"
