#pragma once
// Which reader takes an input, never a silent guess. Directories are
// sniffed by layout (MLflow <experiment>/<run>/metrics, TensorBoard
// events.out.tfevents.*, checkpoint-*/trainer_state.json, W&B offline
// *.wandb, .safetensors dumps); files by magic bytes ("SQLite format 3",
// ":W&B", TFRecord framing), name (trainer_state.json), a leading '{' or
// '[' (JSON) and, for CSV, the header (chart export "<run> - <metric>" /
// __MIN columns, long table run+update, W&B history _step). An input no
// reader takes gets a message naming what it looks like and what to do;
// `--format` forces a reader. A directory of history files of one kind
// (verl .jsonl, W&B CSV / JSON exports, trainer_state.json) is one run per
// file (read_history_files); a project directory opens its mlruns/,
// mlflow.db / mlruns.db or wandb/, with a note. The binary readers (TensorBoard, W&B offline
// logs) are entries of binary_readers() (detect.cpp).
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "../table.hpp"
#include "../table_stream.hpp"
#include "fs_walk.hpp"
#include "history.hpp"
#include "json_history.hpp"
#include "lenient_json.hpp"
#include "mlflow_files.hpp"
#include "mlflow_sqlite.hpp"
#include "tensorboard.hpp"
#include "trl_state.hpp"
#include "wandb_chart.hpp"
#include "wandb_history.hpp"
#include "wandb_offline.hpp"

namespace logratio_cli::trackers {

/// What one input turned out to be.
struct detected_input {
    enum kind_t { long_table, dumps, history } kind = history;
    logratio_cli::long_table streamed;  ///< long_table
    history_set set;                    ///< history
};

/// The --format values.
const std::vector<std::string>& format_names();

/// Reads one input with the reader `format` names ("auto": sniffed); of a
/// tracker history, only the metrics `keys` keeps. A long table is read
/// into `streamed` (per-run columns, io/table_stream.hpp), a CSV one on
/// `long_table_threads` threads.
detected_input read_input(const std::string& path, std::string format, const key_filter& keys = key_filter(),
                          unsigned long_table_threads = 1);

/// A directory (recursively) of history files of one kind -- verl
/// file-logger .jsonl, W&B history CSV or JSON exports, trainer_state.json --
/// one run per file, named and grouped as the file alone is (runs of two
/// files sharing a name get their relative paths, with a note); a directory
/// mixing kinds is an error naming one file of each. Also: a W&B run
/// directory with a sync_tensorboard copy reads the .wandb log (a note says
/// the copy was skipped); a project directory holding mlruns/, mlflow.db,
/// mlruns.db or wandb/ opens it (with a note).
history_set read_history_files(const std::string& dir, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
