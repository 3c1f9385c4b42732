#pragma once
// `logratio report ... --export DIR`: the frozen data behind a report, as
// tidy CSVs a notebook re-aggregates offline, the report's figures as SVG,
// and DIR/manifest.json (every input file read with its size and SHA-256,
// the reader, what was read, the notes; logratio's version; the command
// line and options; the time). Written atomically (output/atomic_directory);
// `logratio runs DIR` reads it back (io/export_reader.hpp) to the same numbers.
//
//   updates.csv        run, group, update, [position], [zero_grad_norm], every metric
//                      (empty: not logged at that update; nan: logged missing)
//   rollouts.csv       with --steps-per-batch > 1: run, group, batch, updates, each metric's mean
//   run_summary.csv    metric, run, group, updates, missing, mean, std, median, max, OLS, Theil-Sen, Kendall
//   group_summary.csv  metric, group, runs, updates, mean of run means and its CI, mean slope and its CI, rising, falling
//   comparison.csv     metric, a, b, Welch on means (difference, CI, t, df, p), Mann-Whitney, Welch on slopes
//   run_attributes.csv run, key, value
//   summary.json       the `runs --json` document of the same analysis
//   figures/*.svg      the report's charts
#include <string>
#include <utility>
#include <vector>

#include "runs_evidence.hpp"

namespace logratio_cli {

/// An error naming DIR when it exists and is not an earlier export (checked
/// before any input is read).
void check_export_target(const std::string& dir);

/// Writes the whole export (see above); `figures` are (file name, SVG text).
/// `extra` are more (file name, bytes) to freeze (reconcile.json).
void write_export(const runs_args& a, const loaded_runs& L, const evidence& e, const std::string& summary_json,
                  const std::vector<std::pair<std::string, std::string>>& figures,
                  const std::vector<std::pair<std::string, std::string>>& extra = {},
                  const std::vector<input_record>& more_inputs = {});

}  // namespace logratio_cli
