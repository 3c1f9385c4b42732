#!/usr/bin/env bash
# Re-vendors uPlot from the npm registry (latest, or the version given):
#   tools/logratio/output/vendor/uplot/refresh.sh [VERSION]
# Writes uPlot.iife.min.js, uPlot.min.css, LICENSE (with the version) and
# VERSION next to this script. The build embeds the two dist files into the
# logratio binary (embed_assets.cmake): the report is one offline file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
tgz=$(npm pack "uplot@${1:-latest}" --silent | tail -1)
tar xzf "$tgz"
version=$(node -p 'require("./package/package.json").version')
cp package/dist/uPlot.iife.min.js package/dist/uPlot.min.css "$here/"
{ echo "uPlot $version (npm package uplot, dist/uPlot.iife.min.js and dist/uPlot.min.css), https://github.com/leeoniya/uPlot"
  echo
  cat package/LICENSE; } > "$here/LICENSE"
echo "$version" > "$here/VERSION"
# The page inlines the script in a CDATA section: it must not close one.
if grep -q ']]>' "$here/uPlot.iife.min.js" "$here/uPlot.min.css"; then
  echo "uPlot's files contain ']]>': the report's CDATA inlining needs a change" >&2; exit 1
fi
echo "uPlot $version vendored into $here"
