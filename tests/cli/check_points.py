#!/usr/bin/python3
"""`logratio runs --points --json INPUT...` against an expected table
(tests/real/make_expected.py): the same (run, step, metric) points, no more,
no fewer, each value equal to 1e-12 relative (NaN equal to NaN), and the
notes holding each given regular expression.

Usage: check_points.py LOGRATIO EXPECTED.tsv [--note REGEX]... -- ARGS...
"""
import json
import math
import re
import subprocess
import sys


def value(text):
    return float(text) if not isinstance(text, str) else float(text.replace("nan", "nan"))


def main():
    tool, expected_path = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    split = rest.index("--")
    notes_wanted = [rest[i + 1] for i in range(split) if rest[i] == "--note"]
    args = rest[split + 1:]
    p = subprocess.run([tool, "runs", "--points", "--json"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        print("logratio failed (%d): %s" % (p.returncode, p.stderr))
        return 1
    doc = json.loads(p.stdout)
    got = {}
    for pt in doc["points"]:
        key = (pt["run"], float(pt["step"]), pt["metric"])
        if key in got:
            print("point listed twice: %r" % (key,))
            return 1
        got[key] = value(pt["value"])
    want = {}
    with open(expected_path) as f:
        next(f)
        for line in f:
            run, step, metric, v = line.rstrip("\n").split("\t")
            want[(run, float(step), metric)] = float(v)
    bad = 0
    for k in sorted(set(want) - set(got))[:5]:
        print("missing: %r" % (k,))
        bad += 1
    for k in sorted(set(got) - set(want))[:5]:
        print("not expected: %r" % (k,))
        bad += 1
    for k in sorted(set(want) & set(got)):
        a, b = got[k], want[k]
        same = (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
        if not same:
            print("%r: %r, expected %r" % (k, a, b))
            bad += 1
            if bad > 10:
                break
    for rx in notes_wanted:
        if not any(re.search(rx, n) for n in doc["notes"]):
            print("no note matches %r; notes: %r" % (rx, doc["notes"]))
            bad += 1
    if bad:
        return 1
    print("%d points equal the expected table" % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
