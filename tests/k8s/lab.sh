# A cluster that runs its pods (sourced, bash, after tests/integration/lib.sh
# and tests/k8s/lib.sh): simulated nodes with shaped uplinks, Node objects
# with pod CIDRs, and the kubelet stand-in (kubelet.py) that wires, reports
# and runs the pods bound to them.
#
#   lab_need NAME GROUP         root (else skip NAME), iperf3 and python3-yaml
#                               (else fail: run .ci/deps GROUP)
#   lab_nodes PREFIX SPEED STYLE...  a hub and one node per STYLE (routed or
#                               bridged): namespaces PREFIX-hub, PREFIX-n1..
#   lab_shape SPEED             every uplink shaped to SPEED, both directions
#   lab_k8s_nodes               their Node objects (call after k8s_up_api)
#   lab_up                      a fresh control plane for them: etcd, the
#                               apiserver, the Node objects, the stock scheduler
#                               and netsched's (lab_netsched_scheduler)
#   lab_controllers             kube-controller-manager v1.20.2 for it (after
#                               lab_up): ReplicaSets recreate evicted pods,
#                               Deployments, DaemonSets, the disruption
#                               controller computes PDBs' status, garbage
#                               collection; no node lifecycle (the Node
#                               objects have no heartbeat), no IPAM (lab_nodes
#                               gives the CIDRs)
#   lab_controllers_stop        stops it
#   lab_kubelet [ARGS...]       the stand-in for every node (kubelet.py run)
#   lab_kubelet_stop            SIGTERM: it tears its pods down and exits
#   lab_background NODE RATE STREAMS [PORT [DIR]]   iperf3 into node NODE
#                               (DIR rx, the default) or out of it (tx),
#                               from its own namespace, like a hostNetwork
#                               daemon, for at most LAB_BG_SECONDS (600)
#   lab_backgrounds             lab_background for each "NODE RATE STREAMS
#                               [DIR]" line on stdin, on ports 5201 and up
#   lab_background_stop         ends every background flow
#   lab_rx NODE                 bytes the node's uplink has received so far
#   lab_uplink_bps NODE [DIR]   its rx (or tx) rate by the stand-in's last
#                               two samples
#   lab_netsched_scheduler      a second kube-scheduler, deploy/'s v1beta1
#                               config (profile netsched-scheduler, the extender
#                               on the scorer's fixed port), for the running
#                               apiserver; its httpTimeout LAB_HTTP_TIMEOUT
#                               when set
#   lab_netsched_up SPEED       a fresh scorer with deploy/scorer.yaml's args
#                               (+ LAB_SCORER_ARGS: --option=value words, e.g.
#                               --direction=rx to see a test fail without
#                               what it tests) and an agent per node with
#                               deploy/agent.yaml's (+ --netns, --link-speed
#                               eth0=SPEED, and LAB_AGENT_ARGS), signed
#                               reports; waits for every node's data
#   lab_netsched_down           stops them (the scorer's log stays)
#   lab_rebalancer [--opt=v...]  netsched-rebalancer with deploy/rebalancer.yaml's
#                               args, the lab's scorer over mTLS (+
#                               LAB_REBALANCER_ARGS, then the options given);
#                               its /metrics on LAB_RB_METRICS
#   lab_rebalancer_stop         stops it
#   lab_scorer_api PATH         GET the scorer's extender port with the
#                               rebalancer's certificate (/v1/moves, /v1/pressure)
#
# Addresses: node i's uplink eth0 is 10.231.i.2/24 and fd00:231:i::2/64, the
# hub's side (hub-i) .1/::1; its pod CIDRs are 10.244.i.0/24 and
# fd00:10:244:i::/64, routed by the hub to the node. The hub holds the "far"
# address 10.231.0.1 (fd00:231::1) on lo: pods' iperf3 servers listen there,
# so every pod's traffic crosses its node's uplink. Links are shaped with tbf
# (no netem on this kernel): the hub side's egress is what the node's pods
# receive, the node side's egress what they send; the agent measures eth0 as
# in a real node and is told SPEED with --link-speed (a veth has no speed).
# Everything lives in namespaces in NETNS (lib.sh's trap deletes them with
# their qdiscs); the stand-in's own `cleanup` runs from CLEANUP_HOOKS, so
# nothing of a killed stand-in survives either.
#
# Needs the apiserver's IPv6DualStack gate for two podCIDRs per Node
# (1.20 keeps only the first without it): lab_nodes sets K8S_FEATURE_GATES.

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_NODES=()
LAB_BG=()
LAB_FAR4=10.231.0.1
LAB_FAR6=fd00:231::1

# lab_need NAME GROUP: what every lab script needs, checked before anything starts.
lab_need() {
	need_root "$1"
	command -v iperf3 >/dev/null || fail "iperf3 not installed (run .ci/deps $2)"
	python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not installed (run .ci/deps $2)"
}

# lab_tc_rate SPEED: tc's spelling of 50M, 1G, 500000k (bits per second).
lab_tc_rate() {
	case $1 in
	*[kK]) echo "${1%?}kbit" ;;
	*M) echo "${1%?}mbit" ;;
	*G) echo "${1%?}gbit" ;;
	*[0-9]) echo "${1}bit" ;;
	*) fail "link speed '$1' is not a number with k, M or G" ;;
	esac
}

# lab_bps SPEED: bits per second.
lab_bps() {
	local n=${1%[kKMG]}
	case $1 in
	*[kK]) echo $((n * 1000)) ;;
	*M) echo $((n * 1000000)) ;;
	*G) echo $((n * 1000000000)) ;;
	*) echo "$n" ;;
	esac
}

lab_nodes() {
	local prefix=$1 speed=$2 i=0 style ns hub
	shift 2
	[ $# -ge 1 ] && [ $# -le 200 ] || fail "lab_nodes: 1 to 200 nodes, not $#"
	LAB_P=$prefix
	LAB_HUB=$prefix-hub
	hub=$LAB_HUB
	export K8S_FEATURE_GATES=IPv6DualStack=true
	ip netns add "$hub" || fail "cannot create namespace $hub"
	NETNS+=("$hub")
	ip -n "$hub" link set lo up
	ip -n "$hub" addr add "$LAB_FAR4/32" dev lo
	ip -n "$hub" addr add "$LAB_FAR6/128" dev lo
	ip netns exec "$hub" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.default.accept_dad=0
	LAB_NODES=()
	local json=""
	for style in "$@"; do
		i=$((i + 1))
		case $style in routed | bridged) ;; *) fail "lab_nodes: style '$style' is neither routed nor bridged" ;; esac
		ns=$prefix-n$i
		ip netns add "$ns" || fail "cannot create namespace $ns"
		NETNS+=("$ns")
		LAB_NODES+=("n$i")
		# Forwarding for its pods; no duplicate address detection, so a
		# pod's host end has its link-local address at once.
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
			net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
		ip -n "$ns" link set lo up
		ip link add "hub-$i" netns "$hub" type veth peer name eth0 netns "$ns" ||
			fail "cannot create the uplink of $ns"
		ip -n "$hub" addr add "10.231.$i.1/24" dev "hub-$i"
		ip -n "$hub" addr add "fd00:231:$i::1/64" dev "hub-$i" nodad
		ip -n "$ns" addr add "10.231.$i.2/24" dev eth0
		ip -n "$ns" addr add "fd00:231:$i::2/64" dev eth0 nodad
		ip -n "$hub" link set "hub-$i" up
		ip -n "$ns" link set eth0 up
		ip -n "$ns" route add default via "10.231.$i.1"
		ip -n "$ns" route add default via "fd00:231:$i::1"
		ip -n "$hub" route add "10.244.$i.0/24" via "10.231.$i.2"
		ip -n "$hub" route add "fd00:10:244:$i::/64" via "fd00:231:$i::2"
		json+="${json:+,}{\"name\": \"n$i\", \"netns\": \"$ns\", \"style\": \"$style\", \"hostIP\": \"10.231.$i.2\", \"uplink\": \"eth0\"}"
	done
	cat >"$WORK/lab-nodes.json" <<JSON
{"prefix": "$prefix", "hub": "$hub", "far4": "$LAB_FAR4", "far6": "$LAB_FAR6", "nodes": [$json]}
JSON
	CLEANUP_HOOKS+=("python3 '$LAB_DIR/kubelet.py' cleanup --nodes '$WORK/lab-nodes.json' --state '$WORK/kubelet' 2>/dev/null")
	lab_shape "$speed"
}

# lab_shape SPEED: tbf on both ends of every uplink (replacing what was
# there). The bucket holds 2 ms of the rate (ten full-size frames at least),
# the queue 20 ms: a TCP flow fills the link, and pods sharing it share it.
lab_shape() {
	local rate burst i
	rate=$(lab_tc_rate "$1")
	burst=$(($(lab_bps "$1") / 8 / 500))
	[ "$burst" -ge 15140 ] || burst=15140
	for ((i = 1; i <= ${#LAB_NODES[@]}; i++)); do
		ip netns exec "$LAB_HUB" tc qdisc replace dev "hub-$i" root tbf rate "$rate" burst "$burst" latency 20ms ||
			fail "cannot shape hub-$i to $rate"
		ip netns exec "$LAB_P-n$i" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 20ms ||
			fail "cannot shape eth0 of $LAB_P-n$i to $rate"
	done
	LAB_SPEED=$1
}

# lab_k8s_nodes [CPU]: the nodes' Node objects: Ready, CPU cores (4), 16 GiB,
# 110 pods, their pod CIDRs and InternalIP, as a kubelet registers them.
lab_k8s_nodes() {
	local cpu=${1:-4} i=0 n
	for n in "${LAB_NODES[@]}"; do
		i=$((i + 1))
		cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {kubernetes.io/hostname: $n, kubernetes.io/os: linux}
spec:
  podCIDR: 10.244.$i.0/24
  podCIDRs: [10.244.$i.0/24, "fd00:10:244:$i::/64"]
status:
  capacity: {cpu: "$cpu", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "$cpu", memory: 16Gi, pods: "110"}
  addresses:
  - {type: InternalIP, address: 10.231.$i.2}
  - {type: Hostname, address: $n}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ready}
NODE
	done >"$WORK/lab-nodes.yaml"
	kc create -f "$WORK/lab-nodes.yaml" >/dev/null || fail "cannot create the lab's Node objects"
}

lab_up() {
	k8s_ports
	k8s_config "$WORK/stock.yaml" none "" 100ms
	k8s_up_api
	# netsched's scheduler keeps its lease there, as deploy/ configures it.
	kc create namespace netsched >/dev/null || fail "cannot create namespace netsched"
	lab_k8s_nodes
	k8s_up_scheduler "$WORK/stock.yaml"
	lab_netsched_scheduler
}

# lab_controllers: the controllers as tests/k8s/realnode.sh starts them,
# less those that need real nodes' heartbeats or routes.
lab_controllers() {
	start "controller-manager-$K8S_RUN" "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$WORK/kubeconfig" --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 \
		--port 0 --controllers '*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-route,-service,-persistentvolume-binder,-attachdetach,-ttl-after-finished' \
		--service-account-private-key-file "$WORK/pki/sa.key" --root-ca-file "$WORK/pki/apiserver.crt" \
		--use-service-account-credentials=false --concurrent-gc-syncs 5 --v 1
	LAB_CONTROLLERS=$LAST_PID
	K8S_PIDS+=("$LAST_PID")
	wait_for 30 "the controller-manager's ServiceAccount controller (default/default)" \
		kc get serviceaccount default -n default
}

lab_controllers_stop() {
	[ -n "${LAB_CONTROLLERS:-}" ] && stop_pids "$LAB_CONTROLLERS"
	LAB_CONTROLLERS=
}

# lab_kubelet [ARGS...]: the stand-in on this cluster (log: kubelet.log,
# node counters every second: $WORK/stats.csv, results:
# $WORK/kubelet/results.jsonl).
lab_kubelet() {
	start kubelet python3 "$LAB_DIR/kubelet.py" run --kubeconfig "$WORK/kubeconfig" \
		--nodes "$WORK/lab-nodes.json" --state "$WORK/kubelet" --stats "$WORK/stats.csv" "$@"
	LAB_KUBELET=$LAST_PID
	# k8s_down stops it first: the apiserver would wait for its watch.
	K8S_PIDS+=("$LAST_PID")
	wait_for 30 "the kubelet stand-in to list its pods" grep -q "node n${#LAB_NODES[@]}:" "$WORK/kubelet.log"
}

lab_kubelet_stop() {
	kill "$LAB_KUBELET" 2>/dev/null
	wait "$LAB_KUBELET" 2>/dev/null
}

# lab_background NODE RATE STREAMS [PORT [DIR]]: STREAMS TCP flows of
# RATE/STREAMS each from the hub into NODE's namespace (DIR rx: its uplink's
# rx, the hub side's tbf) or from NODE's namespace to the hub's end of its
# uplink (tx: its uplink's tx, the node side's tbf), paced as the stand-in
# paces pods (traffic.py: -b and the kernel's --fq-rate), so a flow held
# back on a full link does not burst to catch up later.
LAB_BG_SECONDS=${LAB_BG_SECONDS:-600}
lab_background() {
	local node=$1 rate=$2 streams=$3 port=${4:-5201} dir=${5:-rx} i=${1#n} per server client addr
	per=$(($(lab_bps "$rate") / streams))
	case $dir in
	rx) server=$LAB_P-n$i client=$LAB_HUB addr=10.231.$i.2 ;;
	tx) server=$LAB_HUB client=$LAB_P-n$i addr=10.231.$i.1 ;;
	*) fail "lab_background: direction '$dir' is neither rx nor tx" ;;
	esac
	start "bg-server-$node-$port" ip netns exec "$server" iperf3 -s -1 -B "$addr" -p "$port"
	LAB_BG+=("$LAST_PID")
	wait_for 5 "iperf3 server on port $port in $server" \
		bash -c "ip netns exec '$server' ss -Hltn 'sport = :$port' | grep -q ."
	start "bg-$node-$port" ip netns exec "$client" iperf3 -c "$addr" -p "$port" \
		-t "$LAB_BG_SECONDS" -P "$streams" -b "$per" --fq-rate "$((per * 105 / 100))" -C cubic
	LAB_BG+=("$LAST_PID")
}

lab_backgrounds() {
	local node rate streams dir port=5201
	while read -r node rate streams dir; do
		lab_background "$node" "$rate" "$streams" "$port" "${dir:-rx}"
		port=$((port + 1))
	done
}

lab_background_stop() {
	stop_pids "${LAB_BG[@]}"
	LAB_BG=()
}

# lab_rx NODE: the node's uplink received bytes.
lab_rx() {
	ip -n "$LAB_P-n${1#n}" -s -j link show eth0 | jq '.[0].stats64.rx.bytes'
}

# lab_uplink_bps NODE [DIR]: bits per second its uplink received (DIR rx,
# the default) or sent (tx) between the stand-in's last two samples (0
# before there are two).
lab_uplink_bps() {
	local col=3
	[ "${2:-rx}" = tx ] && col=4
	grep ",$1," "$WORK/stats.csv" 2>/dev/null | tail -n 2 |
		awk -F, -v c="$col" 'NR == 1 { t = $1; b = $c } NR == 2 && $1 > t { r = ($c - b) * 8 / ($1 - t) } END { printf "%d\n", r }'
}

# lab_background_ok WORKLOAD SPEED: every node's uplink carries at least
# 85% of the workload's background (bench/placement_model.py), each way.
lab_background_ok() {
	local node rate streams dir
	while read -r node rate streams dir; do
		[ "$(lab_uplink_bps "$node" "$dir")" -ge $((rate * 85 / 100)) ] || return 1
	done < <(python3 bench/placement.py background "$1" "$2")
}

# lab_scorer_sees WORKLOAD SPEED: the lab's scorer shows at least 80% of
# each node's background, each way, from its agent.
lab_scorer_sees() {
	local node rate streams dir got
	while read -r node rate streams dir; do
		got=$(curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/nodes" |
			jq -r ".nodes[] | select(.name == \"$node\" and .source == \"agent\") | .${dir}BytesPerSecond * 8 | floor")
		[ "${got:-0}" -ge $((rate * 80 / 100)) ] || return 1
	done < <(python3 bench/placement.py background "$1" "$2")
}

# The scorer's ports and report key, fixed for the whole lab so the
# netsched scheduler's urlPrefix outlives a scorer restart.
lab_netsched_ports() {
	[ -n "${LAB_SC_HTTP:-}" ] && return 0
	LAB_SC_LISTEN=$(free_port) LAB_SC_HTTP=$(free_port) LAB_SC_HEALTH=$(free_port)
	LAB_NS_SCHED_PORT=$(free_port)
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$WORK/report.key"
	# The verbs over mTLS, as deploy/ runs them.
	"$LAB_DIR/../../deploy/tls/make-certs.sh" -o "$WORK/tls" >"$WORK/certs.log" 2>&1 ||
		fail "deploy/tls/make-certs.sh: $(cat "$WORK/certs.log")"
	# The same serving certificate with 127.0.0.1 added: the rebalancer
	# (lab_rebalancer) reaches the scorer by address, having no way to
	# name the Service's host as the scheduler's tlsConfig serverName does.
	printf 'subjectAltName=DNS:netsched-scorer,DNS:netsched-scorer.netsched,DNS:netsched-scorer.netsched.svc,DNS:netsched-scorer.netsched.svc.cluster.local,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' \
		>"$WORK/tls/scorer-lab.ext"
	openssl req -new -key "$WORK/tls/scorer.key" -subj /CN=netsched-scorer 2>>"$WORK/certs.log" |
		openssl x509 -req -CA "$WORK/tls/ca.crt" -CAkey "$WORK/tls/ca.key" -CAcreateserial -days 2 \
			-extfile "$WORK/tls/scorer-lab.ext" -out "$WORK/tls/scorer.crt.lab" >>"$WORK/certs.log" 2>&1 &&
		mv "$WORK/tls/scorer.crt.lab" "$WORK/tls/scorer.crt" || fail "cannot add 127.0.0.1 to the scorer's certificate"
}

lab_netsched_scheduler() {
	lab_netsched_ports
	python3 "$LAB_DIR/shipped.py" scheduler-config "$WORK/netsched-scheduler.yaml" "$WORK/kubeconfig" \
		"https://127.0.0.1:$LAB_SC_HTTP" "127.0.0.1:$LAB_NS_SCHED_PORT" "$WORK/tls" ||
		fail "cannot localize deploy/'s scheduler config"
	# A test that judges where netsched puts pods, not how fast it answers
	# on a loaded machine, may give the extender longer (LAB_HTTP_TIMEOUT).
	if [ -n "${LAB_HTTP_TIMEOUT:-}" ]; then
		sed -i "s/httpTimeout: .*/httpTimeout: $LAB_HTTP_TIMEOUT/" "$WORK/netsched-scheduler.yaml"
		grep -q "httpTimeout: $LAB_HTTP_TIMEOUT" "$WORK/netsched-scheduler.yaml" ||
			fail "no httpTimeout in deploy/'s scheduler config to set to $LAB_HTTP_TIMEOUT"
	fi
	start "nsched-$K8S_RUN" "$K8S_BIN/kube-scheduler" --config "$WORK/netsched-scheduler.yaml" \
		--secure-port 0 --v 2
	K8S_PIDS+=("$LAST_PID")
	wait_for 30 "netsched-scheduler /healthz" curl -sf "http://127.0.0.1:$LAB_NS_SCHED_PORT/healthz"
}

# lab_agents_in: how many nodes the scorer has agent data for.
lab_agents_in() {
	curl -s "http://127.0.0.1:$LAB_SC_HEALTH/v1/nodes" | jq '[.nodes[] | select(.source == "agent")] | length'
}
lab_all_in() { [ "$(lab_agents_in)" = "${#LAB_NODES[@]}" ]; }

# lab_netsched_up SPEED [SCORER-OPTION=VALUE...]: the scorer's debug log
# (--log-level=debug) says how it scored each pod.
lab_netsched_up() {
	local speed=$1 n args
	shift
	lab_netsched_ports
	mapfile -t args < <(python3 "$LAB_DIR/shipped.py" args scorer -- "--listen=tcp://127.0.0.1:$LAB_SC_LISTEN" \
		"--http=127.0.0.1:$LAB_SC_HTTP" "--health-listen=127.0.0.1:$LAB_SC_HEALTH" \
		"--key-file=$WORK/report.key" "--kubeconfig=$WORK/kubeconfig" \
		"--tls-cert=$WORK/tls/scorer.crt" "--tls-key=$WORK/tls/scorer.key" \
		"--tls-client-ca=$WORK/tls/ca.crt" "$@" ${LAB_SCORER_ARGS:-})
	[ "${#args[@]}" -gt 6 ] || fail "no scorer args from deploy/scorer.yaml"
	start scorer "$BIN/netsched-scorer" "${args[@]}"
	LAB_SCORER=$LAST_PID
	K8S_PIDS+=("$LAST_PID") # its pod watch too
	wait_for 10 "scorer /healthz" curl -sf "http://127.0.0.1:$LAB_SC_HEALTH/healthz"
	LAB_AGENTS=()
	for n in "${LAB_NODES[@]}"; do
		mapfile -t args < <(python3 "$LAB_DIR/shipped.py" args agent -- \
			"--scorer=tcp://127.0.0.1:$LAB_SC_LISTEN" "--metrics=drop" "--key-file=$WORK/report.key" \
			"--node=$n" "--netns=$LAB_P-$n" "--link-speed=eth0=$speed" ${LAB_AGENT_ARGS:-})
		start "agent-$n" "$BIN/netsched-agent" "${args[@]}"
		LAB_AGENTS+=("$LAST_PID")
	done
	wait_for 20 "agent data for all ${#LAB_NODES[@]} nodes in the scorer" lab_all_in
}

# lab_rebalancer [--option=value...]: deploy/rebalancer.yaml's args with
# the lab's scorer (its extender port, mTLS with the rebalancer's
# certificate), the lab's kubeconfig, a loopback /metrics port
# (LAB_RB_METRICS), then LAB_REBALANCER_ARGS and the options given.
# Log: rebalancer.log (or rebalancer-N.log for the N-th call).
LAB_RB_N=0
lab_rebalancer() {
	local args
	LAB_RB_METRICS=$(free_port)
	mapfile -t args < <(python3 "$LAB_DIR/shipped.py" args rebalancer -- \
		"--scorer=https://127.0.0.1:$LAB_SC_HTTP" "--scorer-replicas=drop" "--scorer-ca=$WORK/tls/ca.crt" \
		"--scorer-cert=$WORK/tls/rebalancer.crt" "--scorer-key=$WORK/tls/rebalancer.key" \
		"--kubeconfig=$WORK/kubeconfig" "--metrics-listen=127.0.0.1:$LAB_RB_METRICS" "--identity=lab" \
		${LAB_REBALANCER_ARGS:-} "$@")
	[ "${#args[@]}" -gt 10 ] || fail "no rebalancer args from deploy/rebalancer.yaml"
	LAB_RB_N=$((LAB_RB_N + 1))
	LAB_RB_LOG=rebalancer$([ "$LAB_RB_N" -gt 1 ] && echo "-$LAB_RB_N")
	start "$LAB_RB_LOG" "$BIN/netsched-rebalancer" "${args[@]}"
	LAB_REBALANCER=$LAST_PID
	K8S_PIDS+=("$LAST_PID")
	wait_for 20 "the rebalancer's /metrics" curl -sf "http://127.0.0.1:$LAB_RB_METRICS/metrics"
}

lab_rebalancer_stop() {
	[ -n "${LAB_REBALANCER:-}" ] && stop_pids "$LAB_REBALANCER"
	LAB_REBALANCER=
}

# lab_scorer_api PATH: GET the scorer's extender port as the rebalancer
# does (its client certificate).
lab_scorer_api() {
	curl -sf --cacert "$WORK/tls/ca.crt" --cert "$WORK/tls/rebalancer.crt" --key "$WORK/tls/rebalancer.key" \
		"https://127.0.0.1:$LAB_SC_HTTP$1"
}

lab_netsched_down() {
	stop_pids "${LAB_AGENTS[@]}" "$LAB_SCORER"
	LAB_AGENTS=()
}
