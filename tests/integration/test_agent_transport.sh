#!/usr/bin/env bash
# Every scorer gets every report: two scorers both receive; a stopped
# (SIGSTOP: slow) and then a killed scorer never delays the other; a
# restarted scorer is reconnected; a scorer host name that resolves to
# several addresses (a headless Service) means one connection per address.
set -u
. "$(dirname "$0")/lib.sh"

# scorer NAME ADDR PORT HTTPPORT: a scorer listening for reports on ADDR:PORT.
scorer() {
	start "$1" "$BIN/netsched-scorer" --listen "tcp://$2:$3" --http "127.0.0.1:$4"
	eval "PID_$1=$LAST_PID"
	wait_for 10 "$1 /healthz" curl -sf "http://127.0.0.1:$4/healthz"
}
# age HTTPPORT NODE: seconds since the scorer's last report from NODE, or 99.
age() { curl -s "http://127.0.0.1:$1/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$2\" and .source == \"agent\") | .ageSeconds][0] // 99"; }
fresh() { awk -v a="$(age "$1" "$2")" 'BEGIN { exit !(a < 1.0) }'; }

L1=$(free_port) H1=$(free_port) L2=$(free_port) H2=$(free_port) M=$(free_port)
scorer s1 127.0.0.1 "$L1" "$H1"
scorer s2 127.0.0.1 "$L2" "$H2"
start agent "$BIN/netsched-agent" --node node-t --interfaces lo --sample-interval 100ms \
	--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$L1" \
	--scorer "tcp://127.0.0.1:$L2" --metrics "127.0.0.1:$M"
wait_for 10 "reports at scorer 1" fresh "$H1" node-t
wait_for 10 "reports at scorer 2" fresh "$H2" node-t
echo "ok: both scorers receive"

# Scorer 2 stops answering (SIGSTOP: its socket stays open, nothing is read).
kill -STOP "$PID_s2"
for i in $(seq 15); do
	fresh "$H1" node-t || fail "scorer 1 went stale ($(age "$H1" node-t) s) while scorer 2 was stopped"
	sleep 0.2
done
echo "ok: a stopped scorer does not delay the other (3 s watched)"
kill -KILL "$PID_s2"
wait "$PID_s2" 2>/dev/null
for i in $(seq 10); do
	fresh "$H1" node-t || fail "scorer 1 went stale ($(age "$H1" node-t) s) after scorer 2 died"
	sleep 0.2
done
echo "ok: a killed scorer does not delay the other"

# The agent's /metrics says the same: scorer 2's reports fail, scorer 1's go.
metric() { curl -s "http://127.0.0.1:$M/metrics" | awk -v k="$1{scorer=\"tcp://127.0.0.1:$2\"}" '$1 == k { print $2 }'; }
failing() { [ "$(metric netsched_agent_reports_failed_total "$L2")" -gt 0 ]; }
wait_for 5 "the agent's /metrics to count failures to the dead scorer" failing
[ "$(metric netsched_agent_reports_sent_total "$L1")" -gt 10 ] ||
	fail "reports_sent_total to scorer 1 is $(metric netsched_agent_reports_sent_total "$L1")"
[ "$(metric netsched_agent_reports_failed_total "$L1")" = 0 ] ||
	fail "reports to scorer 1 failed: $(metric netsched_agent_reports_failed_total "$L1")"
curl -s "http://127.0.0.1:$M/metrics" >"$WORK/agent-metrics.txt"
grep -q '^netsched_agent_receive_bytes_per_second{interface="lo"} ' "$WORK/agent-metrics.txt" ||
	fail "no per-interface rate in the agent's /metrics"
if command -v promtool >/dev/null; then
	promtool check metrics <"$WORK/agent-metrics.txt" || fail "promtool rejects the agent's /metrics"
fi
expect "agent /healthz" "$(curl -s "http://127.0.0.1:$M/healthz")" ok
echo "ok: the agent's /metrics counts sent and failed reports per scorer"
scorer s2b 127.0.0.1 "$L2" "$H2"
wait_for 10 "reports at the restarted scorer 2" fresh "$H2" node-t
echo "ok: a restarted scorer gets reports again"

# A name with two addresses, as a headless Service's DNS name has: both get
# reports. The agent sees our own /etc/hosts in a private mount namespace.
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: the headless-name case needs root (a private mount namespace)"
	echo "PASS: agent transport"
	exit 0
fi
L3=$(free_port) H3=$(free_port) H4=$(free_port)
scorer s3 127.0.0.1 "$L3" "$H3"
scorer s4 127.0.0.2 "$L3" "$H4"
printf '127.0.0.1 localhost\n127.0.0.1 scorers.netsched.test\n127.0.0.2 scorers.netsched.test\n' >"$WORK/hosts"
start agent-dns unshare --mount --propagation private sh -c \
	'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$WORK/hosts" \
	"$BIN/netsched-agent" --node node-h --interfaces lo --sample-interval 100ms --window 1s \
	--report-interval 200ms --scorer "tcp://scorers.netsched.test:$L3"
wait_for 10 "reports at 127.0.0.1 via the name" fresh "$H3" node-h
wait_for 10 "reports at 127.0.0.2 via the name" fresh "$H4" node-h
grep -q "scorer tcp://127.0.0.2:$L3: sending reports" "$WORK/agent-dns.log" ||
	fail "the agent did not log its connection to 127.0.0.2"
echo "ok: a name with two addresses gets one connection per address"
echo "PASS: agent transport"
