#!/usr/bin/env bash
# HTTPS against plain HTTP for the same small prioritize (100 names, ~2 KB),
# REQUESTS times over one kept-alive connection each (one curl process, the
# URL repeated: curl reuses the connection), so the TLS handshake is paid
# once, as the scheduler pays it. A Nagle stall would show as ~40 ms.
# Environment: O, BINDIR, REQUESTS (300).
set -u
cd "$(dirname "$0")/.."
BIN=${BINDIR:-bin}
N=${REQUESTS:-300}
. tests/integration/lib.sh
. bench/lib.sh
tmp=$WORK
command -v openssl >/dev/null || { echo "openssl not installed (run .ci/deps bench)"; exit 1; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
seq 0 99 | jq -R '"node-" + .' | jq -sc . >"$tmp/names.json"
jq -c --slurpfile n "$tmp/names.json" '.NodeNames = $n[0]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json >"$tmp/prio.json"
start_scorer --log-level error
p1=$HTTP_PORT p2=$(free_port)
start scorer-tls "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$(free_port)" \
	--http "127.0.0.1:$p2" --log-level error --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
wait_for 10 "the HTTPS scorer's /healthz" curl -sf --cacert "$tmp/cert.pem" "https://127.0.0.1:$p2/healthz"
run() { # LABEL URL [CURL ARGS]: per-request times of N requests on one connection
	local label=$1 url=$2 urls=()
	shift 2
	for _ in $(seq "$N"); do urls+=(-o /dev/null "$url/prioritize"); done
	curl -s "$@" -H 'Content-Type: application/json' --data-binary "@$tmp/prio.json" \
		-w '%{time_total} %{num_connects}\n' "${urls[@]}" >"$tmp/$label.txt"
	# The first request also pays the connection (and the TLS handshake).
	tail -n +2 "$tmp/$label.txt" | awk '{ print $1 * 1e6 }' | sort -n |
		awk -v l="$label" -v c="$(awk '{ s += $2 } END { print s }' "$tmp/$label.txt")" \
			'{ v[NR] = $1 } END { printf "%-6s p50 %6.0f us  p99 %6.0f us  max %6.0f us  over %d requests, %d connection(s)\n", l, v[int(NR * 0.5)], v[int(NR * 0.99)], v[NR], NR, c }'
}
echo "== HTTPS beside plain HTTP: prioritize with 100 names, one kept-alive connection"
bench_machine
run http "http://127.0.0.1:$p1"
run https "https://127.0.0.1:$p2" --cacert "$tmp/cert.pem"
