#!/usr/bin/python3
"""Copies the speed table of bench/RESULTS.md (the block between
report_more.BEGIN and END, written by bench/report.py from one run of
bench/run.sh) into README.md in place of the README's block between the
same markers, so the README's figures are the figures of that one run.

  bench/readme_speed.py            rewrite README.md's block
  bench/readme_speed.py --check    exit 1 where README.md's block differs
                                   (the ctest readme_speed_table)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_more import BEGIN, END  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def block(text, where):
    """The text from BEGIN to END inclusive, and where it starts and ends."""
    a = text.find(BEGIN)
    b = text.find(END, a)
    if a < 0 or b < 0:
        sys.exit(f"readme_speed: {where} has no speed table between the markers {BEGIN!r} and {END!r}")
    return a, b + len(END)


def main():
    results = open(os.path.join(ROOT, "bench", "RESULTS.md")).read()
    readme_path = os.path.join(ROOT, "README.md")
    readme = open(readme_path).read()
    ra, rb = block(results, "bench/RESULTS.md")
    a, b = block(readme, "README.md")
    want = results[ra:rb]
    if "--check" in sys.argv[1:]:
        if readme[a:b] != want:
            sys.exit("readme_speed: README.md's speed table differs from bench/RESULTS.md's; "
                     "run bench/readme_speed.py (after bash bench/run.sh)")
        return
    tmp = readme_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(readme[:a] + want + readme[b:])
    os.replace(tmp, readme_path)


if __name__ == "__main__":
    main()
