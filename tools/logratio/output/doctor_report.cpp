#include "doctor_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "html_svg.hpp"
#include "runs_output.hpp"

namespace logratio_cli {

namespace {

/// Plot frame, log10 y ticks and the y label of a bar chart (no x ticks:
/// the bars carry their own labels).
std::string bar_axes(const html_detail::frame& fr, const std::string& ylabel) {
    using namespace html_detail;
    std::string s = "<rect x=\"" + f(fr.L) + "\" y=\"" + f(fr.T) + "\" width=\"" + f(fr.W - fr.L - fr.R) +
                    "\" height=\"" + f(fr.H - fr.T - fr.B) + "\" fill=\"#fafafa\" stroke=\"#888\"/>\n";
    for (double e = std::ceil(fr.y0); e <= fr.y1; e += 1)
        s += "<line x1=\"" + f(fr.L) + "\" x2=\"" + f(fr.W - fr.R) + "\" y1=\"" + f(fr.py(e)) + "\" y2=\"" +
             f(fr.py(e)) + "\" stroke=\"#e4e4e4\"/><text x=\"" + f(fr.L - 6) + "\" y=\"" + f(fr.py(e) + 4) +
             "\" text-anchor=\"end\">" + xml_escape(fmt(std::pow(10.0, e), "%g")) + "</text>\n";
    s += "<text x=\"14\" y=\"" + f((fr.T + fr.H - fr.B) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         f((fr.T + fr.H - fr.B) / 2) + ")\">" + xml_escape(ylabel) + "</text>\n";
    return s;
}

/// A probability bucket edge as a short label: 3e-05, 0.12, 1-1e-03.
std::string prob_label(double p) {
    if (p < 0.01) return fmt(p, "%.0e");
    if (p <= 0.99) return fmt(p, "%.2g");
    return "1-" + fmt(1.0 - p, "%.0e");
}

/// Bars of mean |δ| (log10 axis) over labelled buckets with tokens.
std::string svg_bucket_bars(const std::string& title, const std::string& xlabel,
                                   const std::vector<std::pair<std::string, logratio::doctor::delta_stats>>& b) {
    using namespace html_detail;
    double y0 = INFINITY, y1 = -INFINITY;
    for (const auto& x : b)
        if (x.second.count && x.second.mean_abs() > 0) {
            y0 = std::min(y0, std::log10(x.second.mean_abs()));
            y1 = std::max(y1, std::log10(x.second.mean_abs()));
        }
    if (!std::isfinite(y0)) return "<p>No tokens to plot.</p>\n";
    frame fr{0, static_cast<double>(b.size()), std::floor(y0) - 0.3, std::ceil(y1) + 0.1};
    fr.H = 280;
    std::string s = svg_open(fr, title);
    s += bar_axes(fr, "mean |delta|");
    const double w = fr.px(1) - fr.px(0);
    for (std::size_t i = 0; i < b.size(); ++i) {
        const auto& st = b[i].second;
        const double xa = fr.px(static_cast<double>(i));
        s += "<text x=\"" + f(xa + w / 2) + "\" y=\"" + f(fr.H - fr.B + 16) + "\" text-anchor=\"middle\" font-size=\"10\">" +
             xml_escape(b[i].first) + "</text>\n";
        if (!st.count || !(st.mean_abs() > 0)) continue;
        const double y = std::log10(st.mean_abs());
        s += "<rect x=\"" + f(xa + 1) + "\" y=\"" + f(fr.py(y)) + "\" width=\"" + f(std::max(1.0, w - 2)) +
             "\" height=\"" + f(fr.py(fr.y0) - fr.py(y)) + "\" fill=\"#4c72b0\"><title>" +
             xml_escape(b[i].first + ": " + std::to_string(st.count) + " tokens, mean |delta| " + fmt(st.mean_abs()) +
                        ", mean delta " + fmt(st.mean_delta()) + ", max |delta| " + fmt(st.max_abs) + ", kl_k3 " +
                        fmt(st.kl_k3())) +
             "</title></rect>\n";
    }
    s += "<text x=\"" + f((fr.L + fr.W - fr.R) / 2) + "\" y=\"" + f(fr.H - 2) + "\" text-anchor=\"middle\">" +
         xml_escape(xlabel) + "</text>\n";
    return s + "</svg>\n";
}

std::string svg_position_bars(const logratio::doctor::breakdowns& bd) {
    namespace dr = logratio::doctor;
    std::vector<std::pair<std::string, dr::delta_stats>> b;
    int last = 0;
    for (int k = 0; k < dr::breakdowns::position_buckets; ++k)
        if (bd.by_position[k].count) last = k;
    for (int k = 0; k <= last; ++k) {
        const auto lo = dr::breakdowns::position_lo(k), hi = dr::breakdowns::position_hi(k);
        b.push_back({lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi), bd.by_position[k]});
    }
    return svg_bucket_bars("mean |delta| by response position", "response position (log-spaced buckets)", b);
}

std::string svg_prob_bars(const logratio::doctor::breakdowns& bd) {
    namespace dr = logratio::doctor;
    std::vector<std::pair<std::string, dr::delta_stats>> b;
    for (int k = 0; k < dr::breakdowns::prob_buckets; ++k) {
        const double x = dr::breakdowns::prob_bucket_logit_hi(k);
        const std::string hi = k + 1 == dr::breakdowns::prob_buckets ? "1" : prob_label(1.0 / (1.0 + std::exp(-x)));
        b.push_back({"<" + hi, bd.by_rollout_prob[k]});
    }
    return svg_bucket_bars("mean |delta| by rollout probability",
                           "rollout probability p_E (buckets of width 2 in log-odds; label: upper edge)", b);
}

/// The (p_T, p_E) density: 64 x 64 cells on the logit axis, colour = log count.
std::string svg_joint_heatmap(const logratio::doctor::breakdowns& bd) {
    using namespace html_detail;
    namespace dr = logratio::doctor;
    const int n = dr::prob_axis::bins;
    std::uint64_t mx = 0;
    for (auto c : bd.joint) mx = std::max(mx, c);
    if (!mx) return "<p>No tokens to plot.</p>\n";
    const double lo = dr::prob_axis::lo, hi = lo + dr::prob_axis::width * n;
    frame fr{lo, hi, lo, hi};
    fr.W = 520;
    fr.H = 520;
    std::string s = svg_open(fr, "density of (p_T, p_E) on a log-odds scale");
    s += axes(fr, "logit p_E (rollout)", "logit p_T (trainer)");
    const double cw = fr.px(lo + dr::prob_axis::width) - fr.px(lo);
    const double lm = std::log1p(static_cast<double>(mx));
    for (int i = 0; i < n; ++i)      // rows: p_T
        for (int j = 0; j < n; ++j) {  // columns: p_E
            const auto c = bd.joint[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)];
            if (!c) continue;
            const double t = std::log1p(static_cast<double>(c)) / lm;  // 0..1
            const int g = static_cast<int>(235 - 200 * t), r = static_cast<int>(250 - 220 * t);
            const std::string col = "rgb(" + std::to_string(r) + "," + std::to_string(g) + ",255)";
            s += "<rect x=\"" + f(fr.px(lo + dr::prob_axis::width * j)) + "\" y=\"" +
                 f(fr.py(lo + dr::prob_axis::width * (i + 1))) + "\" width=\"" + f(cw + 0.3) + "\" height=\"" +
                 f(cw + 0.3) + "\" fill=\"" + col + "\"><title>" + std::to_string(c) + " tokens</title></rect>\n";
        }
    s += "<line x1=\"" + f(fr.px(lo)) + "\" y1=\"" + f(fr.py(lo)) + "\" x2=\"" + f(fr.px(hi)) + "\" y2=\"" +
         f(fr.py(hi)) + "\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>\n";
    return s + "</svg>\n";
}

}  // namespace

std::string doctor_section_html(const std::vector<dump_diagnosis>& ds) {
    if (ds.empty()) return "";
    namespace dr = logratio::doctor;
    std::string s = "<h2>Doctor</h2>\n<p>" + std::to_string(ds.size()) +
                    " dump(s) checked by <code>logratio doctor</code> (checks and thresholds: README, Doctor).</p>\n";
    s += "<table>\n<tr><th class=\"l\">check</th><th>fail</th><th>warn</th><th class=\"l\">runs</th>"
         "<th class=\"l\">dumps</th></tr>\n";
    for (const auto& c : summarize_checks(ds))
        s += "<tr><td class=\"l\">" + xml_escape(c.check) + "</td><td>" + std::to_string(c.fail) + "</td><td>" +
             std::to_string(c.warn) + "</td><td class=\"l\">" +
             xml_escape(c.runs.empty() ? "-" : label_list({c.runs.begin(), c.runs.end()})) + "</td><td class=\"l\">" +
             xml_escape(c.dumps.empty() ? "-" : label_list(c.dumps)) + "</td></tr>\n";
    s += "</table>\n";
    std::string lines;
    std::size_t shown = 0, more = 0;
    for (const auto& x : ds)
        for (const auto& f : x.d.findings) {
            if (f.level == dr::severity::ok) continue;
            if (shown++ >= 40) {
                ++more;
                continue;
            }
            lines += x.label + "  " + f.check + " " + dr::severity_name(f.level) + ": " + f.summary + "\n";
        }
    if (more) lines += "... " + std::to_string(more) + " more\n";
    s += lines.empty() ? "<p>No check warns or fails in any dump.</p>\n" : "<pre>" + xml_escape(lines) + "</pre>\n";
    dr::breakdowns all = ds.front().d.bd;
    for (std::size_t i = 1; i < ds.size(); ++i) all.merge(ds[i].d.bd);
    s += "<h3>Where the mismatch lives (all " + std::to_string(ds.size()) + " dumps merged)</h3>\n";
    s += svg_position_bars(all) + svg_prob_bars(all) + svg_joint_heatmap(all);
    return s;
}

}  // namespace logratio_cli
