#!/usr/bin/env python3
"""Fails when a function (or lambda) in the project's C++ sources is longer
than the limit (default 120 lines), measured by Universal Ctags' end lines.

usage: check_function_length.py [--limit N] [--ctags PATH] DIR...
Prints each offender as `path:line: name is N lines (limit L)`; exit 1 when
there is one, 2 when ctags is missing or fails (so the check cannot pass by
not running)."""
import argparse
import json
import shutil
import subprocess
import sys


def functions(ctags, dirs):
    cmd = [ctags, "-R", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "--output-format=json", "-o", "-"]
    out = subprocess.run(cmd + dirs, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") == "function" and "end" in tag:
            yield tag["path"], tag["line"], tag["end"] - tag["line"] + 1, tag["name"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--ctags", default="ctags")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    ctags = shutil.which(a.ctags)
    if ctags is None:
        print(f"check_function_length: '{a.ctags}' not found (install universal-ctags: .ci/deps)", file=sys.stderr)
        return 2
    try:
        found = list(functions(ctags, a.dirs))
    except (subprocess.CalledProcessError, json.JSONDecodeError) as e:
        print(f"check_function_length: ctags failed: {e}", file=sys.stderr)
        return 2
    if not found:
        print("check_function_length: ctags found no function (wrong directories?)", file=sys.stderr)
        return 2
    long = sorted((f for f in found if f[2] > a.limit), key=lambda f: -f[2])
    for path, line, n, name in long:
        print(f"{path}:{line}: {name} is {n} lines (limit {a.limit})")
    print(f"check_function_length: {len(found)} functions, {len(long)} over {a.limit} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
