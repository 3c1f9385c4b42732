#pragma once
// What `logratio runs` / `report` print and write from the evidence
// (runs_evidence.hpp): the JSON document, the text tables, the attribute
// listing, the report's added sections (policy diagnostics, the other
// metrics' tables, strata).
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../model/report_model.hpp"
#include "runs_evidence.hpp"

namespace logratio_cli {

/// `--json`: today's single-metric object (plus "strata", "left_out" when
/// there are any); with --metrics {"metrics": [one such object per metric],
/// "strata", "left_out", "notes"}.
nlohmann::ordered_json evidence_json(const evidence& e);
std::string evidence_json_text(const evidence& e);

/// The text tables of every metric, the strata line and each stratum's groups.
void print_evidence(const evidence& e);

/// `--list-attributes`: each attribute, how many runs have it, its values
/// (with --json: {"runs": N, "attributes": {KEY: {"runs": n, "values": {V: n}}}}).
void print_attributes(const loaded_runs& L, bool json);

/// The report's sections from the run analysis: policy diagnostics (the
/// mean of every metric per run), each other metric's group and run tables,
/// the strata.
std::vector<report_section> analysis_sections(const evidence& e);

struct reconcile_result;

/// The report's section on `report --reconcile B`: the one line, every
/// difference (the first 200 in the tables; all of them in the export's
/// reconcile.json), what is on one side only.
report_section reconcile_section(const std::string& b, const reconcile_result& r);

/// The report's section on `report --export DIR`: where the frozen data is.
report_section export_section(const std::string& dir);

/// A finite number at 4 significant digits, "-" otherwise (the reports' precision).
std::string cell4(double v);

}  // namespace logratio_cli
