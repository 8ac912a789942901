#!/usr/bin/env bash
# `make demo-cluster`: bench-placement at demo size, for a newcomer. Four
# simulated nodes with 50 Mb/s uplinks (n1 and n2 busy at 85%, n3 and n4 at
# 5%), a real kube-apiserver and kube-scheduler v1.20.2, the kubelet
# stand-in running every pod's traffic; a Deployment's burst of 8 pods that
# each receive 10 Mb/s and declare nothing, placed once by the stock
# scheduler and once by netsched as deploy/ ships it. Prints where each
# pod went and what it got. About a minute once the control plane is
# cached (tests/k8s/build.sh builds it the first time, ~4 minutes).
set -u
cd "$(dirname "$0")/.." || exit 1
export PLACEMENT_SPEEDS=${PLACEMENT_SPEEDS:-50M} PLACEMENT_WORKLOADS=demo \
	PLACEMENT_WAYS=${PLACEMENT_WAYS:-stock netsched} PLACEMENT_STYLES="routed routed bridged bridged" \
	PLACEMENT_OUT=${PLACEMENT_OUT:-${O:-build}/demo-cluster} PLACEMENT_DETAIL=1 PLACEMENT_NAME=demo-cluster
exec bench/placement.sh
