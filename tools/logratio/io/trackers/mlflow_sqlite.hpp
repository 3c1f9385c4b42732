#pragma once
// MLflow's SQLite store (mlflow/mlflow mlflow/store/tracking/dbmodels/
// models.py: SqlMetric table `metrics` with key, value, timestamp, step,
// is_nan, run_uuid; SqlRun table `runs` with run_uuid, name; SqlTag table
// `tags` with key, value, run_uuid). MLflow stores a NaN as value 0 with
// is_nan = 1. It is the default store of recent MLflow and of verl's MLflow
// backend (verl/utils/tracking.py: sqlite:////tmp/mlruns.db). Read through
// Debian's libsqlite3, read-only. A run's attributes are its rows of the
// `params` and `tags` tables (SqlParam / SqlTag: key, value, run_uuid).
#include <string>

#include <logratio/core/error.hpp>

#include "history.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// `keys`: the metrics read (the others are listed as unread).
history_set read_mlflow_sqlite(const std::string& path, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
