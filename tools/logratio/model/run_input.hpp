#pragma once
// One run of the runs table (the value the run-loading stages hand on:
// io/ builds it, the analysis and output/ read it). model/ holds the plain
// values passed between the stages of `logratio runs` / `report`, so that
// output/ renders them without including a reader (docs/architecture.md,
// "Data flow of `runs` and `report`").
#include <map>
#include <string>
#include <vector>

#include <logratio/runs/run_series.hpp>

namespace logratio_cli {

/// One run's series plus what the tool reports beside the statistics.
struct run_input {
    logratio::run_series series;
    std::vector<long> position;          ///< position of each update in its rollout batch (history exports)
    std::vector<double> zero_grad_norm;  ///< updates with a recorded zero gradient norm
    std::vector<std::string> notes;
    std::map<std::string, std::string> attributes;  ///< the run's attributes (history.hpp's run_history::attributes)
};

}  // namespace logratio_cli
