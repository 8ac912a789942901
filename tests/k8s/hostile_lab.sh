# The cluster that tests/k8s/test_k8s_hostile.sh and bench/k8s-hostile.sh
# attack (sourced after tests/integration/lib.sh, tests/k8s/lib.sh and
# tests/k8s/lab.sh): six nodes with 100 Mb/s shaped uplinks (lab.sh), n1
# and n2 receiving 95 Mb/s of iperf3 traffic; a real kube-apiserver and
# netsched's kube-scheduler v1.20.2 with deploy/'s config (profile
# netsched-scheduler, filter + prioritize + preempt, weight 5, httpTimeout
# 100ms, mTLS with the scheduler's client certificate); the scorer and an
# agent per node with deploy/'s args, signed reports, status and probes on
# their own port. No kubelet: pods are bound, never run.
#
#   hostile_lab_up PREFIX     all of the above; waits until the scorer sees
#                             n1 and n2 busy
#   hostile_lab_busy          the scorer sees n1 and n2 above 80 Mb/s
#   hostile_lab_metric NAME   one of the scorer's metrics (the full name,
#                             labels included)
#   hostile_lab_prioritized   prioritize calls the scorer answered so far
#   hostile_lab_made_up FILE  a prioritize request for a pod nobody made,
#                             declaring more than any link, on every idle
#                             node: were it counted, they would look full
#                             and pods would go to n1 and n2
#   hostile_lab_on FLOW NODE  pods of a podflow.py result on NODE
#   hostile_lab_closed        connections the scorer closed to make room or
#                             for their deadline, and report connections
#   hostile_lab_attacked      the mix is at it: some closed, and requests
#                             refused on the verbs' port (TLS done, no client
#                             certificate)
# HL_STATUS is the scorer's status URL, HL_SCHED_LOG the scheduler's log.

hostile_lab_up() {
	lab_nodes "$1" 100M routed routed routed routed routed routed
	k8s_ports
	k8s_up_api
	kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
	lab_k8s_nodes
	lab_netsched_scheduler
	HL_SCHED_LOG=$WORK/nsched-$K8S_RUN.log
	lab_background n1 95M 1 5201
	lab_background n2 95M 1 5202
	lab_netsched_up 100M
	HL_STATUS=http://127.0.0.1:$LAB_SC_HEALTH
	wait_for 20 "the scorer to see n1 and n2 above 80 Mb/s" hostile_lab_busy
}

hostile_lab_busy() {
	curl -s -m 5 "$HL_STATUS/v1/nodes" | jq -e '[.nodes[] | select((.name == "n1" or .name == "n2") and
		.source == "agent" and .rxBytesPerSecond * 8 > 80000000)] | length == 2' >/dev/null
}

hostile_lab_metric() {
	curl -s -m 5 "$HL_STATUS/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

hostile_lab_prioritized() {
	hostile_lab_metric 'netsched_scorer_requests_total{verb="prioritize"}'
}

hostile_lab_made_up() {
	cat >"$1" <<'JSON'
{"Pod":{"metadata":{"name":"made-up","namespace":"default","uid":"made-up-0001",
"annotations":{"kubernetes.io/ingress-bandwidth":"400G"}}},"NodeNames":["n3","n4","n5","n6"]}
JSON
}

hostile_lab_on() {
	jq "[.pods[] | select(.node == \"$2\")] | length" "$1"
}

hostile_lab_closed() {
	curl -s -m 5 "$HL_STATUS/metrics" | awk '$1 ~ /^netsched_scorer_(http_connections_reclaimed_total|http_deadline_closes_total|report_connections_closed_total)/ { s += $2 } END { print s + 0 }'
}

hostile_lab_attacked() {
	[ "$(hostile_lab_closed)" -gt 0 ] &&
		[ "$(hostile_lab_metric netsched_scorer_bad_requests_total)" -gt 0 ]
}
