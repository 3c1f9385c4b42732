#pragma once
// The one place where tracker histories (history_set) become the run series
// `logratio runs` / `report` analyse, like rows of a long table:
//  - the metric: --metric, else the first documented mismatch metric that
//    any run logged (mismatch_metrics());
//  - the step: the tracker's own training step (TensorBoard, MLflow, TRL
//    log_history, verl file logger, a chart's custom x-axis); for W&B
//    histories, whose `_step` counts logging events, the framework's step
//    metric (slime train/step or rollout/step, verl training/global_step,
//    TRL/OpenRLHF train/global_step), else the clear error of today;
//    --step-column overrides;
//  - the group: --group-pattern on run names, else what the layout or tags
//    gave, else one group "all" (and a note that a comparison needs groups).
// Missing values stay missing (NaN); nothing is interpolated.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <logratio/core/error.hpp>

#include "../table.hpp"
#include "history.hpp"

namespace logratio_cli::trackers {

/// Mismatch metrics in the order they are chosen when --metric is not given.
struct known_metric {
    const char* name;
    const char* from;
};
const std::vector<known_metric>& mismatch_metrics();

/// Training-step metrics of W&B histories, and whose they are.
const std::vector<known_metric>& step_metrics();

/// `_step` (or a stand-in for it) counts W&B logging events, not training steps.
bool counts_logging_events(const std::string& step_name);

/// The run's metrics, read or not (key_filter), sorted, at most `at_most`.
std::string metric_list(const run_history& r, std::size_t at_most = 30);

/// What `logratio runs` reads of a history: --metric (else every documented
/// mismatch metric, one of which it picks), the framework step metrics,
/// --step-column and --grad-norm-column.
key_filter keys_to_read(const std::string& metric, const std::string& step_column,
                        const std::string& grad_norm_column);

/// --metric, or the first documented mismatch metric some run logged.
std::string choose_metric(const std::vector<const history_set*>& sets, const std::string& given,
                          std::vector<std::string>& notes);

/// One run's series: updates = training steps (+ offset), values = the
/// metric there (NaN where the step exists but the metric is missing).
run_input run_from_history(const run_history& r, const std::string& metric, const history_options& o,
                           std::string& step_description);

/// One metric of a run as the tracker logged it, by training step (chosen as
/// run_from_history chooses it: the tracker's own step, or for W&B
/// histories the framework step metric logged with the most of this
/// metric's events; o.step_column overrides), + o.update_offset. Only the
/// points actually logged: no step is filled with NaN, a logged NaN stays
/// NaN. A training step logged at two events keeps the last non-NaN value
/// (as run_from_history does); with `notes`, that and values logged at
/// events without a training step are said there. Empty when the run has no
/// such metric (or no point of it). Throws (choose_step) when a W&B history has no step metric
/// logged with this metric.
std::map<double, double> logged_by_training_step(const run_history& r, const std::string& metric,
                                                 const history_options& o, std::string& step_description,
                                                 std::vector<std::string>* notes = nullptr);

/// The runs of one history set, every run and every metric decided in one
/// pass: per_metric[m] holds a run_input for each run that logged metrics[0]
/// (the mismatch metric, which decides which runs count), in the set's
/// order; a run without metrics[m] gets an empty series. Every metric is
/// read on the mismatch metric's step axis; --run/--group (o.run, o.group)
/// name a set of one run.
struct history_runs {
    std::vector<std::vector<run_input>> per_metric;
    std::vector<std::pair<std::string, std::string>> left_out;  ///< (run, why): runs without metrics[0]
    std::map<std::string, std::size_t> steps_used;              ///< step description -> runs read by it
    std::vector<std::string> notes;  ///< runs left out, NaN values of each metric
};
history_runs to_runs(const history_set& set, const std::vector<std::string>& metrics, const history_options& o);

/// The name and group a run of `set` takes: its own, or --run/--group
/// (o.run, o.group) when the set holds this one run (to_runs and
/// `runs --points` alike).
std::pair<std::string, std::string> run_name_and_group(const history_set& set, const run_history& h,
                                                       const history_options& o);

/// --group-pattern: the first capture group of REGEX (searched in the run
/// name) is the run's group; a run it does not match is an error listing
/// every such run.
void apply_group_pattern(std::vector<run_input>& runs, const std::string& pattern);

}  // namespace logratio_cli::trackers
