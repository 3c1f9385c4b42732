#pragma once
// `logratio runs` and `logratio report`: from panel tables, tracker
// histories or directories of dumps to run statistics, a verdict and an
// HTML report. runs.cpp registers the options; the stages (runs_steps.hpp,
// docs/architecture.md "Data flow of `runs` and `report`"): runs_load.cpp
// reads the inputs into one runs table (no statistics), runs_evidence.cpp and
// runs_report.cpp analyse it into one evidence value, runs_render.cpp and
// output/ render it; runs_analyze.cpp calls them in order.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "../io/table.hpp"
#include "thread_count.hpp"

namespace logratio_cli {

struct runs_args {
    std::vector<std::string> inputs;
    std::string metric, compare, html, format = "auto", pattern, dump, group_pattern;
    /// --metrics A,B,... (or the one word "all"): metrics analysed beside the
    /// mismatch metric, which keeps the verdict.
    std::vector<std::string> metrics;
    std::size_t min_updates = 0;  ///< --min-updates: runs with fewer updates carrying the metric are left out
    std::string by;               ///< --by KEY: the analysis repeated within each value of a run attribute
    bool list_attributes = false; ///< --list-attributes: print the attributes found, nothing else
    std::string export_dir;       ///< report --export DIR: frozen CSVs, figures and a manifest
    std::string markdown;         ///< report --markdown FILE: the evidence pack
    std::string reconcile;        ///< report --reconcile B: the inputs checked against B
    std::vector<std::string> command_line;  ///< argv as given (the export manifest records it)
    history_options history;
    std::optional<long> position;
    bool json = false;
    bool points = false;  ///< --points: every (run, step, metric, value) read, nothing computed
    thread_count threads;  // --threads, or the usable CPUs
};

/// The commands: exit code 0, or an exception (logratio::error) naming what is wrong.
int run_runs(const runs_args& a);
int run_report(const runs_args& a);

/// One value as a reader read it (`logratio runs --points`): the run's name
/// as the analysis shows it, the tracker's step (a long table's update),
/// the metric, the value (NaN as logged).
struct point_row {
    std::string run, metric;
    double step = 0, value = 0;
};
struct points_read {
    std::vector<std::pair<std::string, std::string>> inputs;  ///< (path, reader)
    std::vector<point_row> rows;  ///< per input, run, metric (sorted), step
    std::vector<std::string> notes;
};
/// Every input read (every metric), runs told apart as `runs` tells them
/// apart (runs_load.cpp); its points listed in order.
points_read load_points(const runs_args& a);
/// `logratio runs --points [--json]` (runs_render.cpp).
int run_points(const runs_args& a);

}  // namespace logratio_cli
