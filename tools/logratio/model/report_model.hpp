#pragma once
// The report's section model: what `logratio report` says, in order, as
// data. The HTML page (html_report.cpp) and the Markdown evidence pack
// (markdown_report.cpp) both render this one model, so they say the same
// things in the same order; only charts differ (interactive in HTML, linked
// SVG files in Markdown).
#include <cstddef>
#include <string>
#include <vector>

namespace logratio_cli {

/// A table of already formatted cells (numbers at a stated precision).
struct report_table {
    std::string caption;
    std::vector<std::string> header;
    std::vector<bool> numeric;  ///< per column: right-aligned (size 0 = all text)
    std::vector<std::vector<std::string>> rows;
    /// Rows shown at first (0 = all): the HTML page hides the others behind
    /// a "show all" control (its tables sort and filter), the Markdown lists
    /// these and says how many more there are. The rows are in the order to
    /// show them (the runs: largest |slope| first when there are more).
    std::size_t shown = 0;
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
    std::vector<std::string> lines;    ///< after the tables, one item each (a list)
    std::vector<std::string> details;  ///< long lists (notes, repeated findings): folded away in HTML
    std::string details_summary;       ///< the folded list's one-line label ("125 findings")
    int level = 2;                     ///< heading level: 2, or 3 inside the section before it
    /// Order within the section: paragraphs, [charts], tables, lines,
    /// [charts], details; charts_first places the charts before the tables.
    bool charts_first = false;
};

}  // namespace logratio_cli
