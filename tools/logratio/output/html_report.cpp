#include "html_report.hpp"

#include <logratio/core/version.hpp>

#include "html_report_data.hpp"
#include "html_svg.hpp"
#include "report_assets.hpp"
#include "report_sections.hpp"
#include "report_svg.hpp"

namespace logratio_cli {

namespace {

/// Script or style text inlined in a CDATA section commented out for the
/// HTML parser (//<![CDATA[ ... //]]>): the page is parsed as HTML by
/// browsers and stays well-formed XML. The embedded files contain no "]]>"
/// (vendor/uplot/refresh.sh checks uPlot's).
std::string script(const std::string& js) { return "<script>//<![CDATA[\n" + js + "\n//]]></script>\n"; }
std::string style(const std::string& css) { return "<style>/*<![CDATA[*/\n" + css + "\n/*]]>*/</style>\n"; }

std::string page_head(const report_inputs& r) {
    std::string s = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" class=\"nojs\">\n<head>\n"
                    "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
    s += "<title>" + xml_escape("logratio report: " + r.metric) + "</title>\n";
    // before anything is drawn: the page's script runs (rows past the first 50 stay hidden)
    s += script("document.documentElement.className = 'js';");
    s += style(assets::uplot_css) + style(assets::report_css);
    return s + "</head>\n";
}

std::string toc(const std::vector<report_section>& secs) {
    std::string s = "<nav class=\"toc\" aria-label=\"contents\">";
    for (const auto& x : secs)
        s += "<a class=\"toc" + std::to_string(x.level) + "\" href=\"#" + xml_escape(x.id) + "\">" +
             xml_escape(x.title) + "</a> ";
    return s + "</nav>\n";
}

/// A table; the runs table and long ones sort and filter (report_page.js).
std::string table_html(const report_table& t, const std::string& id, bool sortable) {
    std::string s = "<table class=\"data" + std::string(sortable ? " sortable" : "") + "\" id=\"" + xml_escape(id) + "\"";
    if (t.shown) s += " data-shown=\"" + std::to_string(t.shown) + "\"";
    s += ">\n";
    if (!t.caption.empty()) s += "<caption>" + xml_escape(t.caption) + "</caption>\n";
    auto num = [&](std::size_t c) { return c < t.numeric.size() && t.numeric[c]; };
    s += "<thead><tr>";
    for (std::size_t c = 0; c < t.header.size(); ++c)
        s += std::string(num(c) ? "<th class=\"n\">" : "<th>") + xml_escape(t.header[c]) + "</th>";
    s += "</tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        s += t.shown && i >= t.shown ? "<tr class=\"more\">" : "<tr>";
        for (std::size_t c = 0; c < t.rows[i].size(); ++c)
            s += std::string(num(c) ? "<td class=\"n\">" : "<td>") + xml_escape(t.rows[i][c]) + "</td>";
        s += "</tr>\n";
    }
    return s + "</tbody>\n</table>\n";
}

/// The trend chart: uPlot draws it into #trend-plot (report_page.js); the
/// static SVG is the fallback without scripts.
std::string trend_figure(const report_inputs& r) {
    return "<figure class=\"chart trend\" id=\"trend-figure\">\n<figcaption>" +
           xml_escape(report_chart_title(r, "trend")) +
           "</figcaption>\n<div id=\"trend-controls\" class=\"controls\"></div>\n<div id=\"trend-plot\"></div>\n"
           "<noscript>\n" +
           report_chart_svg(r, "trend") + "</noscript>\n</figure>\n";
}

std::string charts_html(const report_inputs& r, const report_section& sec) {
    if (sec.charts.empty()) return "";
    std::string s = "<div class=\"charts\">\n";
    for (const auto& c : sec.charts)
        s += c == "trend" ? trend_figure(r)
                          : "<figure class=\"chart " + xml_escape(c) + "\" id=\"chart-" + xml_escape(c) +
                                "\">\n<figcaption>" + xml_escape(report_chart_title(r, c)) + "</figcaption>\n" +
                                report_chart_svg(r, c) + "</figure>\n";
    return s + "</div>\n";
}

std::string section_html(const report_inputs& r, const report_section& sec) {
    const std::string h = sec.level >= 3 ? "h3" : "h2";
    std::string s = "<section id=\"" + xml_escape(sec.id) + "\" class=\"level" + std::to_string(sec.level) + "\">\n<" +
                    h + ">" + xml_escape(sec.title) + " <a class=\"anchor\" href=\"#" + xml_escape(sec.id) +
                    "\" title=\"link to this section\">#</a></" + h + ">\n";
    for (std::size_t i = 0; i < sec.paragraphs.size(); ++i)
        s += std::string(sec.id == "verdict" && i == 0 ? "<p class=\"headline\">" : "<p>") +
             xml_escape(sec.paragraphs[i]) + "</p>\n";
    if (sec.charts_first) s += charts_html(r, sec);
    for (std::size_t k = 0; k < sec.tables.size(); ++k)
        s += table_html(sec.tables[k], "table-" + sec.id + (k ? "-" + std::to_string(k) : ""),
                        sec.id == "runs" || sec.tables[k].shown || sec.tables[k].rows.size() > 20);
    if (!sec.lines.empty()) {
        s += "<ul class=\"lines\">\n";
        for (const auto& l : sec.lines) s += "<li>" + xml_escape(l) + "</li>\n";
        s += "</ul>\n";
    }
    if (!sec.charts_first) s += charts_html(r, sec);
    if (sec.id == "evidence" && !r.doctor && !r.doctor_html.empty()) s += r.doctor_html;
    if (!sec.details.empty()) {
        s += "<details><summary>" + xml_escape(sec.details_summary.empty() ? "details" : sec.details_summary) +
             "</summary>\n<ul class=\"details\">\n";
        for (const auto& l : sec.details) s += "<li>" + xml_escape(l) + "</li>\n";
        s += "</ul>\n</details>\n";
    }
    return s + "</section>\n";
}

}  // namespace

report_inputs report_inputs_of(const evidence& e) {
    report_inputs r;
    r.metric = e.metric;
    r.source = e.source;
    r.analysis = &e.metrics[0].analysis;
    r.runs = e.runs;
    r.histogram = e.report.histogram ? &*e.report.histogram : nullptr;
    r.split = e.report.split;
    r.doctor = &e.report.doctor;
    r.axis = e.axis;
    r.verdict = e.report.verdict;
    r.source_line = e.report.source_line;
    r.analysis_sections = e.report.analysis_sections;
    r.source_sections = e.report.source_sections;
    return r;
}

std::string html_report(const evidence& e) { return html_report(report_inputs_of(e)); }

std::string html_report(const report_inputs& r) {
    const auto secs = report_sections(r);
    std::string s = page_head(r) + "<body>\n<header>\n<h1>" + xml_escape("Train\u2013inference mismatch: " + r.metric) +
                    "</h1>\n" + toc(secs) + "</header>\n<main>\n";
    for (const auto& x : secs) s += section_html(r, x);
    s += "</main>\n<footer><p>logratio " LOGRATIO_VERSION_STRING ", charts by uPlot " +
         xml_escape(std::string(assets::uplot_version).substr(0, std::string(assets::uplot_version).find('\n'))) +
         " (MIT licence), inlined: this file requests nothing.</p></footer>\n";
    // the chart data: JSON without < > & (html_report_data.hpp), read by report_page.js
    s += "<script type=\"application/json\" id=\"report-data\">" + trend_data_json(r) + "</script>\n";
    s += script(assets::uplot_js) + script(assets::report_js);
    return s + "</body>\n</html>\n";
}

}  // namespace logratio_cli
