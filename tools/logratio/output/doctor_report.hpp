#pragma once
// The report's "Doctor" section: the findings of the dumps the report reads
// (per check: dumps where it fails/warns, which runs; then one line per
// (check, run) with the update range and the worst value, every finding
// folded away), and three plots of the breakdowns merged over those dumps:
// mean |δ| by response position bucket, mean |δ| by rollout-probability
// bucket, and the (p_T, p_E) density as a heat map (inline SVG).
#include <string>
#include <vector>

#include "doctor_summary.hpp"
#include "../model/report_model.hpp"

namespace logratio_cli {

/// One line per (check, run) that warns or fails, in order of first
/// appearance: "async-0: policy_lag warn at updates 4-24 (11 dumps), worst
/// |lag| 0.056".
std::vector<std::string> grouped_findings(const std::vector<dump_diagnosis>& ds);

/// The Doctor section (id "doctor", a level-3 part of the evidence) of
/// already diagnosed dumps; its charts are doctor_position, doctor_prob and
/// doctor_joint.
report_section doctor_section(const std::vector<dump_diagnosis>& ds);

/// One of the section's charts as an <svg> element (a <p> when empty).
std::string doctor_chart_svg(const std::vector<dump_diagnosis>& ds, const std::string& chart);
std::string doctor_chart_title(const std::string& chart);

}  // namespace logratio_cli
