#pragma once
// The analysis stage of `logratio runs` / `report`: the runs table analysed
// once -- every metric's run statistics (the mismatch metric first: it keeps
// the verdict), the strata of --by -- into the one evidence value
// (model/evidence.hpp) that the text, the JSON, the HTML, the Markdown and
// the export all render. runs_evidence.cpp builds it (Boost.Math through
// logratio/runs), runs_report.cpp adds a report's parts; nothing after it
// computes statistics.
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "../model/evidence.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {

/// The analysis of every metric and stratum; argument errors (--compare,
/// --by a key no run has) name what is wrong.
evidence analyze_evidence(const runs_args& a, const loaded_runs& L);

/// The analysis stage (runs_report.cpp): analyze_evidence, the runs table's
/// facts the renderers say, and with `report` the report's parts (verdict,
/// analysis sections, the dump histogram, the numeric-vs-lag lines, the
/// doctor's findings over the dumps, run once here). The value keeps
/// pointers into L.
evidence evidence_of(const runs_args& a, const loaded_runs& L, bool report);

/// The verdict's first line: which runs count ("metric M: 10 runs, 240
/// updates (async: 6 runs, 144 updates; sync: ...), each with >= 20 updates
/// carrying it; 2 left out: ...").
std::string source_line(const evidence& e);

/// The step axis in a phrase: "update" for dumps and long tables, else the
/// step column's name ("train/step"), for "per <axis>".
std::string axis_name(const std::string& axis);

/// "step axis: update = train/step - 1 (slime's train/step); values as logged,
/// never interpolated" ("" for dumps and long tables).
std::string axis_line(const runs_args& a, const std::string& axis);

/// "by K: the level difference a - b holds in 2/3 strata, the drift difference in 3/3".
std::string strata_line(const evidence& e);

}  // namespace logratio_cli
