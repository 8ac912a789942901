#!/usr/bin/env bash
# Signed reports on the real binaries: with --key-file the scorer takes
# only reports signed with one of its keys; unsigned and forged ones are
# dropped and counted; a key rotated into the scorer's file (a Secret
# update) is picked up without a restart.
set -u
. "$(dirname "$0")/lib.sh"

K1=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
K2=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
echo "$K1" >"$WORK/scorer.key"
echo "$K1" >"$WORK/good.key"
echo "$K2" >"$WORK/new.key"
chmod 600 "$WORK"/*.key

start_scorer --key-file "$WORK/scorer.key"
agent() { # NAME [ARGS]: an agent for node NAME measuring lo
	local n=$1
	shift
	start "agent-$n" "$BIN/netsched-agent" --node "$n" --interfaces lo --sample-interval 100ms \
		--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$LISTEN_PORT" "$@"
}
agent signed --key-file "$WORK/good.key"
agent unsigned
agent newkey --key-file "$WORK/new.key"
source_of() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$1\") | .source][0] // \"absent\""; }
counted() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v k="netsched_scorer_reports_total{result=\"$1\"}" '$1 == k { print $2 }'; }
some() { [ "$(counted "$1")" -gt 0 ]; }

wait_for 10 "the signed agent's node" bash -c "[ \"\$(curl -s http://127.0.0.1:$HTTP_PORT/v1/nodes | jq -r '.nodes[] | select(.name == \"signed\") | .source')\" = agent ]"
wait_for 5 "unsigned reports to be counted" some unsigned
wait_for 5 "reports under an unknown key to be counted as forged" some forged
expect "unsigned agent's node never reaches the table" "$(source_of unsigned)" absent
expect "unknown key's node never reaches the table" "$(source_of newkey)" absent
# Rejections are logged at most once a second, so the lines take turns.
wait_for 5 "a log line for the unsigned reports" grep -q "unsigned report" "$WORK/scorer.log"
wait_for 5 "a log line for the unknown key" grep -q "signed with unknown key" "$WORK/scorer.log"
echo "ok: unsigned $(counted unsigned), forged $(counted forged), accepted $(counted accepted)"

# Rotation: the new key is added to the scorer's Secret; within the reload
# check (5 s) its agent's reports are accepted, the old key still works.
printf '%s\n%s\n' "$K2" "$K1" >"$WORK/scorer.key.new"
mv "$WORK/scorer.key.new" "$WORK/scorer.key"
newkey_in() { [ "$(source_of newkey)" = agent ]; }
wait_for 10 "the rotated-in key to be accepted" newkey_in
grep -q "key file .* reloaded: 2 key(s)" "$WORK/scorer.log" || fail "no reload line in the log"
expect "the old key still accepted during rotation" "$(source_of signed)" agent

# A bad key file at start-up is a clear exit 2 that never echoes the key.
echo "${K1:0:20}" >"$WORK/short.key"
out=$("$BIN/netsched-scorer" --key-file "$WORK/short.key" --check-config 2>&1)
rc=$?
expect "a short key: exit status" "$rc" 2
grep -q "32 to 64 bytes" <<<"$out" || fail "unclear error for a short key: $out"
grep -q "${K1:0:20}" <<<"$out" && fail "the error echoes the key: $out"
out=$("$BIN/netsched-agent" --key-file "$WORK/missing.key" --interfaces lo --once 2>&1)
expect "a missing key file: exit status" "$?" 2
echo "ok: bad key files refused at start-up ($out)"
echo "PASS: signing"
