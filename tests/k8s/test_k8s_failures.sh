#!/usr/bin/env bash
# What a broken netsched costs a real kube-scheduler v1.20.2 configured as
# deploy/ ships it (filter + prioritize, ignorable, httpTimeout 100ms), each
# case on a fresh cluster, 10 pods over six nodes:
#  1. scorer hung (accepts connections, never answers): every pod is still
#     placed; each costs at most filter + prioritize = 2 x httpTimeout, and
#     the scheduler's log shows both timing out;
#  2. scorer killed (connection refused): every pod is placed.
# (Dead agents: test_k8s_placement.sh, where the nodes have real traffic.)
# The per-pod figures are printed, not asserted (timing belongs to `make bench`).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
need_root k8s-failures
k8s_init

NODES=(n1 n2 n3 n4 n5 n6)
N=10
HTTP_PORT=$(free_port)

# placed NAME: a fresh cluster with netsched at $HTTP_PORT, N pods; prints
# how long they took to bind, per pod.
placed() {
	local name=$1 t0 t1
	k8s_ports
	k8s_config "$WORK/$name.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
	k8s_up "$WORK/$name.yaml"
	k8s_nodes "${NODES[@]}"
	t0=$(date +%s%N)
	k8s_pods "$name" "$N"
	k8s_wait_bound 60 "$name" "$N"
	t1=$(date +%s%N)
	echo "ok: $name: $N pods bound, $(((t1 - t0) / N / 1000000)) ms per pod: $(k8s_placement "$name" | tr '\n' ' ')"
}

# ---------------------------------------------------------------- 1. hung
start hung python3 tests/tools/http_stub.py hang "$HTTP_PORT"
HUNG=$LAST_PID
wait_for 5 "the hanging stub on $HTTP_PORT" bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT"
placed hung
log=$WORK/scheduler-$K8S_RUN.log
filters=$(grep 'Client.Timeout exceeded' "$log" | grep -c '/filter')
# Prioritize errors are ignored silently; the scheduler's trace of a slow
# cycle shows the prioritize step waiting out its own timeout.
prios=$(grep -cE '"Prioritizing done" [0-9]{3,}ms' "$log")
echo "scheduler log: $filters filter timeouts, $prios prioritize steps of 100 ms or more"
[ "$filters" -ge "$N" ] || fail "expected a filter timeout per pod in the scheduler's log, got $filters"
[ "$prios" -ge "$N" ] || fail "expected a prioritize step of 100 ms or more per pod, got $prios"
echo "ok: the scheduler waited out filter and prioritize and placed every pod"
k8s_down
kill "$HUNG"
wait "$HUNG" 2>/dev/null

# ---------------------------------------------------------------- 2. killed
(exec 3<>"/dev/tcp/127.0.0.1/$HTTP_PORT") 2>/dev/null && fail "port $HTTP_PORT still answers"
placed killed
grep -q 'connection refused' "$WORK/scheduler-$K8S_RUN.log" ||
	fail "the scheduler's log does not show the refused extender calls"
echo "ok: the scheduler saw connection refused and placed every pod"
k8s_down

echo "PASS: k8s failures"
