#!/usr/bin/env bash
# Reports over TLS (tls+tcp://, NNG with mbedTLS): an agent that trusts the
# scorer's CA delivers; one that trusts another CA, or speaks plain TCP to
# the TLS port, delivers nothing; half a TLS setup is refused at start-up.
set -u
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || fail "openssl not installed (run .ci/deps test)"
C=$WORK/certs
mkdir -p "$C"
for ca in ca other; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$ca" \
		-keyout "$C/$ca.key" -out "$C/$ca.pem" 2>/dev/null || fail "cannot make CA $ca"
done
# mbedTLS 2.28 checks the name against DNS entries only: the address goes in both.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
	-keyout "$C/scorer.key" -out "$C/scorer.csr" 2>/dev/null &&
	openssl x509 -req -in "$C/scorer.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile <(echo "subjectAltName=DNS:127.0.0.1,IP:127.0.0.1") \
		-out "$C/scorer.pem" 2>/dev/null || fail "cannot make the scorer certificate"
cat "$C/scorer.pem" "$C/scorer.key" >"$C/scorer-cert-key.pem"

LISTEN_PORT=$(free_port)
HTTP_PORT=$(free_port)
start scorer "$BIN/netsched-scorer" --listen "tls+tcp://127.0.0.1:$LISTEN_PORT" \
	--listen-cert-key "$C/scorer-cert-key.pem" --http "127.0.0.1:$HTTP_PORT"
wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
agent() { # NODE SCORER-URL [ARGS]
	local n=$1 url=$2
	shift 2
	start "agent-$n" "$BIN/netsched-agent" --node "$n" --interfaces lo --sample-interval 100ms \
		--window 1s --report-interval 200ms --scorer "$url" "$@"
}
agent trusted "tls+tcp://127.0.0.1:$LISTEN_PORT" --scorer-ca "$C/ca.pem"
agent wrongca "tls+tcp://127.0.0.1:$LISTEN_PORT" --scorer-ca "$C/other.pem"
agent plain "tcp://127.0.0.1:$LISTEN_PORT"
source_of() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$1\") | .source][0] // \"absent\""; }
trusted() { [ "$(source_of trusted)" = agent ]; }
wait_for 10 "reports over TLS from the agent that trusts the CA" trusted
sleep 2 # the others had as long; nothing of theirs may arrive
expect "an agent trusting another CA delivers nothing" "$(source_of wrongca)" absent
expect "plain TCP to the TLS port delivers nothing" "$(source_of plain)" absent
echo "ok: reports over TLS only from agents that verify the scorer"

out=$("$BIN/netsched-agent" --interfaces lo --scorer "tls+tcp://127.0.0.1:1" --check-config 2>&1)
expect "agent: tls+tcp:// without --scorer-ca: exit status" "$?" 2
grep -q -- "--scorer-ca" <<<"$out" || fail "unclear error: $out"
out=$("$BIN/netsched-scorer" --listen "tls+tcp://127.0.0.1:1" --check-config 2>&1)
expect "scorer: tls+tcp:// without --listen-cert-key: exit status" "$?" 2
grep -q -- "--listen-cert-key" <<<"$out" || fail "unclear error: $out"
echo "ok: half a TLS setup refused at start-up"
echo "PASS: transport tls"
