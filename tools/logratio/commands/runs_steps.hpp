#pragma once
// The stages of `logratio runs` / `report` (runs.hpp; docs/architecture.md,
// "Data flow of `runs` and `report`"): the inputs read into one runs table
// (runs_load.cpp: loaded_runs), analysed into the evidence (runs_evidence.hpp),
// rendered (runs_render.cpp, output/); runs_analyze.cpp runs them in order.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "../io/dumps.hpp"
#include "../io/table.hpp"
#include "../model/evidence.hpp"
#include "runs.hpp"

namespace logratio_cli {

/// One more metric over the same runs as loaded_runs::runs (same order; a
/// run that did not log it has an empty series).
struct metric_runs {
    std::string metric;
    std::vector<run_input> runs;
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

/// Per group, the mean over dumps of |delta| split into numeric mismatch and
/// policy lag (dumps with old_logprobs only).
std::vector<std::string> split_lines(const loaded_runs& L);

}  // namespace logratio_cli
