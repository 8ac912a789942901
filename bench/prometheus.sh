#!/usr/bin/env bash
# The Go plugin's method against netsched's, at NODES (100) simulated nodes
# behind a real Prometheus on loopback (bench/prom_vs_plugin.c).
# Environment: O, BINDIR, NODES (100), DECISIONS (20).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
NODES=${NODES:-100}
DECISIONS=${DECISIONS:-20}
TOOL=$O/rel/bench/prom_vs_plugin
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK
[ -x "$TOOL" ] || { echo "missing $TOOL (run: make bench)"; exit 1; }
exp=$(free_port) prom=$(free_port)

for i in $(seq 0 $((NODES - 1))); do echo "node-$i $((i * 10000)) 0"; done >"$tmp/rates"
python3 tests/tools/node_exporter_sim.py "$exp" "$tmp/rates" & PIDS+=($!)
{
	echo "global: {scrape_interval: 1s}"
	echo "scrape_configs:"
	echo "- job_name: sim"
	echo "  static_configs:"
	for i in $(seq 0 $((NODES - 1))); do
		echo "  - {targets: ['127.0.0.1:$exp'], labels: {node: node-$i}}"
	done
	echo "  relabel_configs:"
	echo "  - {source_labels: [node], target_label: __metrics_path__, replacement: '/metrics/\$1'}"
	echo "  - {source_labels: [node], target_label: instance}"
	echo "  - {source_labels: [node], target_label: kubernetes_node}"
} >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom" --log.level=error & PIDS+=($!)
start_scorer --prometheus "http://127.0.0.1:$prom" --prometheus-refresh 1s --prometheus-range 4s \
	--prometheus-device eth0 --log-level error
hp=$HTTP_PORT
echo "== Prometheus fallback: the Go plugin's method beside netsched, $NODES nodes"
bench_machine
for _ in $(seq 300); do
	n=$(curl -s "http://127.0.0.1:$hp/v1/nodes" | jq '[.nodes[] | select(.source == "prometheus")] | length' 2>/dev/null)
	[ "${n:-0}" = "$NODES" ] && break
	sleep 0.1
done
[ "${n:-0}" = "$NODES" ] || { echo "the scorer has $n of $NODES nodes from Prometheus"; exit 1; }
"$TOOL" "http://127.0.0.1:$prom" "http://127.0.0.1:$hp" "$NODES" "$DECISIONS"
