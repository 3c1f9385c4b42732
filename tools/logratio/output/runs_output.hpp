#pragma once
// `logratio runs` / `logratio report` output: the JSON document, the
// per-run table and the one-screen verdict.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <logratio/core/version.hpp>

#include "../model/run_input.hpp"

LOGRATIO_NAMESPACE_BEGIN
struct runs_analysis;
LOGRATIO_NAMESPACE_END

namespace logratio_cli {

/// Mean of each position-in-batch of one run (history exports with several
/// optimizer updates per rollout batch): position 0 is the first update.
std::vector<std::pair<long, std::pair<std::size_t, double>>> position_means(const run_input& r);

/// {"metric", "runs": [...], "groups": [...], "comparison", "notes"}
nlohmann::ordered_json runs_json(const std::string& metric, const logratio::runs_analysis& a,
                                 const std::vector<run_input>& in);

/// runs_json as `logratio runs --json` prints it (indent 1, invalid UTF-8 replaced).
std::string runs_json_text(const std::string& metric, const logratio::runs_analysis& a,
                           const std::vector<run_input>& in);

/// A number for tables and reports ("-" when not finite).
std::string fmt(double v, const char* f = "%.4g");

/// The smallest p-value printed as a number: below it (0 included: the
/// tail underflowed double's range) a p-value is a bound, "< 1e-300".
constexpr double p_floor = 1e-300;
/// A p-value cell: fmt(p, f), or "<1e-300" below p_floor.
std::string p_cell(double p, const char* f = "%.2g");
/// "p = 0.031", or "p < 1e-300" below p_floor.
std::string p_phrase(double p, const char* f = "%.2g");

/// The per-run and per-group table (and the comparison) on stdout.
void print_runs_table(const std::string& metric, const logratio::runs_analysis& a);

/// The one-screen answer: is the mismatch growing, in which group, how sure.
/// Slopes are said "per <axis>" (the step the runs were read by).
std::vector<std::string> verdict_lines(const std::string& metric, const logratio::runs_analysis& a,
                                       double confidence = 0.95, const std::string& axis = "update");

}  // namespace logratio_cli
