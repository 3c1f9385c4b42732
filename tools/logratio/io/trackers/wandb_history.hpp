#pragma once
// W&B run histories saved by pandas (DataFrame.to_csv): Run.history() and
// scan_history() give one row per logging event with `_step` (W&B's event
// counter), `_runtime`, `_timestamp` and sparse metric columns (empty where
// an event did not log the key); Runs.histories(format="pandas")
// concatenates several runs with a `run_id` column (wandb/wandb
// wandb/apis/public/runs.py @00ff1266). A `run` or `name` column also names
// runs. Rows of different runs are never merged; one (run, metric, _step)
// with two different values is an error naming file, lines and step.
// pandas' unnamed index column ("" or "Unnamed: 0") is ignored; cells
// holding nested values ({...} / [...]: tables, histograms) are skipped
// with a note. A one-run table's attributes come from a config.yaml beside
// it (detect.cpp, as W&B keeps one in the run's files/).
#include <cstddef>
#include <optional>
#include <string>

#include <logratio/core/error.hpp>

#include "../table.hpp"
#include "history.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// The column naming runs in a multi-run history table, if any.
std::optional<std::size_t> history_run_column(const text_table& t);

/// For parse_csv(text, path, keep, &keys): whether a W&B history reads
/// the column (its step, time and run columns, the metrics `keys` keeps);
/// the cells of the others are not stored (their names stay unread).
bool wandb_history_column_kept(const std::string& column, const void* keys);

/// `keys`: the metric columns to read (the others are listed as unread).
history_set read_wandb_history_table(const text_table& t, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
