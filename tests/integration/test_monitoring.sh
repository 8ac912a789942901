#!/usr/bin/env bash
# The operator kit in deploy/monitoring/ against real parts:
#   - promtool checks the rules and runs a unit test for every alert;
#   - the dashboard's structure, the runbook links and the generated
#     PrometheusRule are checked (tests/monitoring/check.py static);
#   - a real Prometheus (Debian's) scrapes a real scorer and two real agents
#     measuring nodes in network namespaces, with the alert rules loaded, and
#     every dashboard query and the series behind every alert return data;
#     the pod panels' data comes from a stub apiserver's pods and bench/feed
#     reporting their traffic for a third node; a real rebalancer (dry run,
#     reading that scorer) feeds its row and its alert's series.
set -u
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || fail "promtool not installed (run .ci/deps test)"
MON=deploy/monitoring
CHECK=tests/monitoring/check.py

promtool check rules "$MON/alerts.yaml" >"$WORK/check.log" 2>&1 ||
	{ cat "$WORK/check.log"; fail "promtool check rules"; }
echo "ok: promtool check rules: $(grep -o '[0-9]* rules found' "$WORK/check.log")"
promtool test rules tests/monitoring/alerts_test.yaml >"$WORK/unit.log" 2>&1 ||
	{ cat "$WORK/unit.log"; fail "promtool test rules"; }
echo "ok: promtool test rules: every alert's unit test passes"
python3 "$CHECK" static || fail "static checks of the monitoring kit"

need_root "the live part of test_monitoring"
command -v openssl >/dev/null || fail "openssl not installed (run .ci/deps test)"
FEED=${FEED:-${O:-build}/rel/bench/feed}
[ -x "$FEED" ] || fail "$FEED not built (make unit-build)"
P="nsm$$"
make_nodes "$P-hub" "$P-a" "$P-b"
PROM=$(free_port)
# The pod watch's apiserver: node-0 runs four pods (bench/podfeed.h).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/api.key" \
	-out "$WORK/api.crt" >/dev/null 2>&1 || fail "openssl: cannot make a certificate"
API=$(free_port)
start apiserver python3 tests/tools/apiserver_stub.py pods "$API" "$WORK/api.crt" \
	"$WORK/api.key" "$WORK/api-requests" 1 4
wait_for 60 "the stub apiserver" curl -s --cacert "$WORK/api.crt" -o /dev/null \
	"https://127.0.0.1:$API/api/v1/pods?limit=1"
cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: stub, cluster: {server: "https://127.0.0.1:$API", certificate-authority: $WORK/api.crt}}]
users: [{name: stub, user: {token: stub-token}}]
contexts: [{name: stub, context: {cluster: stub, user: stub}}]
current-context: stub
KC
start_scorer --stale-after 5s --prometheus "http://127.0.0.1:$PROM" --prometheus-refresh 1s \
	--prometheus-timeout 1s --kubeconfig "$WORK/kubeconfig"
start feed "$FEED" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes 1 --senders 1 --rate 2 \
	--duration 600s --pods 4
AG_A=$(free_port) AG_B=$(free_port)
for n in a b; do
	port=AG_${n^^}
	start "agent-$n" "$BIN/netsched-agent" --node "node-$n" --netns "$P-$n" --interfaces eth0 \
		--link-speed eth0=100M --scorer "tcp://127.0.0.1:$LISTEN_PORT" --sample-interval 250ms \
		--window 2s --report-interval 500ms --metrics "127.0.0.1:${!port}"
done
RB=$(free_port)
start rebalancer "$BIN/netsched-rebalancer" --scorer "http://127.0.0.1:$HTTP_PORT" \
	--kubeconfig "$WORK/kubeconfig" --leader-elect off --interval 1s --metrics-listen "127.0.0.1:$RB"
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$PWD/$MON/alerts.yaml']
scrape_configs:
- job_name: netsched-scorer
  static_configs: [{targets: ['127.0.0.1:$HTTP_PORT']}]
- job_name: netsched-agent
  static_configs:
  - {targets: ['127.0.0.1:$AG_A'], labels: {node: node-a}}
  - {targets: ['127.0.0.1:$AG_B'], labels: {node: node-b}}
- job_name: netsched-rebalancer
  static_configs: [{targets: ['127.0.0.1:$RB']}]
YAML
start prometheus prometheus --config.file="$WORK/prometheus.yml" \
	--storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$PROM" --log.level=warn
PROM_PID=$LAST_PID

# Traffic into node-a, and the scheduler's calls, so rates and latencies exist.
iperf_server "$P-a" 10.231.1.2
# The feed, iperf3 and the calls go on until the test ends (they are stopped
# on exit): on a loaded machine the waits below take longer than any fixed
# run, and data that stopped went stale before the checks read it.
start iperf-client ip netns exec "$P-hub" iperf3 -c 10.231.1.2 -t 600 -b 30M
jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/prioritize-request.nodeCacheCapable-true.json \
	>"$WORK/prio.json"
jq -c '.NodeNames = ["node-a", "node-b"]' \
	tests/fixtures/extender/captured-k8s-1.20/filter-request.nodeCacheCapable-true.json \
	>"$WORK/filter.json"
calls() {
	while :; do
		http POST /prioritize "$WORK/prio.json" >/dev/null
		http POST /filter "$WORK/filter.json" >/dev/null
		sleep 0.25
	done
}
calls &
CALLS=$!
PIDS+=("$CALLS")

# ours_answers: the Prometheus on $PROM is the one started here, alive.
# Another on this machine (another test's) may be given the same port before
# ours binds it: ours then exits with "address already in use" while that
# one answers, and goes when its test ends (a check then got "Connection
# refused" on a busy machine). Its flags name its own TSDB.
ours_answers() {
	kill -0 "$PROM_PID" 2>/dev/null || return 1
	[ "$(curl -sf "http://127.0.0.1:$PROM/api/v1/status/flags" | jq -r '.data["storage.tsdb.path"]')" = "$WORK/tsdb" ]
}
prom_gone() { fail "the Prometheus started here (pid $PROM_PID, port $PROM) is not the one answering: $(tail -n 5 "$WORK/prometheus.log")"; }
wait_for 60 "Prometheus (pid $PROM_PID) answering on 127.0.0.1:$PROM" ours_answers
# Every series needs two scrapes for rate(); the fallback a few refreshes.
has_rates() {
	curl -sf "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode \
		'query=count(rate(netsched_agent_reports_sent_total[15s]) > 0) == 2 and on() count(rate(netsched_scorer_requests_total{verb="filter"}[15s]) > 0) == 1 and on() count(netsched_scorer_node_score) == 3 and on() count(netsched_scorer_node_top_pod_bytes_per_second) == 6' |
		jq -e '.data.result | length == 1'
}
wait_for 90 "Prometheus to have rates from the scorer and both agents, and pods" has_rates
echo "ok: Prometheus scrapes the scorer and both agents; node-0's pods are joined"
# Those pods have run for an hour: Deployment feed/d0's one pod moves 4 kB/s in.
d0() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/workloads" |
	jq '[.workloads[] | select(.workload == "feed/Deployment/d0") | .rxBytesPerSecond][0] // 0'; }
d0_learned() { [ "$(d0)" = 4000 ]; }
wait_for 60 "feed/Deployment/d0 learned at 4000 B/s (it says $(d0))" d0_learned
echo "ok: /v1/workloads: feed/Deployment/d0 learned what its pod moves"
# scrape_health: each target's health and last error, said when a check fails.
scrape_health() {
	curl -s "http://127.0.0.1:$PROM/api/v1/targets" | jq -r '.data.activeTargets[] |
		"\(.labels.job) \(.scrapeUrl): \(.health), last scrape \(.lastScrapeDuration)s \(.lastError)"'
}
ours_answers || prom_gone
python3 "$CHECK" live "http://127.0.0.1:$PROM" ||
	{ ours_answers || prom_gone; scrape_health; fail "live checks of the monitoring kit"; }
# No alert should fire on this healthy system but the scorer's own fallback
# (the test's Prometheus has no node_exporter series: its queries succeed
# with no values, so even that one stays quiet).
firing=$(curl -s "http://127.0.0.1:$PROM/api/v1/alerts" |
	jq -r '[.data.alerts[] | select(.state == "firing") | .labels.alertname] | join(",")')
expect "alerts firing on a healthy system" "$firing" ""
