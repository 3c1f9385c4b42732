#!/usr/bin/python3
"""`logratio runs TABLE --json` end to end against scipy's per-run statistics
(linregress + theilslopes + kendalltau on each run's updates: scipy alone,
no reading, no grouping) on the same long-format tables, in the same run.

Inputs (generated here into a temporary directory, columns
run,group,update,delta_abs_mean; two groups; values rounded to 6 digits so
that y ties occur; a slow drift in one group):
  200 runs x 2,000 updates, 200 x 8,000, 100,000 runs x 20, one run of
  300,000 updates, and (with --big) 1,000 runs x 100,000 updates.
scipy is timed on every run at 200 x 2,000; on the first 25 runs at
200 x 8,000 (each takes seconds: theilslopes sorts 32 M slopes) and the
first 10,000 at 100,000 x 20, its time scaled to all runs (said in the
output: scipy_runs_timed); not at all past that (theilslopes would need
n²/2 slopes in memory: 360 GB at 300,000 updates).

usage: runs_vs_scipy.py LOGRATIO_BINARY [--big] > runs_vs_scipy.json
Prints one JSON object: per input the CLI's wall seconds (--threads
default: the usable CPUs; at 200 x 8,000 also --threads 1), CPU seconds
(user + system) and peak RSS,
scipy's seconds, the ratio, and the scaling ratios the targets of issue 41
name. The tables go to the temporary directory (TMPDIR, else /tmp; --big
writes 3.3 GB there) and are deleted after each case. One run each: the machine may be shared, so compare ratios.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy import stats


def write_table(path, runs, updates, seed):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write("run,group,update,delta_abs_mean\n")
        u = np.arange(1, updates + 1)
        ustr = [str(int(v)) for v in u] if updates <= 100000 else None
        for r in range(runs):
            g = "async" if r % 2 else "sync"
            drift = 2e-7 if r % 2 else 0.0
            v = np.round(0.01 + drift * u + 0.002 * rng.standard_normal(updates), 6)
            name = "%s-%d" % (g, r)
            lines = ["%s,%s,%s,%r\n" % (name, g, ustr[i] if ustr else int(u[i]), float(v[i])) for i in range(updates)]
            f.writelines(lines)


def read_runs(path):
    """The table's runs as numpy arrays (not timed)."""
    import csv
    runs = {}
    with open(path) as f:
        rd = csv.reader(f)
        next(rd)
        for run, _, u, v in rd:
            runs.setdefault(run, ([], []))
            runs[run][0].append(float(u))
            runs[run][1].append(float(v))
    return [(np.array(u), np.array(v)) for u, v in runs.values()]


def scipy_stats(runs):
    t0 = time.perf_counter()
    for u, v in runs:
        stats.linregress(u, v)
        stats.theilslopes(v, u)
        stats.kendalltau(u, v)
    return time.perf_counter() - t0


def cli(binary, path, extra=()):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", binary, "runs", path, "--json", *extra],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("logratio runs failed on %s: %s" % (path, p.stderr[-2000:]))
    rss_kb, user, system = p.stderr.strip().splitlines()[-1].split()
    return dt, int(rss_kb) / 1024.0, float(user) + float(system)


def main():
    binary = sys.argv[1]
    big = "--big" in sys.argv
    # name, runs, updates, runs scipy is timed on (0: none)
    cases = [("200x2000", 200, 2000, 200), ("200x8000", 200, 8000, 25), ("100000x20", 100000, 20, 10000),
             ("1x300000", 1, 300000, 0)]
    if big:
        cases += [("1000x100000", 1000, 100000, 0)]
    out = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t"),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cases": {}}
    with tempfile.TemporaryDirectory() as d:
        for name, runs, updates, scipy_runs in cases:
            path = os.path.join(d, name + ".csv")
            write_table(path, runs, updates, seed=runs * 7919 + updates)
            c = {"runs": runs, "updates": updates, "bytes": os.path.getsize(path)}
            c["cli_s"], c["cli_peak_rss_mb"], c["cli_cpu_s"] = cli(binary, path)
            if name == "200x8000":  # the runs analysed on both cores (the default) against one
                c["cli_1_thread_s"] = cli(binary, path, ["--threads", "1"])[0]
            if scipy_runs:
                data = read_runs(path)[:scipy_runs]
                c["scipy_runs_timed"] = scipy_runs
                c["scipy_s"] = scipy_stats(data) * runs / scipy_runs
                c["x_scipy"] = c["scipy_s"] / c["cli_s"]
            else:
                c["scipy_s"] = None  # theilslopes would need n²/2 slopes in memory
            out["cases"][name] = c
            os.unlink(path)
            print(name, json.dumps(c), file=sys.stderr, flush=True)
    cs = out["cases"]
    out["ratios"] = {"cli_8000_over_2000": cs["200x8000"]["cli_s"] / cs["200x2000"]["cli_s"],
                     "scipy_8000_over_2000": cs["200x8000"]["scipy_s"] / cs["200x2000"]["scipy_s"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
