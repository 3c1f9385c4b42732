#!/usr/bin/env bash
# The dispatched kernels (bench_dispatch: built without -march, the level
# chosen at run time) against the header-only kernels built with -march for
# the same level (bench_panel / bench_correction), in one run, alternating
# the binaries for R rounds so machine load hits both alike; prints the
# median time of each and the ratio dispatch / header-only. Needs the bench
# preset built (cmake --workflow --preset bench; BENCH_DIR names another
# folder of the binaries).
#   bash bench/dispatch_vs_header.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
b=${BENCH_DIR:-build/bench/bench}
level=x86-64
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && level=x86-64-v3
grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && level=x86-64-v4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  "$b"/bench_dispatch --benchmark_format=json >"$out/dispatch_$r.json"
  "$b"/bench_panel_"$level" --benchmark_filter='^panel/' --benchmark_format=json >"$out/panel_$r.json"
  "$b"/bench_correction_"$level" --benchmark_filter='^correct_token/' --benchmark_format=json >"$out/correct_$r.json"
done
/usr/bin/python3 - "$out" "$rounds" "$level" <<'PY'
import json, statistics, sys
out, rounds, level = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def times(prefix):
    t = {}
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{out}/{prefix}_{r}.json"))["benchmarks"]:
            t.setdefault(b["name"], []).append(b["real_time"])
    return {k: statistics.median(v) for k, v in t.items()}
d, p, c = times("dispatch"), times("panel"), times("correct")
print(f"| call | size/threads | dispatch (no -march) ms | header-only -march={level} ms | ratio |")
print("|---|---|---|---|---|")
for call, hdr, src in (("panel", "panel", p), ("correct_token", "correct_token", c)):
    for args in ("16/1", "25/1"):
        a, h = d.get(f"dispatch_{call}/{args}/real_time"), src.get(f"{hdr}/{args}/real_time")
        if a is None or h is None:
            continue
        print(f"| {call} | 2^{args.split('/')[0]}/{args.split('/')[1]} | {a:.3f} | {h:.3f} | {a / h:.2f} |")
PY
