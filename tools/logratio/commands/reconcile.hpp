#pragma once
// `logratio reconcile A B` (and `report --reconcile B`): does the tracker
// hold the numbers the training wrote? Two sources -- anything `logratio
// runs` reads: tracker histories (every metric), long tables, dump
// directories -- compared field by field, where a field is one (run,
// training step, metric) value:
//  - runs are matched by name (the readers give no run id both sides share),
//    steps by each reader's training step (trackers::logged_by_training_step:
//    for W&B histories the framework's step metric, not `_step`), metrics
//    by name or through --map A_NAME=B_NAME;
//  - equal means the same bits (NaN equals NaN, whatever its payload; -0 and
//    +0 differ); with rtol > 0, |a - b| <= rtol * max(|a|, |b|), and an
//    infinity equals only itself;
//  - step metrics (train/step, ...) and the trackers' internal keys are not
//    fields; a run, step or field on one side only is counted, never an
//    error; a run twice on one side is an error (runs never merge).
// Without CLI11 (reconcile.cpp registers the options): the `report` command
// calls reconcile_sources and prints reconcile_summary.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace logratio_cli {

struct reconcile_options {
    double rtol = 0;  ///< 0: exact (bit-equal)
    /// --map A_NAME=B_NAME, parsed (parse_metric_map)
    std::vector<std::pair<std::string, std::string>> map;
    std::string format_a = "auto", format_b = "auto";  ///< --format of each side (trackers::format_names())
    std::string pattern;                               ///< dump directories: the path pattern (runs' --pattern)
    unsigned threads = 1;                              ///< dump directories: panels computed in parallel
};

/// One field on one side only (metric: that side's name).
struct reconcile_field {
    std::string run;
    double step = 0;
    std::string metric;
};

/// One overlapping field whose values differ (metric: A's name; metric_b:
/// B's, different only through --map).
struct reconcile_difference {
    std::string run;
    double step = 0;
    std::string metric, metric_b;
    double a = 0, b = 0;
};

struct reconcile_result {
    double rtol = 0;
    std::size_t overlapping = 0, agree = 0;
    std::vector<reconcile_difference> differ;  ///< by run, metric, step
    std::vector<reconcile_field> only_a, only_b;
    /// (run, step) pairs of the runs in common that one side has and the other not
    std::size_t steps_only_a = 0, steps_only_b = 0;
    std::vector<std::string> runs_only_a, runs_only_b;
    std::vector<std::string> notes;  ///< the readers', the step each side used, fields not compared
};

/// --map values "A_NAME=B_NAME": each side non-empty, each name mapped once.
std::vector<std::pair<std::string, std::string>> parse_metric_map(const std::vector<std::string>& specs);

/// Reads A (one or more inputs, one side: a run in two of them is an error)
/// and B and compares them. Errors (logratio::error): an unreadable input, a
/// run twice on one side, no run in common (both sides' run names said), no
/// overlapping field, a --map naming a metric its side lacks.
reconcile_result reconcile_sources(const std::vector<std::string>& a_inputs, const std::string& b_input,
                                   const reconcile_options& o);

/// The one line: "across N overlapping numeric fields, the tracker and the
/// local log agree exactly" (or "agree within rtol R"), else "...: M agree
/// exactly, K differ".
std::string reconcile_summary(const reconcile_result& r);

/// `logratio reconcile`'s text: the counts, every difference (values %.17g,
/// round-trip exact) and what is on one side only.
std::string reconcile_text(const reconcile_result& r);

/// `logratio reconcile --json`: {"overlapping", "agree", "differ": [{run,
/// step, metric, a, b}], "only_a": [{run, step, metric}], "only_b",
/// "steps_only_a", "steps_only_b", "runs_only_a", "runs_only_b", "rtol",
/// "notes"}. Non-finite values as the strings "NaN", "Infinity",
/// "-Infinity" (JSON has no such numbers), finite ones %.17g.
std::string reconcile_json(const reconcile_result& r);

}  // namespace logratio_cli
