#pragma once
// The report as its section model (report_model.hpp), the one both the
// HTML page and the Markdown evidence pack render, in this order:
//   verdict     the headline (one line: which group's mismatch grows, by how
//               much per <axis>, in how many runs; whether it is policy lag
//               or numerics), the source line, the verdict in full (folded);
//   trend       the trend chart and the group means with their intervals,
//               the group table, the comparison;
//   runs        the per-run table (largest |slope| first past 50 runs);
//   report_inputs::analysis_sections;
//   evidence    doctor, delta histogram and quantiles, numeric-vs-lag split
//               (level-3 parts, each present when its data is);
//   zero-grad   updates with a zero gradient norm;
//   notes       (folded);
//   sources     the inputs, the version; then report_inputs::source_sections.
// Numbers are formatted here; the renderers only place them.
#include <string>
#include <vector>

#include "html_report.hpp"
#include "../model/report_model.hpp"

namespace logratio_cli {

std::vector<report_section> report_sections(const report_inputs& r);

/// The headline alone (the verdict section's first paragraph).
std::string report_headline(const report_inputs& r);

}  // namespace logratio_cli
