#!/usr/bin/env bash
# The floors behind issue 21's unmet targets: builds the benchmark preset's
# bench_floors (x86-64-v4), runs it on this CPU (AVX-512 BW needed) and writes
# bench/FLOORS.md from that one run.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -qw avx512bw /proc/cpuinfo; then
  echo "bench/floors.sh: this CPU has no AVX-512 BW; bench_floors is an x86-64-v4 program" >&2
  exit 1
fi
cmake --preset bench >/dev/null
cmake --build build/bench --target bench_floors >/dev/null
out=build/bench/results
mkdir -p "$out"
build/bench/bench/bench_floors --benchmark_format=json --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/floors.json"
/usr/bin/python3 bench/floors.py "$out" > bench/FLOORS.md
