#pragma once
// The steps of `logratio runs` / `report` (runs.hpp): the inputs read into
// runs (runs_load.cpp), the report's parts from the dumps (runs_report.cpp);
// runs_analyze.cpp runs the statistics and calls them.
#include <string>
#include <vector>

#include <logratio/core/version.hpp>

#include "../io/dumps.hpp"
#include "../io/table.hpp"
#include "runs.hpp"

LOGRATIO_NAMESPACE_BEGIN
struct runs_analysis;
LOGRATIO_NAMESPACE_END

namespace logratio_cli {

struct loaded_runs {
    std::vector<run_input> runs;
    std::vector<dump_panel> dumps;  ///< when an input was a directory
    std::string metric;             ///< --metric, or the one chosen
};

/// Every input read into runs (tables, tracker histories, dump directories),
/// groups settled, --position applied; notes on stderr and in the first run.
loaded_runs load_runs(const runs_args& a);

/// The self-contained HTML report of the analysed runs (the dump with the
/// largest metric, or --dump, as the histogram; the Doctor section of the dumps).
std::string report_html(const runs_args& a, const loaded_runs& L, const logratio::runs_analysis& an);

/// Per group, the mean over dumps of |delta| split into numeric mismatch and
/// policy lag (dumps with old_logprobs only).
std::vector<std::string> split_lines(const loaded_runs& L);

}  // namespace logratio_cli
