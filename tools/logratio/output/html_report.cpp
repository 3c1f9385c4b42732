#include "html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <logratio/core/version.hpp>
#include <logratio/runs/runs.hpp>

#include "../io/dump_histogram.hpp"
#include "html_svg.hpp"
#include "runs_output.hpp"

namespace logratio_cli {

namespace {

/// Per-run metric over updates, one line per run coloured by group; missing
/// values break the line (never interpolated).
std::string svg_runs_chart(const std::string& metric, const std::vector<run_input>& in,
                           const std::vector<std::string>& groups) {
    using namespace html_detail;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (const auto& r : in)
        for (std::size_t i = 0; i < r.series.value.size(); ++i)
            if (std::isfinite(r.series.value[i])) {
                x0 = std::min(x0, r.series.update[i]);
                x1 = std::max(x1, r.series.update[i]);
                y0 = std::min(y0, r.series.value[i]);
                y1 = std::max(y1, r.series.value[i]);
            }
    if (!std::isfinite(x0)) return "<p>No values to plot.</p>\n";
    if (x1 == x0) x1 = x0 + 1;
    if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0) * 0.1);
    const double pad = (y1 - y0) * 0.05;
    frame fr{x0, x1, y0 - pad, y1 + pad};
    std::string s = svg_open(fr, metric + " per update, one line per run");
    s += axes(fr, "update", metric);
    for (const auto& r : in) {
        const auto gi = static_cast<std::size_t>(std::find(groups.begin(), groups.end(), r.series.group) - groups.begin());
        std::string pts;
        auto flush = [&] {
            if (pts.empty()) return;
            s += "<polyline fill=\"none\" stroke=\"" + std::string(palette(gi)) +
                 "\" stroke-opacity=\"0.7\" stroke-width=\"1.4\" points=\"" + pts + "\"><title>" +
                 xml_escape(r.series.run + " (" + r.series.group + ")") + "</title></polyline>\n";
            pts.clear();
        };
        for (std::size_t i = 0; i < r.series.value.size(); ++i) {
            if (!std::isfinite(r.series.value[i])) {
                flush();
                continue;
            }
            pts += f(fr.px(r.series.update[i])) + "," + f(fr.py(r.series.value[i])) + " ";
        }
        flush();
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {  // legend
        const double y = fr.T + 16 + 16.0 * static_cast<double>(g);
        s += "<rect x=\"" + f(fr.W - fr.R - 120) + "\" y=\"" + f(y - 9) + "\" width=\"12\" height=\"12\" fill=\"" +
             palette(g) + "\"/><text x=\"" + f(fr.W - fr.R - 102) + "\" y=\"" + f(y + 1) + "\">" +
             xml_escape(groups[g]) + "</text>\n";
    }
    return s + "</svg>\n";
}

/// Each group's mean of run means with its 95% interval (and the run means).
std::string svg_group_chart(const std::string& metric, const logratio::runs_analysis& a) {
    using namespace html_detail;
    double y0 = INFINITY, y1 = -INFINITY;
    for (const auto& g : a.groups)
        for (double v : {g.mean_of_means.mean, g.mean_of_means.low, g.mean_of_means.high})
            if (std::isfinite(v)) {
                y0 = std::min(y0, v);
                y1 = std::max(y1, v);
            }
    for (const auto& r : a.runs)
        if (std::isfinite(r.summary.mean)) {
            y0 = std::min(y0, r.summary.mean);
            y1 = std::max(y1, r.summary.mean);
        }
    if (!std::isfinite(y0)) return "<p>No group means.</p>\n";
    if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0) * 0.1);
    const double pad = (y1 - y0) * 0.08;
    frame fr{0, static_cast<double>(a.groups.size()), y0 - pad, y1 + pad};
    fr.H = 300;
    std::string s = svg_open(fr, "mean of run means per group with 95% confidence intervals");
    s += "<rect x=\"" + f(fr.L) + "\" y=\"" + f(fr.T) + "\" width=\"" + f(fr.W - fr.L - fr.R) + "\" height=\"" +
         f(fr.H - fr.T - fr.B) + "\" fill=\"#fafafa\" stroke=\"#888\"/>\n";
    for (double v : ticks(fr.y0, fr.y1, 5))
        s += "<line x1=\"" + f(fr.L) + "\" x2=\"" + f(fr.W - fr.R) + "\" y1=\"" + f(fr.py(v)) + "\" y2=\"" +
             f(fr.py(v)) + "\" stroke=\"#e4e4e4\"/><text x=\"" + f(fr.L - 6) + "\" y=\"" + f(fr.py(v) + 4) +
             "\" text-anchor=\"end\">" + xml_escape(fmt(v, "%.3g")) + "</text>\n";
    s += "<text x=\"14\" y=\"" + f((fr.T + fr.H - fr.B) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         f((fr.T + fr.H - fr.B) / 2) + ")\">" + xml_escape("mean " + metric) + "</text>\n";
    for (std::size_t g = 0; g < a.groups.size(); ++g) {
        const auto& G = a.groups[g];
        const double cx = fr.px(static_cast<double>(g) + 0.5);
        std::size_t k = 0;
        for (const auto& r : a.runs)
            if (r.group == G.group && std::isfinite(r.summary.mean)) {
                const double jitter = (static_cast<double>(k++ % 9) - 4.0) * 5.0;
                s += "<circle cx=\"" + f(cx + 40 + jitter) + "\" cy=\"" + f(fr.py(r.summary.mean)) +
                     "\" r=\"3\" fill=\"" + palette(g) + "\" fill-opacity=\"0.5\"><title>" +
                     xml_escape(r.run + ": " + fmt(r.summary.mean)) + "</title></circle>\n";
            }
        if (std::isfinite(G.mean_of_means.low))
            s += "<line x1=\"" + f(cx) + "\" x2=\"" + f(cx) + "\" y1=\"" + f(fr.py(G.mean_of_means.low)) + "\" y2=\"" +
                 f(fr.py(G.mean_of_means.high)) + "\" stroke=\"" + palette(g) + "\" stroke-width=\"3\"/>\n";
        s += "<circle cx=\"" + f(cx) + "\" cy=\"" + f(fr.py(G.mean_of_means.mean)) + "\" r=\"6\" fill=\"" +
             palette(g) + "\"/>\n";
        s += "<text x=\"" + f(cx) + "\" y=\"" + f(fr.H - fr.B + 18) + "\" text-anchor=\"middle\">" +
             xml_escape(G.group + " (" + std::to_string(G.runs) + " runs)") + "</text>\n";
    }
    return s + "</svg>\n";
}

/// Histogram of one dump's δ on a log count axis.
std::string svg_histogram(const dump_histogram& h) {
    using namespace html_detail;
    std::uint64_t mx = 1;
    for (auto c : h.counts) mx = std::max(mx, c);
    frame fr{h.lo, h.hi, 0, std::log10(static_cast<double>(mx)) + 0.2};
    fr.H = 300;
    std::string s = svg_open(fr, "histogram of delta in " + h.path);
    s += axes(fr, "delta = l_T - l_E", "tokens", true);
    const double w = (h.hi - h.lo) / static_cast<double>(h.counts.size());
    for (std::size_t i = 0; i < h.counts.size(); ++i) {
        if (!h.counts[i]) continue;
        const double y = std::log10(static_cast<double>(h.counts[i])) + 0.1;  // a single token is visible
        const double xa = fr.px(h.lo + w * static_cast<double>(i)), xb = fr.px(h.lo + w * static_cast<double>(i + 1));
        s += "<rect x=\"" + f(xa) + "\" y=\"" + f(fr.py(y)) + "\" width=\"" + f(std::max(0.5, xb - xa - 0.5)) +
             "\" height=\"" + f(fr.py(0) - fr.py(y)) + "\" fill=\"#4c72b0\"><title>" +
             xml_escape(fmt(h.lo + w * static_cast<double>(i), "%.3g") + " .. " +
                        fmt(h.lo + w * static_cast<double>(i + 1), "%.3g") + ": " + std::to_string(h.counts[i])) +
             "</title></rect>\n";
    }
    return s + "</svg>\n";
}

}  // namespace

std::string html_report(const report_inputs& r) {
    const auto& a = *r.analysis;
    std::vector<std::string> groups;
    for (const auto& g : a.groups) groups.push_back(g.group);
    std::string s;
    s += "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
    s += "<title>" + xml_escape("logratio report: " + r.metric) + "</title>\n";
    s += "<style>\nbody { font-family: sans-serif; margin: 24px; color: #222; max-width: 1000px; }\n"
         "table { border-collapse: collapse; margin: 8px 0 20px 0; font-size: 13px; }\n"
         "td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }\n"
         "th { background: #f0f0f0; } td.l, th.l { text-align: left; }\n"
         "pre { background: #f6f6f6; padding: 10px; border-left: 4px solid #4c72b0; white-space: pre-wrap; }\n"
         "</style>\n</head>\n<body>\n";
    s += "<h1>" + xml_escape("Train-inference mismatch: " + r.metric) + "</h1>\n";
    s += "<p>Source: <code>" + xml_escape(r.source) + "</code>. Generated by logratio " LOGRATIO_VERSION_STRING
         ".</p>\n";
    s += "<h2>Verdict</h2>\n<pre>";
    for (const auto& l : r.verdict) s += xml_escape(l) + "\n";
    s += "</pre>\n";
    if (!r.split.empty()) {
        s += "<h2>Numeric mismatch vs policy lag</h2>\n<pre>";
        for (const auto& l : r.split) s += xml_escape(l) + "\n";
        s += "</pre>\n";
    }
    s += r.doctor_html;
    s += "<h2>" + xml_escape(r.metric) + " per update</h2>\n" + svg_runs_chart(r.metric, *r.runs, groups);
    s += "<h2>Groups: mean of run means, 95% CI</h2>\n" + svg_group_chart(r.metric, a);
    s += "<table>\n<tr><th class=\"l\">group</th><th>runs</th><th>updates</th><th>mean</th><th>95% CI</th>"
         "<th>mean slope</th><th>slope 95% CI</th><th>rising runs</th></tr>\n";
    for (const auto& g : a.groups)
        s += "<tr><td class=\"l\">" + xml_escape(g.group) + "</td><td>" + std::to_string(g.runs) + "</td><td>" +
             std::to_string(g.updates) + "</td><td>" + fmt(g.mean_of_means.mean) + "</td><td>[" +
             fmt(g.mean_of_means.low) + ", " + fmt(g.mean_of_means.high) + "]</td><td>" +
             fmt(g.mean_slope.mean, "%.3g") + "</td><td>[" + fmt(g.mean_slope.low, "%.3g") + ", " +
             fmt(g.mean_slope.high, "%.3g") + "]</td><td>" + std::to_string(g.rising) + "/" +
             std::to_string(g.runs) + "</td></tr>\n";
    s += "</table>\n";
    if (a.comparison) {
        const auto& c = *a.comparison;
        s += "<p>" + xml_escape(c.a + " − " + c.b) + ": mean difference " + fmt(c.means.mean_diff) + " [95% CI " +
             fmt(c.means.ci_low) + ", " + fmt(c.means.ci_high) + "], Welch t = " + fmt(c.means.t) + " (df " +
             fmt(c.means.df) + "), p = " + fmt(c.means.pvalue, "%.3g") + "; Mann–Whitney U = " +
             fmt(c.mann_whitney.u) + ", p = " + fmt(c.mann_whitney.pvalue, "%.3g") +
             "; slopes: Welch p = " + fmt(c.slopes.pvalue, "%.3g") + ".</p>\n";
    }
    s += "<h2>Runs</h2>\n<table>\n<tr><th class=\"l\">run</th><th class=\"l\">group</th><th>updates</th><th>mean</th>"
         "<th>max</th><th>OLS slope</th><th>95% CI</th><th>p</th><th>Theil–Sen</th><th>Kendall τ</th><th>p</th></tr>\n";
    for (const auto& x : a.runs)
        s += "<tr><td class=\"l\">" + xml_escape(x.run) + "</td><td class=\"l\">" + xml_escape(x.group) +
             "</td><td>" + std::to_string(x.updates) + "</td><td>" + fmt(x.summary.mean) + "</td><td>" +
             fmt(x.summary.max) + "</td><td>" + fmt(x.ols.slope, "%.3g") + "</td><td>[" +
             fmt(x.ols.slope_ci_low, "%.3g") + ", " + fmt(x.ols.slope_ci_high, "%.3g") + "]</td><td>" +
             fmt(x.ols.pvalue, "%.2g") + "</td><td>" + fmt(x.theil_sen.slope, "%.3g") + "</td><td>" +
             fmt(x.kendall.tau, "%.3f") + "</td><td>" + fmt(x.kendall.pvalue, "%.2g") + "</td></tr>\n";
    s += "</table>\n";
    if (r.histogram) {
        const auto& h = *r.histogram;
        s += "<h2>δ in one dump</h2>\n<p><code>" + xml_escape(h.path) + "</code>: " + std::to_string(h.tokens) +
             " tokens; " + std::to_string(h.below) + " below and " + std::to_string(h.above) +
             " above the plotted range.</p>\n" + svg_histogram(h);
        s += "<table>\n<tr><th class=\"l\">tail quantile</th><th>value</th></tr>\n";
        for (const auto& q : h.quantiles)
            s += "<tr><td class=\"l\">" + xml_escape(q.first) + "</td><td>" + fmt(q.second, "%.4g") + "</td></tr>\n";
        s += "</table>\n";
    }
    s += "<h2>Updates with zero gradient norm</h2>\n";
    std::string z;
    for (const auto& x : *r.runs)
        if (!x.zero_grad_norm.empty()) {
            z += "<tr><td class=\"l\">" + xml_escape(x.series.run) + "</td><td class=\"l\">";
            for (std::size_t i = 0; i < x.zero_grad_norm.size(); ++i)
                z += (i ? ", " : "") + fmt(x.zero_grad_norm[i], "%g");
            z += "</td></tr>\n";
        }
    s += z.empty() ? "<p>None recorded (no gradient-norm column, or no zero values).</p>\n"
                   : "<table>\n<tr><th class=\"l\">run</th><th class=\"l\">updates</th></tr>\n" + z + "</table>\n";
    std::string notes;
    for (const auto& x : *r.runs)
        for (const auto& n : x.notes) notes += "<li>" + xml_escape(n) + "</li>\n";
    for (const auto& n : a.notes) notes += "<li>" + xml_escape(n) + "</li>\n";
    if (!notes.empty()) s += "<h2>Notes</h2>\n<ul>\n" + notes + "</ul>\n";
    s += "</body>\n</html>\n";
    return s;
}

}  // namespace logratio_cli
