#!/bin/sh
# The certificates deploy/ needs: the kube-scheduler calls the scorer's extender
# verbs over mutual TLS, so only a client holding the scheduler's certificate can
# change scores (docs/security.md). Makes, with openssl, in DIR (default
# ./netsched-tls):
#
#   ca.crt  ca.key            a CA of its own (ca.key signs both sides: keep it
#                             offline, it is not needed in the cluster)
#   scorer.crt  scorer.key    the scorer's serving certificate, for the Service
#                             netsched-scorer: SANs netsched-scorer,
#                             netsched-scorer.NS, .NS.svc, .NS.svc.DOMAIN
#   scheduler.crt  scheduler.key   the scheduler's client certificate
#                             (CN netsched-scheduler, clientAuth only)
#   rebalancer.crt  rebalancer.key  the rebalancer's (CN netsched-rebalancer,
#                             clientAuth only): it reads /v1/pressure, posts /v1/moves
#   secrets.yaml              the Secrets deploy/ mounts: netsched-scorer-tls (the
#                             scorer: --tls-cert, --tls-key; tls.crt, tls.key, ca.crt),
#                             netsched-scheduler-tls (the scheduler's tlsConfig
#                             certFile, keyFile, caFile), netsched-rebalancer-tls
#                             (its --scorer-cert, --scorer-key, --scorer-ca) and
#                             netsched-client-ca
#                             (ca.crt alone: the scorer's --tls-client-ca, the CA
#                             whose certificates named netsched-scheduler may call)
#   control-plane/            tls.crt, tls.key, ca.crt for way (b): copy to
#                             /etc/kubernetes/netsched/ on every control-plane node
#
# With the cert-manager Component (deploy/tls/cert-manager/), which makes only the
# scorer's serving certificate, --client-only makes the rest: a CA for clients, kept
# here and never in the cluster, the scheduler's and the rebalancer's certificates,
# and secrets.yaml with netsched-rebalancer-tls, netsched-scheduler-tls (its ca.crt: --server-ca FILE, the CA of cert-manager's
# netsched-scorer-tls) and netsched-client-ca. Any CA an Issuer in the namespace
# holds signs whatever Certificate someone creates there, the scheduler's name
# included: the scorer must not trust it for clients (docs/security.md).
#
# Usage: deploy/tls/make-certs.sh [-o DIR] [-n NAMESPACE] [-d CLUSTER_DOMAIN]
#                                 [--days N] [--renew] [--apply]
#                                 [--client-only --server-ca FILE]
#   -n  the namespace of the Service (netsched)   -d  the cluster domain (cluster.local)
#   --days   validity of the two leaf certificates (365); the CA gets 10 years
#   --renew  keep DIR's CA, issue new leaf certificates (a rotation: see below)
#   --apply  also `kubectl apply -f DIR/secrets.yaml`
#
# Rotation. The scorer re-reads its certificate, key and client CA when the mounted
# Secret changes (checked every 5 s; the kubelet updates a mounted Secret within
# about a minute), with no restart and no refused connection. The kube-scheduler
# reads its client certificate at start: after its Secret changes,
# `kubectl -n netsched rollout restart deployment/netsched-scheduler` (way (b): the
# kubelet restarts the static pod when you touch its manifest).
#   - New leaf certificates from the same CA (before they expire; `openssl x509
#     -enddate -noout -in DIR/scorer.crt`): `make-certs.sh -o DIR --renew --apply`,
#     then restart the scheduler. Both sides trust the same CA throughout: nothing
#     fails in between.
#   - A new CA: make it in a new DIR, put both CAs in each Secret's ca.crt (cat the
#     two files), apply, restart the scheduler; then apply the new DIR's
#     secrets.yaml (new leaves, both CAs still trusted), restart; then drop the old
#     CA from ca.crt and apply once more.
# cert-manager does all this by itself: deploy/tls/cert-manager/.
set -eu

dir=./netsched-tls ns=netsched domain=cluster.local days=365 renew= apply= client_only= server_ca=
while [ $# -gt 0 ]; do
	case $1 in
	--client-only) client_only=1 ;;
	--server-ca) server_ca=$2; shift ;;
	-o) dir=$2; shift ;;
	-n) ns=$2; shift ;;
	-d) domain=$2; shift ;;
	--days) days=$2; shift ;;
	--renew) renew=1 ;;
	--apply) apply=1 ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "make-certs.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
case $days in '' | *[!0-9]*) echo "make-certs.sh: --days wants a number of days" >&2; exit 2 ;; esac
if [ -n "$client_only" ]; then
	[ -s "$server_ca" ] || { echo "make-certs.sh: --client-only needs --server-ca FILE (the ca.crt of cert-manager's netsched-scorer-tls)" >&2; exit 2; }
elif [ -n "$server_ca" ]; then
	echo "make-certs.sh: --server-ca goes with --client-only" >&2; exit 2
fi
command -v openssl >/dev/null || { echo "make-certs.sh: openssl not found" >&2; exit 1; }
mkdir -p "$dir/control-plane"
umask 077
svc=netsched-scorer

if [ -n "$renew" ]; then
	[ -s "$dir/ca.crt" ] && [ -s "$dir/ca.key" ] ||
		{ echo "make-certs.sh: --renew needs $dir/ca.crt and $dir/ca.key" >&2; exit 1; }
else
	[ ! -e "$dir/ca.key" ] ||
		{ echo "make-certs.sh: $dir/ca.key exists: use --renew, or another -o DIR" >&2; exit 1; }
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj "/CN=netsched CA" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign \
		-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi

# leaf NAME SUBJECT EXTENSIONS: a key and a certificate signed by the CA.
leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" \
		-keyout "$dir/$1.key" -out "$dir/$1.csr" 2>/dev/null
	printf '%s\n' "$3" >"$dir/$1.ext"
	openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
		-CAcreateserial -days "$days" -extfile "$dir/$1.ext" -out "$dir/$1.crt" 2>/dev/null
	rm -f "$dir/$1.csr" "$dir/$1.ext"
}
[ -n "$client_only" ] || leaf scorer "/CN=$svc.$ns.svc" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.$domain"
# The name the scorer answers (its --client-names, netsched-scheduler by default).
leaf scheduler "/CN=netsched-scheduler" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
# The rebalancer's, for /v1/pressure and /v1/moves (the scorer's --client-names).
leaf rebalancer "/CN=netsched-rebalancer" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
rm -f "$dir/ca.srl"

for who in scorer scheduler rebalancer; do
	[ -n "$client_only" ] && [ "$who" = scorer ] && continue
	openssl verify -CAfile "$dir/ca.crt" "$dir/$who.crt" >/dev/null ||
		{ echo "make-certs.sh: $who.crt does not verify against ca.crt" >&2; exit 1; }
done
# What checks the scorer's serving certificate: this CA, or cert-manager's.
sca=$dir/ca.crt
if [ -n "$client_only" ]; then
	cp "$server_ca" "$dir/server-ca.crt"
	sca=$dir/server-ca.crt
fi
cp "$dir/scheduler.crt" "$dir/control-plane/tls.crt"
cp "$dir/scheduler.key" "$dir/control-plane/tls.key"
cp "$sca" "$dir/control-plane/ca.crt"

# secret NAME WHO: a Secret with tls.crt, tls.key and ca.crt (the serving CA).
secret() {
	cat <<EOF
---
apiVersion: v1
kind: Secret
metadata:
  name: $1
  namespace: $ns
  labels:
    app.kubernetes.io/part-of: netsched
type: Opaque
data:
  tls.crt: $(base64 <"$dir/$2.crt" | tr -d '\n')
  tls.key: $(base64 <"$dir/$2.key" | tr -d '\n')
  ca.crt: $(base64 <"$sca" | tr -d '\n')
EOF
}
{
	echo "# netsched mTLS Secrets, made by deploy/tls/make-certs.sh on $(date -u +%Y-%m-%d)."
	[ -n "$client_only" ] || secret netsched-scorer-tls scorer
	secret netsched-scheduler-tls scheduler
	secret netsched-rebalancer-tls rebalancer
	cat <<EOF
---
# The CA of the scheduler's client certificate: the scorer's --tls-client-ca.
apiVersion: v1
kind: Secret
metadata:
  name: netsched-client-ca
  namespace: $ns
  labels:
    app.kubernetes.io/part-of: netsched
type: Opaque
data:
  ca.crt: $(base64 <"$dir/ca.crt" | tr -d '\n')
EOF
} >"$dir/secrets.yaml"
if [ -n "$client_only" ]; then
	echo "made in $dir: ca.crt (for clients), scheduler.crt (CN netsched-scheduler), rebalancer.crt (CN netsched-rebalancer), valid $days days; secrets.yaml (netsched-scheduler-tls, netsched-rebalancer-tls, netsched-client-ca)"
else
	echo "made in $dir: ca.crt, scorer.crt (DNS $svc.$ns.svc), scheduler.crt (CN netsched-scheduler), rebalancer.crt (CN netsched-rebalancer), valid $days days; secrets.yaml"
fi
if [ -n "$apply" ]; then
	kubectl apply -f "$dir/secrets.yaml"
fi
