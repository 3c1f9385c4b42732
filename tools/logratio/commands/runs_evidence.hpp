#pragma once
// The evidence of `logratio runs` / `report`: the loaded runs analysed once
// -- every metric's run statistics (the mismatch metric first: it keeps the
// verdict), the strata of --by -- as one value that the text, the JSON, the
// HTML, the Markdown and the export all render. runs_evidence.cpp builds it
// (Boost.Math through logratio/runs); nothing after it computes statistics.
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "runs_steps.hpp"

namespace logratio_cli {

/// One metric's analysis over the runs that count.
struct metric_analysis {
    std::string metric;
    const std::vector<run_input>* runs = nullptr;  ///< into loaded_runs
    logratio::runs_analysis analysis;
};

/// The mismatch metric's analysis within one value of the --by attribute.
struct stratum {
    std::string value;            ///< the attribute's value ("(none)" for runs without it)
    bool missing_key = false;     ///< the runs that lack the attribute
    std::vector<run_input> runs;  ///< copies of the stratum's runs (mismatch metric)
    logratio::runs_analysis analysis;
};

/// Does the whole comparison's difference (level: Welch on run means; drift:
/// Welch on run slopes) hold in a stratum: same sign, p < 1 - confidence.
struct stratum_agreement {
    std::size_t assessed = 0;  ///< strata holding both compared groups
    std::size_t level_holds = 0, drift_holds = 0;
};

struct evidence {
    std::vector<metric_analysis> metrics;  ///< [0]: the mismatch metric
    std::string by;                        ///< --by KEY ("" when not given)
    std::vector<stratum> strata;
    stratum_agreement agreement;
    std::vector<std::string> notes;
};

/// The analysis of every metric and stratum; argument errors (--compare,
/// --by a key no run has) name what is wrong.
evidence analyze_evidence(const runs_args& a, const loaded_runs& L);

/// The verdict's first line: which runs count ("metric M: 10 runs, 240
/// updates (async: 6 runs, 144 updates; sync: ...), each with >= 20 updates
/// carrying it; 2 left out: ...").
std::string source_line(const loaded_runs& L, const evidence& e);

/// The step axis in a phrase: "update" for dumps and long tables, else the
/// step column's name ("train/step"), for "per <axis>".
std::string axis_name(const loaded_runs& L);

/// "step axis: update = train/step - 1 (slime's train/step); values as logged,
/// never interpolated" ("" for dumps and long tables).
std::string axis_line(const runs_args& a, const loaded_runs& L);

/// "by K: the level difference a - b holds in 2/3 strata, the drift difference in 3/3".
std::string strata_line(const evidence& e);

}  // namespace logratio_cli
