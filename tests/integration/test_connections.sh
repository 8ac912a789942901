#!/usr/bin/env bash
# Fair connection slots whatever the number of addresses (issue 24): while
# hostile clients from many source addresses hold every connection they can
# (idle after one request, trickling headers, trickling a body, silent TCP,
# TLS without a ClientHello), each of the scheduler's calls on a NEW
# connection from another address is answered. Once the per-address cap
# (32) times eight addresses was every slot, and 20 of 21 such calls timed
# out. The same for the probe port (--health-listen) and the agent's
# /metrics, whose probes failed the same way. Each attack runs a few
# seconds; calls get curl's 2 s (the latency under attack is bench/hostile.sh's).
set -u
. "$(dirname "$0")/lib.sh"

HOSTILE=tests/tools/hostile_clients.py
jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"

# attack NAME PORT KIND ADDRS PER [EVERY]: hostile clients in the background
# (tests/tools/hostile_clients.py) until stop_attack; their counts go to
# $WORK/NAME.stats. Every slot they can get is taken when it returns.
attack() {
	local name=$1 port=$2 kind=$3 addrs=$4 per=$5 every=${6:-2}
	python3 "$HOSTILE" --port "$port" --kind "$kind" --addrs "$addrs" --per "$per" \
		--seconds 30 --every "$every" --stats "$WORK/$name.stats" >/dev/null &
	ATTACK=$!
	PIDS+=("$ATTACK")
	sleep 1.5
}
stop_attack() {
	kill "$ATTACK" && wait "$ATTACK"
}

# calls N URL [CURL-ARGS...]: N calls, each on a new connection from
# 127.0.0.1, 0.2 s apart; prints their status codes.
calls() {
	local n=$1 url=$2 codes=()
	shift 2
	for _ in $(seq "$n"); do
		codes+=("$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$@" "$url")")
		sleep 0.2
	done
	echo "${codes[*]}"
}
prioritize() {
	calls 6 "$1/prioritize" -H 'Content-Type: application/json' --data-binary "@$WORK/prio.json" \
		"${@:2}"
}
all_200="200 200 200 200 200 200"

# under NAME PORT KIND ADDRS PER URL [CURL-ARGS...]: the scheduler's calls
# to URL while the attack holds on.
under() {
	local name=$1 port=$2 kind=$3 addrs=$4 per=$5 url=$6 codes
	shift 6
	attack "$name" "$port" "$kind" "$addrs" "$per"
	codes=$(prioritize "$url" "$@")
	stop_attack
	expect "new-connection prioritize calls while $(cat "$WORK/$name.stats")" "$codes" "$all_200"
}

start_scorer
url=http://127.0.0.1:$HTTP_PORT
under idle "$HTTP_PORT" idle 127.0.0.10-127.0.0.18 32 "$url"
under slow-body "$HTTP_PORT" slow-body 127.0.0.10-127.0.0.18 32 "$url"
under slow-headers "$HTTP_PORT" slow-headers 127.0.0.10-127.0.0.18 32 "$url"
under silent "$HTTP_PORT" silent 250 2 "$url"
reclaimed=$(curl -s "$url/metrics" |
	awk '$1 ~ /^netsched_scorer_http_connections_reclaimed_total/ { n += $2 } END { print n + 0 }')
[ "$reclaimed" -gt 0 ] || fail "netsched_scorer_http_connections_reclaimed_total counts nothing"
echo "ok: /metrics counts $reclaimed connections reclaimed to make room"
grep -Eq ' 127\.0\.0\.1[0-8]: [0-9]+ connections open, the most of any address; [0-9]+ in all, limit 256; closed the oldest (silent|idle|busy) one' \
	"$WORK/scorer.log" || fail "no log line naming the address that gave up a connection, its count and the limit"
echo "ok: the reclaimed connections are logged with their address, its count and the limit"

# A body has a deadline too: 1,000 bytes announced, a byte a second. It
# gets the header deadline (5 s) and 1,000 bytes at 1 MiB/s: closed by 7 s.
python3 - "$HTTP_PORT" >"$WORK/body.out" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n[")
end = time.monotonic() + 7
while time.monotonic() < end:
    time.sleep(1)
    try:
        s.send(b"1")
        s.setblocking(False)
        if s.recv(4096) == b"":
            break
    except BlockingIOError:
        continue
    except OSError:
        break
print("closed" if time.monotonic() < end else "open", round(7 - (end - time.monotonic()), 1))
PY
read -r state after <"$WORK/body.out"
expect "a body trickled a byte a second, after its deadline (closed after $after s)" "$state" closed

# The probe port: the kubelet's liveness probe while 2 addresses hold 32
# idle connections each (every slot once), then 100 addresses 2 each.
HP=$(free_port)
LP=$(free_port)
start scorer-probes "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LP" --http "127.0.0.1:$(free_port)" \
	--health-listen "127.0.0.1:$HP"
wait_for 10 "the probe port" curl -sf "http://127.0.0.1:$HP/healthz"
for spec in "127.0.0.10-127.0.0.11 32" "100 2"; do
	read -r addrs per <<<"$spec"
	attack probes "$HP" idle "$addrs" "$per"
	codes=$(calls 6 "http://127.0.0.1:$HP/healthz")
	stop_attack
	expect "liveness probes while $(cat "$WORK/probes.stats")" "$codes" "$all_200"
done

# HTTPS: TCP connections that never send a ClientHello, from 250 addresses.
C=$WORK/certs
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=scorer \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$C/s.key" -out "$C/s.pem" 2>/dev/null ||
	fail "cannot make a certificate"
SP=$(free_port)
start scorer-tls "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$(free_port)" --http "127.0.0.1:$SP" \
	--tls-cert "$C/s.pem" --tls-key "$C/s.key"
wait_for 10 "HTTPS scorer /healthz" curl -sf --cacert "$C/s.pem" "https://127.0.0.1:$SP/healthz"
under tls-silent "$SP" silent 250 2 "https://127.0.0.1:$SP" --cacert "$C/s.pem"

# The agent's /metrics: its probes while 8 addresses trickle a body on 4
# connections each (the per-address cap; every slot once), then 60
# addresses stay idle on 2 each.
M=$(free_port)
start agent "$BIN/netsched-agent" --node node-conn --interfaces lo --sample-interval 100ms \
	--window 1s --report-interval 200ms --scorer "tcp://127.0.0.1:$(free_port)" \
	--metrics "127.0.0.1:$M"
wait_for 10 "agent /healthz" curl -sf "http://127.0.0.1:$M/healthz"
for spec in "slow-body 127.0.0.10-127.0.0.17 4" "idle 60 2"; do
	read -r kind addrs per <<<"$spec"
	attack agent "$M" "$kind" "$addrs" "$per" 1
	codes=$(calls 6 "http://127.0.0.1:$M/healthz")
	stop_attack
	expect "agent liveness probes while $(cat "$WORK/agent.stats")" "$codes" "$all_200"
done
curl -s "http://127.0.0.1:$M/metrics" |
	awk '$1 ~ /^netsched_agent_http_(deadline_closes|connections_reclaimed)_total/ { n += $2; seen++ }
	     END { exit !(seen == 3 && n > 0) }' ||
	fail "the agent's /metrics does not count the connections it closed"
echo "ok: the agent counts the connections it closed"
