#!/bin/sh
# Builds netsched and stages what its container image needs, no more:
#
#   deploy/container/build.sh OUT [BINDIR]
#
#   OUT/rootfs/usr/local/bin/netsched-agent, -scorer, -rebalancer   the binaries (stripped)
#   OUT/rootfs/usr/local/lib/netsched/*.so.*                  every shared library they
#                                                             load, except glibc's own
#   OUT/rootfs/usr/local/share/netsched/libraries.txt         which library came from
#                                                             which Debian package
#   OUT/rootfs/usr/share/doc/PKG/copyright                    those packages' licences
#   OUT/build/                                                the build tree
#
# The Dockerfile's build stage runs this, and the runtime stage copies OUT/rootfs/ over
# a base image that provides glibc (debian:bookworm-slim, or distroless base-debian12),
# with LD_LIBRARY_PATH=/usr/local/lib/netsched. tests/integration/test_deploy.sh runs it
# directly, since no container engine is needed to check what it stages.
#
# With BINDIR, stage the binaries already built there instead of building (the build
# must come from this Debian release, so that its libraries are the ones staged).
#
# glibc (libc, libm, libpthread, the dynamic loader, ...) is left to the base image on
# purpose: it must match itself exactly, file for file, and every glibc-based image has
# it. Everything else is copied from this build's own system, so the image runs the
# library versions the binaries were built and tested against.
set -eu

usage() {
	echo "usage: $0 OUT [BINDIR]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
out=$1
bindir=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
libdir=/usr/local/lib/netsched
rootfs=$out/rootfs

if [ -z "$bindir" ]; then
	# The repository's one package installer: installs only what is missing.
	"$top/.ci/deps" build
	bindir=$out/build/bin
	make -C "$top" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" \
		O="$out/build" BINDIR="$bindir"
fi
for b in netsched-agent netsched-scorer netsched-rebalancer; do
	[ -x "$bindir/$b" ] || { echo "build.sh: $bindir/$b missing" >&2; exit 1; }
done

rm -rf "$rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs$libdir" "$rootfs/usr/local/share/netsched"
for b in netsched-agent netsched-scorer netsched-rebalancer; do
	cp "$bindir/$b" "$rootfs/usr/local/bin/$b"
	# Debug symbols stay in the build tree; the image needs none.
	if command -v strip >/dev/null 2>&1; then
		strip --strip-unneeded "$rootfs/usr/local/bin/$b"
	fi
	chmod 0755 "$rootfs/usr/local/bin/$b"
done

# glibc's libraries, by file name: what the base image provides.
glibc_names=$out/glibc-names
if command -v dpkg-query >/dev/null 2>&1 && dpkg-query -L libc6 >/dev/null 2>&1; then
	dpkg-query -L libc6 | sed -n 's#.*/\([^/]*\.so[.0-9]*\)$#\1#p' | sort -u >"$glibc_names"
else
	: >"$glibc_names"
fi
is_glibc() {
	grep -qxF "$1" "$glibc_names" && return 0
	case $1 in
	ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | \
		librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnss_*.so.*) return 0 ;;
	esac
	return 1
}

# ldd lists the whole closure: "libfoo.so.1 => /lib/.../libfoo.so.1 (0x...)", or the
# loader as "/lib64/ld-linux-x86-64.so.2 (0x...)", or "libfoo.so.1 => not found".
list=$out/libraries
: >"$list"
for b in netsched-agent netsched-scorer netsched-rebalancer; do
	ldd "$bindir/$b" >"$out/ldd.$b" || { echo "build.sh: ldd $b failed" >&2; exit 1; }
	if grep -q 'not found' "$out/ldd.$b"; then
		echo "build.sh: $b needs a library this system lacks:" >&2
		grep 'not found' "$out/ldd.$b" >&2
		exit 1
	fi
	awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' "$out/ldd.$b" >>"$list"
done
sort -u -o "$list" "$list"

manifest=$rootfs/usr/local/share/netsched/libraries.txt
echo "# library  package=version  (glibc comes from the base image)" >"$manifest"
while read -r name path; do
	is_glibc "$name" && continue
	cp -L "$path" "$rootfs$libdir/$name"
	chmod 0644 "$rootfs$libdir/$name"
	real=$(readlink -f "$path")
	pkg=
	if command -v dpkg-query >/dev/null 2>&1; then
		# Merged /usr: the file may be registered under /lib or /usr/lib.
		for p in "$real" "/usr${real#/usr}" "${real#/usr}"; do
			pkg=$(dpkg-query -S "$p" 2>/dev/null | head -n1 | cut -d: -f1) && [ -n "$pkg" ] && break
		done
	fi
	if [ -n "$pkg" ]; then
		ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo '?')
		echo "$name $pkg=$ver" >>"$manifest"
		if [ -f "/usr/share/doc/$pkg/copyright" ]; then
			mkdir -p "$rootfs/usr/share/doc/$pkg"
			cp "/usr/share/doc/$pkg/copyright" "$rootfs/usr/share/doc/$pkg/copyright"
		fi
	else
		echo "$name (no package: $real)" >>"$manifest"
	fi
done <"$list"

echo "build.sh: staged $(ls "$rootfs/usr/local/bin" | wc -l) binaries and" \
	"$(ls "$rootfs$libdir" | wc -l) libraries in $rootfs" \
	"($(du -sk "$rootfs" | cut -f1) KiB)"
