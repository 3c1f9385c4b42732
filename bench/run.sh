#!/usr/bin/env bash
# One command for the side-by-side benchmark: builds the benchmarks (one
# binary per x86-64 level), runs those this CPU supports, runs the numpy
# script on the same problem size, and writes bench/RESULTS.md with
# tokens/s, the ratio to numpy and the fraction of the read-bandwidth
# roofline measured in the same run; then the run statistics against scipy
# and the tracker readers against Python readers, on the CLI of the same
# build. The README's speed table is then copied from RESULTS.md
# (bench/readme_speed.py), so every figure in both comes from this one run.
#   LOGRATIO_BENCH_BIG=1 adds the 1,000 runs x 100,000 updates case (a 3 GB
#   table in TMPDIR, deleted after).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --workflow --preset bench >/dev/null
out=build/bench/results
mkdir -p "$out"
levels=(x86-64)
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && levels+=(x86-64-v3)
grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && levels+=(x86-64-v4)
for level in "${levels[@]}"; do
  build/bench/bench/bench_panel_"$level" --benchmark_format=json --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/panel_$level.json"
  build/bench/bench/bench_correction_"$level" --benchmark_format=json --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/correction_$level.json"
  build/bench/bench/bench_logits_"$level" --benchmark_format=json --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/logits_$level.json"
  build/bench/bench/bench_doctor_"$level" --benchmark_format=json --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/doctor_$level.json"
done
best="${levels[${#levels[@]}-1]}"
build/bench/bench/bench_quantiles_"$best" --benchmark_format=json --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/quantiles.json"
(cd "$out" && /usr/bin/python3 "$OLDPWD/bench/numpy_panel.py" 25 > numpy.json)
(cd "$out" && /usr/bin/python3 "$OLDPWD/bench/numpy_correction.py" 25 > numpy_correction.json)
(cd "$out" && /usr/bin/python3 "$OLDPWD/bench/numpy_logits.py" > numpy_logits.json)
# `logratio panel FILE --json` end to end against its numpy peer on the same file
/usr/bin/python3 bench/cli_vs_numpy.py build/bench/bin/logratio 25 > "$out/cli_vs_numpy.json"
# The Python package against torch and numpy in the same run (skipped, and
# said so in RESULTS.md, where torch or the module is missing)
rm -f "$out/python_vs_torch.json"
if PYTHONPATH=build/bench/python /usr/bin/python3 -c 'import torch, logratio' 2>/dev/null; then
  PYTHONPATH=build/bench/python /usr/bin/python3 bench/python_vs_torch.py --repeat 7 --rounds 3 \
    --json "$out/python_vs_torch.json" > /dev/null
fi
# `logratio runs` against scipy's per-run statistics; the readers against
# Python readers of the same formats (files in TMPDIR, deleted after)
big=()
[ "${LOGRATIO_BENCH_BIG:-0}" = 1 ] && big=(--big)
/usr/bin/python3 bench/runs_vs_scipy.py build/bench/bin/logratio "${big[@]}" > "$out/runs_vs_scipy.json"
# (LOGRATIO_BENCH_READERS_WORK=DIR: the readers' files written to DIR once
# and kept, reused by later runs)
if [ -n "${LOGRATIO_BENCH_READERS_WORK:-}" ]; then
  /usr/bin/python3 bench/bench_trackers.py build/bench/bin/logratio --readers --repeat 3 --markdown \
    --work "$LOGRATIO_BENCH_READERS_WORK" --keep > "$out/readers.txt"
else
  readers_work=$(mktemp -d "${TMPDIR:-/tmp}/logratio_bench_readers.XXXXXX")
  /usr/bin/python3 bench/bench_trackers.py build/bench/bin/logratio --readers --repeat 3 --markdown \
    --work "$readers_work" > "$out/readers.txt"
  rm -rf "$readers_work"
fi
# Written whole or not at all: a failed report leaves the old RESULTS.md
/usr/bin/python3 bench/report.py "$out" "${levels[@]}" > "$out/RESULTS.md"
mv "$out/RESULTS.md" bench/RESULTS.md
/usr/bin/python3 bench/readme_speed.py
cat bench/RESULTS.md
