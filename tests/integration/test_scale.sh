#!/usr/bin/env bash
# The scorer at scale, through the real binary ($BIN), loopback only:
#  (a) 5,000 nodes reported at once by 8 concurrent NNG senders (the feed
#      tool, as 5,000 agents would): every node lands in the table, and one
#      prioritize over all 5,000 names scores them all from that data;
#  (b) 16 clients at once, each on one keep-alive connection as the
#      scheduler keeps its own, sending filter and prioritize in both modes
#      (the captured and synthetic fixtures, plus the 5,000-name request):
#      every answer 200 and exactly the answer the same request gets alone.
# Afterwards the scorer is healthy, stops cleanly on SIGTERM, and its log
# holds no sanitizer report (run-all repeats this against the ASan build).
# No root needed. FEED names the feed tool (make test builds it).
set -u
. "$(dirname "$0")/lib.sh"
FIX=${FIXTURES:-tests/fixtures/extender}
FEED=${FEED:-${O:-build}/rel/bench/feed}
NODES=5000
SENDERS=8
CLIENTS=16
ROUNDS=${SCALE_ROUNDS:-4}	# each client sends every request kind this many times
[ -d "$FIX" ] || fail "fixtures not found at $FIX "
[ -x "$FEED" ] || fail "feed tool not found at $FEED (make test builds it)"
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"

start_scorer --stale-after 1h --max-nodes "$NODES"
SCORER_PID=$LAST_PID
url=http://127.0.0.1:$HTTP_PORT

# --- (a) 5,000 nodes from 8 concurrent senders.
# Every node once: push/pull is lossless, so all 5,000 must arrive.
"$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes "$NODES" --senders "$SENDERS" --once \
	>"$WORK/feed.log" 2>&1 || fail "feed: $(cat "$WORK/feed.log")"
expect "reports sent by $SENDERS senders" \
	"$(sed -n 's/^sent \([0-9]*\) reports (\([0-9]*\) failed).*/\1 sent, \2 failed/p' "$WORK/feed.log")" \
	"$NODES sent, 0 failed"

metric() {
	curl -s "$url/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
# Poll (up to 20 s; the sanitizer build is slower) until all are applied.
got=
for _ in $(seq 200); do
	got=$(metric 'netsched_scorer_reports_total{result="accepted"}')
	[ "$got" = "$NODES" ] && break
	sleep 0.1
done
expect "reports the scorer accepted" "$got" "$NODES"

curl -s "$url/v1/nodes" >"$WORK/nodes.json" || fail "GET /v1/nodes failed"
expect "/v1/nodes: nodes listed" "$(jq '.nodes | length' "$WORK/nodes.json")" "$NODES"
expect "/v1/nodes: nodes with source agent" \
	"$(jq '[.nodes[] | select(.source == "agent")] | length' "$WORK/nodes.json")" "$NODES"
expect "/v1/nodes: the feed's names, each once" \
	"$(jq '[.nodes[].name | select(test("^node-[0-9]+$"))] | unique | length' "$WORK/nodes.json")" "$NODES"

# A prioritize with every name; node-i carries i * 1000 B/s of rx, so the
# relative policy must use the whole range and fall as traffic rises.
jq -c --argjson n "$NODES" '.NodeNames = [range($n) | "node-\(.)"]' \
	"$FIX/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json" >"$WORK/names-all.json"
read -r code body <<<"$(http POST /prioritize "$WORK/names-all.json")"
expect "prioritize $NODES names: status" "$code" 200
printf '%s' "$body" >"$WORK/prio-all.json"
expect "prioritize $NODES names: entries" "$(jq length "$WORK/prio-all.json")" "$NODES"
expect "prioritize $NODES names: hosts in request order" \
	"$(jq -c '[.[].Host]' "$WORK/prio-all.json")" "$(jq -c .NodeNames "$WORK/names-all.json")"
# jq reads 5.0 as 5: count the integers in the text itself.
expect "prioritize $NODES names: scores are JSON integers 0..10" \
	"$(grep -oE '"Score":(10|[0-9])[,}]' "$WORK/prio-all.json" | wc -l)" "$NODES"
expect "prioritize $NODES names: lowest and highest score" \
	"$(jq -c '[.[].Score] | [min, max]' "$WORK/prio-all.json")" "[0,10]"
expect "prioritize $NODES names: scores fall as traffic rises" \
	"$(jq '[.[].Score] | . == (sort | reverse)' "$WORK/prio-all.json")" true

# --- (b) many clients at once.
# Request kinds: every fixture request through both verbs, and the big one.
kinds=()
for f in "$FIX"/captured-k8s-1.20/{filter,prioritize}-request.nodeCacheCapable-*.json \
	"$FIX"/synthetic/filter_request_nodeCacheCapable_*.json; do
	kinds+=("filter:$f" "prioritize:$f")
done
kinds+=("prioritize:$WORK/names-all.json" "filter:$WORK/names-all.json")
[ "${#kinds[@]}" -ge 14 ] || fail "only ${#kinds[@]} request kinds under $FIX"

# The reference answer of each kind, alone, checked for shape; the same
# request under load must get exactly these bytes back (no agent data
# changes meanwhile: the feed has finished).
mkdir -p "$WORK/want"
for k in "${!kinds[@]}"; do
	verb=${kinds[$k]%%:*} f=${kinds[$k]#*:} name="$verb $(basename "${kinds[$k]#*:}")"
	read -r code body <<<"$(http POST "/$verb" "$f")"
	expect "$name alone: status" "$code" 200
	printf '%s' "$body" >"$WORK/want/$k"
	if [ "$verb" = prioritize ]; then
		expect "$name alone: one integer score per requested node" \
			"$(grep -oE '"Score":(10|[0-9])[,}]' "$WORK/want/$k" | wc -l)" \
			"$(jq '(.NodeNames // [.Nodes.items[]]) | length' "$f")"
	else
		expect "$name alone: every node kept, no error" \
			"$(jq -c '[.Error, ((.NodeNames // [.Nodes.items[]]) | length)]' "$WORK/want/$k")" \
			"$(jq -c '["", ((.NodeNames // [.Nodes.items[]]) | length)]' "$f")"
	fi
done

# client I: one curl, so one connection reused for every request (--next
# starts the next request on the same connection). No "Expect:
# 100-continue": Go's client never sends it.
client() {
	local i=$1 r k args=() dir="$WORK/c$1"
	mkdir -p "$dir"
	for r in $(seq "$ROUNDS"); do
		for k in "${!kinds[@]}"; do
			# Each client starts at a different kind, so all kinds overlap.
			k=$(((k + i) % ${#kinds[@]}))
			[ ${#args[@]} -gt 0 ] && args+=(--next)
			args+=(-s -H 'Content-Type: application/json' -H 'Expect:'
				--data-binary "@${kinds[$k]#*:}" -o "$dir/$r-$k"
				-w "$r-$k %{http_code} %{num_connects}\n" "$url/${kinds[$k]%%:*}")
		done
	done
	curl "${args[@]}" >"$dir/status" 2>"$dir/curl.err"
}
t0=$(date +%s%N)
pids=()
for i in $(seq "$CLIENTS"); do
	client "$i" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
ms=$((($(date +%s%N) - t0) / 1000000))
total=$((CLIENTS * ROUNDS * ${#kinds[@]}))

# Every answer 200, every client on one connection, every body as alone.
cat "$WORK"/c*/status >"$WORK/statuses"
expect "answers under load" "$(wc -l <"$WORK/statuses")" "$total"
expect "answers under load that are not 200" "$(awk '$2 != 200' "$WORK/statuses" | head -n 3)" ""
for i in $(seq "$CLIENTS"); do
	expect "client $i: TCP connections opened" \
		"$(awk '{ n += $3 } END { print n }' "$WORK/c$i/status")" 1 >/dev/null
done
echo "ok: each of $CLIENTS clients used one keep-alive connection"
bad=0
for i in $(seq "$CLIENTS"); do
	for f in "$WORK/c$i"/*-*; do
		k=${f##*-}
		cmp -s "$f" "$WORK/want/$k" && continue
		bad=$((bad + 1))
		[ "$bad" -le 3 ] && echo "differs: client $i, ${kinds[$k]%%:*} $(basename "${kinds[$k]#*:}")" \
			"($(wc -c <"$f") bytes, alone $(wc -c <"$WORK/want/$k"))" >&2
	done
done
expect "answers under load that differ from the answer alone" "$bad" 0
echo "ok: $total requests from $CLIENTS clients in ${ms} ms"

# The scorer survived all of it, and says so.
kill -0 "$SCORER_PID" 2>/dev/null || fail "the scorer died"
read -r code body <<<"$(http GET /healthz)"
expect "healthz after the load" "$code $(jq -r .status <<<"$body")" "200 ok"
expect "requests refused as bad" "$(metric netsched_scorer_bad_requests_total)" 0

# A clean stop, and nothing from the sanitizers (leaks are reported at exit).
kill -TERM "$SCORER_PID"
deadline=$(($(date +%s) + 10))
while kill -0 "$SCORER_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
kill -0 "$SCORER_PID" 2>/dev/null && fail "scorer still running 10s after SIGTERM"
wait "$SCORER_PID"
expect "scorer exit code after SIGTERM" "$?" 0
expect "sanitizer reports in the scorer's log" \
	"$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$WORK/scorer.log")" 0
echo "PASS: scale"
