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
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace logratio_cli::trackers {

/// Whether a step read as a double (a CSV cell, a JSON or MLflow number) is
/// an integer within +-2^53, where a double holds every integer exactly.
inline bool is_integer_step(double s) { return std::fabs(s) <= 9007199254740992.0 && s == std::floor(s); }

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
    /// What tells the run apart from another of the same name (docs/trackers.md):
    /// the W&B run id, the MLflow run_uuid, else the path it was read from.
    std::string id;
    std::string step_name;  ///< what `point::step` is, e.g. "_step", "TensorBoard step"
    std::map<std::string, std::vector<point>> metrics;
    /// Metrics the run has but the reader did not read (key_filter): their
    /// names only, so that listings and errors still show every metric.
    std::set<std::string> unread;
    /// The run's attributes as text (W&B config, MLflow params and tags,
    /// TensorBoard hparams, a long table's constant-per-run column, a dump's
    /// __metadata__): what `--by KEY` stratifies on. Nested keys are joined
    /// with '.' ("actor.lr").
    std::map<std::string, std::string> attributes;
};

/// Which metrics a reader reads. `logratio runs` analyses one metric (and
/// needs a step and a gradient-norm column at most), so readers skip the
/// other keys' values instead of parsing and storing them: a W&B history
/// has tens to hundreds of keys. Default: every key.
class key_filter {
public:
    key_filter() = default;
    explicit key_filter(std::vector<std::string> wanted) : all_(false), wanted_(std::move(wanted)) {
        std::sort(wanted_.begin(), wanted_.end());
    }
    bool keeps_all() const { return all_; }
    bool keeps(std::string_view key) const {
        return all_ || std::binary_search(wanted_.begin(), wanted_.end(), key,
                                          [](std::string_view a, std::string_view b) { return a < b; });
    }
    const std::vector<std::string>& wanted() const { return wanted_; }

private:
    bool all_ = true;
    std::vector<std::string> wanted_;  ///< sorted
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
