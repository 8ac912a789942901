#!/usr/bin/env bash
# The scorer's HTTP surface, end to end through the real binary ($BIN): every
# captured and synthetic scheduler request through both verbs with the reply
# shapes docs/extender-protocol.md requires, a path prefix, every kind of bad request, and
# the status endpoints (/healthz, /readyz, /metrics, /v1/nodes). No root needed.
set -u
. "$(dirname "$0")/lib.sh"
FIX=${FIXTURES:-tests/fixtures/extender}
[ -d "$FIX" ] || fail "fixtures not found at $FIX "
command -v jq >/dev/null || fail "jq not installed (run .ci/deps test)"

# No agents here, so a short stale-after makes the warm-up (and /readyz) end
# quickly; every node scores neutral.
start_scorer --max-body 64Ki --stale-after 1s
MAIN_PID=$LAST_PID

# headers METHOD PATH: the reply's status line and headers (no body).
headers() {
	curl -s -o /dev/null -D - -X "$1" "http://127.0.0.1:$HTTP_PORT$2" | tr -d '\r'
}

# The node objects of a full-mode request or filter reply, as raw text: what
# stands between the NodeList's "items":[ and the end of that list. Both Go
# and the scorer write the NodeList compactly and put NodeNames after it.
raw_items() {
	local s=$1
	s=${s#*\"Nodes\":\{\"metadata\":\{\},\"items\":\[}
	printf '%s' "${s%\]\},\"NodeNames\":*}"
}

# check_prioritize FILE BODY: a bare array of {Host,Score}, every requested
# host once in request order, integer scores 0..10, all neutral (5).
check_prioritize() {
	local f=$1 body=$2 name want got n
	name="prioritize $(basename "$f")"
	expect "$name is a bare array of {Host,Score}" \
		"$(jq -c 'type == "array" and all(.[]; (keys == ["Host", "Score"]))' <<<"$body")" true
	want=$(jq -c '.NodeNames // [.Nodes.items[].metadata.name]' "$f")
	expect "$name hosts, in request order" "$(jq -c '[.[].Host]' <<<"$body")" "$want"
	n=$(jq 'length' <<<"$body")
	# jq reads 5.0 as 5: count the integers in the text itself.
	got=$(grep -oE '"Score":(10|[0-9])[,}]' <<<"$body" | wc -l)
	expect "$name scores are JSON integers 0..10" "$got" "$n"
	expect "$name scores are neutral (no agent data)" \
		"$(jq -c '[.[].Score] | unique' <<<"$body")" "$([ "$n" -gt 0 ] && echo '[5]' || echo '[]')"
}

# check_filter FILE BODY: keeps every node, in the mode the request used.
check_filter() {
	local f=$1 body=$2 name
	name="filter $(basename "$f")"
	expect "$name Error" "$(jq -c .Error <<<"$body")" '""'
	expect "$name FailedNodes" "$(jq -c .FailedNodes <<<"$body")" '{}'
	if [ "$(jq -c '.NodeNames != null' "$f")" = true ]; then
		expect "$name names mode: Nodes" "$(jq -c .Nodes <<<"$body")" null
		expect "$name names mode: NodeNames are exactly the request's" \
			"$(jq -c .NodeNames <<<"$body")" "$(jq -c .NodeNames "$f")"
	else
		expect "$name full mode: NodeNames" "$(jq -c .NodeNames <<<"$body")" null
		expect "$name full mode: same node count" \
			"$(jq '.Nodes.items | length' <<<"$body")" "$(jq '.Nodes.items | length' "$f")"
		[ "$(raw_items "$body")" = "$(raw_items "$(cat "$f")")" ] ||
			fail "$name full mode: node objects differ from the request's bytes"
		echo "ok: $name full mode: node objects byte for byte"
	fi
}

# check_error WHAT CODE BODY WANTCODE WORDS: a JSON {"error": "..."} that
# names the problem.
check_error() {
	local what=$1 code=$2 body=$3 want=$4 words=$5 msg
	expect "$what status" "$code" "$want"
	msg=$(jq -r '.error // empty' <<<"$body" 2>/dev/null)
	[ -n "$msg" ] || fail "$what: no JSON error message in '$body'"
	[[ $msg == *"$words"* ]] || fail "$what: error '$msg' does not say '$words'"
	echo "ok: $what says: $msg"
}

# Every request fixture, both verbs. Files that are not ExtenderArgs (bind,
# the headers capture, the reply examples) must be refused with 400.
requests=0
for f in "$FIX"/captured-k8s-1.20/* "$FIX"/synthetic/*; do
	case $(basename "$f") in
	# Not ExtenderArgs: a bind, the reply examples, the preempt verb's requests.
	bind-request.json | responses.json | preempt*) bad="neither Nodes nor NodeNames" ;;
	*.headers.txt) bad="invalid JSON" ;;
	*.json) bad= ;;
	*) continue ;;
	esac
	for verb in filter prioritize; do
		read -r code body <<<"$(http POST "/$verb" "$f")"
		requests=$((requests + 1))
		if [ -n "$bad" ]; then
			check_error "$verb $(basename "$f")" "$code" "$body" 400 "$bad"
			continue
		fi
		expect "$verb $(basename "$f") status" "$code" 200
		"check_$verb" "$f" "$body"
	done
done
[ "$requests" -ge 18 ] || fail "only $requests fixture requests found under $FIX"

# The preempt verb's requests, captured from a real scheduler and synthetic,
# both modes: every candidate kept with its victims by UID (no node here has
# data: none is judged), under a prefix too.
for f in "$FIX"/captured-k8s-1.20/preempt-request.* "$FIX"/synthetic/preempt_request_*; do
	for path in /preempt /scheduler/preempt; do
		read -r code body <<<"$(http POST "$path" "$f")"
		expect "POST $path $(basename "$f") status" "$code" 200
		want=$(jq -c '(.NodeNameToMetaVictims // .NodeNameToVictims) | map_values([.Pods[] | .UID // .metadata.uid])' "$f")
		expect "POST $path $(basename "$f") keeps every candidate and victim" \
			"$(jq -c '.NodeNameToMetaVictims | map_values([.Pods[].UID])' <<<"$body")" "$want"
	done
done

# The same verbs under a path prefix (urlPrefix + verb).
f="$FIX/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json"
read -r code body <<<"$(http POST /scheduler/prioritize "$f")"
expect "prefixed /scheduler/prioritize status" "$code" 200
check_prioritize "$f" "$body"
f="$FIX/captured-k8s-1.20/filter-request.nodeCacheCapable-false.json"
read -r code body <<<"$(http POST /scheduler/filter "$f")"
expect "prefixed /scheduler/filter status" "$code" 200
check_filter "$f" "$body"
requests=$((requests + 2))

# Bad input: a clear JSON error naming the problem, and nothing changes.
printf '{"Pod":{},"NodeNames":["a",' >"$WORK/truncated.json"
printf 'not json' >"$WORK/garbage.json"
printf '[1,2,3]' >"$WORK/array.json"
printf '{"Pod":{},"Nodes":null,"NodeNames":[1]}' >"$WORK/number-name.json"
printf '{"NodeNames":["a",,"b"]}' >"$WORK/double-comma.json"
: >"$WORK/empty.json"
for row in "truncated:ends early" "garbage:invalid JSON" "array:got an array" \
	"number-name:NodeNames[0] is a number" "double-comma:unexpected ','" "empty:empty body"; do
	f=${row%%:*}
	for verb in filter prioritize; do
		read -r code body <<<"$(http POST "/$verb" "$WORK/$f.json")"
		requests=$((requests + 1))
		check_error "$verb $f.json" "$code" "$body" 400 "${row#*:}"
	done
done

# Over --max-body (64 KiB): 413, by Content-Length and by a chunked body.
head -c 70000 /dev/zero | tr '\0' ' ' >"$WORK/huge.json"
read -r code body <<<"$(http POST /filter "$WORK/huge.json")"
check_error "oversized body" "$code" "$body" 413 "limit of 65536 bytes"
code=$(curl -s -o "$WORK/body" -w '%{http_code}' -H 'Transfer-Encoding: chunked' \
	-H 'Content-Type: application/json' --data-binary "@$WORK/huge.json" \
	"http://127.0.0.1:$HTTP_PORT/prioritize") || code=000
check_error "oversized chunked body" "$code" "$(cat "$WORK/body")" 413 "limit of 65536 bytes"

# Wrong method: 405 with an Allow header; unknown path: 404. All JSON.
read -r code body <<<"$(http GET /filter)"
check_error "GET /filter" "$code" "$body" 405 "use POST"
headers GET /prioritize | grep -qi '^Allow: POST$' || fail "GET /prioritize: no 'Allow: POST' header"
echo "ok: GET /prioritize names the allowed method"
for path in /healthz /readyz /metrics /v1/nodes; do
	read -r code body <<<"$(http POST "$path" "$WORK/array.json")"
	check_error "POST $path" "$code" "$body" 405 "use GET"
done
read -r code body <<<"$(http GET /no/such/path)"
check_error "unknown path" "$code" "$body" 404 "no such path"
read -r code body <<<"$(http GET /filter/extra)"
expect "a path that only contains a verb" "$code" 404

# /v1/nodes: nothing tracked, bad input added nothing.
read -r code body <<<"$(http GET /v1/nodes)"
expect "/v1/nodes after bad input" "$code $body" '200 {"nodes":[]}'

# /readyz: 503 with a reason during the warm-up (a second scorer with a long
# one), 200 once this scorer's warm-up (= --stale-after, 1s) has passed.
main_port=$HTTP_PORT
start_scorer --stale-after 1h
read -r code body <<<"$(http GET /readyz)"
expect "/readyz during the warm-up" "$code $(jq -c '[.ready, .freshNodes]' <<<"$body")" '503 [false,0]'
HTTP_PORT=$main_port
wait_for 10 "/readyz to say ready after the warm-up" curl -sf "http://127.0.0.1:$HTTP_PORT/readyz"
read -r code body <<<"$(http GET /readyz)"
expect "/readyz after the warm-up" "$code $(jq -c '.ready' <<<"$body")" '200 true'

# /metrics: the Prometheus text format, counting what this test sent.
code=$(curl -s -o "$WORK/metrics.txt" -w '%{http_code} %{content_type}' \
	"http://127.0.0.1:$HTTP_PORT/metrics") || code=000
expect "/metrics status and type" "$code" "200 text/plain; version=0.0.4; charset=utf-8"
metric() { awk -v m="$1" '$1 == m { print $2 }' "$WORK/metrics.txt"; }
filters=$(metric 'netsched_scorer_requests_total{verb="filter"}')
prios=$(metric 'netsched_scorer_requests_total{verb="prioritize"}')
expect "/metrics counts every extender request that reached a verb" "$((filters + prios))" "$requests"
expect "/metrics filter latency observations" \
	"$(metric 'netsched_scorer_request_duration_seconds_count{verb="filter"}')" "$filters"
expect "/metrics prioritize latency +Inf bucket" \
	"$(metric 'netsched_scorer_request_duration_seconds_bucket{verb="prioritize",le="+Inf"}')" "$prios"
if command -v promtool >/dev/null; then
	promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.log" 2>&1 ||
		fail "promtool check metrics: $(cat "$WORK/promtool.log")"
	echo "ok: promtool check metrics"
else
	echo "note: promtool not installed (Debian package prometheus); format not validated"
fi

# The process survived all of it.
read -r code body <<<"$(http GET /healthz)"
expect "healthz at the end" "$code $(jq -r .status <<<"$body")" "200 ok"

# SIGTERM is a clean stop: exit 0, promptly.
kill -TERM "$MAIN_PID"
deadline=$(($(date +%s) + 5))
while kill -0 "$MAIN_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
kill -0 "$MAIN_PID" 2>/dev/null && fail "scorer still running 5s after SIGTERM"
wait "$MAIN_PID"
expect "exit code after SIGTERM" "$?" 0

# Start-up contract: a bad option is one line on stderr and exit 2.
"$BIN/netsched-scorer" --policy fastest 2>"$WORK/err.txt"
expect "bad --policy exit code" "$?" 2
expect "bad --policy message lines" "$(wc -l <"$WORK/err.txt")" 1
grep -q -- '--policy fastest' "$WORK/err.txt" || fail "message does not name the option: $(cat "$WORK/err.txt")"
expect "--check-config" "$("$BIN/netsched-scorer" --check-config --policy utilization)" "configuration OK"
echo "PASS: http"
