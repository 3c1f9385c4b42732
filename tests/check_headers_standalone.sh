#!/usr/bin/env bash
# Every header of include/logratio/ compiles first in a translation unit of
# its own (no header leans on one its includer happened to include first),
# syntax only, at x86-64-v4: the level whose code paths (AVX-512) use the
# most of the library's own macros and helpers.
#
#   check_headers_standalone.sh CXX ROOT
set -euo pipefail
cxx=$1
root=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export cxx root work
one() {
  local h=$1 tu
  tu="$work/$(echo "$h" | tr '/.' '__').cpp"
  printf '#include <%s>\n' "$h" > "$tu"
  if ! "$cxx" -std=c++17 -fsyntax-only -march=x86-64-v4 -I"$root/include" "$tu" 2> "$tu.err"; then
    echo "not standalone: include/$h"
    head -5 "$tu.err"
    return 1
  fi
}
export -f one
cd "$root/include"
find logratio -name '*.hpp' | sort | xargs -P 2 -I{} bash -c 'one "$1"' _ {}
echo "every header of include/logratio compiles on its own ($(find logratio -name '*.hpp' | wc -l) headers)"
