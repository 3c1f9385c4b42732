#pragma once
// MLflow's file store (mlflow/mlflow mlflow/store/tracking/file_store.py):
// mlruns/<experiment id>/<run id>/ holds meta.yaml (run_name), tags/<key>
// (one file per tag; tags/mlflow.runName is the run's name) and
// metrics/<key>, one line per logged value: "<timestamp ms> <value> <step>"
// (older stores: no step, read as 0). A key with '/' is a path of nested
// folders (metrics/train/loss is key "train/loss"). Values are Python
// floats as text ("nan", "inf"). The input may be mlruns/, one experiment
// or one run directory. A run's attributes are its params/<key> and
// tags/<key> files (the whole file is the value; keys with '/' are
// subdirectories; tags keep their names, mlflow.runName included; a key both
// a param and a tag keeps the param's value, with a note).
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "fs_walk.hpp"
#include "history.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// Run directories at `root` or up to two levels below it (mlruns/<exp>/<run>).
std::vector<fs::path> mlflow_run_dirs(const fs::path& root);

/// `keys`: the metric files read (the others are listed as unread, not opened).
history_set read_mlflow_files(const std::string& path, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
