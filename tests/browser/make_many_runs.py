#!/usr/bin/python3
"""Writes a long table of many runs for the browser test of a large report:

  make_many_runs.py OUT.csv [RUNS=2000] [UPDATES=40]

columns run,group,update,delta_abs_mean; two groups (async rises, sync flat),
a few missing cells (empty: gaps the chart must not bridge). Deterministic."""
import random, sys

out = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
updates = int(sys.argv[3]) if len(sys.argv) > 3 else 40
rng = random.Random(39)
with open(out, "w") as f:
    f.write("run,group,update,delta_abs_mean\n")
    for r in range(runs):
        group = "async" if r % 2 == 0 else "sync"
        level, slope = rng.uniform(0.01, 0.02), (rng.uniform(0.0015, 0.0035) if group == "async" else 0.0)
        for u in range(1, updates + 1):
            v = level + slope * u + rng.gauss(0, 0.002)
            cell = "" if rng.random() < 0.01 else f"{abs(v):.6g}"
            f.write(f"{group}-{r},{group},{u},{cell}\n")
