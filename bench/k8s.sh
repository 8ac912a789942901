#!/usr/bin/env bash
# Throughput of a real kube-scheduler v1.20.2 (+ kube-apiserver + etcd on
# 127.0.0.1, tests/k8s/lib.sh) with netsched as its extender, against the
# same scheduler with no extender and with the *floor* (bench/floor.c: the
# cheapest correct extender, which echoes the nodes from /filter and answers
# [] to /prioritize over keep-alive HTTP with TCP_NODELAY), in one run.
# Variants (K8S_VARIANTS), EXTENDER:CONFIG:
#   none                    no extender
#   floor:names             the floor, filter + prioritize, node names
#   floor-scores:names      the floor with --scores: prioritize gives every
#                           node a score, which the scheduler must decode as
#                           it decodes netsched's (the floor's [] costs it
#                           nothing): what any scoring extender pays
#   netsched:names          netsched as deploy/ ships it (filter + prioritize,
#                           node names, its scorer args, the pod watch on),
#                           but over plain HTTP like the floor: deploy/'s
#                           mTLS (--tls-*, enableHTTPS) is left out
#   floor:prioritize        the floor, prioritize only
#   netsched:prioritize     netsched, prioritize only (deploy/*prioritize-only*)
#   and on demand: CONFIG full (filter + prioritize, full Node objects), and
#   EXTENDER netsched-nowatch (the same scorer with --pod-watch off),
#   netsched-full (with --prioritize-reply full: every node in the reply)
#   and netsched-ab (the scorer binary K8S_AB_BIN, another build, run as
#   netsched is: a change measured against the build before it in the same
#   runs, which separate benchmarks minutes apart are too noisy for).
# Each run: a fresh etcd and apiserver, K8S_NODES Node objects (100),
# K8S_PODS (3,000) pending pods created first; for netsched a fresh scorer
# watching that cluster's pods, with fresh reports for every node from the
# feed tool (as agents send them: each node once a second); then the
# scheduler starts and its pods/s is measured from its own log, first
# binding to last (start-up excluded). 3,000 pods bind in about 5 s: with
# 600 (1 s), a second of the machine's other work moved a variant's pods/s
# by a quarter from run to run, and the floor's and netsched's ranges
# overlapped. K8S_RUNS runs (3); every run measures every variant, in an
# order that rotates from run to run, so drift and the machine's other
# work hit all alike. Nothing is reniced: the scheduler, the apiserver,
# etcd and the extender share the machine's CPUs as they would on a small
# control plane.
# Printed: each variant's median pods/s, its ratio to the floor and to the
# scoring floor of its configuration and to no extender (of the medians,
# and the median and range of the per-run ratios), CPU ms per pod of each
# process, and the scheduler's own mean scheduling-algorithm time per pod
# (its metrics: extenders included). Then: a hung scorer's cost per pod.
# K8S_GOGC sets the scheduler's GOGC (Go's default 100 when unset).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BIN=${BINDIR:-bin}
. tests/integration/lib.sh
. tests/k8s/lib.sh
FEED=${FEED:-${O:-build}/rel/bench/feed}
FLOOR=${FLOOR:-${O:-build}/rel/bench/floor}
NODES=${K8S_NODES:-100}
PODS=${K8S_PODS:-3000}
RUNS=${K8S_RUNS:-3}
VARIANTS=${K8S_VARIANTS:-none floor:names floor-scores:names netsched:names floor:prioritize netsched:prioritize}
for f in "$FEED" "$FLOOR" "$BIN/netsched-scorer"; do
	[ -x "$f" ] || fail "$f not found (make bench-tools builds it)"
done
case " $VARIANTS" in
*" netsched-ab:"*) [ -x "${K8S_AB_BIN:-}" ] || fail "netsched-ab needs K8S_AB_BIN, a scorer binary" ;;
esac
command -v jq >/dev/null || fail "jq not installed (run .ci/deps bench)"
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps bench)"
k8s_init

echo "== kube-scheduler v1.20.2 throughput: no extender, the floor, netsched ($NODES nodes, $PODS pending pods, $RUNS runs)"
echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), load average $(cut -d ' ' -f 1-3 /proc/loadavg) (at start)"
echo "nothing reniced${K8S_GOGC:+; scheduler GOGC=$K8S_GOGC}; qps/burst 5000/10000 (the default 50 caps binds at ~50 pods/s)"

# floor_up NAME [ARGS...]: bench/floor started as NAME; its URL in FLOOR_UP_URL.
floor_up() {
	local name=$1
	shift
	start "$name" "$FLOOR" --http 127.0.0.1:0 "$@"
	wait_for 5 "the $name extender" grep -q '^listening on' "$WORK/$name.log"
	FLOOR_UP_URL=http://$(sed -n 's/^listening on //p' "$WORK/$name.log")
}
floor_up floor
FLOOR_PID=$LAST_PID FLOOR_URL=$FLOOR_UP_URL
case " $VARIANTS" in
*" floor-scores:"*)
	floor_up floor-scores --scores
	SCORES_PID=$LAST_PID SCORES_URL=$FLOOR_UP_URL
	;;
esac
mapfile -t NAMES < <(seq -f 'node-%g' 0 $((NODES - 1)))

# klog time of day (HH:MM:SS.micro) of a log line, in seconds.
secs() { awk '{ split($2, t, ":"); printf "%.6f\n", t[1] * 3600 + t[2] * 60 + t[3] }'; }
# cpu PID: user + system CPU time of a process (all its threads), in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
TICK=$(getconf CLK_TCK)
# A Prometheus text metric's value (summed over labels) from URL.
# The scorer's own time answering (SCORER_URL), seconds: the sum of its
# request duration histograms.
served() { metric "$SCORER_URL/metrics" netsched_scorer_request_duration_seconds_sum; }
metric() { curl -s -m 2 "$1" | awk -v m="$2" '$1 == m || index($1, m "{") == 1 { s += $2 } END { printf "%.6f\n", s }'; }

# netsched_up CONFIG [SCORER-ARGS...]: a scorer as deploy/ ships it on this
# cluster (pod watch through the cluster's kubeconfig), its table filled by
# the feed; SCORER_PID, SCORER_URL, FEED_PID.
netsched_up() {
	local listen http args
	listen=$(free_port) http=$(free_port)
	mapfile -t args < <(python3 tests/k8s/shipped.py args scorer -- \
		"--listen=tcp://127.0.0.1:$listen" "--http=127.0.0.1:$http" --health-listen=drop \
		--key-file=drop --tls-cert=drop --tls-key=drop --tls-client-ca=drop \
		"--kubeconfig=$WORK/kubeconfig" "$@")
	start "scorer-$K8S_RUN" "${SCORER_BIN:-$BIN/netsched-scorer}" "${args[@]}"
	SCORER_PID=$LAST_PID SCORER_URL=http://127.0.0.1:$http
	wait_for 10 "scorer /healthz" curl -sf "$SCORER_URL/healthz"
	start "feed-$K8S_RUN" "$FEED" --scorer "tcp://127.0.0.1:$listen" --nodes "$NODES" --senders 1 \
		--rate 1 --duration 3600s
	FEED_PID=$LAST_PID
	wait_for 15 "$NODES nodes with data in /v1/nodes" bench_known
}
bench_known() {
	[ "$(curl -s "$SCORER_URL/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length')" = "$NODES" ]
}

# logged_binds LOG N: the scheduler logged N bindings.
logged_binds() { [ "$(grep -c 'Successfully bound pod' "$1")" -ge "$2" ]; }

# one VARIANT PODS [TIMEOUT] [URL]: a fresh cluster, PODS pending pods, the
# scheduler started with the variant's extender; prints "pods/s
# seconds-per-pod extender-timeouts", and leaves CPU milliseconds per pod of
# scheduler, apiserver, etcd and the extender (from the scheduler's start to
# the last binding) and the scheduler's mean algorithm time in CPU_LINE.
# URL: where the extender is (the hung stub), instead of starting one.
one() {
	local variant=$1 n=$2 timeout=${3:-100ms} url=${4:-} ext=${1%%:*} config=${1#*:}
	local log first last c_sc c_api c_etcd c_ext=0 ext_pid='' algo srv0=0 srv=0
	[ "$variant" = none ] && config=none
	k8s_ports
	k8s_up_api
	k8s_nodes "${NAMES[@]}"
	k8s_pods bench "$n"
	SCORER_PID='' FEED_PID=''
	if [ -z "$url" ]; then
		case $ext in
		none) ;;
		floor) url=$FLOOR_URL ext_pid=$FLOOR_PID ;;
		floor-scores) url=$SCORES_URL ext_pid=$SCORES_PID ;;
		netsched) netsched_up; url=$SCORER_URL ext_pid=$SCORER_PID ;;
		netsched-nowatch) netsched_up --pod-watch=off; url=$SCORER_URL ext_pid=$SCORER_PID ;;
		netsched-full) netsched_up --prioritize-reply=full; url=$SCORER_URL ext_pid=$SCORER_PID ;;
		netsched-ab) SCORER_BIN=$K8S_AB_BIN netsched_up; url=$SCORER_URL ext_pid=$SCORER_PID ;;
		*) fail "unknown extender $ext in variant $variant" ;;
		esac
	fi
	k8s_config "$WORK/bench.yaml" "$config" "$url" "$timeout" 5000
	c_api=$(cpu "${K8S_PIDS[1]}") c_etcd=$(cpu "${K8S_PIDS[0]}")
	[ -n "$ext_pid" ] && c_ext=$(cpu "$ext_pid")
	[ -n "$SCORER_PID" ] && srv0=$(served)
	k8s_up_scheduler "$WORK/bench.yaml" env ${K8S_GOGC:+GOGC=$K8S_GOGC}
	log=$WORK/scheduler-$K8S_RUN.log
	# Counted in the scheduler's log, not by listing pods: a kubectl list
	# every 100 ms took a fifth of the CPU the measurement is about.
	wait_for 300 "$n pods bound (the scheduler's log)" logged_binds "$log" "$n"
	[ "$(k8s_bound bench)" -ge "$n" ] || fail "the scheduler logged $n bindings, the apiserver has fewer"
	c_sc=$(cpu "${K8S_PIDS[2]}")
	[ -n "$SCORER_PID" ] && srv=$(awk -v a="$srv0" -v b="$(served)" 'BEGIN { print b - a }')
	algo=$(awk -v s="$(metric "http://127.0.0.1:$K8S_SCHED_PORT/metrics" scheduler_scheduling_algorithm_duration_seconds_sum)" \
		-v c="$(metric "http://127.0.0.1:$K8S_SCHED_PORT/metrics" scheduler_scheduling_algorithm_duration_seconds_count)" \
		'BEGIN { printf "%.3f", (c > 0 ? s * 1000 / c : 0) }')
	CPU_LINE=$(awk -v n="$n" -v k="$TICK" -v sc="$c_sc" -v api="$(($(cpu "${K8S_PIDS[1]}") - c_api))" \
		-v etcd="$(($(cpu "${K8S_PIDS[0]}") - c_etcd))" \
		-v ext="$([ -n "$ext_pid" ] && echo $(($(cpu "$ext_pid") - c_ext)) || echo 0)" -v algo="$algo" \
		-v srv="$srv" 'BEGIN { f = 1000 / k / n
		printf "%.2f %.2f %.3f cpu ms/pod: scheduler %.2f, apiserver %.2f, etcd %.2f, extender %.2f", sc * f, (sc + api + etcd + ext) * f, algo, sc * f, api * f, etcd * f, ext * f
		if (srv > 0) printf " (answering %.3f)", srv * 1000 / n
		printf "; scheduler algorithm %.3f ms/pod", algo }')
	first=$(grep 'Successfully bound pod' "$log" | head -n 1 | secs)
	last=$(grep 'Successfully bound pod' "$log" | tail -n 1 | secs)
	awk -v n="$n" -v a="$first" -v b="$last" -v t="$(grep -c 'Client.Timeout exceeded' "$log")" \
		'BEGIN { d = b - a; if (d <= 0) d = 1e-6; printf "%.0f %.6f %d\n", (n - 1) / d, d / (n - 1), t }'
	# The scorer first: its pod watch would hold the apiserver's graceful
	# shutdown open for its 60 s limit.
	[ -n "$SCORER_PID" ] && stop_pids "$SCORER_PID" "$FEED_PID"
	k8s_down
	return 0
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
# range "a b c": "min-max"
range() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi }'; }

# ratio A B: A / B to two decimals (0 when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

read -ra VLIST <<<"$VARIANTS"
declare -A R SC ALL ALGO RF RS RN
timeouts=0
for ((r = 1; r <= RUNS; r++)); do
	declare -A PPS=()
	# Rotate the order: run r starts at variant r.
	for ((i = 0; i < ${#VLIST[@]}; i++)); do
		v=${VLIST[(i + r - 1) % ${#VLIST[@]}]}
		one "$v" "$PODS" >"$WORK/one.out"
		read -r pps _ t <"$WORK/one.out"
		PPS[$v]=$pps
		R[$v]+="$pps "
		read -r sc all algo rest <<<"$CPU_LINE"
		SC[$v]+="$sc " ALL[$v]+="$all " ALGO[$v]+="$algo "
		[ "$v" = netsched:names ] && timeouts=$((timeouts + t))
		echo "  run $r $v: $pps pods/s; $rest (load $(cut -d ' ' -f 1 /proc/loadavg))"
	done
	# This run's ratios, each variant against the floor and the scoring
	# floor of its configuration and against no extender, in the same run.
	for v in "${VLIST[@]}"; do
		f=floor:${v#*:} fs=floor-scores:${v#*:}
		[ -n "${PPS[$f]:-}" ] && [ "$v" != none ] &&
			RF[$v]+="$(ratio "${PPS[$v]}" "${PPS[$f]}") "
		[ -n "${PPS[$fs]:-}" ] && [ "$v" != none ] && [ "$v" != "$f" ] && [ "$v" != "$fs" ] &&
			RS[$v]+="$(ratio "${PPS[$v]}" "${PPS[$fs]}") "
		[ -n "${PPS[none]:-}" ] &&
			RN[$v]+="$(ratio "${PPS[$v]}" "${PPS[none]}") "
	done
done

echo "medians of $RUNS runs (load average now $(cut -d ' ' -f 1-3 /proc/loadavg)); vs floor,"
echo "vs scoring floor (floor-scores) and vs none: the ratio of the medians, then the median"
echo "[range] of the per-run ratios; the CPU columns are CPU ms per pod (scheduler alone;"
echo "scheduler + apiserver + etcd + extender), far less disturbed by other work on the machine"
echo "than pods/s; algo: the scheduler's mean scheduling-algorithm time per pod (extender calls"
echo "included), ms"
printf '%-23s %7s %-24s %-24s %-24s %9s %8s %7s  %s\n' variant "pods/s" "vs floor" "vs scoring floor" "vs none" \
	"sched-cpu" "all-cpu" algo "pods/s of each run"
base=$(med "${R[none]:-}")
for v in "${VLIST[@]}"; do
	f=floor:${v#*:} fs=floor-scores:${v#*:}
	fl=$(med "${R[$f]:-}") fls=$(med "${R[$fs]:-}")
	awk -v v="$v" -v p="$(med "${R[$v]}")" -v f="${fl:-0}" -v fs="${fls:-0}" -v b="${base:-0}" \
		-v rf="$(med "${RF[$v]:-}")" -v rfr="$(range "${RF[$v]:-}")" \
		-v rs="$(med "${RS[$v]:-}")" -v rsr="$(range "${RS[$v]:-}")" \
		-v rn="$(med "${RN[$v]:-}")" -v rnr="$(range "${RN[$v]:-}")" \
		-v sc="$(med "${SC[$v]}")" -v all="$(med "${ALL[$v]}")" -v algo="$(med "${ALGO[$v]}")" \
		-v runs="${R[$v]}" -v isfloor="$([ "$v" = "$f" ] && echo 1 || echo 0)" 'BEGIN {
		a = "-"; b2 = "-"; s = "-"
		if (isfloor) a = "1"
		else if (f > 0 && rf != "") a = sprintf("%.2f (%.2f [%s])", p / f, rf, rfr)
		if (v ~ /^floor-scores:/) s = "1"
		else if (fs > 0 && rs != "") s = sprintf("%.2f (%.2f [%s])", p / fs, rs, rsr)
		if (v == "none") b2 = "1"
		else if (b > 0 && rn != "") b2 = sprintf("%.2f (%.2f [%s])", p / b, rn, rnr)
		printf "%-23s %7.0f %-24s %-24s %-24s %9.2f %8.2f %7.3f  %s\n", v, p, a, s, b2, sc, all, algo, runs }'
done
echo "target: netsched >= 0.90 of the floor in each configuration"
[ "$timeouts" -gt 0 ] && echo "httpTimeout 100ms: $timeouts extender calls timed out (netsched:names)"

# A scorer that accepts connections and never answers: the cost per pod,
# first bind to last.
HUNG_PORT=$(free_port)
start hung python3 tests/tools/http_stub.py hang "$HUNG_PORT"
wait_for 5 "the hanging stub" bash -c "exec 3<>/dev/tcp/127.0.0.1/$HUNG_PORT"
for t in 100ms 1s; do
	n=20
	[ "$t" = 1s ] && n=6
	one hung:names "$n" "$t" "http://127.0.0.1:$HUNG_PORT" >"$WORK/one.out"
	read -r pps spp _ <"$WORK/one.out"
	echo "hung extender, httpTimeout $t: $(awk -v s="$spp" 'BEGIN { printf "%.3f", s }') s per pod ($pps pods/s; $n pods)"
done
