#!/usr/bin/env python3
"""An OCI image as a tar of an image layout, from a root filesystem, with
no registry and no image builder: what `ctr -n k8s.io images import` takes
(containerd on the lab's real nodes, docs/lab.md).

    oci.py NAME:TAG ROOTFS OUT.tar --entrypoint /pause [--arg A]... [--user 65534]

One layer (ROOTFS tarred, owned by root, mtimes 0: the same tree gives the
same digests), an image config for linux/amd64 and a manifest; the index
names the image with containerd's annotation so the import tags it NAME:TAG.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile


def blob(files, data):
    """Adds data under blobs/sha256/; returns its descriptor fields."""
    digest = hashlib.sha256(data).hexdigest()
    files[f"blobs/sha256/{digest}"] = data
    return {"digest": f"sha256:{digest}", "size": len(data)}


def layer(rootfs):
    """ROOTFS as an uncompressed tar, reproducibly; returns its bytes."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as t:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            for name in sorted(dirnames) + sorted(filenames):
                path = os.path.join(dirpath, name)
                info = t.gettarinfo(path, os.path.relpath(path, rootfs))
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mtime = 0
                if info.isreg():
                    with open(path, "rb") as f:
                        t.addfile(info, f)
                else:
                    t.addfile(info)
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ref")
    ap.add_argument("rootfs")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", required=True)
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--user", default="0")
    a = ap.parse_args()
    if ":" not in a.ref.rsplit("/", 1)[-1]:
        sys.exit(f"oci.py: {a.ref}: want NAME:TAG")
    if not os.path.isdir(a.rootfs):
        sys.exit(f"oci.py: {a.rootfs} is not a directory")
    files = {}
    tar = layer(a.rootfs)
    diff_id = "sha256:" + hashlib.sha256(tar).hexdigest()
    lay = dict(blob(files, tar), mediaType="application/vnd.oci.image.layer.v1.tar")
    config = {"architecture": "amd64", "os": "linux",
              "config": {"User": a.user, "Entrypoint": [a.entrypoint], "Cmd": a.arg or None,
                         "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"]},
              "rootfs": {"type": "layers", "diff_ids": [diff_id]}, "history": [{"created_by": "oci.py"}]}
    cfg = dict(blob(files, json.dumps(config, sort_keys=True).encode()),
               mediaType="application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": cfg, "layers": [lay]}
    man = dict(blob(files, json.dumps(manifest, sort_keys=True).encode()),
               mediaType="application/vnd.oci.image.manifest.v1+json",
               annotations={"io.containerd.image.name": a.ref,
                            "org.opencontainers.image.ref.name": a.ref.rsplit(":", 1)[1]},
               platform={"architecture": "amd64", "os": "linux"})
    files["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [man]}).encode()
    files["oci-layout"] = b'{"imageLayoutVersion":"1.0.0"}'
    with tarfile.open(a.out, "w") as t:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            t.addfile(info, io.BytesIO(files[name]))
    print(man["digest"])


if __name__ == "__main__":
    main()
