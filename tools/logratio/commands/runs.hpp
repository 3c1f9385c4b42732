#pragma once
// `logratio runs` and `logratio report`: from panel tables, tracker
// histories or directories of dumps to run statistics, a verdict and an
// HTML report. runs.cpp registers the options; the steps (runs_steps.hpp):
// runs_load.cpp reads the inputs into runs (no statistics), runs_report.cpp
// builds the report's parts from the dumps, runs_analyze.cpp runs the
// statistics (Boost.Math) and prints or writes the results.
#include <optional>
#include <string>
#include <vector>

#include "../io/table.hpp"
#include "thread_count.hpp"

namespace logratio_cli {

struct runs_args {
    std::vector<std::string> inputs;
    std::string metric, compare, html, format = "auto", pattern, dump, group_pattern;
    history_options history;
    std::optional<long> position;
    bool json = false;
    thread_count threads;  // --threads, or the usable CPUs
};

/// The commands: exit code 0, or an exception (logratio::error) naming what is wrong.
int run_runs(const runs_args& a);
int run_report(const runs_args& a);

}  // namespace logratio_cli
