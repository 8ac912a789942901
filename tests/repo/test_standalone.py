#!/usr/bin/env python3
"""The repository stands alone: no tracked file may name a path outside it.

A user clones only this repository, so a script, test, benchmark or doc that
reads the team's reference folder beside the checkout, or a home directory,
works on our machines and nowhere else. This check fails on:
  - any mention of that reference folder (`shared`, one level up);
  - a relative path climbing with `..` that leads nowhere inside the
    repository, judged from the file's own folder and from the repository
    root (scripts here run from the root);
  - an absolute path into a home or work directory (/root, /home, /work).
Paths built from variables (`$here/../..`) cannot be judged as text and are
left to the tests that run them.

Usage: tests/repo/test_standalone.py [--self-test]
Prints one line per offending place and a summary; exits 1 if any.
"""
import os
import re
import subprocess
import sys

# Spelled in pieces so that this file does not name what it forbids.
UP = "." * 2 + "/"
# `../` not preceded by a word character, a dot, `$`, `}` or `/`: those are
# `.../api` prose, `$dir/..` expansions or the middle of a longer path.
REL = re.compile(r"(?<![\w.$}/])((?:\.\./)+[\w.\-/]*)")
ABS = re.compile(r"(?<![\w.])/(?:root|home|work)/[\w.\-]")
SHARED = re.compile(re.escape(UP) + r"shared\b")


def offences(path, text, root, tracked):
    here = os.path.dirname(path)
    for no, line in enumerate(text.splitlines(), 1):
        if SHARED.search(line):
            yield no, f"names {UP}shared, which is not part of the repository"
            continue
        if ABS.search(line):
            yield no, "names an absolute path into a home or work directory"
            continue
        for m in REL.finditer(line):
            rel = m.group(1).rstrip(".")
            if not resolves(rel, here, root, tracked):
                yield no, f"'{m.group(1)}' leads outside the repository or to nothing in it"


def resolves(rel, here, root, tracked):
    for base in (here, ""):
        target = os.path.normpath(os.path.join(base, rel))
        if target == "." or (not target.startswith("..") and
                             (target in tracked or target + "/" in tracked)):
            return True
    return False


def tracked_paths(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    files = [f for f in out.split("\0") if f]
    paths = set(files)
    for f in files:
        d = os.path.dirname(f)
        while d:
            paths.add(d + "/")
            paths.add(d)
            d = os.path.dirname(d)
    return files, paths


def check(root):
    files, paths = tracked_paths(root)
    bad = 0
    for f in files:
        try:
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read(1 << 20)
        except OSError:
            continue
        if b"\0" in data:
            continue
        for no, why in offences(f, data.decode("utf-8", "replace"), root, paths):
            print(f"{f}:{no}: {why}")
            bad += 1
    return len(files), bad


def self_test():
    tracked = {"tests/", "tests", "tests/tools", "tests/tools/", "tests/tools/x.py",
               "deploy", "deploy/", "docs/a.md"}
    cases = [
        ("tests/unit/t.c", f'x = "{UP}shared/extender"', 1),
        ("README.md", f"see {UP}shared/x", 1),
        ("tests/integration/t.sh", f'T=$(cd "$(dirname "$0")/{UP}tools" && pwd)', 0),
        ("tests/integration/t.sh", f"cat {UP}tools/x.py", 0),
        ("tests/integration/t.sh", f"cat {UP}fixtures/a.json", 1),
        ("docs/b.md", f"[x]({UP}deploy/)", 0),
        ("docs/b.md", f"[x]({UP}{UP}elsewhere/a.md)", 1),
        ("scorer/p.c", f'/* ".{UP}api/v1/query" */', 0),
        ("bench/run", "FIX=/" + "root/fixtures", 1),
        ("bench/run", f'top=$(cd "$here/{UP}.." && pwd)', 0),
    ]
    failed = 0
    for path, line, want in cases:
        got = len(list(offences(path, line, ".", tracked)))
        if got != want:
            print(f"self-test: {path}: {line!r}: {got} offences, want {want}")
            failed += 1
    print(f"self-test: {len(cases) - failed} passed, {failed} failed")
    return failed == 0


def main():
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True,
                          capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    if not self_test():
        return 1
    n, bad = check(root)
    if bad:
        print(f"FAIL: {bad} place(s) in {n} tracked files reach outside the repository")
        return 1
    print(f"ok: none of {n} tracked files names a path outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
