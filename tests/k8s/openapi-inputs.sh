#!/usr/bin/env bash
# Prints, one a line, the Go packages kube-apiserver's generated OpenAPI
# definitions are built from: what Kubernetes' own
# build/root/Makefile.generated_files computes for its KUBE target (every
# directory of the tree with a file tagged `+k8s:openapi-gen=`, staging/src
# named as vendor/, without code-generator and sample-apiserver).
# Run from the root of the Kubernetes tree (GOPATH layout).
set -euo pipefail
find -H . \( -path ./_\* -o -path ./.\* -o -path ./vendor \) -prune -o -type f -name '*.go' -print |
	sed -e 's|^./staging/src|vendor|' -e 's|/[^/]*$||' -e 's|^./||' | LC_ALL=C sort -u |
	grep -v -e '^vendor/k8s.io/code-generator\(/\|$\)' -e '^vendor/k8s.io/sample-apiserver\(/\|$\)' |
	while read -r d; do
		grep -l '^// *+k8s:' "$d"/*.go 2>/dev/null || true
	done | xargs grep -l '+k8s:openapi-gen=' | xargs -n1 dirname | LC_ALL=C sort -u |
	sed 's|^|k8s.io/kubernetes/|'
