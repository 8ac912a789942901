# Real nodes for the lab (sourced, bash, after tests/integration/lib.sh,
# tests/k8s/lib.sh and tests/k8s/lab.sh): in each of lab_nodes' node
# namespaces, a containerd of its own and kubelet v1.20.2 (noderun.sh), the
# CNI bridge, host-local, bandwidth and portmap plugins from Debian's
# containernetworking-plugins, kube-proxy for Services, and one
# kube-controller-manager for the cluster (DaemonSets, ReplicaSets,
# Deployments, disruption budgets, service-account tokens). Images come
# without a registry: OCI layouts (deploy/container/build-oci.sh) imported
# into each containerd.
# docs/lab.md says what these nodes are for and what the stand-in is for.
#
#   realnode_need NAME          skip NAME unless root, containerd, runc, ctr,
#                               the CNI plugins and iptables are there
#   realnode_up                 after lab_nodes: the host link, etcd and the
#                               apiserver on it, the controllers, a kubelet and
#                               a kube-proxy per node; waits until every node
#                               is Ready
#   realnode_image REF ROOTFS ENTRYPOINT [USER]   an image for every node
#                               (call before realnode_up)
#   realnode_image_tar TAR      a ready image archive (an OCI layout tarred,
#                               e.g. deploy/container/build-oci.sh's) for
#                               every node (call before realnode_up)
# REALNODE_SCHEDULER=none: realnode_up starts no scheduler (the test runs
# its own).
#   realnode_down               nodes, controllers, control plane
#
# The host link: the hub reaches the host's 10.231.254.1 (the apiserver's
# address for nodes and pods) over a veth; the host routes the nodes' and
# pods' addresses back through the hub. Node i's pods get 10.244.i.0/24 on
# its cni0 bridge; the hub already routes that to the node.

REALNODE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REALNODE_PIDS=()
REALNODE_IMAGES=()

realnode_need() {
	need_root "$1"
	local t
	# The lab's link to the host ($K8S_NODE_API_HOST/24) and its routes exist
	# once per machine: a second real-node lab (tests/run-all runs tests side
	# by side) waits here for the first. Every process this test starts holds
	# the lock with it, so it is free only when the lab is gone.
	exec {REALNODE_LOCK}>/run/lock/netsched-realnode.lock ||
		fail "cannot open /run/lock/netsched-realnode.lock"
	flock -w 900 "$REALNODE_LOCK" ||
		fail "another real-node lab held /run/lock/netsched-realnode.lock for 900 s"
	for t in containerd runc ctr iptables unshare; do
		command -v "$t" >/dev/null || fail "$t is not installed (run .ci/deps test)"
	done
	for t in bridge host-local bandwidth portmap loopback; do
		[ -x "/usr/lib/cni/$t" ] || fail "/usr/lib/cni/$t is missing (containernetworking-plugins: run .ci/deps test)"
	done
}

# realnode_image REF ROOTFS ENTRYPOINT [USER]
# deploy/container/build-oci.sh --rootfs: the one script that writes images.
realnode_image() {
	local out=$WORK/image-build
	mkdir -p "$WORK/images"
	IMAGE=$1 SOURCE_DATE_EPOCH=0 "$REALNODE_DIR/../../deploy/container/build-oci.sh" --rootfs "$2" \
		--entrypoint "$3" --user "${4:-0}" "$out" >"$WORK/image-build.log" 2>&1 ||
		fail "cannot make the image $1: $(tail -n 3 "$WORK/image-build.log")"
	mv "$out/netsched-oci.tar" "$WORK/images/$(echo "$1" | tr '/:' '__').tar"
	rm -rf "$out"
}

# realnode_image_tar TAR
realnode_image_tar() {
	[ -f "$1" ] || fail "no image archive $1"
	mkdir -p "$WORK/images"
	cp "$1" "$WORK/images/$(basename "$1")" || fail "cannot take the image $1"
}

realnode_host_link() {
	local hub=$LAB_HUB
	ip link add "$LAB_P-host" type veth peer name host netns "$hub" ||
		fail "cannot link the host to $hub"
	ip addr add "$K8S_NODE_API_HOST/24" dev "$LAB_P-host"
	ip link set "$LAB_P-host" up
	ip -n "$hub" addr add 10.231.254.2/24 dev host
	ip -n "$hub" link set host up
	ip route add 10.231.0.0/16 via 10.231.254.2 dev "$LAB_P-host"
	ip route add 10.244.0.0/16 via 10.231.254.2 dev "$LAB_P-host"
}

# realnode_node_files I DIR: node i's containerd config, CNI network and kubeconfig.
realnode_node_files() {
	local i=$1 d=$2
	mkdir -p "$d/cni" "$d/images" "$d/logs"
	cp "$WORK"/images/*.tar "$d/images/" 2>/dev/null
	cat >"$d/containerd.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
[grpc]
  address = "$d/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "netsched.test/pause:lab"
  # No process here may lower its OOM score below its parent's (the
  # sandbox asks -998): keep each at containerd's own at least.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
EOF
	cat >"$d/cni/10-lab.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "lab", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$d/ipam",
            "ranges": [[{"subnet": "10.244.$i.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "bandwidth", "capabilities": {"bandwidth": true}}]}
EOF
	sed -e "s|server: .*|server: https://$K8S_NODE_API_HOST:$K8S_API_PORT|" "$WORK/kubeconfig" >"$d/kubeconfig"
}

realnode_up() {
	local i=0 n d ready
	[ -x "$K8S_BIN/kubelet" ] || fail "no kubelet in $K8S_BIN (tests/k8s/build.sh builds it)"
	realnode_host_link
	mkdir -p "$WORK/pause-root"
	cp "$K8S_BIN/pause" "$WORK/pause-root/pause"
	realnode_image "netsched.test/pause:lab" "$WORK/pause-root" /pause 65535
	K8S_API_HOST=$K8S_NODE_API_HOST
	k8s_ports
	k8s_up_api
	# The apiserver's own Service, for pods that talk to it (the bootstrap
	# controller keeps it; the lab's apiserver reconciles no endpoints).
	kc apply -f - >/dev/null <<EOF || fail "cannot point the kubernetes Service at the apiserver"
apiVersion: v1
kind: Endpoints
metadata: {name: kubernetes, namespace: default}
subsets:
- addresses: [{ip: $K8S_NODE_API_HOST}]
  ports: [{name: https, port: $K8S_API_PORT, protocol: TCP}]
EOF
	start "controller-manager-$K8S_RUN" "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$WORK/kubeconfig" --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 \
		--port 0 --controllers '*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-route,-service,-persistentvolume-binder,-attachdetach,-ttl-after-finished' \
		--service-account-private-key-file "$WORK/pki/sa.key" --root-ca-file "$WORK/pki/apiserver.crt" \
		--use-service-account-credentials=false --concurrent-gc-syncs 5 --v 1
	K8S_PIDS+=("$LAST_PID")
	if [ "${REALNODE_SCHEDULER:-stock}" != none ]; then
		k8s_config "$WORK/stock.yaml" none "" 100ms
		k8s_up_scheduler "$WORK/stock.yaml"
	fi
	for n in "${LAB_NODES[@]}"; do
		i=$((i + 1))
		d=$WORK/node-$n
		realnode_node_files "$i" "$d"
		# nsenter, not `ip netns exec`: that mounts a sysfs of its own over
		# /sys, and the kubelet would find no cgroup hierarchy under it.
		start "node-$n" nsenter --net="/run/netns/$LAB_P-$n" unshare -m --propagation private \
			bash "$REALNODE_DIR/noderun.sh" "$d" "$n" "10.231.$i.2" "$K8S_BIN/kubelet" "$K8S_BIN/kube-proxy"
		REALNODE_PIDS+=("$LAST_PID")
	done
	wait_for 120 "every real node Ready" realnode_all_ready
}

realnode_all_ready() {
	local ready
	ready=$(kc get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
		grep -c True)
	[ "$ready" -eq "${#LAB_NODES[@]}" ]
}

realnode_down() {
	local p
	for p in "${REALNODE_PIDS[@]}"; do
		STOP_WAIT_S=30 stop_pids "$p"
	done
	REALNODE_PIDS=()
	k8s_down
}
