#!/usr/bin/env bash
# Replays and forged sequence numbers against the real binaries (issue 14,
# item 10), with netsched-forge as the attacker on loopback:
#  (a) a signed report captured before the scorer restarted is refused
#      after the restart (it was accepted for up to 5 minutes);
#  (b) an earlier agent instance's signed report, sent again after the
#      agent restarted, is refused as outdated (it flipped the node back);
#  (c) without a key, the victim's instance id with sequence 2^64 - 1 no
#      longer freezes the node: the agent's next reports take it back;
#  (d) (issue 24) a scorer 200 s ahead of an agent (the real agent, the
#      scorer's clock moved by faketime) takes its signed reports within a
#      couple of reports of its start, not 200 s later, and /metrics shows
#      the node's clock skew; while (a) still holds: a captured report sent
#      to the new process is held, then refused when sent again.
# A forged rate of 300 GB/s is one loopback never shows.
set -u
. "$(dirname "$0")/lib.sh"

FORGE=${FORGE:-${O:-build}/rel/bench/forge}
[ -x "$FORGE" ] || fail "forge tool not found at $FORGE (make unit-build builds it)"
command -v faketime >/dev/null || fail "faketime not installed (run .ci/deps test)"
K1=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
echo "$K1" >"$WORK/report.key"
chmod 600 "$WORK/report.key"
HUGE=300000000000

rx_of() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$1\") | .rxBytesPerSecond][0] // \"absent\""; }
counted() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v k="netsched_scorer_reports_total{result=\"$1\"}" '$1 == k { print $2 }'; }
some() { [ "$(counted "$1")" -gt 0 ] 2>/dev/null; }
rx_is() { [ "$(rx_of "$1")" = "$2" ]; }
rx_real() { local v; v=$(rx_of "$1"); [ "$v" != absent ] && [ "$v" != "$HUGE" ]; }
agent() { # NAME [ARGS]: an agent for node NAME measuring lo, every 200 ms
	local n=$1
	shift
	start "agent-$n" "$BIN/netsched-agent" --node "$n" --interfaces lo --sample-interval 100ms \
		--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$LISTEN_PORT" "$@"
	AGENT_PID=$LAST_PID
}
forge() { "$FORGE" --scorer "tcp://127.0.0.1:$LISTEN_PORT" "$@" >>"$WORK/forge.log" 2>&1 ||
	fail "forge $*: $(tail -1 "$WORK/forge.log")"; }

# --- signed: (b) an earlier instance's report after the agent restarted.
start_scorer --key-file "$WORK/report.key"
SCORER_PID=$LAST_PID
# The "old agent": instance 1 reported 300 GB/s; the attacker kept the bytes.
forge --node n1 --instance 1 --seq 40 --rx "$HUGE" --key-file "$WORK/report.key" \
	--save "$WORK/captured.bin"
wait_for 5 "the old instance's report to be taken" rx_is n1 "$HUGE"
# The agent restarts (a new instance id) and reports.
agent n1 --key-file "$WORK/report.key"
wait_for 10 "the new instance's reports to replace the old one's" rx_real n1
kill -STOP "$AGENT_PID"
forge --replay "$WORK/captured.bin"
wait_for 5 "the replay to be counted as outdated" some outdated
expect "(b) node n1 after the old instance's report is replayed" "$(rx_real n1 && echo real)" real
grep -q "n1: report 40 of instance 0000000000000001 ends before the node's latest window" \
	"$WORK/scorer.log" || fail "no log line naming the outdated report"
kill -CONT "$AGENT_PID"
kill "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
echo "ok: (b) outdated $(counted outdated), accepted $(counted accepted)"

# --- signed: (a) the scorer restarts; the captured report, seconds old, is
# sent to the new process.
kill "$SCORER_PID"
wait "$SCORER_PID" 2>/dev/null
mv "$WORK/scorer.log" "$WORK/scorer-before-restart.log"
start_scorer --key-file "$WORK/report.key"
# It ends before this scorer started: a replay, or an agent whose clock is
# behind. Held, never applied; the same report again is a replay.
forge --replay "$WORK/captured.bin"
wait_for 5 "the replay after the restart to be held" some unconfirmed
expect "(a) node n1 after the restart and the replay" "$(rx_of n1)" absent
forge --replay "$WORK/captured.bin"
wait_for 5 "the replay sent again to be counted" some replayed
expect "(a) node n1 after the replay sent twice" "$(rx_of n1)" absent
grep -q "n1: signed report 40 ends [0-9]* ms before this scorer started" "$WORK/scorer.log" ||
	fail "no log line naming the replay"
echo "ok: (a) held $(counted unconfirmed), replayed $(counted replayed)"

# --- signed: (d) the scorer's clock 200 s ahead of the agent's, from its start.
kill "$LAST_PID"
wait "$LAST_PID" 2>/dev/null
mv "$WORK/scorer.log" "$WORK/scorer-before-skew.log"
LISTEN_PORT=$(free_port)
HTTP_PORT=$(free_port)
# libfaketime preloaded by env, which execs the scorer: the pid we stop is
# the scorer's. faketime(1) would fork it, and stopping faketime left the
# scorer running (its timed waits, shifted by libfaketime, spin a core).
LIBFAKETIME=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
[ -n "$LIBFAKETIME" ] || fail "libfaketime.so.1 not found (run .ci/deps test)"
start scorer env LD_PRELOAD="$LIBFAKETIME" FAKETIME=+200s FAKETIME_DONT_FAKE_MONOTONIC=1 "$BIN/netsched-scorer" \
	--listen "tcp://127.0.0.1:$LISTEN_PORT" --http "127.0.0.1:$HTTP_PORT" --key-file "$WORK/report.key"
SKEWED=$LAST_PID
wait_for 10 "the skewed scorer's /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
agent behind --key-file "$WORK/report.key"
t0=$(date +%s%N)
wait_for 10 "the reports of an agent 200 s behind the scorer" rx_real behind
ms=$((($(date +%s%N) - t0) / 1000000))
skew=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
	awk '$1 == "netsched_scorer_node_clock_skew_seconds{node=\"behind\"}" { print int($2) }')
[ -n "$skew" ] && [ "$skew" -ge 195 ] && [ "$skew" -le 205 ] ||
	fail "(d) netsched_scorer_node_clock_skew_seconds for the agent: '$skew', want about 200"
grep -q "behind: instance [0-9a-f]*'s clock is about 20[0-9] s behind ours" "$WORK/scorer.log" ||
	fail "(d) no log line saying the agent's clock is behind"
echo "ok: (d) an agent 200 s behind: its reports taken $ms ms after it started, skew $skew s in /metrics, $(counted unconfirmed) held first"
kill "$AGENT_PID" "$SKEWED"
wait "$AGENT_PID" "$SKEWED" 2>/dev/null

# --- unsigned: (c) the victim's instance id with sequence 2^64 - 1.
start_scorer
agent victim
wait_for 10 "the victim's reports" rx_real victim
instance=$(sed -n 's/.*victim: sampling.* as instance \([0-9a-f]*\).*/\1/p' "$WORK/agent-victim.log")
[ -n "$instance" ] || fail "no instance id in the agent's log"
for ahead in 0 240000; do
	# The agent is paused while the forgery lands, so the test sees it land.
	kill -STOP "$AGENT_PID"
	forge --node victim --instance "0x$instance" --seq 18446744073709551615 --rx "$HUGE" \
		--end-offset-ms "$ahead"
	wait_for 5 "the forged report to be taken (window $ahead ms ahead)" rx_is victim "$HUGE"
	kill -CONT "$AGENT_PID"
	# Within a few report intervals the agent has the node back (the old
	# code kept 300 GB/s until the agent restarted).
	wait_for 5 "the agent's reports to take the node back (window $ahead ms ahead)" rx_real victim
	sleep 1
	expect "(c) victim, a second later (window $ahead ms ahead)" "$(rx_real victim && echo real)" real
done
echo "PASS: replay"
