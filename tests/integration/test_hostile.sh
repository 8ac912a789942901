#!/usr/bin/env bash
# Clients that misbehave on the connection, not in the body: bursts of
# clients that send a byte (or nothing, before a TLS handshake) and close.
# Each must be forgotten at once: /healthz and a real scheduler request still
# answer, no connection is left in CLOSE-WAIT holding a slot, and the log
# does not get a line per aborted connection. Clients that announce the
# largest body and trickle it must not take the body budget from others.
set -u
. "$(dirname "$0")/lib.sh"

# burst PORT BYTES: 300 clients connect, send BYTES, close, within a second.
burst() {
	python3 - "$1" "$2" <<'PY'
import socket, sys
port, data = int(sys.argv[1]), sys.argv[2].encode()
for _ in range(300):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    if data:
        s.send(data)
    s.close()
PY
}

close_wait() { ss -Htn state close-wait "( sport = :$1 )" | wc -l; }

jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"

start_scorer
burst "$HTTP_PORT" "P" || fail "the burst could not connect"
code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")
expect "/healthz right after 300 one-byte clients" "$code" 200
read -r code _ <<<"$(http POST /prioritize "$WORK/prio.json")"
expect "a real prioritize right after them" "$code" 200
wait_for 5 "no connection left in CLOSE-WAIT" test "$(close_wait "$HTTP_PORT")" -eq 0
echo "ok: no connection left in CLOSE-WAIT"
lines=$(grep -c ' warn http: ' "$WORK/scorer.log")
[ "$lines" -le 5 ] || fail "$lines log lines for one burst of aborted connections"
echo "ok: $lines log line(s) for 300 aborted connections"

# Six clients announce a 32 MiB body each (the limit) and send a few bytes:
# memory is charged for bytes received, so a real request still gets in.
python3 - "$HTTP_PORT" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
held = []
for _ in range(6):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.send(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: 33554432\r\n\r\n{\"NodeNames\":[")
    held.append(s)
time.sleep(6)
PY
TRICKLE=$!
PIDS+=("$TRICKLE")
sleep 1
read -r code body <<<"$(http POST /prioritize "$WORK/prio.json")"
expect "a real prioritize while six clients hold 32 MiB announcements" "$code" 200
kill "$TRICKLE" 2>/dev/null

# The budget itself (4 x --max-body, here 8 MiB, its last eighth only for
# requests of at most 1 MiB): five clients each send 2,000,000 bytes of a
# body and hold. Three fit, the fourth and fifth overflow it; a real request
# still gets in meanwhile (the reserve). Once they finish, the overflowing
# ones are answered 503 (and so may others whose JSON tokens find no room),
# none is left waiting, and /metrics counts every 503.
main_port=$HTTP_PORT
start_scorer --max-body 2Mi
python3 - "$HTTP_PORT" >"$WORK/busy.out" <<'PY' &
import socket, sys, time
port, n = int(sys.argv[1]), 2000000
held = []
for _ in range(5):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (n + 2) + b"[" + b" " * n)
    held.append(s)
    time.sleep(0.2)
time.sleep(2)
codes = []
for s in held:
    s.sendall(b"]")
    codes.append(s.recv(4096).split(b" ")[1].decode())
print(" ".join(codes))
PY
BUSY=$!
PIDS+=("$BUSY")
sleep 1.5
read -r code body <<<"$(http POST /prioritize "$WORK/prio.json")"
expect "a real prioritize while five clients hold 10 MB of an 8 MiB budget" "$code" 200
wait "$BUSY" || fail "the budget clients failed"
codes=$(cat "$WORK/busy.out")
echo "answers to the five held bodies: $codes"
busy=$(tr ' ' '\n' <<<"$codes" | grep -c '^503$')
[ "$busy" -ge 2 ] && [ -z "$(tr ' ' '\n' <<<"$codes" | grep -Ev '^(400|503)$')" ] ||
	fail "answers to the five held bodies: got '$codes', want 400 or 503 each and at least two 503s"
echo "ok: the bodies over the budget were answered 503 ($busy of 5)"
expect "netsched_scorer_http_busy_total" "$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
	awk '$1 == "netsched_scorer_http_busy_total" { print $2 }')" "$busy"
HTTP_PORT=$main_port

# A body over 1 MiB is answered from the big-request thread (its HTTP
# thread goes on serving the others): the same answer as inline.
python3 -c "
import sys
t = open('$WORK/prio.json').read()
open('$WORK/prio-padded.json', 'w').write(t[:-1] + ' ' * (1200 * 1024) + t[-1:])"
read -r code small <<<"$(http POST /prioritize "$WORK/prio.json")"
read -r code2 padded <<<"$(http POST /prioritize "$WORK/prio-padded.json")"
expect "a 1.2 MB prioritize (the big-request thread)" "$code2 $padded" "$code $small"

# Two 400 KB bodies nested 200,000 deep, at once: refused after one linear
# scan, while /healthz keeps answering (they once took a minute each).
python3 -c "
d = 200000
open('$WORK/deep1.json', 'w').write('{\"NodeNames\":' + '[' * d + ']' * d + '}')
open('$WORK/deep2.json', 'w').write('{\"Pod\":' + '{\"a\":' * d + '1' + '}' * d + ',\"NodeNames\":[\"a\"]}')"
for f in deep1 deep2; do
	curl -s -m 30 -o "$WORK/$f.body" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$WORK/$f.json" "http://127.0.0.1:$HTTP_PORT/prioritize" >"$WORK/$f.code" &
done
wait_for 10 "answers to the deep bodies" bash -c "[ -s '$WORK/deep1.code' ] && [ -s '$WORK/deep2.code' ]"
for f in deep1 deep2; do
	expect "$f: 400 naming the depth limit" \
		"$(cat "$WORK/$f.code") $(grep -o 'deeper than 64 levels' "$WORK/$f.body")" \
		"400 deeper than 64 levels"
done

# 60 pods, each with a different malformed bandwidth annotation, in a
# second: each is a 200 with the annotation ignored, and the log gets a
# line a second, not a line each.
started=$(date +%s)
for i in $(seq 60); do
	jq -c --arg v "fast$i" '.Pod.metadata.annotations["kubernetes.io/ingress-bandwidth"] = $v' \
		"$WORK/prio.json" >"$WORK/bad-ann.json"
	read -r code _ <<<"$(http POST /prioritize "$WORK/bad-ann.json")"
	[ "$code" = 200 ] || fail "bad annotation $i: $code"
done
# A line a second at most: as many as the seconds the 60 took, and one.
secs=$(($(date +%s) - started + 1))
lines=$(grep -c 'is not a quantity' "$WORK/scorer.log")
[ "$lines" -le "$((secs + 1))" ] && [ "$lines" -lt 60 ] ||
	fail "$lines log lines for 60 malformed annotations in $secs s"
echo "ok: 60 malformed annotations in $secs s, $lines log line(s)"

# HTTPS: raw TCP connections that close before the TLS handshake.
C=$WORK/certs
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=scorer \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$C/s.key" -out "$C/s.pem" 2>/dev/null ||
	fail "cannot make a certificate"
LP=$(free_port) HP=$(free_port)
start scorer-tls "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LP" --http "127.0.0.1:$HP" \
	--tls-cert "$C/s.pem" --tls-key "$C/s.key"
wait_for 10 "HTTPS scorer /healthz" curl -sf --cacert "$C/s.pem" "https://127.0.0.1:$HP/healthz"
burst "$HP" "" || fail "the HTTPS burst could not connect"
burst "$HP" "x" || fail "the HTTPS burst could not connect"
code=$(curl -s -m 2 --cacert "$C/s.pem" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$HP/healthz")
expect "HTTPS /healthz right after 600 clients closing before the handshake" "$code" 200
wait_for 5 "no HTTPS connection left in CLOSE-WAIT" test "$(close_wait "$HP")" -eq 0
echo "ok: no HTTPS connection left in CLOSE-WAIT"
