#!/usr/bin/env bash
# Builds kube-apiserver and kube-scheduler v1.20.2 from Debian bookworm's
# `kubernetes` source package, and unpacks kubectl from Debian's
# kubernetes-client package, into a cache outside the repository; for the
# lab's real nodes also kube-controller-manager, kubelet, kube-proxy and the
# pod sandbox's pause (build/pause/linux/pause.c of the same tree):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/netsched/k8s-<sha256 of the orig tarball>-<recipe>/bin/
# Also kube-scheduler-extender-preemption: the same v1.20.2 scheduler with the
# one-line upstream fix that makes its preemption call extenders at all
# (kubernetes#103019, cherry-picked to release-1.20 as #103030; v1.20.2 never
# sends the preempt verb): for tests/k8s/test_k8s_preempt.sh.
# The tree's vendored github.com/modern-go/reflect2 v1.0.1 is replaced by
# Debian's 1.0.2 (golang-github-modern-go-reflect2-dev): v1.0.1 iterates maps
# with a copy of the Go runtime's map iterator that is smaller than Go 1.18's,
# so under Debian 12's Go 1.19 the apiserver overwrote its own stack whenever
# it encoded a map (labels, annotations) as JSON, and died with "fatal error:
# fault" in mapiterinit: a JSON list of pods with labels killed it at once,
# over HTTP/1.1 every time (upstream moved to 1.0.2 for Go 1.18).
# A second run finds the binaries there and returns at once. Prints the
# directory holding the binaries on its last line of stdout.
#
# Why this way: no Debian package ships the control plane, but the source
# package (which Debian uses to build only kubectl) carries the complete
# upstream v1.20.2 tree, vendor/ included, as its orig tarball. Nothing from
# that tree ever enters the repository.
#
# Needs: apt (source tools, with a private deb-src list: the system's apt
# configuration is left untouched), golang-go, dpkg. Root or sudo only for
# installing missing packages (.ci/deps k8s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.."

# The orig tarball of kubernetes 1.20.5+really1.20.2-1.1+deb12u1 (bookworm):
# upstream v1.20.2 exactly. Any other tarball is refused.
K8S_SHA256=b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc
K8S_VERSION=v1.20.2
# What this script changes in the tree: a new recipe builds anew, beside
# binaries of an older one (removed once the new ones are in place).
RECIPE=preempt-reflect2-nodes
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/netsched
OUT=$CACHE/k8s-$K8S_SHA256-$RECIPE
log() { echo "k8s-build: $*" >&2; }

built() {
	[ -x "$OUT/bin/kube-apiserver" ] && [ -x "$OUT/bin/kube-scheduler" ] &&
		[ -x "$OUT/bin/kube-scheduler-extender-preemption" ] && [ -x "$OUT/bin/kubectl" ] &&
		[ -x "$OUT/bin/kube-controller-manager" ] && [ -x "$OUT/bin/kubelet" ] &&
		[ -x "$OUT/bin/kube-proxy" ] && [ -x "$OUT/bin/pause" ]
}
if built; then
	echo "$OUT/bin"
	exit 0
fi

.ci/deps k8s >&2
mkdir -p "$CACHE"
# One build at a time (two test scripts may ask at once).
exec 9>"$CACHE/k8s-build.lock"
flock 9
if built; then
	echo "$OUT/bin"
	exit 0
fi

WORKDIR=$CACHE/k8s-work
rm -rf "$WORKDIR"
# The tree and Go's cache take ~1.6 GB: never left behind, also not on failure
# (the verified tarball stays in $CACHE for the next attempt).
trap 'cd / && rm -rf "$WORKDIR"' EXIT
trap 'exit 1' INT TERM
mkdir -p "$WORKDIR/apt/lists/partial" "$WORKDIR/apt/archives/partial" "$WORKDIR/apt/parts" \
	"$WORKDIR/dl" "$OUT/bin"
start_all=$(date +%s)

# --- A private deb-src list: the same archive URIs and suites as the
# machine's enabled deb stanzas for this release (one-line and deb822 formats).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
{
	cat /etc/apt/sources.list 2>/dev/null || true
	for f in /etc/apt/sources.list.d/*.list; do
		if [ -f "$f" ]; then cat "$f"; fi
	done
} | awk -v c="$codename" '$1 == "deb" {
	# Options ("[signed-by=... arch=...]") are kept as they are.
	opts = ""; i = 2
	if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) { opts = opts $i " "; i++ } opts = opts $i " "; i++ }
	uri = $i; suite = $(i + 1); comps = ""
	for (j = i + 2; j <= NF; j++) comps = comps " " $j
	if (suite ~ "^" c "(-updates|-security|/updates)?$") print "deb-src " opts uri " " suite comps
}' >"$WORKDIR/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
	if [ ! -f "$f" ]; then continue; fi
	# deb822: a stanza is a paragraph; keep those with Types containing deb.
	awk -v c="$codename" 'BEGIN { RS = ""; FS = "\n" }
	{
		types = ""; uris = ""; suites = ""; comps = ""; enabled = "yes"; keyring = ""
		for (k = 1; k <= NF; k++) {
			line = $k; if (line ~ /^#/) continue
			n = index(line, ":"); if (!n) continue
			key = tolower(substr(line, 1, n - 1)); val = substr(line, n + 1); gsub(/^ +| +$/, "", val)
			if (key == "types") types = val; else if (key == "uris") uris = val
			else if (key == "suites") suites = val; else if (key == "components") comps = val
			else if (key == "enabled") enabled = tolower(val); else if (key == "signed-by") keyring = val
		}
		if (enabled == "no" || (" " types " ") !~ / deb /) next
		nu = split(uris, U, " "); ns = split(suites, S, " ")
		for (u = 1; u <= nu; u++) for (s = 1; s <= ns; s++)
			if (S[s] ~ "^" c "(-updates|-security)?$")
				print "deb-src" (keyring != "" ? " [signed-by=" keyring "]" : "") " " U[u] " " S[s] " " comps
	}' "$f"
done >>"$WORKDIR/apt/sources.list"
[ -s "$WORKDIR/apt/sources.list" ] || {
	log "no deb stanza for $codename in the apt sources: cannot fetch the kubernetes source package"
	exit 1
}
log "private source list: $(tr '\n' ';' <"$WORKDIR/apt/sources.list")"
APT=(apt-get -q -o "Dir::Etc::SourceList=$WORKDIR/apt/sources.list"
	-o "Dir::Etc::SourceParts=$WORKDIR/apt/parts"
	-o "Dir::State::Lists=$WORKDIR/apt/lists"
	-o "Dir::Cache::Archives=$WORKDIR/apt/archives"
	-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=")
# apt drops to the _apt user to download; it cannot write into a root-owned
# private tree, so it stays root for these private lists only.
[ "$(id -u)" -eq 0 ] && APT+=(-o "APT::Sandbox::User=root")

t=$(date +%s)
tarball=$CACHE/kubernetes-$K8S_SHA256.orig.tar.gz
if [ -f "$tarball" ] && echo "$K8S_SHA256  $tarball" | sha256sum -c --quiet 2>/dev/null; then
	log "reusing $tarball"
else
"${APT[@]}" update >"$WORKDIR/apt.log" 2>&1 || {
	tail -n 20 "$WORKDIR/apt.log" >&2
	log "apt-get update with the private deb-src list failed"
	exit 1
}
(cd "$WORKDIR/dl" && "${APT[@]}" source --download-only kubernetes >>"$WORKDIR/apt.log" 2>&1) || {
	tail -n 20 "$WORKDIR/apt.log" >&2
	log "apt-get source kubernetes failed"
	exit 1
}
got_file=$(ls "$WORKDIR"/dl/kubernetes_*.orig.tar.* | head -n 1)
got=$(sha256sum "$got_file" | cut -d' ' -f1)
if [ "$got" != "$K8S_SHA256" ]; then
	log "$(basename "$got_file") has sha256 $got, want $K8S_SHA256: refusing to build it"
	exit 1
fi
mv "$got_file" "$tarball"
log "fetched $(basename "$got_file") ($(du -m "$tarball" | cut -f1) MB, sha256 ok) in $(($(date +%s) - t)) s"
fi

# --- kubectl: Debian's kubernetes-client, unpacked privately with dpkg -x
# (on some machines /usr/bin/kubectl belongs to another package).
t=$(date +%s)
(cd "$WORKDIR/dl" && apt-get -q download kubernetes-client >>"$WORKDIR/apt.log" 2>&1) || {
	tail -n 20 "$WORKDIR/apt.log" >&2
	log "apt-get download kubernetes-client failed"
	exit 1
}
dpkg -x "$WORKDIR"/dl/kubernetes-client_*.deb "$WORKDIR/kubectl-root"
cp "$WORKDIR/kubectl-root/usr/bin/kubectl" "$OUT/bin/kubectl.tmp"
mv "$OUT/bin/kubectl.tmp" "$OUT/bin/kubectl"
log "kubectl: $("$OUT/bin/kubectl" version --client --short 2>/dev/null || true)"

# --- Unpack and build in GOPATH mode (module mode with -mod=vendor fails on
# this tree: "updates to go.mod needed"; 1.20's own scripts use GOPATH mode).
t=$(date +%s)
mkdir -p "$WORKDIR/src"
tar -xf "$tarball" -C "$WORKDIR/src"
tree=$(find "$WORKDIR/src" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -d "$tree/cmd/kube-scheduler" ] || { log "$tree has no cmd/kube-scheduler"; exit 1; }
export GOPATH=$WORKDIR/gopath GOCACHE=$WORKDIR/gocache GO111MODULE=off CGO_ENABLED=0 GOFLAGS=
mkdir -p "$GOPATH/src/k8s.io"
ln -sfn "$tree" "$GOPATH/src/k8s.io/kubernetes"
cd "$GOPATH/src/k8s.io/kubernetes"
export PWD=$GOPATH/src/k8s.io/kubernetes
log "unpacked in $(($(date +%s) - t)) s"

# reflect2 1.0.2 from Debian in place of the vendored 1.0.1 (see the top).
r2=/usr/share/gocode/src/github.com/modern-go/reflect2
grep -q '^# github.com/modern-go/reflect2 v1.0.1 ' vendor/modules.txt ||
	{ log "vendor/ does not hold reflect2 v1.0.1: not v1.20.2's tree"; exit 1; }
[ -f "$r2/go_above_118.go" ] || { log "$r2 is not reflect2 1.0.2 or later (golang-github-modern-go-reflect2-dev)"; exit 1; }
rm -rf vendor/github.com/modern-go/reflect2
cp -r "$r2" vendor/github.com/modern-go/reflect2

LDFLAGS="-s -w -X k8s.io/kubernetes/vendor/k8s.io/component-base/version.gitVersion=$K8S_VERSION
 -X k8s.io/kubernetes/vendor/k8s.io/component-base/version.gitMajor=1
 -X k8s.io/kubernetes/vendor/k8s.io/component-base/version.gitMinor=20
 -X k8s.io/kubernetes/vendor/k8s.io/component-base/version.gitTreeState=clean"
JOBS=$(nproc)

t=$(date +%s)
go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS" -o "$WORKDIR/kube-scheduler" ./cmd/kube-scheduler
mv "$WORKDIR/kube-scheduler" "$OUT/bin/kube-scheduler.new"
log "kube-scheduler built in $(($(date +%s) - t)) s"

# The same scheduler with upstream's fix for extenders never called on
# preemption: v1.20.2 builds its profiles without WithExtenders, so
# DefaultPreemption sees no extender (kubernetes#102971). The fix is that
# one option (#103019; release-1.20: #103030).
t=$(date +%s)
factory=pkg/scheduler/factory.go
anchor='frameworkruntime.WithCaptureProfile(frameworkruntime.CaptureProfile(c.frameworkCapturer)),'
if grep -q 'frameworkruntime.WithExtenders(extenders)' "$factory" || [ "$(grep -c -F "$anchor" "$factory")" != 1 ]; then
	log "$factory is not v1.20.2's: cannot apply the preemption fix"
	exit 1
fi
sed -i "s|^\(\t*\)$anchor\$|&\n\1frameworkruntime.WithExtenders(extenders),|" "$factory"
grep -q 'frameworkruntime.WithExtenders(extenders),' "$factory" || { log "the preemption fix did not apply"; exit 1; }
go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS" -o "$WORKDIR/kube-scheduler-extender-preemption" ./cmd/kube-scheduler
mv "$WORKDIR/kube-scheduler-extender-preemption" "$OUT/bin/kube-scheduler-extender-preemption"
log "kube-scheduler-extender-preemption built in $(($(date +%s) - t)) s"

# kube-apiserver needs pkg/generated/openapi/zz_generated.openapi.go, which
# the tarball lacks: generate it with the vendored openapi-gen over the same
# input packages as build/root/Makefile.generated_files (every package tagged
# +k8s:openapi-gen=true, plus the fixed list there).
t=$(date +%s)
go build -p "$JOBS" -o "$WORKDIR/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
"$HERE/openapi-inputs.sh" >"$WORKDIR/openapi-inputs"
"$WORKDIR/openapi-gen" \
	--input-dirs "$(paste -sd, "$WORKDIR/openapi-inputs")" \
	--output-base "$GOPATH/src" \
	--output-package k8s.io/kubernetes/pkg/generated/openapi \
	-O zz_generated.openapi \
	--go-header-file hack/boilerplate/boilerplate.generatego.txt \
	--report-filename "$WORKDIR/openapi-violations.report" >>"$WORKDIR/openapi-gen.log" 2>&1 || {
	tail -n 20 "$WORKDIR/openapi-gen.log" >&2
	log "openapi-gen failed"
	exit 1
}
# Upstream's own check: the API-rule report equals the known exceptions, i.e.
# the generator saw the same packages upstream's build does.
if diff -q "$WORKDIR/openapi-violations.report" api/api-rules/violation_exceptions.list >/dev/null; then
	log "openapi generated in $(($(date +%s) - t)) s (API rule report matches upstream's)"
else
	log "openapi-gen's API rule report differs from api/api-rules/violation_exceptions.list:"
	diff "$WORKDIR/openapi-violations.report" api/api-rules/violation_exceptions.list | head -n 10 >&2
	exit 1
fi
t=$(date +%s)
go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS" -o "$WORKDIR/kube-apiserver" ./cmd/kube-apiserver
mv "$WORKDIR/kube-apiserver" "$OUT/bin/kube-apiserver"
mv "$OUT/bin/kube-scheduler.new" "$OUT/bin/kube-scheduler"
log "kube-apiserver built in $(($(date +%s) - t)) s"

# What the lab's real nodes run (docs/lab.md): the controllers (ReplicaSets,
# DaemonSets, the disruption budgets' status), the kubelet and kube-proxy,
# and the sandbox's process, static like upstream's pause image's.
for cmd in kube-controller-manager kubelet kube-proxy; do
	t=$(date +%s)
	go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS" -o "$WORKDIR/$cmd" "./cmd/$cmd"
	mv "$WORKDIR/$cmd" "$OUT/bin/$cmd"
	log "$cmd built in $(($(date +%s) - t)) s"
done
gcc -Os -static -Wall -DVERSION="$K8S_VERSION" -o "$OUT/bin/pause" build/pause/linux/pause.c
log "pause built"

cd /
rm -rf "$WORKDIR" "$tarball"
for old in "$CACHE/k8s-$K8S_SHA256" "$CACHE/k8s-$K8S_SHA256"-*; do
	if [ -d "$old" ] && [ "$old" != "$OUT" ]; then rm -rf "$old"; fi
done
log "control plane $K8S_VERSION ready in $OUT/bin ($(($(date +%s) - start_all)) s in all)"
echo "$OUT/bin"
