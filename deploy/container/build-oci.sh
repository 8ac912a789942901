#!/bin/sh
# netsched's image without Docker or a registry: an OCI image layout (and a tar of
# it) that `ctr -n k8s.io images import` or `podman load` take as it is.
#
#   deploy/container/build-oci.sh OUT [BINDIR]
#   deploy/container/build-oci.sh --rootfs DIR --entrypoint PATH [--user UID] OUT
#
# The second form makes a one-layer image of a ready root (no glibc base, nothing
# from the Dockerfile): for a static program such as the pause binary of the
# lab's real nodes (tests/k8s/realnode.sh), so one script writes every image.
#
#   OUT/oci/                  the layout: oci-layout, index.json, blobs/sha256/*
#   OUT/netsched-oci.tar      the same as one archive, for `ctr images import`
#   OUT/stage/                build.sh's staged tree and build (BINDIR as build.sh)
#
# The image is what deploy/container/Dockerfile builds, with the runtime base made
# here instead of pulled: layer 1 is glibc (this machine's libc6 package: the
# libraries, the program interpreter and its copyright file), standing in for
# debian:bookworm-slim; layer 2 is the tree build.sh stages (the Dockerfile's
# `COPY --from=build /out/rootfs/ /`). USER, ENV and CMD are read from the
# Dockerfile, so the two cannot drift. Layers are reproducible: sorted, owned by
# root, dated SOURCE_DATE_EPOCH (default: the last commit's date, else 0), gzip -n.
#
# IMAGE names it in index.json (default registry.example.com/netsched:0.1.0).
# Needs: tar, gzip, sha256sum, python3 (JSON), dpkg-query (glibc's file list).
set -eu

usage() {
	echo "usage: $0 OUT [BINDIR]" >&2
	echo "       $0 --rootfs DIR --entrypoint PATH [--user UID] OUT" >&2
	exit 2
}
given_root= entry= user=0
while [ $# -gt 0 ]; do
	case $1 in
	--rootfs) [ $# -ge 2 ] || usage; given_root=$2; shift 2 ;;
	--entrypoint) [ $# -ge 2 ] || usage; entry=$2; shift 2 ;;
	--user) [ $# -ge 2 ] || usage; user=$2; shift 2 ;;
	-*) usage ;;
	*) break ;;
	esac
done
if [ -n "$given_root" ]; then
	[ $# -eq 1 ] && [ -n "$entry" ] || usage
	[ -d "$given_root" ] || { echo "build-oci.sh: $given_root is not a directory" >&2; exit 1; }
	given_root=$(cd "$given_root" && pwd)
else
	[ $# -ge 1 ] && [ $# -le 2 ] || usage
fi
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
image=${IMAGE:-registry.example.com/netsched:0.1.0}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$top" log -1 --format=%ct 2>/dev/null || echo 0)
fi
for t in tar gzip sha256sum python3 dpkg-query; do
	command -v "$t" >/dev/null 2>&1 || { echo "build-oci.sh: $t is missing" >&2; exit 1; }
done

if [ -n "$given_root" ]; then
	rootfs=$given_root
else
	"$here/build.sh" "$out/stage" ${2:+"$2"} >&2
	rootfs=$out/stage/rootfs
fi

oci=$out/oci
rm -rf "$oci"
mkdir -p "$oci/blobs/sha256"

# layer DIR NAME: a reproducible gzip'd tar of DIR in the blobs; prints
# "<digest of the .tar.gz> <size> <digest of the tar (diff_id)>".
layer() {
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
		-C "$1" -cf "$out/$2.tar" .
	diff_id=$(sha256sum "$out/$2.tar" | cut -d' ' -f1)
	gzip -n -9 -c "$out/$2.tar" >"$out/$2.tar.gz"
	digest=$(sha256sum "$out/$2.tar.gz" | cut -d' ' -f1)
	mv "$out/$2.tar.gz" "$oci/blobs/sha256/$digest"
	rm -f "$out/$2.tar"
	echo "$digest $(wc -c <"$oci/blobs/sha256/$digest") $diff_id"
}

if [ -n "$given_root" ]; then
	l0=$(layer "$rootfs" root)
	set -- "$l0"
	dockerfile=-
else
# Layer 1: glibc, file for file as the package installed it (merged /usr: both the
# /lib64 and /usr/lib paths the binaries may name).
base=$out/base
rm -rf "$base"
mkdir -p "$base"
dpkg-query -L libc6 | grep -E '\.so[.0-9]*$' | grep -v /gconv/ | while read -r f; do
	if [ -e "$f" ]; then cp -L --parents "$f" "$base/"; fi
done
interp=$(ldd "$rootfs/usr/local/bin/netsched-agent" 2>/dev/null |
	awk '$1 ~ /^\// && $2 !~ /=>/ { print $1 }' | head -n 1)
[ -n "$interp" ] && [ -e "$interp" ] && cp -L --parents "$interp" "$base/"
mkdir -p "$base/usr/share/doc/libc6" "$base/tmp" "$base/etc"
chmod 1777 "$base/tmp"
cp /usr/share/doc/libc6/copyright "$base/usr/share/doc/libc6/copyright"
# /etc/passwd and /etc/group name the image's user, for tools that look it up.
echo "root:x:0:0:root:/root:/sbin/nologin" >"$base/etc/passwd"
echo "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin" >>"$base/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$base/etc/group"

l1=$(layer "$base" glibc)
l2=$(layer "$rootfs" netsched)
set -- "$l1" "$l2"
rm -rf "$base"
dockerfile=$here/Dockerfile
fi

# Config, manifest and index: USER, ENV and CMD from the Dockerfile, or with
# --rootfs the given entrypoint and user.
python3 - "$dockerfile" "$oci" "$image" "$SOURCE_DATE_EPOCH" "$entry" "$user" "$@" <<'PY'
import hashlib, json, os, re, sys, time
dockerfile, oci, image, epoch, entry, given_user, *layers = sys.argv[1:]
user, env, cmd = None, [], None
stage = 0
for line in open(dockerfile) if dockerfile != "-" else []:
    line = line.strip()
    if line.startswith("FROM "):
        stage += 1
    if stage < 2:  # the runtime stage only
        continue
    if line.startswith("USER "):
        user = line.split(None, 1)[1]
    elif line.startswith("ENV "):
        k, _, v = line.split(None, 1)[1].partition("=")
        env.append("%s=%s" % (k, v))
    elif line.startswith("CMD "):
        cmd = json.loads(line.split(None, 1)[1])
if dockerfile == "-":
    user = given_user
elif not (user and cmd):
    sys.exit("build-oci.sh: no USER or CMD in the Dockerfile's runtime stage")
created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))
layers = [l.split() for l in layers]

def blob(obj):
    data = json.dumps(obj, indent=2, sort_keys=True).encode() + b"\n"
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(oci, "blobs", "sha256", d), "wb").write(data)
    return "sha256:" + d, len(data)

config = {
    "created": created, "architecture": "amd64", "os": "linux",
    "config": {
        "User": user,
        "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + env,
        "Cmd": cmd,
    },
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + l[2] for l in layers]},
    "history": [
        {"created": created, "created_by": "deploy/container/build-oci.sh: glibc (libc6) as the base"},
        {"created": created, "created_by": "deploy/container/build.sh: COPY rootfs/ /"},
    ],
}
if dockerfile == "-":
    config["config"] = {"User": user, "Entrypoint": [entry],
                        "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}
    config["history"] = [{"created": created, "created_by": "deploy/container/build-oci.sh --rootfs"}]
cd, cs = blob(config)
manifest = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": "sha256:" + l[0], "size": int(l[1])} for l in layers],
}
md, ms = blob(manifest)
index = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ms,
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"io.containerd.image.name": image,
                        "org.opencontainers.image.ref.name": image.rsplit(":", 1)[-1]},
    }],
}
json.dump(index, open(os.path.join(oci, "index.json"), "w"), indent=2, sort_keys=True)
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(oci, "oci-layout"), "w"))
print("build-oci.sh: %s, manifest %s" % (image, md))
PY
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-C "$oci" -cf "$out/netsched-oci.tar" .
echo "build-oci.sh: $out/oci and $out/netsched-oci.tar ($(du -k "$out/netsched-oci.tar" | cut -f1) KiB);" \
	"import with: ctr -n k8s.io images import $out/netsched-oci.tar"
