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

# Per-node keys (issue 39: with the shared key, one node's agent spoke as 9 other
# nodes and was believed). The scorer holds a master; each node gets its own key,
# derived for its name; the shared key still works during a migration, flagged.
FORGE=${FORGE:-${O:-build}/rel/bench/forge}
[ -x "$FORGE" ] || fail "forge tool not found at $FORGE (make unit-build builds it)"
M1=8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677
printf 'master %s\n%s\n' "$M1" "$K1" >"$WORK/masters.key"
chmod 600 "$WORK/masters.key"
"$BIN/netsched-scorer" --key-file "$WORK/masters.key" --derive-node-key node-a >"$WORK/node-a.key" ||
	fail "--derive-node-key node-a failed"
grep -qx "node node-a" "$WORK/node-a.key" || fail "node-a's key file does not name node-a: $(cat "$WORK/node-a.key")"
grep -q "$M1" "$WORK/node-a.key" && fail "node-a's key file holds the master"
echo "ok: --derive-node-key wrote node-a's own key file"
LP2=$(free_port) HP2=$(free_port)
start scorer2 "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LP2" --http "127.0.0.1:$HP2" \
	--key-file "$WORK/masters.key"
wait_for 10 "the second scorer's /healthz" curl -sf "http://127.0.0.1:$HP2/healthz"
grep -q "holds 1 shared report key(s): a node holding one can report as any other node" \
	"$WORK/scorer2.log" || fail "the shared key is not flagged in the log"
agent2() { # NAME [ARGS]: an agent for node NAME reporting to the second scorer
	local n=$1
	shift
	start "agent2-$n" "$BIN/netsched-agent" --node "$n" --interfaces lo --sample-interval 100ms \
		--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$LP2" "$@"
}
source2() { curl -s "http://127.0.0.1:$HP2/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$1\") | .source][0] // \"absent\""; }
counted2() { curl -s "http://127.0.0.1:$HP2/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
agent2 node-a --key-file "$WORK/node-a.key"
agent2 old-node --key-file "$WORK/good.key"
node_a_in() { [ "$(source2 node-a)" = agent ]; }
wait_for 10 "node-a, signing with its own key" node_a_in
grep -q "signing reports with its own key" "$WORK/agent2-node-a.log" || fail "node-a does not say it signs with its own key"
old_in() { [ "$(source2 old-node)" = agent ] && [ "$(counted2 netsched_scorer_reports_shared_key_total)" -gt 0 ]; }
wait_for 10 "the shared key's node, counted as weaker" old_in
echo "ok: node-a's own key and (flagged) the shared key are both accepted"
# node-a's key, claiming 9 other nodes (the forger signs as the key's node).
for i in 1 2 3 4 5 6 7 8 9; do
	"$FORGE" --scorer "tcp://127.0.0.1:$LP2" --node "node-$i" --key-file "$WORK/node-a.key" \
		>>"$WORK/forge.log" 2>&1 || fail "forge: $(tail -1 "$WORK/forge.log")"
done
impersonated() { [ "$(counted2 'netsched_scorer_reports_total{result="impersonated"}')" = 9 ]; }
wait_for 5 "9 reports with node-a's key for other nodes to be refused and counted" impersonated
for i in 1 2 3 4 5 6 7 8 9; do
	expect "node-$i, claimed with node-a's key" "$(source2 "node-$i")" absent
done
grep -q "report for node node-[1-9] signed with node node-a's own key: a node may report only for itself" \
	"$WORK/scorer2.log" || fail "no log line naming both nodes"
expect "node-a still reporting" "$(source2 node-a)" agent
# The agent itself refuses another node's key, and the master (the scorer's file).
out=$("$BIN/netsched-agent" --node node-b --key-file "$WORK/node-a.key" --interfaces lo --once 2>&1)
expect "an agent for node-b with node-a's key: exit status" "$?" 2
grep -q "is node node-a's own key; this agent reports as node-b" <<<"$out" || fail "unclear: $out"
printf 'master %s\n' "$M1" >"$WORK/master-only.key"
out=$("$BIN/netsched-agent" --node node-a --key-file "$WORK/master-only.key" --interfaces lo --once 2>&1)
expect "an agent given the master: exit status" "$?" 2
grep -q "holds only master keys" <<<"$out" || fail "unclear: $out"
out=$("$BIN/netsched-scorer" --key-file "$WORK/node-a.key" --check-config 2>&1)
expect "a scorer given a node's key file: exit status" "$?" 2
echo "ok: node keys in the wrong place are refused at start-up ($out)"
echo "PASS: signing"
