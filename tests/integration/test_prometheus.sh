#!/usr/bin/env bash
# The Prometheus fallback against a real Prometheus (Debian's) on loopback,
# scraping simulated node_exporters whose counters the test advances:
#   - no agents: scores come from Prometheus, in every query preset;
#   - agents of two nodes killed: their scores move to Prometheus within a
#     refresh;
#   - Prometheus hanging (accepts, never answers), answering garbage, an
#     error, a non-vector or NaN values: prioritize still answers at once,
#     failures and dropped values are counted, nothing is used;
#   - Prometheus stopped: the fallback's data expires and scores go neutral.
set -u
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (run .ci/deps test)"
PY=${PYTHON:-python3}
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)

EXP=$(free_port) PROM=$(free_port)
printf 'node-a 10000000 1000000\nnode-b 0 0\nnode-c 5000000 0\n' >"$WORK/rates"
start exporter "$PY" "$TOOLS/node_exporter_sim.py" "$EXP" "$WORK/rates"
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: sim
  static_configs:
  - {targets: ['127.0.0.1:$EXP'], labels: {node: node-a}}
  - {targets: ['127.0.0.1:$EXP'], labels: {node: node-b}}
  - {targets: ['127.0.0.1:$EXP'], labels: {node: node-c}}
  relabel_configs:
  # One exporter serves every fake node at /metrics/NODE; kube-prometheus
  # makes 'instance' the node name, the Go plugin expects 'kubernetes_node'.
  - {source_labels: [node], target_label: __metrics_path__, replacement: '/metrics/\$1'}
  - {source_labels: [node], target_label: instance}
  - {source_labels: [node], target_label: kubernetes_node}
YAML
start prometheus prometheus --config.file="$WORK/prometheus.yml" \
	--storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$PROM" --log.level=warn
PROM_PID=$LAST_PID
# A fresh Prometheus answers /-/ready at once but has no rate() for seconds:
# poll until all three nodes have one.
rates_ready() {
	curl -sf "http://127.0.0.1:$PROM/api/v1/query" \
		--data-urlencode 'query=count(rate(node_network_receive_bytes_total{device="eth0"}[4s]))' |
		jq -e '.data.result[0].value[1] == "3"'
}
wait_for 30 "Prometheus to have rate() data for 3 nodes" rates_ready
echo "ok: Prometheus has rate() data"

# scorer NAME ARGS...: a scorer with the fallback; its HTTP port in HP_NAME.
scorer() {
	local name=$1 l h
	shift
	l=$(free_port) h=$(free_port)
	start "$name" "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$l" --http "127.0.0.1:$h" \
		--stale-after 2s "$@"
	eval "HP_$name=$h LP_$name=$l PID_$name=$LAST_PID"
	wait_for 10 "$name /healthz" curl -sf "http://127.0.0.1:$h/healthz"
}
FALLBACK=(--prometheus "http://127.0.0.1:$PROM" --prometheus-refresh 1s
	--prometheus-range 4s --prometheus-device eth0 --prometheus-timeout 1s)
source_of() { curl -s "http://127.0.0.1:$1/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$2\") | .source][0] // \"absent\""; }
rx_of() { curl -s "http://127.0.0.1:$1/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$2\") | .rxBytesPerSecond][0] // 0"; }
all_from_prom() { for n in node-a node-b node-c; do [ "$(source_of "$1" $n)" = prometheus ] || return 1; done; }
jq -c '.NodeNames = ["node-a", "node-b", "node-c"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json >"$WORK/prio.json"
scores() {
	curl -s -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/prio.json" \
		"http://127.0.0.1:$1/prioritize" | jq -c '[.[] | .Score]'
}

# 1. No agents at all: every preset finds the three nodes; node-a (10 MB/s)
#    scores lowest, idle node-b highest.
for preset in kube-prometheus go-plugin node-uname; do
	scorer "s_${preset//-/_}" "${FALLBACK[@]}" --prometheus-preset "$preset"
done
for preset in kube-prometheus go-plugin node-uname; do
	hp=$(eval echo "\$HP_s_${preset//-/_}")
	wait_for 10 "$preset: three nodes from Prometheus" all_from_prom "$hp"
	echo "ok: $preset: $(curl -s "http://127.0.0.1:$hp/v1/nodes" | jq -c '[.nodes[] | {name, source, rx: .rxBytesPerSecond}]')"
done
H=$HP_s_kube_prometheus
# rate() over a series younger than its range under-reads: wait for it.
near_10m() { local rx; rx=$(rx_of "$H" node-a); [ "$rx" -gt 8000000 ] && [ "$rx" -lt 12000000 ]; }
wait_for 15 "node-a's rate from Prometheus to settle near 10 MB/s (now $(rx_of "$H" node-a))" near_10m
echo "ok: node-a rx $(rx_of "$H" node-a) B/s from Prometheus (the exporter sends 10000000)"
# a (10 MB/s) scores 0, b (idle) 10, c (5 MB/s) in between.
sc=$(scores "$H")
jq -e '.[0] == 0 and .[1] == 10 and .[2] > 0 and .[2] < 10' <<<"$sc" >/dev/null ||
	fail "scores from Prometheus for a (10 MB/s), b (idle), c (5 MB/s): $sc"
echo "ok: scores from Prometheus: $sc"
grep -q 'sum_over_time' "$WORK/s_kube_prometheus.log" && fail "the query uses sum_over_time"

# 2. Agents for node-a and node-b report (their data wins), then die: their
#    scores move to Prometheus within stale-after plus one refresh.
scorer live "${FALLBACK[@]}"
for n in a b; do
	start "agent-$n" "$BIN/netsched-agent" --node "node-$n" --interfaces lo \
		--scorer "tcp://127.0.0.1:$LP_live" --sample-interval 100ms --window 1s \
		--report-interval 200ms
	eval "AGENT_$n=$LAST_PID"
done
from_agents() { [ "$(source_of "$HP_live" node-a)" = agent ] && [ "$(source_of "$HP_live" node-b)" = agent ]; }
wait_for 10 "agent data for node-a and node-b" from_agents
expect "node-c, without an agent, from Prometheus" "$(source_of "$HP_live" node-c)" prometheus
kill "$AGENT_a" "$AGENT_b"
moved() { [ "$(source_of "$HP_live" node-a)" = prometheus ] && [ "$(source_of "$HP_live" node-b)" = prometheus ]; }
wait_for 5 "node-a and node-b to move to Prometheus (stale-after 2s + refresh 1s)" moved
echo "ok: killed agents' nodes served by Prometheus"

# 3. Misbehaving Prometheus: prioritize answers from memory at once (5 s
#    would mean it waited on the 5 s query deadline); failures are counted.
for mode in hang garbage error matrix nan; do
	port=$(free_port)
	start "stub-$mode" "$PY" "$TOOLS/http_stub.py" "$mode" "$port"
	wait_for 5 "the $mode stub" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
	scorer "bad_$mode" --prometheus "http://127.0.0.1:$port" --prometheus-refresh 1s \
		--prometheus-timeout 5s
	hp=$(eval echo "\$HP_bad_$mode")
	sleep 1.5 # let a refresh hang or fail; no assertion depends on the time
	for i in $(seq 10); do
		t=$(curl -s -o /dev/null -w '%{time_total}' -X POST --data-binary "@$WORK/prio.json" \
			"http://127.0.0.1:$hp/prioritize")
		awk -v t="$t" 'BEGIN { exit !(t < 0.5) }' ||
			fail "$mode: prioritize took $t s: the request path waited on Prometheus"
	done
	expect "$mode: neutral scores" "$(scores "$hp")" "[5,5,5]"
	m=$(curl -s "http://127.0.0.1:$hp/metrics")
	case $mode in
	hang) ;; # its one query is still within its 5 s deadline
	nan) # 3 bad values per refresh, none used
		d=$(awk '$1 == "netsched_scorer_prometheus_values_dropped_total" { print $2 }' <<<"$m")
		[ "${d:-0}" -ge 3 ] && [ $((d % 3)) = 0 ] ||
			fail "nan: dropped values counted as '$d', want 3 per refresh" ;;
	*)
		grep -q '^netsched_scorer_prometheus_refreshes_total{result="failed"} [1-9]' <<<"$m" ||
			fail "$mode: failure not counted: $(grep refreshes_total <<<"$m")" ;;
	esac
	kill -0 "$(eval echo "\$PID_bad_$mode")" || fail "$mode: the scorer died"
	echo "ok: Prometheus $mode: prioritize unaffected, neutral scores"
done
grep -q 'query timed out' "$WORK/bad_error.log" || fail "Prometheus's own error is not in the log"

# 4. Prometheus stops: the fallback's data expires and scores go neutral.
kill "$PROM_PID"
wait "$PROM_PID" 2>/dev/null
gone() { [ "$(source_of "$H" node-a)" = absent ] && [ "$(scores "$H")" = "[5,5,5]" ]; }
wait_for 10 "fallback data to expire after Prometheus stopped" gone
echo "ok: Prometheus stopped: neutral scores"
echo "PASS: prometheus"
