#!/usr/bin/env bash
# The event a real kube-scheduler v1.20.2 writes when netsched filters out
# every node of a large cluster survives: the reasons are shared, so the
# scheduler groups them, and the message stays far under the apiserver's
# 1,024 characters (per-node reasons made 9,913 bytes at 100 nodes; the
# event was refused and `kubectl describe pod` showed `Events: <none>`).
# 1,000 Node objects (K8S_EVENT_NODES; 5,000 take ~25 s and give the same
# 81 characters), reports for all of them from the feed tool (10 Gb/s
# links), one pod asking kubernetes.io/ingress-bandwidth: 20G.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
FEED=${FEED:-${O:-build}/rel/bench/feed}
[ -x "$FEED" ] || fail "feed tool not found at $FEED (make test builds it)"
k8s_init

NODES=${K8S_EVENT_NODES:-1000}
start_scorer --policy utilization --max-utilization 80 --stale-after 30s
start feed "$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes "$NODES" --senders 2 \
	--rate 1 --duration 90s
known() { [ "$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length')" = "$NODES" ]; }
wait_for 15 "$NODES nodes with data in /v1/nodes" known

k8s_ports
k8s_config "$WORK/netsched.yaml" names "http://127.0.0.1:$HTTP_PORT" 100ms
k8s_up "$WORK/netsched.yaml"
mapfile -t names < <(seq -f 'node-%g' 0 $((NODES - 1)))
k8s_nodes "${names[@]}"
k8s_pods huge 1 kubernetes.io/ingress-bandwidth=20G
event() {
	kc get events --field-selector "involvedObject.name=huge-1,reason=FailedScheduling" \
		-o jsonpath='{.items[0].message}'
}
has_event() { [ -n "$(event)" ]; }
wait_for 30 "the FailedScheduling event of the pod asking 20G" has_event
msg=$(event)
echo "event (${#msg} characters): $msg"
# The scheduler hands the extender the nodes its own filters passed (at this
# size a share of them, percentageOfNodesToScore), and counts the rest.
[[ $msg =~ ^0/$NODES\ nodes\ are\ available:\ ([0-9]+)\ netsched:\ free\ rx\ below\ the\ 20\ Gb/s\ the\ pod\ asks\.$ ]] ||
	fail "unexpected event text: $msg"
[ "${BASH_REMATCH[1]}" -ge 100 ] || fail "only ${BASH_REMATCH[1]} nodes in the group"
echo "ok: one group of ${BASH_REMATCH[1]} nodes, ${#msg} characters"
cond=$(kc get pod huge-1 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
expect "the PodScheduled condition holds the same message" "$cond" "$msg"
kc describe pod huge-1 | grep -q 'Warning  FailedScheduling' ||
	fail "kubectl describe pod shows no event: $(kc describe pod huge-1 | tail -n 3)"
echo "ok: kubectl describe pod shows the event"
k8s_down
echo "PASS: k8s events"
