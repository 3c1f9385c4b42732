#pragma once
// The report's charts as standalone SVG (the HTML page's static ones and
// the Markdown evidence pack's figure files): the trend (metric per step,
// one line per run coloured by group; past many_runs runs each group's
// median and 10-90% band), the group means with their intervals, the delta
// histogram of one dump, and the Doctor's plots (doctor_report.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "html_report.hpp"

namespace logratio_cli {

/// Past this many runs the trend chart draws group bands, not every run.
constexpr std::size_t many_runs = 300;

/// One group's trend band: per step (sorted) its runs' 10%, 50% and 90%
/// quantiles (numpy's linear interpolation) over the runs with a finite value.
struct group_band {
    std::size_t group = 0;  ///< index into the report's groups
    std::vector<double> x, lo, mid, hi;
    std::vector<std::size_t> count;  ///< runs with a value at that step
};

/// The groups in the analysis' order, then any group only a run names.
std::vector<std::string> report_groups(const report_inputs& r);

/// The axis as a unit: "train/step" of "train/step (slime's train/step)"
/// (slopes are "per <unit>"; the chart's x axis shows the whole axis name).
std::string axis_unit(const std::string& axis);

/// Index of a run's group in report_groups.
std::size_t group_index(const std::vector<std::string>& groups, const std::string& group);

std::vector<group_band> trend_bands(const std::vector<run_input>& runs, const std::vector<std::string>& groups);

/// The chart named `chart` ("trend", "group_means", "histogram",
/// "doctor_position", "doctor_prob", "doctor_joint") as an <svg> element;
/// a <p> saying why when there is nothing to draw.
std::string report_chart_svg(const report_inputs& r, const std::string& chart);

/// Its title ("delta_abs_mean per update, one line per run").
std::string report_chart_title(const report_inputs& r, const std::string& chart);

}  // namespace logratio_cli
