#pragma once
// reconcile's two sides as read (reconcile_load.cpp), before the comparison
// (reconcile_compare.cpp): per run, per metric, the logged values by
// training step.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "reconcile.hpp"

namespace logratio_cli::reconcile_detail {

struct side_run {
    std::string input;  ///< the input the run came from (a run in two inputs is an error)
    std::map<std::string, std::map<double, double>> metrics;
};

struct side {
    std::string label;  ///< "A" or "B", for messages
    std::map<std::string, side_run> runs;
    std::vector<std::string> notes;
};

/// %.17g: every double prints as the text that reads back as it.
inline std::string exact(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

/// The inputs of one side, each read as `logratio runs` reads it (format:
/// --format-a / --format-b), every metric.
side read_side(const std::vector<std::string>& inputs, const std::string& format, const reconcile_options& o,
               const std::string& label);

}  // namespace logratio_cli::reconcile_detail
