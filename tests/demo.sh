#!/usr/bin/env bash
# `make demo`: three simulated nodes (network namespaces) with uneven real
# traffic, one agent per node, the scorer, and a replayed kube-scheduler
# prioritize request. Prints what the scheduler would be told.
set -u
cd "$(dirname "$0")/.."
. tests/integration/lib.sh
FIX=tests/fixtures/extender/captured-k8s-1.20

if [ "$(id -u)" -ne 0 ]; then
	echo "netsched demo: simulating nodes needs root (network namespaces, veth pairs)."
	echo "Run 'sudo make demo' for the full demo. Meanwhile, this host's own interfaces:"
	ifs=$(ip -o route show default 2>/dev/null | awk '{print $5}' | sort -u | paste -sd, -)
	"$BIN/netsched-agent" --once --interfaces "${ifs:-lo}" | jq .
	exit 0
fi

P="nsd$$"
make_nodes "$P-hub" "$P-1" "$P-2" "$P-3"
start_scorer --stale-after 10s
for i in 1 2 3; do
	start "agent-$i" "$BIN/netsched-agent" --node "node-$i" --netns "$P-$i" --interfaces eth0 \
		--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 500ms --window 4s \
		--report-interval 1s
done

echo "netsched demo: 3 nodes; sending 400 Mbit/s into node-1, 100 Mbit/s into node-2, nothing into node-3"
rates=(0 400M 100M)
for i in 1 2; do
	iperf_server "$P-$i" "10.231.$i.2"
	start "iperf-client-$i" ip netns exec "$P-hub" iperf3 -c "10.231.$i.2" -t 8 -b "${rates[$i]}"
done

# Let a full window of traffic arrive, then ask as the scheduler would.
sleep 5
jq -c '.NodeNames = ["node-1", "node-2", "node-3"]' "$FIX/prioritize-request.nodeCacheCapable-true.json" \
	>"$WORK/prio.json"
read -r code scores <<<"$(http POST /prioritize "$WORK/prio.json")"
[ "$code" = 200 ] || fail "prioritize answered $code: $scores"
nodes=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes")

echo
echo "POST /prioritize (as kube-scheduler sends it) answered: $scores"
echo
printf '%-8s %14s %6s\n' NODE "RX RATE" SCORE
for n in node-1 node-2 node-3; do
	rx=$(jq -r ".nodes[] | select(.name == \"$n\") | .rxBytesPerSecond / 1e6" <<<"$nodes")
	sc=$(jq -r ".[] | select(.Host == \"$n\") | .Score" <<<"$scores")
	printf '%-8s %9.1f MB/s %6s\n' "$n" "$rx" "$sc"
done
best=$(jq -r 'max_by(.Score) | .Host' <<<"$scores")
echo
echo "The pod would go to $best: with weight w the scheduler adds Score x w x 10 to each node."
