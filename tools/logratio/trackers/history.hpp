#pragma once
// The common result of every tracker reader (W&B exports, JSON histories,
// TensorBoard, MLflow, TRL trainer_state.json, W&B offline logs): runs, each
// with its metrics, each metric with its own (step, value) points as the
// tracker stored them. Readers never interpolate and never merge two runs;
// `logratio runs` / `report` turn a history_set into run_input series
// (choosing the step and the metric) in one place.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace logratio_cli::trackers {

/// One logged value. `step` is the tracker's own step (`_step` for W&B,
/// the event step for TensorBoard, the metric step for MLflow, `step` in
/// TRL's log_history); `wall_time` in seconds since the epoch, NaN if unknown.
struct point {
    std::int64_t step = 0;
    double value = std::numeric_limits<double>::quiet_NaN();
    double wall_time = std::numeric_limits<double>::quiet_NaN();
};

/// One run: its name (any UTF-8), its group if the layout or tags give one,
/// where it came from, and every scalar metric as points sorted by step with
/// unique steps (a reader resolves or rejects duplicates as its format says).
struct run_history {
    std::string name;
    std::string group;
    std::string source;
    std::string step_name;  ///< what `point::step` is, e.g. "_step", "TensorBoard step"
    std::map<std::string, std::vector<point>> metrics;
};

/// What one reader took from one input: the reader's name (printed as
/// "read N runs from <reader> <input>"), the runs, and notes for the user
/// (skipped nested values, bucketed chart exports, ...).
struct history_set {
    std::string reader;
    std::string input;
    std::vector<run_history> runs;
    std::vector<std::string> notes;
};

}  // namespace logratio_cli::trackers
