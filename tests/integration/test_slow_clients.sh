#!/usr/bin/env bash
# Slow clients (slowloris): connections that trickle their headers, a line
# every few seconds, so an inactivity timeout never fires. From one address
# they get only --connections-per-client slots, and each is closed when its
# headers are not complete within the header deadline (5 s), so a real
# request from another address still gets in while they hold on.
# The agent's /metrics likewise: slow clients do not starve the kubelet's
# liveness probe.
set -u
. "$(dirname "$0")/lib.sh"

# slowloris PORT N SECONDS [EVERY]: N connections from 127.0.0.2, each
# sending a request line and then a header line every EVERY (2) s for
# SECONDS. Prints how many the server accepted (were still open at the
# first header line) and how many were still open at the end.
slowloris() {
	python3 - "$@" <<'PY'
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
every = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
conns = []
for i in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                     source_address=("127.0.0.2", 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    except OSError:
        pass
def alive(s):
    try:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                return False
        except BlockingIOError:
            pass
        s.setblocking(True)
        s.sendall(b"X-Slow: 1\r\n")
        return True
    except OSError:
        return False
end = time.monotonic() + secs
accepted = None
while time.monotonic() < end:
    time.sleep(every)
    conns = [s for s in conns if alive(s)]
    if accepted is None:
        accepted = len(conns)
print(accepted, len(conns))
PY
}

# real_requests PORT BODY SCHEME...: a real prioritize every 0.5 s from
# 127.0.0.1 while the slow clients hold on; prints the status codes.
real_requests() {
	local port=$1 body=$2 codes=()
	shift 2
	for _ in 1 2 3 4 5 6 7 8; do
		sleep 0.5
		codes+=("$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$@" \
			-H 'Content-Type: application/json' --data-binary "@$body" \
			"http://127.0.0.1:$port/prioritize")")
	done
	echo "${codes[*]}"
}

jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"

start_scorer
slowloris "$HTTP_PORT" 256 9 >"$WORK/slow.out" &
SLOW=$!
PIDS+=("$SLOW")
codes=$(real_requests "$HTTP_PORT" "$WORK/prio.json")
expect "real prioritizes while 256 slow-header clients hold on" "$codes" \
	"200 200 200 200 200 200 200 200"
wait "$SLOW"
read -r accepted open <"$WORK/slow.out"
expect "slow-header connections one address got (--connections-per-client 32)" "$accepted" 32
expect "slow-header connections still open after 9 s (header deadline 5 s)" "$open" 0
grep -q 'closed a connection from 127.0.0.2: no complete request headers in time (headers within 5 s' \
	"$WORK/scorer.log" || fail "no log line for the connections closed at the deadline"
echo "ok: the closed connections are logged"
closes=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
	awk '$1 == "netsched_scorer_http_deadline_closes_total" { print $2 }')
[ -n "$closes" ] && [ "$closes" -ge 32 ] ||
	fail "netsched_scorer_http_deadline_closes_total is '$closes', want at least the 32 closed"
echo "ok: /metrics counts $closes connections closed at the deadline"

# The agent's /metrics: 8 slow clients (the old connection limit) while the
# kubelet probes /healthz every 0.5 s with a 1 s timeout (its default).
M=$(free_port)
start agent "$BIN/netsched-agent" --node node-slow --interfaces lo --sample-interval 100ms \
	--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$(free_port)" \
	--metrics "127.0.0.1:$M"
wait_for 10 "agent /healthz" curl -sf "http://127.0.0.1:$M/healthz"
slowloris "$M" 8 5 1 >"$WORK/agent-slow.out" &
SLOW=$!
PIDS+=("$SLOW")
codes=()
for _ in 1 2 3 4 5 6 7 8; do
	sleep 0.5
	codes+=("$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$M/healthz")")
done
expect "agent liveness probes while 8 slow clients hold on" "${codes[*]}" \
	"200 200 200 200 200 200 200 200"
wait "$SLOW"
read -r accepted open <"$WORK/agent-slow.out"
expect "slow clients one address got at the agent (4 per address)" "$accepted" 4
expect "slow clients still open after 5 s (header deadline 3 s)" "$open" 0
curl -s "http://127.0.0.1:$M/metrics" | grep -q '^netsched_agent_log_lines_dropped_total 0$' ||
	fail "the agent's /metrics has no netsched_agent_log_lines_dropped_total"
echo "ok: the agent counts dropped log lines"
