#pragma once
// The steps of `logratio runs` / `report` (runs.hpp): the inputs read into
// runs (runs_load.cpp), the report's parts from the dumps (runs_report.cpp);
// runs_analyze.cpp runs the statistics and calls them.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <logratio/core/version.hpp>

#include "../io/dump_histogram.hpp"
#include "../io/dumps.hpp"
#include "../io/table.hpp"
#include "../output/html_report.hpp"
#include "doctor_scan.hpp"
#include "runs.hpp"

LOGRATIO_NAMESPACE_BEGIN
struct runs_analysis;
LOGRATIO_NAMESPACE_END

namespace logratio_cli {

/// One more metric over the same runs as loaded_runs::runs (same order; a
/// run that did not log it has an empty series).
struct metric_runs {
    std::string metric;
    std::vector<run_input> runs;
};

/// A run that is not in the analysis, and why.
struct left_out_run {
    std::string run, reason;
};

/// What one input was and what was read of it: the export manifest's entry.
struct input_record {
    std::string input, reader;
    std::size_t runs = 0, records = 0;  ///< runs taken; points (or table rows, or dumps) read
    std::vector<std::string> files;     ///< every file read for it, in order
    std::vector<std::string> notes;
};

struct loaded_runs {
    std::vector<run_input> runs;     ///< the mismatch metric's series, one per run that counts
    std::vector<metric_runs> others; ///< --metrics: the other metrics, over the same runs
    std::vector<dump_panel> dumps;   ///< when an input was a directory
    std::string metric;              ///< --metric, or the one chosen
    std::string axis = "update";     ///< the horizontal axis: "update", or the step the histories were read by
    std::vector<left_out_run> left_out;
    std::vector<input_record> inputs;
    std::size_t min_updates = 0;     ///< --min-updates in force (or the export's)
    std::string compare;             ///< --compare in force (or the export's)
};

/// Every input read into runs (tables, tracker histories, dump directories),
/// groups settled, --position applied; notes on stderr and in the first run.
loaded_runs load_runs(const runs_args& a);

/// What the HTML and Markdown reports are rendered from (the dump with the
/// largest metric, or --dump, as the histogram; the Doctor section of the
/// dumps); the pointers in it point into L, an and `keep` (filled here).
struct report_storage {
    std::optional<dump_histogram> histogram;
    std::vector<dump_diagnosis> doctor;
};
report_inputs report_inputs_of(const runs_args& a, const loaded_runs& L, const logratio::runs_analysis& an,
                              report_storage& keep);

/// Per group, the mean over dumps of |delta| split into numeric mismatch and
/// policy lag (dumps with old_logprobs only).
std::vector<std::string> split_lines(const loaded_runs& L);

}  // namespace logratio_cli
