#!/usr/bin/env bash
# A scorer without a key says at start that anyone can steer it. Signals an
# operator or a supervisor sends: SIGHUP is logged and survived
# by both binaries (its default action would end them without a word);
# SIGTERM stops each cleanly with exit status 0.
set -u
. "$(dirname "$0")/lib.sh"

start_scorer
SCORER_PID=$LAST_PID
start agent "$BIN/netsched-agent" --node node-sig --interfaces lo \
	--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms --window 1s \
	--report-interval 200ms
AGENT_PID=$LAST_PID
wait_for 10 "the agent's first report" \
	bash -c "curl -s http://127.0.0.1:$HTTP_PORT/v1/nodes | grep -q node-sig"

grep -q "no --key-file: reports are not authenticated" "$WORK/scorer.log" ||
	fail "a scorer without a key does not warn that reports are unauthenticated"
echo "ok: a scorer without a key warns that reports are unauthenticated"

kill -HUP "$SCORER_PID" "$AGENT_PID"
wait_for 5 "the scorer to log SIGHUP" grep -q "Hangup: ignored" "$WORK/scorer.log"
wait_for 5 "the agent to log SIGHUP" grep -q "SIGHUP: checking the key file" "$WORK/agent.log"
kill -0 "$SCORER_PID" 2>/dev/null || fail "the scorer died of SIGHUP"
kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died of SIGHUP"
expect "scorer answers after SIGHUP" "$(curl -s -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$HTTP_PORT/healthz")" 200
echo "ok: both binaries log SIGHUP and carry on"

kill -TERM "$AGENT_PID" "$SCORER_PID"
wait "$AGENT_PID"
expect "agent exit status after SIGTERM" "$?" 0
wait "$SCORER_PID"
expect "scorer exit status after SIGTERM" "$?" 0
grep -q "stopping" "$WORK/scorer.log" || fail "the scorer did not say it stops"
