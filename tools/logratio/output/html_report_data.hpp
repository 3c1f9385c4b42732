#pragma once
// The HTML report's chart data: one JSON document the page's script reads
// from a <script type="application/json"> block.
#include <string>

#include "html_report.hpp"

namespace logratio_cli {

/// {"metric", "axis", "groups", "colors", "many", "xs": [[steps]...],
///  "runs": [{"n": name, "g": group index, "x": index into xs, "y": [values,
///  null = missing]}], "bands": [{"g", "x", "lo", "mid", "hi", "n"}]}.
/// Written without < > & (escaped as \u003c ...), so that the block can
/// neither end early in an HTML parser nor break the page as XML.
std::string trend_data_json(const report_inputs& r);

/// A JSON string literal of s (valid UTF-8, < > & escaped as above).
std::string json_string(const std::string& s);

}  // namespace logratio_cli
