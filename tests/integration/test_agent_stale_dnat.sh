#!/usr/bin/env bash
# A scorer replaced behind a Service address, as a rolling update does it
# through kube-proxy: the agent dials the Service address, which a DNAT rule
# in its namespace sends to scorer A. A stops: its connection ends, and the
# agent dials again at once, but the rule still names A (kube-proxy has not
# caught up) and A answers no SYN (a terminating pod, a namespace gone). Then
# the rule names scorer B. The kernel keeps sending that dial's SYNs to A
# (its conntrack entry says so) for two minutes; the agent must reach B within
# a few reports anyway: after SENDER_STUCK_SENDS reports refused it opens the
# connection anew, a new dial that the rule now sends to B.
set -u
. "$(dirname "$0")/lib.sh"
need_root "the stale DNAT case"
command -v iptables >/dev/null || { echo "SKIP: iptables is not installed"; exit 77; }

P="sd$$"
make_nodes "$P-hub" "$P-agent" "$P-scorers"
ip netns exec "$P-hub" sysctl -qw net.ipv4.ip_forward=1
ip -n "$P-agent" route add default via 10.231.1.1
ip -n "$P-scorers" route add default via 10.231.2.1
ip -n "$P-scorers" addr add 10.231.2.3/24 dev eth0
A=10.231.2.2 B=10.231.2.3 SVC=10.96.0.10

# scorer NAME ADDR HTTPPORT: a scorer in the scorers' namespace, reports on ADDR:7470.
scorer() {
	start "$1" ip netns exec "$P-scorers" "$BIN/netsched-scorer" --listen "tcp://$2:7470" \
		--http "127.0.0.1:$3"
	eval "PID_$1=$LAST_PID"
	wait_for 10 "$1 /healthz" ip netns exec "$P-scorers" curl -sf "http://127.0.0.1:$3/healthz"
}
# fresh HTTPPORT: the scorer there has a report from node-d under 1 s old.
fresh() {
	local a
	a=$(ip netns exec "$P-scorers" curl -s "http://127.0.0.1:$1/v1/nodes" |
		jq -r '[.nodes[] | select(.name == "node-d" and .source == "agent") | .ageSeconds][0] // 99')
	awk -v a="$a" 'BEGIN { exit !(a < 1.0) }'
}
# stuck_on ADDR: a dial from the agent's namespace to the Service address,
# sent to ADDR, not answered (conntrack: SYN_SENT).
stuck_on() { ip netns exec "$P-agent" cat /proc/net/nf_conntrack | grep 'SYN_SENT' | grep "dst=$SVC " | grep -q "src=$1 "; }
H_A=$(free_port) H_B=$(free_port)
scorer a "$A" "$H_A"
scorer b "$B" "$H_B"
ip netns exec "$P-agent" iptables -t nat -A OUTPUT -d "$SVC/32" -p tcp --dport 7470 -j DNAT --to-destination "$A:7470" ||
	fail "cannot add the Service's DNAT rule"
start agent ip netns exec "$P-agent" "$BIN/netsched-agent" --node node-d --interfaces lo \
	--sample-interval 100ms --window 1s --report-interval 200ms --scorer "tcp://$SVC:7470"
wait_for 10 "reports at scorer A through the Service address" fresh "$H_A"
echo "ok: the agent reports to A through the Service address"

# A terminates: no SYN to it is answered any more, and its connection ends.
ip netns exec "$P-scorers" iptables -A INPUT -d "$A/32" -p tcp --dport 7470 --syn -j DROP ||
	fail "cannot drop SYNs to A"
kill "$PID_a"
wait_for 20 "the agent's new dial to sit unanswered on A" stuck_on "$A"
echo "ok: A stopped; the agent dialled again and the rule still sent it to A: unanswered"
# kube-proxy catches up: the Service address now means B.
ip netns exec "$P-agent" iptables -t nat -R OUTPUT 1 -d "$SVC/32" -p tcp --dport 7470 -j DNAT \
	--to-destination "$B:7470" || fail "cannot point the Service's rule at B"
switched=$(date +%s%N)
stuck_on "$A" || fail "no dial left on A after the switch: the case is not the one meant"
wait_for 30 "reports at scorer B" fresh "$H_B"
took=$((($(date +%s%N) - switched) / 1000000))
grep -q "not taken: opening the connection anew" "$WORK/agent.log" ||
	fail "B got reports without the agent opening its connection anew: $(tail -n 5 "$WORK/agent.log")"
echo "ok: the agent reached B $took ms after the rule named it (its first dial's SYNs still went to A: the kernel retries them for two minutes)"
echo "PASS: agent stale DNAT"
