#pragma once
// JSON run histories:
//  - W&B scan_history() / history(pandas=False) records (wandb/wandb
//    wandb/apis/public/runs.py @00ff1266): one object per logging event with
//    `_step` (W&B's event counter), `_runtime`, `_timestamp` and the logged
//    keys; saved as JSON Lines or as one JSON array per run. Several runs in
//    one file carry a `run_id`, `run` or `name` key; runs are never merged.
//  - verl's `file` logger (volcengine/verl verl/utils/tracking.py @1dda039b,
//    FileLogger): lines {"step": N, "data": {...}}, N = verl's global step;
//    nested `data` objects are flattened with '/'.
//  - records with a plain `step` (e.g. TRL's log_history entries).
// Python's NaN / Infinity / -Infinity are accepted; null is "not logged";
// nested values (W&B tables, histograms, media) and strings are skipped with
// a note naming their keys. Read in one pass with json_scanner (no document
// is built); a key listed twice in one record with two values is an error.
// A one-run file's attributes come from a config.yaml beside it (detect.cpp,
// as W&B keeps one in the run's files/).
#include <string>
#include <string_view>

#include <logratio/core/error.hpp>

#include "history.hpp"
#include "json_scan.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// Leading whitespace and a UTF-8 byte-order mark skipped: the first byte.
char first_significant_byte(const std::string& text);

/// How JSON Lines records are parsed: `fastest` is simdjson where the CLI
/// was built with it (LOGRATIO_HAVE_SIMDJSON), json_scanner for any line
/// simdjson cannot read exactly as json_scanner would; `scanner` is
/// json_scanner for every line (the tests compare the two: same runs, same
/// notes, same errors).
enum class json_lines_parser { fastest, scanner };

/// The runs of a JSON history (`text` is the file's content); `keys`: the
/// metrics read (the others are listed as unread).
history_set read_json_history_text(std::string_view text, const std::string& path,
                                   const key_filter& keys = key_filter(),
                                   json_lines_parser parser = json_lines_parser::fastest);

/// read_json_history_text of the file at `path` (a regular file is mapped,
/// not copied into memory).
history_set read_json_history_file(const std::string& path, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
