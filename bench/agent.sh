#!/usr/bin/env bash
# The agent's cost, side by side with Debian's prometheus-node-exporter doing
# the same job (the same interfaces' counters), in one run on this machine.
#   1. CPU per sample of the sampler (bench/agent_sample.c), netlink and
#      sysfs, in a namespace with 4 links (all measured) and one with 200
#      links (veth pairs, as a node full of pods has; 8 measured).
#   2. The real agent in the 200-link namespace: CPU per sample and resident
#      memory after AGENT_SECONDS of sampling every 100 ms with a scorer.
#   3. node_exporter (netdev collector only) in the same namespace: CPU per
#      scrape over SCRAPES scrapes, and resident memory.
# Needs root (namespaces). Environment: O, BINDIR, AGENT_SECONDS (10),
# SCRAPES (200).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
TOOL=$O/rel/bench/agent_sample
AGENT_SECONDS=${AGENT_SECONDS:-10}
SCRAPES=${SCRAPES:-200}
P="nsbench$$"
. tests/integration/lib.sh
. bench/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "(agent benchmark skipped: it needs root for network namespaces)"
	exit 0
fi
[ -x "$TOOL" ] || { echo "missing $TOOL (run: make bench)"; exit 1; }

# make_ns NAME PAIRS: a namespace with lo and PAIRS veth pairs (2 x PAIRS + 1 links).
make_ns() {
	ip netns add "$1" || exit 1
	NETNS+=("$1")
	ip -n "$1" link set lo up
	for i in $(seq 0 $(($2 - 1))); do echo "link add v${i}a type veth peer name v${i}b"; done |
		ip -n "$1" -batch - || exit 1
	for i in $(seq 0 $(($2 - 1))); do echo "link set v${i}a up"; echo "link set v${i}b up"; done |
		ip -n "$1" -batch - || exit 1
}
# CPU time of every thread of a process, in ns (schedstat's first field).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { printf "%d", t }'; }
rss_kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

echo "== agent: CPU per sample (sampler only, 20000 samples)"
bench_machine
make_ns "$P-4" 2     # lo + 2 veth pairs = 5 links; 4 measured
make_ns "$P-200" 100 # lo + 100 veth pairs = 201 links; 8 measured
eight=v0a,v0b,v1a,v1b,v2a,v2b,v3a,v3b
for src in netlink sysfs; do
	ip netns exec "$P-4" "$TOOL" "$src" v0a,v0b,v1a,v1b 20000
	ip netns exec "$P-200" "$TOOL" "$src" "$eight" 20000
done

echo
echo "== agent process: $AGENT_SECONDS s sampling 8 of 201 links every 100 ms, reporting every 1 s"
start_scorer --log-level error
start agent "$BIN/netsched-agent" --node bench --netns "$P-200" --interfaces "$eight" \
	--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms --report-interval 1s \
	--window 60s --log-level error
agent=$LAST_PID
sleep 1
c0=$(cpu_ns "$agent")
sleep "$AGENT_SECONDS"
c1=$(cpu_ns "$agent")
samples=$((AGENT_SECONDS * 10))
awk -v t=$((c1 - c0)) -v n="$samples" \
	'BEGIN { printf "agent CPU: %.1f us per sample over %d samples, all threads, reports included\n", t / 1e3 / n, n }'
echo "agent RSS: $(rss_kb "$agent" VmRSS) kB resident, of which $(rss_kb "$agent" RssAnon) kB private (anonymous); the rest is shared library pages"

echo
echo "== prometheus-node-exporter $(prometheus-node-exporter --version 2>&1 | sed -n '1s/.*version \([^ ]*\).*/\1/p'): netdev collector only, same namespace"
ip netns exec "$P-200" prometheus-node-exporter --web.listen-address=127.0.0.1:9100 \
	--collector.disable-defaults --collector.netdev >/dev/null 2>&1 &
ne=$!
PIDS+=("$ne")
for _ in $(seq 50); do
	ip netns exec "$P-200" curl -sf -o /dev/null http://127.0.0.1:9100/metrics && break
	sleep 0.1
done
c0=$(cpu_ns "$ne")
ip netns exec "$P-200" bash -c "for i in \$(seq $SCRAPES); do curl -s -o /dev/null http://127.0.0.1:9100/metrics; done"
c1=$(cpu_ns "$ne")
awk -v t=$((c1 - c0)) -v n="$SCRAPES" \
	'BEGIN { printf "node_exporter CPU: %.1f us per scrape over %d scrapes, all threads\n", t / 1e3 / n, n }'
echo "node_exporter RSS: $(rss_kb "$ne" VmRSS) kB resident, $(rss_kb "$ne" RssAnon) kB private (anonymous)"
