# Every attack of tests/tools/hostile_clients.py at once, each kind from
# addresses of its own (sourced after tests/integration/lib.sh): what
# bench/hostile.sh and tests/k8s/test_k8s_hostile.sh run against a scorer.
#
#   hostile_mix VERBS STATUS REPORTS [TLS [POD_BODY]]
#       on the verbs' port    idle after a GET, 9 addresses x 32; slow headers,
#                             9 x 32; slow bodies (32 MiB announced, a byte every
#                             2 s), 9 x 32; silent TCP (TLS without a
#                             ClientHello), 250 x 2; one byte and close; 400 KB
#                             bodies nested 200,000 deep, 2 clients; 32 MiB
#                             bodies of one-byte tokens, 2 clients; with
#                             POD_BODY, a made-up pod posted to /prioritize in
#                             a loop, 2 clients
#       on the status port    /v1/nodes asked and never read, 32 x 2; /v1/nodes
#                             in a loop, 4 clients; idle, 100 x 2
#       on the report port    NNG handshake then idle, 200 x 4; part-sent 32 KiB
#                             messages, 200 x 4; raw TCP, 200 x 4
#     TLS "tls": the verbs' port serves TLS, and every client there does the
#     handshake (without a client certificate) before its attack.
#   hostile_start PORT KIND ADDRS PER [EVERY [ARGS...]]   one kind
#   hostile_stop      ends them all; prints each one's counts
#   hostile_stats KIND   the counts of the last KIND stopped
# Each runs at most HOSTILE_SECONDS (600) and reopens what the scorer closes,
# at nice HOSTILE_NICE (0; 19 where the attackers stand for clients on other
# machines, which share no CPU with the scorer and the scheduler).

HOSTILE_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hostile_clients.py
HOSTILE=()

hostile_start() {
	local port=$1 kind=$2 addrs=$3 per=$4 every=${5:-2} name
	shift $(($# < 5 ? $# : 5))
	name="$kind-${#HOSTILE[@]}"
	nice -n "${HOSTILE_NICE:-0}" python3 "$HOSTILE_PY" --port "$port" --kind "$kind" --addrs "$addrs" --per "$per" \
		--every "$every" --seconds "${HOSTILE_SECONDS:-600}" --stats "$WORK/$name.stats" \
		"$@" >/dev/null &
	PIDS+=("$!")
	HOSTILE+=("$!:$name")
}

hostile_stop() {
	local m
	for m in "${HOSTILE[@]}"; do kill "${m%%:*}" 2>/dev/null; done
	for m in "${HOSTILE[@]}"; do wait "${m%%:*}" 2>/dev/null; done
	for m in "${HOSTILE[@]}"; do echo "  $(cat "$WORK/${m#*:}.stats" 2>/dev/null)"; done
	HOSTILE=()
}

hostile_stats() {
	cat "$(ls -t "$WORK/$1"-*.stats 2>/dev/null | head -n 1)" 2>/dev/null
}

hostile_mix() {
	local verbs=$1 status=$2 reports=$3 tls=()
	[ "${4:-}" = tls ] && tls=(--tls)
	hostile_start "$verbs" idle 127.0.0.10-127.0.0.18 32 2 "${tls[@]}"
	hostile_start "$verbs" slow-headers 127.0.0.20-127.0.0.28 32 2 "${tls[@]}"
	hostile_start "$verbs" slow-body 127.0.0.30-127.0.0.38 32 2 "${tls[@]}"
	hostile_start "$verbs" silent 250 2
	hostile_start "$status" unread-status 127.0.2.1-127.0.2.32 2
	hostile_start "$status" status-loop 127.0.3.1-127.0.3.4 1
	hostile_start "$verbs" one-byte 127.0.3.10-127.0.3.10 1
	hostile_start "$verbs" deep 127.0.3.11-127.0.3.11 2 2 "${tls[@]}"
	hostile_start "$verbs" big 127.0.3.12-127.0.3.12 2 2 "${tls[@]}"
	[ -n "${5:-}" ] &&
		hostile_start "$verbs" made-up-pod 127.0.3.20-127.0.3.21 1 2 "${tls[@]}" --body "$5"
	hostile_start "$status" idle 127.0.4.1-127.0.4.100 2
	hostile_start "$reports" nng-idle 127.0.5.1-127.0.5.200 4
	hostile_start "$reports" nng-partial 127.0.6.1-127.0.6.200 4
	hostile_start "$reports" nng-raw 127.0.7.1-127.0.7.200 4
}
