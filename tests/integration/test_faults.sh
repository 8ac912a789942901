#!/usr/bin/env bash
# Faults on real binaries and real counters:
#   - the scorer restarted mid-stream: agents reconnect by themselves and
#     the table refills;
#   - a link taken down and up inside a node's namespace: no spike, no
#     false zero afterwards, traffic measured again.
# A stepped wall clock is covered by the unit tests (windows and ages use
# only the monotonic clock): libfaketime, the only way to step one process's
# clock here, also breaks absolute monotonic sleeps, so it cannot test this.
set -u
. "$(dirname "$0")/lib.sh"
need_root test_faults
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"

P="nsf$$"
make_nodes "$P-hub" "$P-1" "$P-2"
LISTEN_PORT=$(free_port)
HTTP_PORT=$(free_port)
scorer() {
	start scorer "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
		--http "127.0.0.1:$HTTP_PORT" --stale-after 3s
	SCORER=$LAST_PID
	wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
}
scorer
for i in 1 2; do
	start "agent-$i" "$BIN/netsched-agent" --node "node-$i" --netns "$P-$i" \
		--interfaces eth0 --scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms \
		--window 2s --report-interval 200ms
done
nodes() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes"; }
fresh_count() { nodes | jq '[.nodes[] | select(.source == "agent")] | length'; }
both() { [ "$(fresh_count)" = 2 ]; }
wait_for 10 "both nodes reporting" both

# 1. Scorer restart: a new, empty table must refill on its own.
kill "$SCORER"
wait "$SCORER" 2>/dev/null
sleep 1 # agents notice the loss and start redialling (100 ms .. 5 s backoff)
t0=$(date +%s%N)
scorer
wait_for 10 "agents to reconnect to the restarted scorer" both
echo "ok: the restarted scorer's table refilled in $((($(date +%s%N) - t0) / 1000000)) ms"

# 2. Link down and up in node-1, with traffic before and after.
rx() { nodes | jq "[.nodes[] | select(.name == \"$1\") | .rxBytesPerSecond][0] // -1"; }
ip -n "$P-1" link set eth0 down
for _ in $(seq 10); do
	r=$(rx node-1)
	[ "$r" -lt 100000 ] || fail "node-1 rx $r B/s while its link is down: a spike"
	sleep 0.1
done
ip -n "$P-1" link set eth0 up
ip -n "$P-hub" link set hub-1 up
iperf_server "$P-1" 10.231.1.2
start iperf-client ip netns exec "$P-hub" iperf3 -c 10.231.1.2 -p 5201 -t 2 -b 100M
busy() { [ "$(rx node-1)" -gt 2000000 ]; }
wait_for 10 "node-1's traffic after the link came back" busy
echo "ok: link down and up: no spike, traffic measured again ($(rx node-1) B/s)"

echo "PASS: faults"
