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
#   4. Pods: a node with 110 pod interfaces (55 routed: a veth with a /32
#      and a /128; 55 bridged: a port of cni0 with a neighbour and an FDB
#      entry), target at most 20 us of CPU per report and 1 MB of memory
#      for the pods: bench/pods_cost.c (the agent's loop in-process, pods
#      off and on), then the real agent with --pod-interfaces off and auto,
#      its intervals ten times the shipped pace (same ratios).
# Needs root (namespaces). Environment: O, BINDIR, AGENT_SECONDS (10),
# SCRAPES (200).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=${BINDIR:-bin}
TOOL=$O/rel/bench/agent_sample
PODS_TOOL=$O/rel/bench/pods_cost
AGENT_SECONDS=${AGENT_SECONDS:-10}
SCRAPES=${SCRAPES:-200}
P="nsbench$$"
. tests/integration/lib.sh
. bench/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "(agent benchmark skipped: it needs root for network namespaces)"
	exit 0
fi
[ -x "$TOOL" ] && [ -x "$PODS_TOOL" ] || { echo "missing $TOOL or $PODS_TOOL (run: make bench)"; exit 1; }

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

# make_pods_ns NS: a node with eth0 (its peer elsewhere, the measured
# uplink) and 110 pods whose ends are in NS-pods.
make_pods_ns() {
	local ns=$1 i
	ip netns add "$ns" || exit 1
	NETNS+=("$ns")
	ip netns add "$ns-pods" || exit 1
	NETNS+=("$ns-pods")
	ip -n "$ns" link set lo up
	ip link add eth0 netns "$ns" type veth peer name up0 netns "$ns-pods" || exit 1
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link add cni0 type bridge
	ip -n "$ns" link set cni0 up
	{
		for i in $(seq 110); do
			echo "link add veth$i type veth peer name p$i netns $ns-pods"
			echo "link set veth$i up"
			if [ "$i" -le 55 ]; then
				echo "route add 10.244.0.$i/32 dev veth$i"
				echo "route add fd00:244::$i/128 dev veth$i"
			else
				echo "link set veth$i master cni0"
				echo "neigh add 10.244.1.$i lladdr 02:00:00:00:01:$(printf %02x "$i") dev cni0 nud permanent"
			fi
		done
	} | ip -n "$ns" -batch - || exit 1
	for i in $(seq 56 110); do echo "fdb add 02:00:00:00:01:$(printf %02x "$i") dev veth$i master static"; done |
		ip netns exec "$ns" bridge -batch - || exit 1
}

echo
echo "== pods: 110 pod interfaces (55 routed, 55 bridged), what they add per report"
bench_machine
make_pods_ns "$P-pods"
ip netns exec "$P-pods" "$PODS_TOOL" eth0 2000 5
echo "the real agent, sampling every 100 ms, reporting every 200 ms, pods every 3 s, 6 s window"
echo "(the shipped pace ten times over), off and on in turn, $AGENT_SECONDS s each:"
reports=$((AGENT_SECONDS * 5))
sum_off=0 sum_on=0
for round in 1 2 3; do
	for mode in off auto; do
		start "agent-$mode" "$BIN/netsched-agent" --node bench --netns "$P-pods" --interfaces eth0 \
			--pod-interfaces "$mode" --link-speed eth0=10G \
			--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms \
			--report-interval 200ms --pod-interval 3s --window 6s --log-level error
		agent=$LAST_PID
		sleep 7 # a full window, so every window is full
		c0=$(cpu_ns "$agent")
		sleep "$AGENT_SECONDS"
		c1=$(cpu_ns "$agent")
		eval "cpu_$mode=$((c1 - c0)) rss_$mode=$(rss_kb "$agent" VmRSS) anon_$mode=$(rss_kb "$agent" RssAnon)"
		kill "$agent"
		wait "$agent" 2>/dev/null
	done
	sum_off=$((sum_off + cpu_off)) sum_on=$((sum_on + cpu_auto))
	awk -v off="$cpu_off" -v on="$cpu_auto" -v n="$reports" -v r="$round" 'BEGIN {
		printf "round %d: agent CPU per report, all threads: pods off %.1f us, on %.1f us: +%.1f us\n",
			r, off / 1e3 / n, on / 1e3 / n, (on - off) / 1e3 / n }'
done
awk -v off="$sum_off" -v on="$sum_on" -v n="$((reports * 3))" 'BEGIN {
	printf "pods add %.1f us per report to the agent process, mean of 3 rounds (target: at most 20;\n", (on - off) / 1e3 / n
	printf "  it wakes to cold caches, and its reports to a scorer on this machine grow by the pods)\n" }'
echo "agent RSS: pods off $rss_off kB ($anon_off kB private), on $rss_auto kB ($anon_auto kB private): pods add $((rss_auto - rss_off)) kB (target: at most 1024)"
echo "(a 2-core machine shared with other work: figures move with its load; see the load average above)"
