#!/usr/bin/env bash
# The extender over HTTPS on the real scorer: TLS with a certificate from
# our own CA; mTLS, where only a client certificate from the configured CA
# gets an answer, and only for the allowed caller's name (--client-names:
# another certificate from the same CA is refused); a rotated certificate
# served from the next connection on
# without a restart, and a rotation to a mismatched pair refused; bad
# certificate files refused at start-up.
set -u
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || fail "openssl not installed (run .ci/deps test)"
C=$WORK/certs
mkdir -p "$C"

test_ca ca
test_ca rogue
test_cert ca server scorer-v1 "IP:127.0.0.1"
test_cert ca server2 scorer-v2 "IP:127.0.0.1"
# The scheduler's name is the scorer's default --client-names (what deploy/
# issues); evil-client has one from the same CA, without an extended key
# usage (good for any purpose).
test_cert ca client netsched-scheduler
test_cert ca evil evil-client "DNS:evil.example"
test_cert rogue intruder netsched-scheduler

# 1. HTTPS: the extender answers over TLS, and plain HTTP gets nowhere.
cp "$C/server.pem" "$C/live.pem"
cp "$C/server.key" "$C/live.key"
start_scorer_https() {
	LISTEN_PORT=$(free_port)
	HTTP_PORT=$(free_port)
	start scorer "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
		--http "127.0.0.1:$HTTP_PORT" --tls-cert "$C/live.pem" --tls-key "$C/live.key" "$@"
	SCORER=$LAST_PID
	URL="https://127.0.0.1:$HTTP_PORT"
}
start_scorer_https
wait_for 10 "HTTPS /healthz" curl -sf --cacert "$C/ca.pem" "$URL/healthz"
PRIO=tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json
code=$(curl -s -o "$WORK/out" -w '%{http_code}' --cacert "$C/ca.pem" -X POST \
	-H 'Content-Type: application/json' --data-binary "@$PRIO" "$URL/prioritize")
expect "prioritize over HTTPS" "$code" 200
jq -e 'type == "array" and length > 0' "$WORK/out" >/dev/null || fail "bad reply: $(cat "$WORK/out")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")
[ "$code" != 200 ] || fail "plain HTTP answered 200 on the HTTPS port"
subject() { curl -sv --cacert "$C/ca.pem" "$URL/healthz" 2>&1 | sed -n 's/.*subject: CN=\([^ ;]*\).*/\1/p' | head -1; }
expect "served certificate" "$(subject)" scorer-v1

# 2. Rotation: new files are served from the next connection, no restart.
cp "$C/server2.key" "$C/live.key.new" && cp "$C/server2.pem" "$C/live.pem.new"
mv "$C/live.key.new" "$C/live.key" && mv "$C/live.pem.new" "$C/live.pem"
rotated() { [ "$(subject)" = scorer-v2 ]; }
wait_for 15 "the rotated certificate to be served" rotated
kill -0 "$SCORER" || fail "the scorer died during the rotation"
grep -q "certificates reloaded" "$WORK/scorer.log" || fail "no reload line in the log"
echo "ok: certificate rotated without a restart"

# 2b. A rotation to a key that does not match the certificate: refused with
# a line naming both files, the old certificates stay served, and the
# scorer still stops cleanly.
cp "$C/server.key" "$C/live.key.new" && mv "$C/live.key.new" "$C/live.key"
refused() { grep -q "cannot be used: .*live.pem with .*live.key" "$WORK/scorer.log"; }
wait_for 15 "the mismatched pair to be refused" refused
expect "served certificate after a refused rotation" "$(subject)" scorer-v2
kill "$SCORER"
wait "$SCORER"
rc=$?
expect "exit status after a refused rotation" "$rc" 0
cp "$C/server2.key" "$C/live.key"

# 3. mTLS: only a client certificate from the configured CA is answered.
# The kubelet's probes and Prometheus have none: they go to --health-listen,
# plain HTTP with /healthz, /readyz, /metrics and /v1/nodes and nothing else;
# the mTLS port then serves no status.
PROBE_PORT=$(free_port)
start_scorer_https --tls-client-ca "$C/ca.pem" --health-listen "127.0.0.1:$PROBE_PORT"
PROBE="http://127.0.0.1:$PROBE_PORT"
wait_for 10 "plain-HTTP /healthz on --health-listen beside mTLS" curl -sf "$PROBE/healthz"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/client.pem" \
	--key "$C/client.key" "$URL/readyz")
expect "probe port /readyz answers as the mTLS port does" \
	"$(curl -s -o /dev/null -w '%{http_code}' "$PROBE/readyz")" "$code"
for path in /metrics /v1/nodes; do
	expect "status port GET $path" "$(curl -s -o /dev/null -w '%{http_code}' "$PROBE$path")" 200
	expect "mTLS port GET $path, with the client certificate" "$(curl -s -o /dev/null -w '%{http_code}' \
		--cacert "$C/ca.pem" --cert "$C/client.pem" --key "$C/client.key" "$URL$path")" 404
done
expect "status port GET /nope" "$(curl -s -o /dev/null -w '%{http_code}' "$PROBE/nope")" 404
code=$(curl -s -o "$WORK/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary "@$PRIO" "$PROBE/prioritize")
expect "status port POST /prioritize (no extender without a client certificate)" "$code" 404
grep -q 'serves only GET /healthz, /readyz, /metrics, /v1/nodes and /v1/workloads' "$WORK/out" ||
	fail "404 does not say why: $(cat "$WORK/out")"
wait_for 10 "mTLS /healthz" curl -sf --cacert "$C/ca.pem" --cert "$C/client.pem" \
	--key "$C/client.key" "$URL/healthz"
# A made-up pod from anyone else changes nothing: one declaring 400G on a
# chosen node, sent without a client certificate, with one from another CA
# and to the status port, is never counted in flight (nor as a request); the
# same body with the scheduler's certificate is.
jq -c '.Pod.metadata.uid = "made-up-1" | .NodeNames = ["node-c"] |
	.Pod.metadata.annotations = {"kubernetes.io/ingress-bandwidth": "400G"}' "$PRIO" >"$WORK/made-up.json"
assumed() { curl -s "$PROBE/metrics" | awk '$1 == "netsched_scorer_inflight_total{event=\"assumed\"}" { print $2 }'; }
asked() { curl -s "$PROBE/metrics" | awk '$1 == "netsched_scorer_requests_total{verb=\"prioritize\"}" { print $2 }'; }
expect "in flight before anything" "$(assumed)" 0
curl -s -o /dev/null --cacert "$C/ca.pem" -X POST --data-binary "@$WORK/made-up.json" "$URL/prioritize"
curl -s -o /dev/null --cacert "$C/ca.pem" --cert "$C/intruder.pem" --key "$C/intruder.key" \
	-X POST --data-binary "@$WORK/made-up.json" "$URL/prioritize"
curl -s -o /dev/null -X POST --data-binary "@$WORK/made-up.json" "$PROBE/prioritize"
expect "made-up pod without the scheduler's certificate: counted in flight" "$(assumed)" 0
expect "made-up pod without the scheduler's certificate: prioritize requests" "$(asked)" 0
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/client.pem" \
	--key "$C/client.key" -X POST --data-binary "@$WORK/made-up.json" "$URL/prioritize")
expect "prioritize with the scheduler's client certificate" "$code" 200
expect "the same pod with the scheduler's certificate: counted in flight" "$(assumed)" 1
code=$(curl -s -o "$WORK/out" -w '%{http_code}' --cacert "$C/ca.pem" "$URL/healthz")
expect "no client certificate" "$code" 403
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/intruder.pem" \
	--key "$C/intruder.key" -X POST --data-binary "@$PRIO" "$URL/prioritize")
[ "$code" = 403 ] || [ "$code" = 000 ] || fail "a client certificate from another CA got $code"
echo "ok: a client certificate from another CA is refused ($code)"
grep -q "refused a request" "$WORK/scorer.log" || fail "no log line for the refused client"
# Issue 39: a certificate from the very CA the scorer trusts, for another name,
# gets 403 on every verb and path, and the log names it and the allowed names.
for path in /filter /prioritize /preempt /healthz; do
	code=$(curl -s -o "$WORK/out" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/evil.pem" \
		--key "$C/evil.key" -X POST --data-binary "@$PRIO" "$URL$path")
	expect "$path with CN=evil-client from the scheduler's CA" "$code" 403
done
evil_logged() {
	curl -s -o /dev/null --cacert "$C/ca.pem" --cert "$C/evil.pem" --key "$C/evil.key" "$URL/healthz"
	grep -Eq "refused a request \(.*\): client certificate CN=evil-client DNS:evil.example is not one of --client-names netsched-scheduler( |$)" "$WORK/scorer.log"
}
wait_for 10 "a log line naming evil-client and the allowed names" evil_logged
expect "evil-client's made-up pods: prioritize requests" "$(asked)" 1
kill "$SCORER"
wait "$SCORER" 2>/dev/null

# 4. Bad files at start-up: exit 2 with one line naming the file.
bad() {
	local want=$1 out rc
	shift
	out=$("$BIN/netsched-scorer" "$@" --check-config 2>&1)
	rc=$?
	[ "$rc" = 2 ] || fail "netsched-scorer $*: exit $rc, want 2 ($out)"
	grep -q -- "$want" <<<"$out" || fail "netsched-scorer $*: '$out' lacks '$want'"
	echo "ok: refused: $out"
}
bad "both --tls-cert and --tls-key" --tls-cert "$C/server.pem"
bad "need HTTPS" --tls-client-ca "$C/ca.pem"
bad "client-names a,,b: an empty name" --client-names "a,,b"
bad "missing.pem: No such file" --tls-cert "$C/missing.pem" --tls-key "$C/server.key"
bad "server.pem with .*server2.key: .*do not match" --tls-cert "$C/server.pem" --tls-key "$C/server2.key"
echo "not a certificate" >"$C/junk.pem"
bad "not a PEM file" --tls-cert "$C/junk.pem" --tls-key "$C/server.key"
echo "PASS: https"
