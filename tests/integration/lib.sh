# Shared helpers for the integration tests (sourced, bash).
# Every test runs the real binaries from $BIN (default bin/), keeps traffic on
# loopback or inside namespaces it created, and cleans up on any exit.

BIN=${BIN:-bin}
: "${TMPDIR:=/tmp}"
WORK=$(mktemp -d "$TMPDIR/netsched-it.XXXXXX")
PIDS=()
NETNS=()
# Commands (strings, eval'd) run after the processes stopped and before the
# namespaces go: what a killed helper may have left (tests/k8s/lab.sh).
CLEANUP_HOOKS=()

# stop_pids PID...: SIGTERM, up to STOP_WAIT_S (10) s to exit, then SIGKILL
# for what is left (iperf3 can deadlock in its SIGTERM handler), and reaped.
stop_pids() {
	local p left deadline=$((SECONDS + ${STOP_WAIT_S:-10}))
	[ $# -gt 0 ] || return 0
	kill "$@" 2>/dev/null
	while left=$(ps -o pid=,stat= -p "$(IFS=,; echo "$*")" | awk '$2 !~ /^Z/ { print $1 }') &&
		[ -n "$left" ] && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
	[ -n "$left" ] && kill -9 $left 2>/dev/null
	for p in "$@"; do wait "$p" 2>/dev/null; done
}

cleanup() {
	local p ns
	stop_pids "${PIDS[@]}"
	for p in "${CLEANUP_HOOKS[@]}"; do eval "$p"; done
	for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/*.log "$WORK"/*.trace; do
		[ -f "$f" ] || continue
		echo "--- last lines of $(basename "$f")" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $1 needs root (network namespaces)"
		exit 77
	fi
}

# A TCP port no socket on this machine uses, from a range tests own: below
# the kernel's ephemeral range (ip_local_port_range, 32768 up by default),
# so an outgoing connection (the apiserver's, etcd's, another test's) can
# never be holding it when a server of ours binds it. Never one this test
# was already given: several are often picked before any is bound (etcd,
# apiserver, scheduler), and a repeat failed a run with "address already in
# use". The list is a file because callers run this in $(...). Tests run
# side by side (tests/run-all) each pick from their own share of the range,
# NETSCHED_PORT_SLOT of NETSCHED_PORT_SLOTS, so two never race for one port
# between checking it and binding it.
free_port() {
	local p low base span slots=${NETSCHED_PORT_SLOTS:-1} slot=${NETSCHED_PORT_SLOT:-0}
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$low" -gt 21000 ] 2>/dev/null || low=32768
	[ "$slots" -ge 1 ] 2>/dev/null && [ "$slot" -ge 0 ] 2>/dev/null && [ "$slot" -lt "$slots" ] ||
		fail "free_port: NETSCHED_PORT_SLOT $slot is not one of NETSCHED_PORT_SLOTS $slots"
	span=$(((low - 20000) / slots))
	base=$((20000 + slot * span))
	for _ in $(seq 50); do
		p=$((base + RANDOM % span))
		if ! grep -qx "$p" "$WORK/ports.given" 2>/dev/null &&
			[ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p" >>"$WORK/ports.given"
			echo "$p"
			return
		fi
	done
	fail "no free port"
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls every 100 ms, never sleeps blindly.
wait_for() {
	local limit=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s%N) + limit * 1000000000))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] || fail "timed out after ${limit}s waiting for $what"
		sleep 0.1
	done
}

# once_reading LOG: waits until an agent started with --once (its stderr in
# LOG) has taken its first reading: traffic sent after this falls inside its
# interval however late a loaded machine started it.
once_reading() {
	wait_for 20 "the agent's first reading ($1)" grep -q -- "--once: first reading taken" "$1"
}

# start NAME CMD...: runs a daemon in the background, logging to $WORK/NAME.log;
# its pid is in LAST_PID.
start() {
	local name=$1
	shift
	"$@" >"$WORK/$name.log" 2>&1 &
	LAST_PID=$!
	PIDS+=($!)
}

# http METHOD PATH [BODYFILE]: prints "STATUS BODY" from the scorer under test.
http() {
	local method=$1 path=$2 file=${3:-}
	local args=(-s -o "$WORK/body" -w '%{http_code}' -X "$method")
	[ -n "$file" ] && args+=(-H 'Content-Type: application/json' --data-binary "@$file")
	local code
	code=$(curl "${args[@]}" "http://127.0.0.1:$HTTP_PORT$path") || code=000
	echo "$code $(cat "$WORK/body" 2>/dev/null)"
}

start_scorer() {
	LISTEN_PORT=$(free_port)
	HTTP_PORT=$(free_port)
	start scorer "$BIN/netsched-scorer" --listen "tcp://127.0.0.1:$LISTEN_PORT" \
		--http "127.0.0.1:$HTTP_PORT" "$@"
	wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"
}

# expect WHAT GOT WANT: compares and says what was compared when it fails.
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	echo "ok: $1"
}

# make_nodes HUB NODE...: a hub namespace joined to each node namespace by a
# veth pair (hub-N <-> eth0), addresses 10.231.I.1 (hub) and 10.231.I.2 (node).
# IPv6 is off inside them so an idle link carries no neighbour chatter.
make_nodes() {
	local hub=$1 ns i=0
	shift
	for ns in "$hub" "$@"; do
		ip netns add "$ns" || fail "cannot create namespace $ns"
		NETNS+=("$ns")
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
		ip -n "$ns" link set lo up
	done
	for ns in "$@"; do
		i=$((i + 1))
		ip link add "hub-$i" netns "$hub" type veth peer name eth0 netns "$ns" ||
			fail "cannot create a veth pair for $ns"
		ip -n "$hub" addr add "10.231.$i.1/24" dev "hub-$i"
		ip -n "$ns" addr add "10.231.$i.2/24" dev eth0
		ip -n "$hub" link set "hub-$i" up
		ip -n "$ns" link set eth0 up
	done
}

# iperf_server NS ADDR: a one-shot iperf3 server inside NS; waits until it
# listens (checked with ss: a test connection would use up the one shot).
iperf_server() {
	local ns=$1 addr=$2
	start "iperf-server-$ns" ip netns exec "$ns" iperf3 -s -1 -B "$addr" -p 5201
	wait_for 5 "iperf3 server in $ns" \
		bash -c "ip netns exec '$ns' ss -Hltn 'sport = :5201' | grep -q ."
}

# In directory $C: test_ca NAME, a CA (NAME.pem, NAME.key); test_cert CA
# NAME CN [SAN], a certificate CA signs: a server's with SAN (e.g.
# "IP:127.0.0.1"), else a client's (extendedKeyUsage clientAuth).
test_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=$1" -keyout "$C/$1.key" -out "$C/$1.pem" 2>/dev/null || fail "cannot make CA $1"
}
test_cert() {
	local ext
	ext=$( [ -n "${4:-}" ] && echo "subjectAltName=$4" || echo "extendedKeyUsage=clientAuth")
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$3" \
		-keyout "$C/$2.key" -out "$C/$2.csr" 2>/dev/null &&
		openssl x509 -req -in "$C/$2.csr" -CA "$C/$1.pem" -CAkey "$C/$1.key" \
			-CAcreateserial -days 2 -extfile <(echo "$ext") -out "$C/$2.pem" 2>/dev/null ||
		fail "cannot make certificate $2"
}
