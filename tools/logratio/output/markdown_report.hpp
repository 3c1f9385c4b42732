#pragma once
// The report as GitHub-flavoured Markdown (the evidence pack of `logratio
// report --markdown FILE --export DIR`): the same sections as the HTML page
// (report_sections.hpp), in the same order, numbers as the model formatted
// them; tables as GFM tables ('|' escaped), charts as image links to the SVG
// files report_figures returns.
#include <string>
#include <utility>
#include <vector>

#include "html_report.hpp"

namespace logratio_cli {

/// The Markdown document; a chart is `![title](figure_dir/<chart>.svg)`
/// (`<chart>.svg` when figure_dir is empty).
std::string markdown_report(const report_inputs& r, const std::string& figure_dir);
/// The Markdown document of the evidence value (`report --markdown`).
std::string markdown_report(const evidence& e, const std::string& figure_dir);

/// (file name "<chart>.svg", standalone SVG document) for each chart the
/// sections place, in their order.
std::vector<std::pair<std::string, std::string>> report_figures(const report_inputs& r);
std::vector<std::pair<std::string, std::string>> report_figures(const evidence& e);

/// Text safe in Markdown: \ ` * < > | and _ but inside a word escaped
/// (numbers, brackets, delta_abs_mean stay as the model wrote them);
/// newlines as spaces (cells and items stay one line).
std::string markdown_escape(const std::string& s);

}  // namespace logratio_cli
