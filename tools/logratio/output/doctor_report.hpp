#pragma once
// The report's "Doctor" section: the findings of the dumps the report reads
// (per check: dumps where it fails/warns, which runs), and three inline SVG
// plots of the breakdowns merged over those dumps: mean |δ| by response
// position bucket, mean |δ| by rollout-probability bucket, and the (p_T, p_E)
// density as a heat map. No scripts.
#include <string>
#include <vector>

#include "doctor_summary.hpp"

namespace logratio_cli {

/// The Doctor section of the report for already diagnosed dumps ("" for none).
std::string doctor_section_html(const std::vector<dump_diagnosis>& ds);

}  // namespace logratio_cli
