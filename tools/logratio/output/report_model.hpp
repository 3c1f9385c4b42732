#pragma once
// The report's section model: what `logratio report` says, in order, as
// data. The HTML page (html_report.cpp) and the Markdown evidence pack
// (markdown_report.cpp) both render this one model, so they say the same
// things in the same order; only charts differ (interactive in HTML, linked
// SVG files in Markdown).
#include <string>
#include <vector>

namespace logratio_cli {

/// A table of already formatted cells (numbers at a stated precision).
struct report_table {
    std::string caption;
    std::vector<std::string> header;
    std::vector<bool> numeric;  ///< per column: right-aligned (size 0 = all text)
    std::vector<std::vector<std::string>> rows;
};

/// One linkable section: an id (the HTML anchor, the Markdown heading's
/// slug), a title, paragraphs, tables, and the charts placed in it (by
/// name: "trend", "group_means", "histogram", ...; each renderer knows how
/// to draw or link them).
struct report_section {
    std::string id, title;
    std::vector<std::string> paragraphs;
    std::vector<report_table> tables;
    std::vector<std::string> charts;
    std::vector<std::string> details;  ///< long lists (notes, repeated findings): folded away in HTML
};

}  // namespace logratio_cli
