#!/usr/bin/env bash
# Inputs given as pipes (`<(zcat run.csv.gz)`, /dev/stdin): each format the
# sniffer tells by content reads the same from a pipe as from the file
# (io/files_read.hpp: a pipe is read once into memory, then sniffed, read and
# hashed from that copy), the export manifest hashes the bytes that came
# through the pipe, and an SQLite store from a pipe is a clear error.
#   piped_inputs.sh LOGRATIO TRACKERS_DIR SAFETENSORS_FILE WORK_DIR
set -euo pipefail
tool=$1 data=$2 dump=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# the output for a file and for a pipe of its bytes, the input's name
# replaced (points=1: --points lines without their first field, the run's
# name, which a JSON Lines file or an event file takes from its path)
points=0
same_from_pipe() {
  local file=$1; shift
  local a b ra=0 rb=0
  a=$("$tool" "$@" "$file" 2>&1) || ra=$?
  b=$("$tool" "$@" <(cat "$file") 2>&1) || rb=$?
  a=$(sed "s|$file|INPUT|g" <<< "$a")
  b=$(sed -E 's|/dev/fd/[0-9]+|INPUT|g' <<< "$b")
  if [ "$points" = 1 ]; then a=$(cut -f2- <<< "$a"); b=$(cut -f2- <<< "$b"); fi
  [ -n "$a" ] || fail "$file: no output"
  [ "$ra" = "$rb" ] || fail "$file: exit status $ra from the file, $rb from a pipe"
  [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") >&2; fail "$file: a pipe reads differently"; }
  echo "same from a pipe: $file $*"
}

same_from_pipe "$data/long.csv" runs
same_from_pipe "$data/wandb_histories.csv" runs --json
same_from_pipe "$data/chart.csv" runs  # an error, the same one
same_from_pipe "$data/chart.csv" runs --step-column train/step
points=1
same_from_pipe "$data/verl/sync/sync run 1.jsonl" runs --points
same_from_pipe "$data/wandb_jsonl/async/async run 2.jsonl" runs --points
same_from_pipe "$data/tensorboard/sync run 2/events.out.tfevents.1764000000.host.103.0" runs --points
log=$(find "$data/wandb_offline" -name '*.wandb' | sort | head -1)
same_from_pipe "$log" runs --points
points=0
same_from_pipe "$data/verl/sync/sync run 1.jsonl" runs --run r --group g  # named by --run, not the path
same_from_pipe "$dump" panel --json
# --points names the run as the statistics do: --run renames a history of one run
names=$("$tool" runs --points --run r <(cat "$data/verl/sync/sync run 1.jsonl") 2> /dev/null | tail -n +2 | cut -f1 | sort -u)
[ "$names" = "r" ] || fail "runs --points --run r from a pipe listed the run(s) '$names'"

# /dev/stdin as a pipe
a=$("$tool" runs "$data/long.csv" 2>&1 | sed "s|$data/long.csv|INPUT|g")
b=$(cat "$data/long.csv" | "$tool" runs /dev/stdin 2>&1 | sed 's|/dev/stdin|INPUT|g')
[ "$a" = "$b" ] || fail "/dev/stdin reads differently"

# the manifest hashes what came through the pipe
"$tool" report <(cat "$data/wandb_histories.csv") --export "$work/export" > /dev/null 2>&1 || fail "report --export from a pipe"
want=$(sha256sum < "$data/wandb_histories.csv" | cut -d' ' -f1)
grep -q "\"sha256\": \"$want\"" "$work/export/manifest.json" || fail "the manifest does not hold the piped bytes' SHA-256 $want"

# SQLite from a pipe: an error naming the input, nothing on stdout
if out=$("$tool" runs <(cat "$data/mlflow.db") 2> "$work/err"); then fail "an SQLite store from a pipe was read"; fi
[ -z "$out" ] || fail "an SQLite store from a pipe printed a result"
grep -q "/dev/fd/[0-9]*: an MLflow SQLite database read from a pipe" "$work/err" || { cat "$work/err" >&2; fail "the SQLite error"; }
echo "piped inputs: all checks passed"
