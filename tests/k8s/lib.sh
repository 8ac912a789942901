# A real Kubernetes control plane for tests (sourced, bash, after
# tests/integration/lib.sh): etcd, kube-apiserver and kube-scheduler v1.20.2
# on 127.0.0.1, fresh state per k8s_up, torn down by k8s_down and, whatever
# happens, by lib.sh's exit trap (every process is started through `start`).
# No kubelet and no controller-manager: Node objects are created with their
# status, pods are bound (spec.nodeName) but never run.
#
#   k8s_init                    binaries (built once, cached), certificates, tokens
#   k8s_up CONFIG               etcd + apiserver + scheduler with this
#                               KubeSchedulerConfiguration (k8s_config writes one)
#   k8s_config FILE MODE URL TIMEOUT   MODE: none | names | full | prioritize
#   k8s_nodes NAME...           Node objects, Ready, 4 CPU / 16 GiB / 110 pods
#   k8s_pods PREFIX N [ANNOTATION=VALUE] [SCHEDULER]   N pods in one request
#   k8s_placement PREFIX        "node count" lines of where PREFIX pods went
#   k8s_down                    stops the three, removes the state
#   kc ARGS...                  kubectl (Debian's 1.20 client) on this cluster

K8S_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
K8S_PIDS=()
K8S_RUN=0
K8S_API_STARTS=0
# Where the apiserver listens: loopback, but for real nodes (realnode.sh),
# which reach it from their namespaces on the lab's host link.
K8S_API_HOST=127.0.0.1
K8S_NODE_API_HOST=10.231.254.1

k8s_init() {
	local bin
	command -v etcd >/dev/null || fail "etcd not installed (run .ci/deps test)"
	command -v openssl >/dev/null || fail "openssl not installed (run .ci/deps test)"
	bin=$("$K8S_DIR/build.sh" | tail -n 1) || fail "building the control plane failed"
	K8S_BIN=$bin
	[ -x "$K8S_BIN/kube-apiserver" ] || fail "no kube-apiserver in $K8S_BIN"
	mkdir -p "$WORK/pki"
	# One self-signed certificate for the apiserver (SANs: loopback, the
	# address real nodes reach it on and its Service's, realnode.sh), one key
	# pair for service-account tokens, one static token in system:masters.
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext "subjectAltName=IP:127.0.0.1,IP:$K8S_NODE_API_HOST,IP:10.0.0.1,DNS:kubernetes.default.svc" -keyout "$WORK/pki/apiserver.key" \
		-out "$WORK/pki/apiserver.crt" >/dev/null 2>&1 || fail "openssl: cannot make a certificate"
	openssl genrsa -out "$WORK/pki/sa.key" 2048 >/dev/null 2>&1 || fail "openssl: cannot make a key"
	openssl rsa -in "$WORK/pki/sa.key" -pubout -out "$WORK/pki/sa.pub" >/dev/null 2>&1
	K8S_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	echo "$K8S_TOKEN,netsched-test,1000,system:masters" >"$WORK/pki/tokens.csv"
}

# The kubeconfig both kubectl and the scheduler use.
k8s_kubeconfig() {
	cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://$K8S_API_HOST:$K8S_API_PORT
    certificate-authority: $WORK/pki/apiserver.crt
users:
- name: test
  user:
    token: $K8S_TOKEN
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
KC
}

kc() { "$K8S_BIN/kubectl" --kubeconfig "$WORK/kubeconfig" "$@"; }

# k8s_config FILE MODE URL TIMEOUT [QPS]: a v1beta1 KubeSchedulerConfiguration
# (the only version 1.20 reads) for this test cluster, with netsched as the
# extender the way deploy/ configures it: weight 5, ignorable, names mode (but
# plain HTTP: tests/k8s/test_k8s_deploy.sh runs the shipped mTLS config).
#   none        no extender
#   names       filter + prioritize + preempt, nodeCacheCapable: true
#   full        filter + prioritize + preempt, full Node objects
#   prioritize  prioritize only (no filterVerb)
k8s_config() {
	local file=$1 mode=$2 url=$3 timeout=$4 qps=${5:-50}
	cat >"$file" <<CFG
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $WORK/kubeconfig
  qps: $qps
  burst: $((qps * 2))
leaderElection:
  leaderElect: false
healthzBindAddress: 127.0.0.1:$K8S_SCHED_PORT
metricsBindAddress: 127.0.0.1:$K8S_SCHED_PORT
CFG
	[ "$mode" = none ] && return 0
	{
		echo "extenders:"
		echo "- urlPrefix: \"$url\""
		[ "$mode" = prioritize ] || echo "  filterVerb: filter"
		[ "$mode" = prioritize ] || echo "  preemptVerb: preempt"
		echo "  prioritizeVerb: prioritize"
		echo "  weight: 5"
		[ "$mode" = full ] && echo "  nodeCacheCapable: false" || echo "  nodeCacheCapable: true"
		echo "  ignorable: true"
		echo "  httpTimeout: $timeout"
		echo "  enableHTTPS: false"
	} >>"$file"
}

# k8s_ports: the cluster's loopback ports, chosen before its config is written.
k8s_ports() {
	K8S_RUN=$((K8S_RUN + 1))
	K8S_ETCD_PORT=$(free_port)
	K8S_PEER_PORT=$(free_port)
	K8S_API_PORT=$(free_port)
	K8S_SCHED_PORT=$(free_port)
	k8s_kubeconfig
}

# k8s_up CONFIG [SCHEDULER-WRAPPER...]: fresh etcd, apiserver, scheduler.
# Call k8s_ports first (k8s_config needs the ports). The wrapper (e.g.
# `nice -n -10`) runs the scheduler, for benchmarks.
k8s_up() {
	k8s_up_api
	k8s_up_scheduler "$@"
}

# k8s_up_api: fresh etcd and apiserver only (benchmarks create their pods
# before the scheduler starts).
k8s_up_api() {
	local state=$WORK/k8s-$K8S_RUN
	rm -rf "$state"
	mkdir -p "$state"
	start "etcd-$K8S_RUN" etcd --name test \
		--data-dir "$state/etcd" \
		--listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
		--advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$K8S_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$K8S_PEER_PORT" \
		--initial-cluster "test=http://127.0.0.1:$K8S_PEER_PORT" \
		--unsafe-no-fsync --log-level warn
	K8S_PIDS=("$LAST_PID")
	wait_for 20 "etcd on 127.0.0.1:$K8S_ETCD_PORT" curl -sf "http://127.0.0.1:$K8S_ETCD_PORT/health"
	k8s_api_start
}

# k8s_api_start: the apiserver on this run's etcd (k8s_up_api; again after
# k8s_api_stop, as a restart). Its pid is in K8S_API_PID. K8S_AUTHZ=RBAC
# makes it check permissions (the test token stays in system:masters);
# K8S_FEATURE_GATES adds --feature-gates (tests/k8s/lab.sh: IPv6DualStack).
k8s_api_start() {
	local state=$WORK/k8s-$K8S_RUN
	# 1.20 has no insecure port: TLS with the self-signed certificate, the
	# static token. No controller-manager runs, so nothing would create the
	# default ServiceAccount or lift the not-ready taint: those two admission
	# plugins are off.
	K8S_API_STARTS=$((K8S_API_STARTS + 1))
	start "apiserver-$K8S_RUN-$K8S_API_STARTS" "$K8S_BIN/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
		--bind-address "$K8S_API_HOST" --advertise-address "$K8S_API_HOST" --secure-port "$K8S_API_PORT" \
		--tls-cert-file "$WORK/pki/apiserver.crt" --tls-private-key-file "$WORK/pki/apiserver.key" \
		--token-auth-file "$WORK/pki/tokens.csv" --authorization-mode "${K8S_AUTHZ:-AlwaysAllow}" \
		--service-account-issuer https://127.0.0.1 \
		--service-account-key-file "$WORK/pki/sa.pub" \
		--service-account-signing-key-file "$WORK/pki/sa.key" \
		--service-cluster-ip-range 10.0.0.0/24 \
		--disable-admission-plugins ServiceAccount,TaintNodesByCondition \
		${K8S_FEATURE_GATES:+--feature-gates "$K8S_FEATURE_GATES"} \
		--cert-dir "$state/certs" --event-ttl 10m --endpoint-reconciler-type none
	K8S_API_PID=$LAST_PID
	K8S_PIDS+=("$LAST_PID")
	wait_for 60 "kube-apiserver /readyz" kc get --raw /readyz
}

# k8s_api_stop: stops the apiserver only (etcd and its data stay).
k8s_api_stop() {
	k8s_stop_pid "$K8S_API_PID"
}

# k8s_stop_pid PID: stop_pids with 5 s before SIGKILL. A stopping apiserver
# stops listening at once but holds its open watches (a scorer's, the
# stand-in kubelet's) for up to 60 s before it exits; no test needs that
# drain, and waiting for it made a restart cost a minute.
k8s_stop_pid() {
	STOP_WAIT_S=5 stop_pids "$1"
}

# k8s_up_scheduler CONFIG [WRAPPER...]: the scheduler on the running apiserver;
# K8S_SCHEDULER names another binary of build.sh's (kube-scheduler).
k8s_up_scheduler() {
	local cfg=$1
	shift
	start "scheduler-$K8S_RUN" "$@" "$K8S_BIN/${K8S_SCHEDULER:-kube-scheduler}" --config "$cfg" \
		--secure-port 0 --v 2
	K8S_PIDS+=("$LAST_PID")
	wait_for 30 "kube-scheduler /healthz" curl -sf "http://127.0.0.1:$K8S_SCHED_PORT/healthz"
}

k8s_down() {
	local i
	for ((i = ${#K8S_PIDS[@]} - 1; i >= 0; i--)); do
		k8s_stop_pid "${K8S_PIDS[i]}"
	done
	K8S_PIDS=()
	rm -rf "$WORK/k8s-$K8S_RUN"
}

# k8s_nodes NAME...: Ready nodes with room for plenty of pods, one request.
# K8S_NODE_CPU sets their CPUs (4).
k8s_nodes() {
	local n cpu=${K8S_NODE_CPU:-4}
	for n in "$@"; do
		cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {kubernetes.io/hostname: $n}
status:
  capacity: {cpu: "$cpu", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "$cpu", memory: 16Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ready}
NODE
	done >"$WORK/nodes.yaml"
	kc create -f "$WORK/nodes.yaml" >/dev/null || fail "cannot create the Node objects"
}

# k8s_pdb_yaml APP: a PodDisruptionBudget named APP that lets no pod labelled
# app=APP be evicted (policy/v1beta1: what 1.20 serves).
k8s_pdb_yaml() {
	cat <<YAML
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: $1}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: $1}}
YAML
}

# k8s_pods PREFIX N [ANNOTATION=VALUE] [SCHEDULER]: N small pods (100m CPU,
# 64Mi each) in one request; the scheduler places them one after another.
# SCHEDULER sets spec.schedulerName (default: the default scheduler).
k8s_pods() {
	local prefix=$1 n=$2 ann=${3:-} sched=${4:-} i
	for ((i = 1; i <= n; i++)); do
		cat <<POD
---
apiVersion: v1
kind: Pod
metadata:
  name: $prefix-$i
  labels: {test: $prefix}
POD
		[ -n "$ann" ] && printf '  annotations: {"%s": "%s"}\n' "${ann%%=*}" "${ann#*=}"
		echo "spec:"
		[ -n "$sched" ] && echo "  schedulerName: $sched"
		cat <<POD
  containers:
  - name: c
    image: netsched.invalid/pause
    resources: {requests: {cpu: 100m, memory: 64Mi}}
POD
	done >"$WORK/pods-$prefix.yaml"
	kc create -f "$WORK/pods-$prefix.yaml" >/dev/null || fail "cannot create pods $prefix-*"
}

# k8s_bound PREFIX: how many PREFIX pods have a node.
k8s_bound() {
	kc get pods -l "test=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
		grep -c .
}

# k8s_placement PREFIX: "node count" per node, sorted by node name.
k8s_placement() {
	kc get pods -l "test=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
		grep . | sort | uniq -c | awk '{ print $2, $1 }'
}

# k8s_on PREFIX NODE: how many PREFIX pods went to NODE.
k8s_on() {
	kc get pods -l "test=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
		grep -cx "$2"
}

# k8s_wait_bound SECONDS PREFIX N: until N PREFIX pods have a node.
k8s_all_bound() { [ "$(k8s_bound "$1")" -ge "$2" ]; }
k8s_wait_bound() {
	wait_for "$1" "$3 pods $2-* bound" k8s_all_bound "$2" "$3"
}
