#!/usr/bin/env bash
# The rebalancer's channel on the real scorer: GET /v1/pressure and GET and
# POST /v1/moves (scorer/serve/pressure.h, movesroute.h), with reports from
# bench/feed (3 nodes at 40, 44 and 48% of a 25 kB/s link, 4 pods each) and
# those pods from a stub apiserver (tests/tools/apiserver_stub.py pods):
#  - the view: every node, sorted, its reports counting up, pods only on
#    the nodes over hot=, largest first, joined to namespace/name/workload;
#  - bad moves (malformed, oversized, an unknown field, an unknown node,
#    from == to, an absurd rate, a hold out of range, a wrong method) each
#    answered 4xx with a message naming it, and nothing changed;
#  - a move: listed, held on its source (a pod of its workload is filtered
#    off it with the hold's reason and scores 0 there; another workload's
#    pod is not), reserved on its destination, replaced by a second move of
#    the same UID, counted in /metrics;
#  - over HTTPS with client certificates: refused without one, and a full
#    table (--moves-max 1) answers 503; not served on --health-listen.
# No root needed.
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"
command -v openssl >/dev/null || fail "openssl not installed (run .ci/deps test)"
FEED=${FEED:-${O:-build}/rel/bench/feed}
[ -x "$FEED" ] || fail "$FEED not built (make unit-build)"
FIX=tests/fixtures/extender/captured-k8s-1.20
C=$WORK/certs
mkdir -p "$C"

# The pod watch's apiserver: node-0..2 run feed/p-<n>-0..3 (bench/podfeed.h).
test_ca ca
test_cert ca api apiserver "IP:127.0.0.1"
API=$(free_port)
start apiserver python3 tests/tools/apiserver_stub.py pods "$API" "$C/api.pem" "$C/api.key" \
	"$WORK/api-requests" 3 4
wait_for 10 "the stub apiserver" curl -s --cacert "$C/ca.pem" -o /dev/null \
	"https://127.0.0.1:$API/api/v1/pods?limit=1"
cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: stub, cluster: {server: "https://127.0.0.1:$API", certificate-authority: $C/ca.pem}}]
users: [{name: stub, user: {token: stub-token}}]
contexts: [{name: stub, context: {cluster: stub, user: stub}}]
current-context: stub
KC

start_scorer --stale-after 5s --kubeconfig "$WORK/kubeconfig"
# node-n: n kB/s plus its pods' 4+3+2+1 kB/s in, of 25 kB/s: 40, 44, 48%.
start feed "$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes 3 --senders 1 --rate 2 \
	--duration 120s --pods 4 --link 25000

pressure() { curl -sf "http://127.0.0.1:$HTTP_PORT/v1/pressure${1:-}"; }
joined() {
	pressure '?hot=0.45' | jq -e '[.nodes[] | select(.fresh)] | length == 3 and
		(.[2].pods // [] | length == 4 and all(.[]; .uid != ""))'
}
wait_for 30 "3 fresh nodes and node-2's pods joined" joined

# 1. The view.
P=$(pressure)
expect "default hot" "$(jq -c .hot <<<"$P")" 0.9
expect "nodes sorted by name" "$(jq -c '[.nodes[].name]' <<<"$P")" '["node-0","node-1","node-2"]'
expect "levels and links" "$(jq -c '[.nodes[] | [.rxBytesPerSecond, .linkBytesPerSecond]]' <<<"$P")" \
	'[[10000,25000],[11000,25000],[12000,25000]]'
expect "no node over 90%: no pods" "$(jq -c '[.nodes[] | has("pods")]' <<<"$P")" '[false,false,false]'
expect "no holds" "$(jq -c '[.nodes[].heldForWorkloads]' <<<"$P")" '[0,0,0]'
r0=$(jq '.nodes[0].reports' <<<"$P")
more_reports() { [ "$(pressure | jq '.nodes[0].reports')" -gt "$r0" ]; }
wait_for 10 "node-0's reports to count up" more_reports
P=$(pressure '?hot=0.45')
expect "hot=0.45: pods on node-2 alone" "$(jq -c '[.nodes[] | has("pods")]' <<<"$P")" '[false,false,true]'
expect "node-2's pods, largest first, joined" \
	"$(jq -c '[.nodes[2].pods[] | [.namespace, .name, .workload, .rxBytesPerSecond]]' <<<"$P")" \
	'[["feed","p-2-0","feed/Deployment/d0",4000],["feed","p-2-1","feed/Deployment/d1",3000],["feed","p-2-2","feed/Deployment/d2",2000],["feed","p-2-3","feed/Deployment/d3",1000]]'
P=$(pressure '?hot=0.43')
expect "hot=0.43: node-1 too" "$(jq -c '[.nodes[] | has("pods")]' <<<"$P")" '[false,true,true]'
for bad in 2 0.01 abc 0.9000 ''; do
	read -r code body < <(http GET "/v1/pressure?hot=$bad")
	expect "hot=$bad refused" "$code" 400
	[[ $body == *"is not a fraction of the link in [0.05, 1.0]"* ]] || fail "hot=$bad: $body"
done
echo "ok: bad hot= values answered 400 with the range"

# 2. Bad moves: each 4xx with its reason, nothing changed.
good='{"namespace":"feed","pod":"p-2-0","uid":"feed-2-0","workload":"feed/Deployment/d0","from":"node-2","to":"node-0","rxBytesPerSecond":4000,"txBytesPerSecond":400,"holdSeconds":300}'
post() { # BODY -> "STATUS BODY"
	printf '%s' "$1" >"$WORK/move.json"
	http POST /v1/moves "$WORK/move.json"
}
refused() { # WHAT WANTCODE WORDS BODY
	local code body
	read -r code body < <(post "$4")
	expect "$1: status" "$code" "$2"
	[[ $body == *"$3"* ]] || fail "$1: '$body' does not say '$3'"
	echo "ok: $1 says: $(jq -r .error <<<"$body")"
}
refused "malformed JSON" 400 "body is not a move" '{"namespace":"feed",'
refused "an array" 400 "expected an object" '[]'
refused "unknown field" 400 'unknown field \"color\"' "$(jq -c '.color = "red"' <<<"$good")"
refused "missing uid" 400 "uid is missing" "$(jq -c 'del(.uid)' <<<"$good")"
refused "unknown node" 400 "unknown node node-9 (to)" "$(jq -c '.to = "node-9"' <<<"$good")"
refused "from == to" 400 "from and to are the same node node-2" "$(jq -c '.to = "node-2"' <<<"$good")"
refused "absurd rate" 400 "rxBytesPerSecond 2500001 B/s is over 100 x the link of node-2 and node-0 (25000 B/s)" \
	"$(jq -c '.rxBytesPerSecond = 2500001' <<<"$good")"
refused "a rate no link carries" 400 "over its limit of 400000000000" \
	"$(jq -c '.txBytesPerSecond = 400000000001' <<<"$good")"
refused "hold 0" 400 "holdSeconds 0 is under its minimum of 1" "$(jq -c '.holdSeconds = 0' <<<"$good")"
refused "hold over an hour" 400 "holdSeconds 3601 is over its limit of 3600" "$(jq -c '.holdSeconds = 3601' <<<"$good")"
refused "negative rate" 400 "not a whole number" "$(jq -c '.rxBytesPerSecond = -1' <<<"$good")"
refused "oversized body" 413 "over the limit of 4096 bytes" \
	"$(jq -c --arg p "$(printf 'x%.0s' $(seq 5000))" '.pad = $p' <<<"$good")"
read -r code _ < <(http PUT /v1/moves)
expect "PUT /v1/moves" "$code" 405
read -r code _ < <(http POST /v1/pressure)
expect "POST /v1/pressure" "$code" 405
read -r code body < <(http GET /v1/moves)
expect "after the bad moves: none listed" "$body" '{"moves":[]}'
expect "after the bad moves: nothing held" "$(pressure | jq -c '[.nodes[].heldForWorkloads]')" '[0,0,0]'
M=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics")
for r in malformed=5 unknown_node=1 same_node=1 absurd_rate=2 hold_out_of_range=2 too_large=1 accepted=0; do
	grep -q "^netsched_scorer_moves_total{result=\"${r%=*}\"} ${r#*=}$" <<<"$M" ||
		fail "metrics: moves ${r%=*} not ${r#*=}: $(grep moves_total <<<"$M")"
done
echo "ok: refusals counted by reason"

# 3. A move: d0's pod leaves node-2 for node-0.
read -r code body < <(post "$good")
expect "a move accepted" "$code $body" '200 {"accepted":true,"holdSeconds":300}'
L=$(curl -sf "http://127.0.0.1:$HTTP_PORT/v1/moves")
expect "listed" "$(jq -c '[.moves[] | [.namespace, .pod, .workload, .from, .to, .landed]]' <<<"$L")" \
	'[["feed","p-2-0","feed/Deployment/d0","node-2","node-0",false]]'
jq -e '.moves[0].remainingSeconds > 290 and .moves[0].remainingSeconds <= 300' <<<"$L" >/dev/null ||
	fail "remainingSeconds: $L"
P=$(pressure)
expect "held on node-2" "$(jq -c '[.nodes[].heldForWorkloads]' <<<"$P")" '[0,0,1]'
jq -e '.nodes[0].inflightRxBytesPerSecond >= 4000' <<<"$P" >/dev/null ||
	fail "node-0 does not count the reservation: $(jq -c '.nodes[0]' <<<"$P")"
echo "ok: node-0 counts the reservation in flight"

# The scheduler asks about a new replica of d0, and of d1 (captured
# requests, the pod made a replica of Deployment feed/d<k>).
ask() { # VERB DEPLOY UID
	jq -c --arg d "$2" --arg u "$3" '.Pod.metadata.namespace = "feed" | .Pod.metadata.name = "p-new-\($u)" |
		.Pod.metadata.uid = $u | .Pod.metadata.labels = {"pod-template-hash": "abc12"} |
		.Pod.metadata.ownerReferences = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
			"name": "\($d)-abc12", "uid": "rs", "controller": true}] |
		.NodeNames = ["node-0", "node-1", "node-2"]' "$FIX/$1-request.nodeCacheCapable-true.json" \
		>"$WORK/ask.json"
	curl -sf -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/ask.json" \
		"http://127.0.0.1:$HTTP_PORT/$1"
}
F=$(ask filter d0 new-1)
expect "filter, d0: node-2 left out" "$(jq -c .NodeNames <<<"$F")" '["node-0","node-1"]'
expect "filter, d0: the hold's reason" "$(jq -r '.FailedNodes["node-2"]' <<<"$F")" \
	"netsched: node-2 is being relieved of d0: held for 300 s by the rebalancer"
F=$(ask filter d1 new-2)
expect "filter, d1: every node" "$(jq -c .NodeNames <<<"$F")" '["node-0","node-1","node-2"]'
S=$(ask prioritize d0 new-3)
expect "prioritize, d0: node-2 scores 0" "$(jq -c '[.[] | select(.Host == "node-2") | .Score]' <<<"$S")" '[0]'
S=$(ask prioritize d1 new-4)
jq -e '[.[] | select(.Host == "node-2") | .Score][0] > 0' <<<"$S" >/dev/null ||
	fail "prioritize, d1: node-2 scores 0: $S"
echo "ok: prioritize, d1: node-2 scores $(jq -c '[.[] | select(.Host == "node-2") | .Score][0]' <<<"$S")"

# A second move of the same pod replaces the first.
read -r code _ < <(post "$(jq -c '.to = "node-1" | .holdSeconds = 60' <<<"$good")")
expect "the same UID again" "$code" 200
L=$(curl -sf "http://127.0.0.1:$HTTP_PORT/v1/moves")
expect "replaced, not added" "$(jq -c '[.moves[] | [.to, .holdSeconds]]' <<<"$L")" '[["node-1",60]]'
M=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics")
grep -q '^netsched_scorer_moves_total{result="accepted"} 2$' <<<"$M" || fail "accepted not 2"
grep -q '^netsched_scorer_moves_active{kind="holds"} 1$' <<<"$M" || fail "holds not 1"
grep -q '^netsched_scorer_moves_active{kind="reservations"} 1$' <<<"$M" || fail "reservations not 1"
echo "ok: /metrics counts the moves and the holds"

# 4. Over HTTPS with client certificates: the same gate as the verbs; a
# full table answers 503.
test_cert ca server scorer "IP:127.0.0.1"
test_cert ca client netsched-scheduler
L2=$(free_port)
H2=$(free_port)
H3=$(free_port)
start scorer-tls "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$L2" --http "127.0.0.1:$H2" \
	--tls-cert "$C/server.pem" --tls-key "$C/server.key" --tls-client-ca "$C/ca.pem" \
	--stale-after 5s --moves-max 1 --pod-watch off --health-listen "127.0.0.1:$H3"
wait_for 10 "the HTTPS scorer's /healthz" curl -sf --cacert "$C/ca.pem" --cert "$C/client.pem" \
	--key "$C/client.key" "https://127.0.0.1:$H2/healthz"
start feed-tls "$FEED" --scorer "tcp://127.0.0.1:$L2" --nodes 3 --senders 1 --rate 2 \
	--duration 60s --link 25000
U="https://127.0.0.1:$H2"
tls() { curl -s --cacert "$C/ca.pem" --cert "$C/client.pem" --key "$C/client.key" "$@"; }
wait_for 20 "the HTTPS scorer's three nodes" bash -c \
	"curl -sf --cacert '$C/ca.pem' --cert '$C/client.pem' --key '$C/client.key' '$U/v1/pressure' | jq -e '.nodes | length == 3'"
code=$(curl -s -o "$WORK/out" -w '%{http_code}' --cacert "$C/ca.pem" "$U/v1/pressure")
expect "HTTPS, no client certificate: /v1/pressure" "$code" 403
code=$(curl -s -o "$WORK/out" -w '%{http_code}' --cacert "$C/ca.pem" -X POST --data-binary "$good" "$U/v1/moves")
expect "HTTPS, no client certificate: POST /v1/moves" "$code" 403
code=$(tls -o "$WORK/out" -w '%{http_code}' -X POST --data-binary "$good" "$U/v1/moves")
expect "HTTPS with the client certificate: a move" "$code" 200
code=$(tls -o "$WORK/out" -w '%{http_code}' -X POST --data-binary \
	"$(jq -c '.uid = "other" | .from = "node-1"' <<<"$good")" "$U/v1/moves")
expect "a second pod's move, --moves-max 1" "$code" 503
grep -q "the move table is full: 1 moves held" "$WORK/out" || fail "503 says: $(cat "$WORK/out")"
echo "ok: full table: $(jq -r .error "$WORK/out")"
# The plain probe and status listener (--health-listen) has neither route:
# what is read there decides evictions.
for path in /v1/pressure /v1/moves; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$H3$path")
	expect "--health-listen: GET $path" "$code" 404
done
