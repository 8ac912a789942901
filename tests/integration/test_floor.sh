#!/usr/bin/env bash
# bench/floor.c, the extenders make bench-k8s measures netsched against, on
# requests captured from the real kube-scheduler 1.20: the floor echoes the
# nodes from /filter and answers [] to /prioritize; with --scores it gives
# every node of the request, in the request's order, a score of 0-10, from
# NodeNames or from full Node objects alike, for a handful of nodes and for
# 5,000. Either refuses what it cannot
# read (400) and unknown paths (404), and serves many requests on one
# keep-alive connection. If these did not hold, the benchmark's headline
# ratios would be against something other than what it says.
set -u
. "$(dirname "$0")/lib.sh"

FLOOR=${FLOOR:-${O:-build}/rel/bench/floor}
[ -x "$FLOOR" ] || fail "floor not found at $FLOOR (make unit-build builds it)"
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"
FIX=tests/fixtures/extender/captured-k8s-1.20
NAMES=$FIX/prioritize-request.nodeCacheCapable-true.json
FULL=$FIX/prioritize-request.nodeCacheCapable-false.json

# floor_up NAME [ARGS]: a floor on a free loopback port; its URL in URL.
floor_up() {
	start "$1" "$FLOOR" --http 127.0.0.1:0 "${@:2}"
	wait_for 5 "$1 to listen" grep -q '^listening on' "$WORK/$1.log"
	URL=http://$(sed -n 's/^listening on //p' "$WORK/$1.log")
}
# post URL PATH FILE: "CODE BODY".
post() {
	local code
	code=$(curl -s -o "$WORK/reply" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$3" "$1$2") || code=000
	echo "$code $(cat "$WORK/reply")"
}

floor_up floor
PLAIN=$URL
floor_up scores --scores
SCORES=$URL

want=$(jq -c .NodeNames "$NAMES")
[ "$(jq '.NodeNames | length' "$NAMES")" -ge 2 ] || fail "$NAMES: expected a request with several node names"
expect "filter echoes the node names" "$(post "$PLAIN" /filter "$NAMES")" "200 {\"NodeNames\":$want}"
expect "the scoring floor's filter is the floor's" "$(post "$SCORES" /filter "$NAMES")" "200 {\"NodeNames\":$want}"
expect "filter with full Nodes echoes them" \
	"$(post "$PLAIN" /filter "$FULL" | cut -d ' ' -f 1) $(jq -c '.Nodes.items | map(.metadata.name)' "$WORK/reply")" \
	"200 $(jq -c '.Nodes.items | map(.metadata.name)' "$FULL")"
expect "prioritize answers no scores" "$(post "$PLAIN" /prioritize "$NAMES")" "200 []"

# scored FILE NAMES-JQ: the scoring floor's hosts and whether every score
# is an integer of 0-10, against the request's node names.
scored() {
	local code
	code=$(post "$SCORES" /prioritize "$1" | cut -d ' ' -f 1)
	echo "$code $(jq -c 'map(.Host)' "$WORK/reply") $(jq 'all(.Score | (. == floor and . >= 0 and . <= 10))' "$WORK/reply") $(jq '[.[].Score] | unique | length > 1' "$WORK/reply")"
}
expect "--scores: every named node, in order, scored 0-10, not all alike" "$(scored "$NAMES")" \
	"200 $want true true"
expect "--scores: every full Node, in order, scored 0-10, not all alike" "$(scored "$FULL")" \
	"200 $(jq -c '.Nodes.items | map(.metadata.name)' "$FULL") true true"

# A 5,000-node cluster's request: every node scored, each once, in order.
jq -c '.NodeNames = [range(5000) | "node-\(.)"]' "$NAMES" >"$WORK/big.json"
post "$SCORES" /prioritize "$WORK/big.json" >/dev/null
expect "--scores, 5,000 names: each scored once, in order" \
	"$(jq -c '[length, (map(.Host) == [range(5000) | "node-\(.)"]), ([.[].Score] | min, max)]' "$WORK/reply")" \
	'[5000,true,0,10]'

printf '{"Pod":{},"NodeNames":' >"$WORK/cut.json"
printf '{"Pod":{},"NodeNames":null,"Nodes":{"items":[{"metadata":{}}]}}' >"$WORK/nameless.json"
printf '{"Pod":{}}' >"$WORK/none.json"
expect "--scores: cut JSON" "$(post "$SCORES" /prioritize "$WORK/cut.json")" "400 {}"
expect "--scores: a Node without a name" "$(post "$SCORES" /prioritize "$WORK/nameless.json")" "400 {}"
expect "--scores: no nodes at all" "$(post "$SCORES" /prioritize "$WORK/none.json")" "400 {}"
expect "filter: cut JSON" "$(post "$PLAIN" /filter "$WORK/cut.json")" "400 {}"
expect "unknown path" "$(post "$SCORES" /bind "$NAMES")" "404 {}"

# Ten calls on one connection: curl says how many it opened.
args=()
for i in 1 2 3 4 5 6 7 8 9 10; do
	args+=(-o /dev/null -H 'Content-Type: application/json' --data-binary "@$NAMES" "$SCORES/prioritize")
done
expect "ten calls, one keep-alive connection" \
	"$(curl -s -w '%{num_connects}\n' "${args[@]}" | awk '{ n += $1 } END { print n }')" 1
kill -0 "${PIDS[@]}" 2>/dev/null || fail "a floor exited"
echo "PASS: floor"
