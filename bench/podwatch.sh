#!/usr/bin/env bash
# The scorer's pod watch at scale, against the real kube-apiserver v1.20.2
# + etcd (tests/k8s/lib.sh; no scheduler): PODWATCH_PODS bound pods
# (default 20,000) on PODWATCH_NODES nodes (200), created before the scorer
# starts (bench/podwatch_load.py), then:
#   1. sync: from the scorer's start to netsched_scorer_pod_watch_synced 1;
#      its CPU time and peak RSS then, beside the same scorer without a
#      kubeconfig (no watch): the difference is the watch's cost;
#   2. churn: PODWATCH_RATE pods a second created (each deleted 2 s later)
#      for PODWATCH_SECONDS, once with prioritize calls (PODWATCH_NAMES
#      names, one keep-alive connection, bench/extender_latency) running all
#      along: their latency with the watch beside the same churn with no
#      watch (the churn loads the apiserver and this machine either way);
#      once without calls: the watch's events a second and the scorer's
#      CPU per event.
# `make bench-podwatch`. Needs the bench tools (make bench-tools) and the
# cached control plane (built on first use, a few minutes).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BIN=${BINDIR:-bin}
. tests/integration/lib.sh
. tests/k8s/lib.sh
. bench/lib.sh
LAT=${LAT:-${O:-build}/rel/bench/extender_latency}
FEED=${FEED:-${O:-build}/rel/bench/feed}
PODS=${PODWATCH_PODS:-20000}
NODES=${PODWATCH_NODES:-200}
RATE=${PODWATCH_RATE:-100}
SECS=${PODWATCH_SECONDS:-20}
NAMES=${PODWATCH_NAMES:-$NODES}
[ -x "$LAT" ] && [ -x "$FEED" ] || fail "bench tools not found ($LAT, $FEED): make bench-tools"
command -v jq >/dev/null || fail "jq not installed (run .ci/deps bench)"
k8s_init

echo "== the pod watch at scale: $PODS bound pods on $NODES nodes, real kube-apiserver v1.20.2"
bench_machine

metric() {
	curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
		awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }'
}
synced() { [ "$(metric netsched_scorer_pod_watch_synced)" = 1 ]; }
cpu_ms() { awk -v t="$(getconf CLK_TCK)" '{ printf "%d\n", ($14 + $15) * 1000 / t }' "/proc/$1/stat"; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# log_ms REGEX: ms from the scorer's first log line to the first matching one
# (the log's own timestamps: polling would add its interval).
log_ms() {
	python3 - "$WORK/scorer.log" "$1" <<'PY'
import datetime, re, sys
def ms(line):
    return datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
lines = [l for l in open(sys.argv[1]) if re.match(r"\d{4}-", l)]
hit = [l for l in lines if re.search(sys.argv[2], l)]
if not hit:
    sys.exit(1)
print(int(ms(hit[0]) - ms(lines[0])))
PY
}

k8s_ports
k8s_up_api
python3 bench/podwatch_load.py fill --kubeconfig "$WORK/kubeconfig" --pods "$PODS" --nodes "$NODES" ||
	fail "cannot create $PODS pods"
echo "apiserver RSS after the fill: $(($(kb "$K8S_API_PID" VmRSS) / 1024)) MiB apiserver"

# A prioritize request as the scheduler sends it, over NAMES nodes.
seq 0 $((NAMES - 1)) | jq -R '"node-" + .' | jq -sc . >"$WORK/names.json"
jq -c --slurpfile n "$WORK/names.json" '.NodeNames = $n[0]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json >"$WORK/prio.json" ||
	fail "cannot build the prioritize request"

# scorer WATCH: a fresh scorer (with the kubeconfig when WATCH is 1) and
# reports for NODES nodes from the feed.
scorer() {
	local extra=()
	[ "$1" = 1 ] && extra=(--kubeconfig "$WORK/kubeconfig")
	start_scorer "${extra[@]}"
	SC=$LAST_PID
	if [ "$1" = 1 ]; then
		wait_for 120 "the pod watch in sync" synced
		SYNC_MS=$(log_ms 'listed [0-9]* bound pods') || fail "no list in the scorer's log"
	fi
	SYNC_CPU=$(cpu_ms "$SC") SYNC_HWM=$(kb "$SC" VmHWM)
	start feed "$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes "$NODES" --senders 1 \
		--rate 1 --duration 3600s
	FEED_PID=$LAST_PID
	wait_for 15 "$NODES nodes in the table" bench_table_holds "$NODES"
}
stop_scorer() { stop_pids "$FEED_PID" "$SC"; }

churn() {
	python3 bench/podwatch_load.py churn --kubeconfig "$WORK/kubeconfig" --rate "$RATE" \
		--seconds "$SECS" --nodes "$NODES" >"$WORK/churn.txt" 2>&1
}
# churn_cost: the churn alone (no calls): the scorer's CPU and the events
# its watch applied meanwhile.
churn_cost() {
	local ev0 cpu0
	ev0=$(metric 'netsched_scorer_pod_watch_total{what="events"}') cpu0=$(cpu_ms "$SC")
	churn || fail "churn: $(cat "$WORK/churn.txt")"
	sed 's/^/  /' "$WORK/churn.txt"
	EVENTS=$(($(metric 'netsched_scorer_pod_watch_total{what="events"}') - ev0))
	CHURN_CPU=$(($(cpu_ms "$SC") - cpu0))
}
# churned LABEL: prioritize latency while the churn runs.
churned() {
	local n pid
	churn &
	pid=$!
	n=$((SECS * QUIET_RPS * 8 / 10)) # calls for about the churn's length
	"$LAT" --http "127.0.0.1:$HTTP_PORT" --path /prioritize --body "$WORK/prio.json" \
		--requests "$n" --warmup 50 --label "$1" || fail "prioritize failed during the churn"
	wait "$pid" || fail "churn: $(cat "$WORK/churn.txt")"
	sed 's/^/  /' "$WORK/churn.txt"
}

echo
echo "-- without the watch (no kubeconfig)"
scorer 0
BASE_HWM=$SYNC_HWM
echo "scorer at start: peak RSS $((BASE_HWM / 1024)) MiB"
"$LAT" --http "127.0.0.1:$HTTP_PORT" --path /prioritize --body "$WORK/prio.json" \
	--requests 2000 --warmup 200 --label "prioritize $NAMES names, quiet, no watch" >"$WORK/quiet.txt" ||
	fail "prioritize failed"
cat "$WORK/quiet.txt"
QUIET_RPS=$(awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "req/s") print int($i) }' "$WORK/quiet.txt" | tail -n 1)
[ "${QUIET_RPS:-0}" -gt 0 ] || fail "no req/s in: $(cat "$WORK/quiet.txt")"
churned "prioritize $NAMES names, churn, no watch"
churn_cost
BASE_CPU=$CHURN_CPU
echo "scorer CPU during a churn without calls: $BASE_CPU ms"
stop_scorer

echo
echo "-- with the watch"
scorer 1
listed=$(sed -n 's/.*\(listed [0-9]* bound pods in [0-9]* page(s)\).*/\1/p' "$WORK/scorer.log" | tail -n 1)
echo "synced in $SYNC_MS ms ($listed); scorer CPU $SYNC_CPU ms, peak RSS $((SYNC_HWM / 1024)) MiB"
"$LAT" --http "127.0.0.1:$HTTP_PORT" --path /prioritize --body "$WORK/prio.json" \
	--requests 2000 --warmup 200 --label "prioritize $NAMES names, quiet, watching" || fail "prioritize failed"
churned "prioritize $NAMES names, churn, watching"
churn_cost
echo "scorer CPU during a churn without calls: $CHURN_CPU ms ($BASE_CPU without the watch); pod events applied: $EVENTS ($((EVENTS / SECS))/s)"
[ "$EVENTS" -gt 0 ] && echo "the watch's CPU per event: $(((CHURN_CPU - BASE_CPU) * 1000 / EVENTS)) us"
echo "peak RSS now $(($(kb "$SC" VmHWM) / 1024)) MiB"
echo
echo "per 10,000 pods: $(((SYNC_HWM - BASE_HWM) * 10000 / PODS / 1024)) MiB of peak RSS, $((SYNC_CPU * 10000 / PODS)) ms of the scorer's CPU to sync"
stop_scorer
