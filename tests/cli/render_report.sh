#!/usr/bin/env bash
# ctest: `logratio report` on a dump directory writes a well-formed,
# self-contained HTML page, and a real headless browser (Debian's chromium)
# renders it to a non-blank screenshot.
#   render_report.sh TOOL INPUT OUTDIR
set -euo pipefail
tool=$1 input=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
"$tool" report "$input" --html "$out/report.html" > "$out/stdout.txt"
grep -q "^report: $out/report.html" "$out/stdout.txt"
grep -q "async: GROWS" "$out/stdout.txt"
/usr/bin/python3 "$here/check_report.py" xml "$out/report.html"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not installed (bash .ci/deps installs it): skipped"; exit 77
fi
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$out/profile" --window-size=1100,2600 --screenshot="$out/shot.png" \
  "file://$out/report.html" > "$out/chromium.log" 2>&1 || { cat "$out/chromium.log"; exit 1; }
test -s "$out/shot.png"
/usr/bin/python3 "$here/check_report.py" png "$out/shot.png"
