#include "markdown_report.hpp"

#include <cctype>

#include "html_svg.hpp"
#include "report_sections.hpp"
#include "report_svg.hpp"

namespace logratio_cli {

std::string markdown_escape(const std::string& raw) {
    const std::string s = valid_utf8(raw);
    std::string o;
    auto word = [&](std::size_t i) {
        return i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || static_cast<unsigned char>(s[i]) >= 0x80);
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        // GFM: an underscore inside a word (delta_abs_mean) never emphasizes
        if (c == '_' && i > 0 && word(i - 1) && word(i + 1)) {
            o += c;
            continue;
        }
        switch (c) {
            case '\\': case '`': case '*': case '_': case '<': case '>': case '|':
                o += '\\';
                o += c;
                break;
            case '\n': case '\r': case '\t': o += ' '; break;
            default: o += c;
        }
    }
    return o;
}

namespace {

std::string row(const std::vector<std::string>& cells, std::size_t columns) {
    std::string s = "|";
    for (std::size_t c = 0; c < columns; ++c) s += " " + (c < cells.size() ? markdown_escape(cells[c]) : "") + " |";
    return s + "\n";
}

std::string table_md(const report_table& t) {
    if (t.header.empty()) return "";
    std::string s;
    if (!t.caption.empty()) s += "*" + markdown_escape(t.caption) + "*\n\n";
    const std::size_t n = t.header.size();
    s += row(t.header, n) + "|";
    for (std::size_t c = 0; c < n; ++c) s += c < t.numeric.size() && t.numeric[c] ? " ---: |" : " --- |";
    s += "\n";
    const std::size_t shown = t.shown && t.shown < t.rows.size() ? t.shown : t.rows.size();
    for (std::size_t i = 0; i < shown; ++i) s += row(t.rows[i], n);
    if (shown < t.rows.size())
        s += "\n" + std::to_string(t.rows.size() - shown) + " more rows (the HTML report and `logratio runs --json` list all " +
             std::to_string(t.rows.size()) + ").\n";
    return s + "\n";
}

std::string charts_md(const report_inputs& r, const report_section& sec, const std::string& dir) {
    std::string s;
    for (const auto& c : sec.charts) {
        std::string title = markdown_escape(report_chart_title(r, c));
        s += "![" + title + "](" + (dir.empty() ? "" : dir + "/") + c + ".svg)\n\n";
    }
    return s;
}

std::string section_md(const report_inputs& r, const report_section& sec, const std::string& dir) {
    std::string s = "<a id=\"" + xml_escape(sec.id) + "\"></a>\n\n" + std::string(sec.level >= 3 ? "### " : "## ") +
                    markdown_escape(sec.title) + "\n\n";
    for (std::size_t i = 0; i < sec.paragraphs.size(); ++i) {
        std::string p = markdown_escape(sec.paragraphs[i]);
        if (!p.empty() && p[0] == '#') p.insert(0, "\\");  // not a heading
        s += (sec.id == "verdict" && i == 0 ? "**" + p + "**" : p) + "\n\n";
    }
    if (sec.charts_first) s += charts_md(r, sec, dir);
    for (const auto& t : sec.tables) s += table_md(t);
    for (const auto& l : sec.lines) s += "- " + markdown_escape(l) + "\n";
    if (!sec.lines.empty()) s += "\n";
    if (!sec.charts_first) s += charts_md(r, sec, dir);
    if (!sec.details.empty()) {
        s += "<details><summary>" + xml_escape(sec.details_summary.empty() ? "details" : sec.details_summary) +
             "</summary>\n\n";
        for (const auto& l : sec.details) s += "- " + markdown_escape(l) + "\n";
        s += "\n</details>\n\n";
    }
    return s;
}

}  // namespace

std::string markdown_report(const report_inputs& r, const std::string& figure_dir) {
    const auto secs = report_sections(r);
    std::string s = "# " + markdown_escape("Train\u2013inference mismatch: " + r.metric) + "\n\n";
    for (const auto& x : secs)
        s += std::string(x.level >= 3 ? "  - [" : "- [") + markdown_escape(x.title) + "](#" + x.id + ")\n";
    s += "\n";
    for (const auto& x : secs) s += section_md(r, x, figure_dir);
    return s;
}

std::vector<std::pair<std::string, std::string>> report_figures(const report_inputs& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& sec : report_sections(r))
        for (const auto& c : sec.charts) {
            std::string svg = report_chart_svg(r, c);
            if (svg.compare(0, 4, "<svg") != 0)  // nothing to draw: an empty figure that says so
                svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"40\" font-family=\"sans-serif\" "
                      "font-size=\"12\"><text x=\"10\" y=\"24\">" + xml_escape(report_chart_title(r, c)) +
                      ": nothing to draw</text></svg>\n";
            out.emplace_back(c + ".svg", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg);
        }
    return out;
}

std::string markdown_report(const evidence& e, const std::string& figure_dir) {
    return markdown_report(report_inputs_of(e), figure_dir);
}

std::vector<std::pair<std::string, std::string>> report_figures(const evidence& e) {
    return report_figures(report_inputs_of(e));
}

}  // namespace logratio_cli
