#!/usr/bin/env bash
# One real node of the lab (tests/k8s/realnode.sh starts it with
# `nsenter --net=NODE-NS unshare -m`): its own containerd (socket, root and
# state under DIR: a kubelet removes sandboxes it does not know, so nodes
# never share one), the images in DIR/images/*.tar imported, then kubelet
# v1.20.2 against it and, given KUBE-PROXY-BIN, kube-proxy v1.20.2 (iptables
# mode, its rules in this node's namespace only; it writes no conntrack
# sysctl: those are the host's, shared by every node). In this mount
# namespace only, DIR/logs is /var/log/pods (a path the kubelet does not let
# one change), DIR/var-lib-cni is /var/lib/cni (the CNI library's cache) and
# DIR/run-netns is where the runtime pins its pods' network namespaces.
#   noderun.sh DIR NODE NODE-IP KUBELET-BIN [KUBE-PROXY-BIN]
# On SIGTERM: the kubelet stops, every pod's containers are killed and
# removed, containerd stops; nothing of the node survives in the host.
set -u
D=$1 NODE=$2 IP=$3 KUBELET=$4 PROXY=${5:-}
SOCK=$D/containerd.sock
log() { echo "noderun $NODE: $*" >&2; }

mount --make-rprivate / || { log "cannot make the mounts private"; exit 1; }
mkdir -p "$D/logs" /var/log/pods && mount --bind "$D/logs" /var/log/pods ||
	{ log "cannot give the node its own /var/log/pods"; exit 1; }
# The CNI library's cache (/var/lib/cni/results: each sandbox's result, kept
# until its DEL) is the node's own too: a node stopped with pods still on it
# leaves nothing there in the host.
mkdir -p "$D/var-lib-cni" /var/lib/cni && mount --bind "$D/var-lib-cni" /var/lib/cni ||
	{ log "cannot give the node its own /var/lib/cni"; exit 1; }

containerd --config "$D/containerd.toml" >"$D/containerd.log" 2>&1 &
CTRD=$!
KUBELET_PID=
PROXY_PID=
stop() {
	trap - TERM INT EXIT
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
	[ -n "$KUBELET_PID" ] && kill "$KUBELET_PID" 2>/dev/null && wait "$KUBELET_PID" 2>/dev/null
	# The sandboxes' network namespaces are pinned in this mount namespace
	# only: their names under /run/netns outlive it as empty files.
	local pins
	pins=$(for c in $(ctr -a "$SOCK" -n k8s.io containers ls -q 2>/dev/null); do
		ctr -a "$SOCK" -n k8s.io containers info "$c" 2>/dev/null |
			jq -r '.Spec.linux.namespaces[]? | select(.type == "network") | .path // empty'
	done | grep '^/var/run/netns/\|^/run/netns/' | sort -u)
	# The pods' containers and sandboxes, then the runtime.
	for t in $(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
		ctr -a "$SOCK" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1
	done
	for _ in $(seq 50); do
		[ -z "$(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null)" ] && break
		sleep 0.1
	done
	for c in $(ctr -a "$SOCK" -n k8s.io containers ls -q 2>/dev/null); do
		ctr -a "$SOCK" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1
		ctr -a "$SOCK" -n k8s.io containers delete "$c" >/dev/null 2>&1
	done
	kill "$CTRD" 2>/dev/null && wait "$CTRD" 2>/dev/null
	# A shim whose containerd is gone still runs: its -address names ours.
	pkill -KILL -f "containerd-shim.* -address $SOCK" 2>/dev/null
	for p in $pins; do
		umount "$p" 2>/dev/null
		rm -f "$p"
	done
	exit 0
}
trap stop TERM INT EXIT

for _ in $(seq 100); do
	ctr -a "$SOCK" version >/dev/null 2>&1 && break
	sleep 0.1
done
ctr -a "$SOCK" version >/dev/null 2>&1 || { log "containerd did not start: $(tail -n 5 "$D/containerd.log")"; exit 1; }
for img in "$D"/images/*.tar; do
	[ -f "$img" ] || continue
	ctr -a "$SOCK" -n k8s.io images import "$img" >/dev/null ||
		{ log "cannot import $(basename "$img")"; exit 1; }
done

# 1.20's flags (its config file says the same); the node's QoS cgroups
# and allocatable enforcement are off: several kubelets share this host's
# cgroup tree, and none of them owns it.
"$KUBELET" --kubeconfig "$D/kubeconfig" --hostname-override "$NODE" --node-ip "$IP" \
	--container-runtime remote --container-runtime-endpoint "unix://$SOCK" \
	--image-service-endpoint "unix://$SOCK" --containerd "$SOCK" \
	--root-dir "$D/kubelet" --cert-dir "$D/kubelet-pki" --volume-plugin-dir "$D/volume-plugins" \
	--cgroup-driver cgroupfs --cgroups-per-qos=false --enforce-node-allocatable "" \
	--fail-swap-on=false --read-only-port 0 --address "$IP" --healthz-bind-address 127.0.0.1 \
	--eviction-hard "memory.available<1Mi,nodefs.available<1%,imagefs.available<1%" \
	--image-gc-high-threshold 100 --image-gc-low-threshold 99 \
	--node-labels "netsched.test/real=true" --max-pods 30 \
	--runtime-request-timeout 30s --sync-frequency 5s --v 2 >"$D/kubelet.log" 2>&1 &
KUBELET_PID=$!
if [ -n "$PROXY" ]; then
	# Services' ClusterIPs for this node's pods and host-network processes.
	# --conntrack-*: 0 leaves the host's conntrack table and timeouts alone.
	"$PROXY" --kubeconfig "$D/kubeconfig" --hostname-override "$NODE" --bind-address "$IP" \
		--proxy-mode iptables --cluster-cidr 10.244.0.0/16 --conntrack-max-per-core 0 \
		--conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
		--metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 \
		--v 1 >"$D/kube-proxy.log" 2>&1 &
	PROXY_PID=$!
fi
wait "$KUBELET_PID"
log "the kubelet exited: $(tail -n 5 "$D/kubelet.log")"
KUBELET_PID=
stop
