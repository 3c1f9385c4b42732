#pragma once
// The evidence of `logratio runs` / `report`: the one value the analysis
// stage (commands/runs_evidence.cpp, commands/runs_report.cpp) makes of the
// runs table and that every renderer takes -- the JSON (runs_render.cpp),
// the text tables, the HTML page and the Markdown pack (output/), the
// export. It holds what was analysed (the runs, the metric, the axis, the
// runs left out), every metric's run statistics (the mismatch metric first:
// it keeps the verdict), the strata of --by, and for a report the parts
// drawn from the dumps (histogram, numeric-vs-lag lines, the doctor's
// findings: the doctor runs once, here). Nothing after it computes
// statistics or reads an input.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "dump_diagnosis.hpp"
#include "dump_histogram.hpp"
#include "report_model.hpp"
#include "run_input.hpp"

namespace logratio_cli {

/// One metric's analysis over the runs that count.
struct metric_analysis {
    std::string metric;
    const std::vector<run_input>* runs = nullptr;  ///< into the runs table (loaded_runs)
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

/// A run that is not in the analysis, and why.
struct left_out_run {
    std::string run, reason;
};

/// What a report shows beside the statistics: made once, in the analysis
/// stage, only when a report (HTML or Markdown) is rendered.
struct report_parts {
    std::vector<std::string> verdict;  ///< the one-screen answer, its source line first
    std::string source_line;           ///< which runs count (verdict[0])
    std::optional<dump_histogram> histogram;  ///< the dump with the largest metric, or --dump
    std::vector<std::string> split;           ///< numeric-vs-lag lines, when the dumps have old_logprobs
    std::vector<dump_diagnosis> doctor;       ///< the doctor's findings over the dumps read
    /// Sections the run analysis adds (policy diagnostics, other metrics, strata).
    std::vector<report_section> analysis_sections;
    /// Sections about the sources (the reconcile, the export), added by `report`.
    std::vector<report_section> source_sections;
};

struct evidence {
    // what was analysed: the runs table's facts the renderers say
    std::string metric;                            ///< the mismatch metric
    std::string source;                            ///< the inputs as given, space-separated
    std::string axis = "update";                   ///< "update", or the step the histories were read by
    const std::vector<run_input>* runs = nullptr;  ///< the mismatch metric's runs (into the runs table)
    std::vector<left_out_run> left_out;
    std::size_t min_updates = 0;  ///< --min-updates in force (or the export's)
    bool metrics_given = false;   ///< --metrics: the JSON lists every metric
    // the analysis
    std::vector<metric_analysis> metrics;  ///< [0]: the mismatch metric
    std::string by;                        ///< --by KEY ("" when not given)
    std::vector<stratum> strata;
    stratum_agreement agreement;
    std::vector<std::string> notes;
    // a report's parts (empty unless a report is rendered)
    report_parts report;
};

}  // namespace logratio_cli
