#!/usr/bin/env bash
# The agent on its own, on real kernel counters: what it reports equals what
# the kernel counted, to the byte; bad command lines exit 2 naming the
# option; a scorer that starts late still gets reports; SIGTERM stops it
# cleanly.
set -u
. "$(dirname "$0")/lib.sh"

# Bad command lines: exit 2 and one line that names the option.
bad() {
	local want=$1 out rc
	shift
	out=$("$BIN/netsched-agent" "$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] || fail "netsched-agent $*: exit $rc, want 2 ($out)"
	grep -q -- "$want" <<<"$out" || fail "netsched-agent $*: '$out' does not name $want"
	echo "ok: rejects $* ($out)"
}
bad --interfaces --interfaces 'a/b' --once
bad --interfaces --interfaces 'eth0,eth0' --once
bad --interfaces --interfaces 'averyveryverylongname' --once
bad --scorer --interfaces eth0
bad --scorer --interfaces eth0 --scorer http://x:1
bad --window --interfaces eth0 --once --window 500ms --sample-interval 1s
bad --window --interfaces eth0 --once --window 2h --sample-interval 100ms
bad --link-speed --interfaces eth0 --once --link-speed eth0=fast
bad --sample-interval --interfaces eth0 --once --sample-interval 1
bad --bogus --interfaces eth0 --once --bogus
echo 'interfaces: [eth0' >"$WORK/bad.yaml"
bad bad.yaml --config "$WORK/bad.yaml" --once
printf 'interfaces: eth0\nwindw: 5s\n' >"$WORK/typo.yaml"
bad windw --config "$WORK/typo.yaml" --once
printf 'interfaces: eth0\nnode: from-file\nscorer: [tcp://a:7470, tcp://b:7470]\n' >"$WORK/good.yaml"
out=$("$BIN/netsched-agent" --config "$WORK/good.yaml" --check-config) ||
	fail "a valid config file was refused: $out"
expect "a valid config file" "$out" "configuration OK"

need_root "the rest of test_agent"
P="nsa$$"
make_nodes "$P-hub" "$P-n"

# Byte-exact: the only traffic on the link is what we send while the agent's
# one interval runs, so its delta must equal the kernel's own before/after.
# The pings go out after the agent's first reading; if they have not ended
# by its second (a loaded machine can start a process seconds late), the
# run says nothing and is made again with a longer interval.
ip netns exec "$P-hub" ping -c 1 -W 1 10.231.1.2 >/dev/null || fail "no connectivity in $P"
counters() { ip -n "$P-n" -s -j link show eth0 | jq -r '.[0].stats64 | "\(.rx.bytes) \(.tx.bytes)"'; }
for interval in 2 8 30; do
	read -r rx0 tx0 <<<"$(counters)"
	"$BIN/netsched-agent" --node node-x --netns "$P-n" --interfaces eth0 --once \
		--sample-interval "${interval}s" >"$WORK/once.json" 2>"$WORK/once.log" &
	once=$!
	once_reading "$WORK/once.log"
	ip netns exec "$P-hub" ping -c 20 -i 0.01 -s 1000 -q 10.231.1.2 >/dev/null || fail "ping failed"
	pinged_ms=$(date +%s%3N)
	wait "$once" || fail "--once exited $?"
	read -r rx1 tx1 <<<"$(counters)"
	jq -e . "$WORK/once.json" >/dev/null || fail "--once printed no JSON: $(cat "$WORK/once.json")"
	[ "$pinged_ms" -lt "$(jq .windowEndUnixMs "$WORK/once.json")" ] && break
	echo "the pings ended after the agent's ${interval} s interval: again with a longer one"
done
[ "$pinged_ms" -lt "$(jq .windowEndUnixMs "$WORK/once.json")" ] ||
	fail "the pings never ended inside the agent's interval (30 s the last time)"
got_rx=$(jq '.interfaces[0].rxBytes' "$WORK/once.json")
got_tx=$(jq '.interfaces[0].txBytes' "$WORK/once.json")
expect "node name" "$(jq -r .node "$WORK/once.json")" node-x
expect "rx bytes equal the kernel's count" "$got_rx" $((rx1 - rx0))
expect "tx bytes equal the kernel's count" "$got_tx" $((tx1 - tx0))
[ "$got_rx" -ge $((20 * 1028)) ] || fail "rx $got_rx B is less than 20 pings of 1028 B"
expect "one sample present" "$(jq '.interfaces[0].samples' "$WORK/once.json")" 1

# No scorer yet: the agent keeps sampling; once one starts, reports arrive.
LISTEN_PORT=$(free_port)
start agent "$BIN/netsched-agent" --node node-late --netns "$P-n" --interfaces eth0 \
	--scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 100ms --window 1s \
	--report-interval 200ms
AGENT=$LAST_PID
sleep 0.5
kill -0 "$AGENT" || fail "the agent died without a scorer"
HTTP_PORT=$(free_port)
start scorer "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
	--http "127.0.0.1:$HTTP_PORT"
known() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -e '.nodes[] | select(.name == "node-late")'; }
wait_for 10 "reports from an agent started before its scorer" known
echo "ok: a late scorer gets reports"

kill -TERM "$AGENT"
wait_for 3 "the agent to stop on SIGTERM" bash -c "! kill -0 $AGENT"
wait "$AGENT"
expect "exit status after SIGTERM" "$?" 0
grep -q "stopping after" "$WORK/agent.log" || fail "no stop line in the agent's log"
echo "PASS: agent"
