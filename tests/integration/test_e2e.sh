#!/usr/bin/env bash
# End to end on real kernel counters: two "nodes" (network namespaces) fed
# through veth pairs from a hub namespace, one agent per node, the scorer in
# the root namespace. Traffic into node-a only must make node-a score lower;
# when the traffic stops node-a recovers within the window.
set -u
. "$(dirname "$0")/lib.sh"
need_root e2e
command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps test)"

P="nst$$"
make_nodes "$P-hub" "$P-a" "$P-b"
HUB="$P-hub"

start_scorer --stale-after 5s
for n in a b; do
	start "agent-$n" "$BIN/netsched-agent" --node "node-$n" --netns "$P-$n" --interfaces eth0 \
		--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 200ms --window 3s \
		--report-interval 500ms
	[ "$n" = a ] && AGENT_A=$LAST_PID
done

nodes_known() { [ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length')" = 2 ]; }
wait_for 10 "both agents' reports in /v1/nodes" nodes_known

jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json >"$WORK/prio.json"
score() { http POST /prioritize "$WORK/prio.json" | cut -d' ' -f2- | jq -r ".[] | select(.Host == \"$1\") | .Score"; }
a_lower() { [ "$(score node-a)" -lt "$(score node-b)" ]; }
a_equal() { [ "$(score node-a)" -eq "$(score node-b)" ]; }

wait_for 5 "equal scores while idle" a_equal
echo "ok: idle: node-a $(score node-a), node-b $(score node-b)"

# Bounded traffic: one iperf3 server for one test, 4 s at 200 Mbit/s, inside our namespaces.
iperf_server "$P-a" 10.231.1.2
start iperf-client ip netns exec "$HUB" iperf3 -c 10.231.1.2 -p 5201 -t 4 -b 200M
rx_a() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '.nodes[] | select(.name == "node-a") | .rxBytesPerSecond'; }
# 200 Mbit/s is 25 MB/s; a 3 s window that has seen 1 s of it holds > 5 MB/s.
busy_a() { [ "$(rx_a)" -gt 5000000 ]; }
wait_for 6 "node-a's rx rate to show the 200 Mbit/s stream" busy_a
echo "ok: node-a rx $(rx_a) B/s under traffic"
wait_for 2 "node-a to score below node-b under traffic" a_lower
echo "ok: under traffic: node-a $(score node-a), node-b $(score node-b)"
curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -c '.nodes[]'

# After the traffic the window (3 s) empties and node-a recovers.
wait_for 15 "node-a to recover after the traffic" a_equal
echo "ok: recovered: node-a $(score node-a), node-b $(score node-b)"

# A killed agent makes its node stale, and a stale node is neutral.
kill "$AGENT_A"
stale_a() { [ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -r '.nodes[] | select(.name == "node-a") | .source')" = none ]; }
wait_for 10 "node-a to go stale after its agent stopped" stale_a
expect "stale node-a scores neutral" "$(score node-a)" 5
echo "PASS: e2e"
