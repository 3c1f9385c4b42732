#!/usr/bin/env bash
# ctest: `logratio report` writes a well-formed, self-contained HTML page
# (check_report.py xml), and a real headless browser (Debian's chromium,
# driven over the DevTools protocol: tests/browser/check_page.py) loads it
# without error or request, within 2 s, and its charts respond.
#   render_report.sh TOOL OUTDIR INPUT...      the report of INPUT...
#   render_report.sh TOOL OUTDIR --many N      of a generated N-run long table
set -euo pipefail
tool=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
if [ "${1:-}" = --many ]; then
  /usr/bin/python3 "$here/../browser/make_many_runs.py" "$out/runs.csv" "$2"
  set -- "$out/runs.csv"
fi
"$tool" report "$@" --html "$out/report.html" > "$out/stdout.txt"
grep -q "^report: $out/report.html" "$out/stdout.txt"
grep -q "async: GROWS" "$out/stdout.txt"
if [ "$1" != "$out/runs.csv" ]; then  # the dumps' report: every section, the Doctor's plots
  /usr/bin/python3 "$here/check_report.py" xml "$out/report.html"
else
  /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$out/report.html"
fi
size=$(stat -c %s "$out/report.html")
echo "report: $size bytes"
if [ "$size" -gt 4000000 ]; then echo "report over 4 MB"; exit 1; fi
/usr/bin/python3 "$here/../browser/check_page.py" "$out/report.html" --shot "$out/shot.png" --max-ms 2000
