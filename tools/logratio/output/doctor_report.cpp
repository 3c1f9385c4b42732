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

namespace {

/// The value a check's grouped line reports as its worst (largest), and how
/// it is called; other checks: their first numeric evidence.
double worst_value(const logratio::doctor::finding& f, std::string& label) {
    if (f.check == "policy_lag") {
        label = "|lag|";
        return f.get("lag_delta_abs_mean");
    }
    if (f.check == "numeric") {
        label = "mean |delta|";
        return f.get("delta_abs_mean");
    }
    for (const auto& e : f.evidence)
        if (e.text.empty() && std::isfinite(e.value)) {
            label = e.key;
            return e.value;
        }
    return NAN;
}

struct finding_group {
    std::string check, run, label;
    double first = INFINITY, last = -INFINITY, worst = NAN;
    std::size_t warn = 0, fail = 0;
    bool dated = false;  ///< some dump has an update number
};

std::string group_line(const finding_group& g) {
    const std::size_t n = g.warn + g.fail;
    std::string s = g.run + ": " + g.check + " " + (g.fail && g.warn ? "fail/warn" : g.fail ? "fail" : "warn");
    if (g.dated)
        s += g.first == g.last ? " at update " + fmt(g.first, "%g")
                               : " at updates " + fmt(g.first, "%g") + "\u2013" + fmt(g.last, "%g");
    s += " (" + std::to_string(n) + (n == 1 ? " dump)" : " dumps)");
    if (std::isfinite(g.worst)) s += ", worst " + g.label + " " + fmt(g.worst, "%.3g");
    return s;
}

}  // namespace

std::vector<std::string> grouped_findings(const std::vector<dump_diagnosis>& ds) {
    namespace dr = logratio::doctor;
    std::vector<finding_group> gs;
    for (const auto& x : ds)
        for (const auto& fd : x.d.findings) {
            if (!dr::raises(fd.level)) continue;
            const std::string run = x.run.empty() ? x.label : x.run;
            auto it = std::find_if(gs.begin(), gs.end(),
                                   [&](const finding_group& g) { return g.check == fd.check && g.run == run; });
            if (it == gs.end()) {
                gs.push_back({fd.check, run, "", INFINITY, -INFINITY, NAN, 0, 0, false});
                it = gs.end() - 1;
            }
            (fd.level == dr::severity::fail ? it->fail : it->warn)++;
            if (!x.run.empty()) {  // a dump known by run@update
                it->dated = true;
                it->first = std::min(it->first, x.update);
                it->last = std::max(it->last, x.update);
            }
            std::string label;
            const double v = worst_value(fd, label);
            if (std::isfinite(v) && !(std::fabs(v) <= std::fabs(it->worst))) {
                it->worst = v;
                it->label = label;
            }
        }
    std::vector<std::string> out;
    for (const auto& g : gs) out.push_back(group_line(g));
    return out;
}

report_section doctor_section(const std::vector<dump_diagnosis>& ds) {
    namespace dr = logratio::doctor;
    report_section s;
    s.id = "doctor";
    s.title = "Doctor";
    s.level = 3;
    s.paragraphs.push_back(std::to_string(ds.size()) +
                           " dump(s) checked by logratio doctor (checks and thresholds: README, Doctor).");
    report_table t;
    t.header = {"check", "fail", "warn", "runs", "dumps"};
    t.numeric = {false, true, true, false, false};
    for (const auto& c : summarize_checks(ds))
        t.rows.push_back({c.check, std::to_string(c.fail), std::to_string(c.warn),
                          c.runs.empty() ? "-" : label_list({c.runs.begin(), c.runs.end()}),
                          c.dumps.empty() ? "-" : label_list(c.dumps, 3)});
    s.tables.push_back(std::move(t));
    const auto lines = grouped_findings(ds);
    if (lines.empty()) s.lines.push_back("No check warns or fails in any dump.");
    // one line per (check, run); with thousands of runs, the first 40 and a count
    for (std::size_t i = 0; i < lines.size() && i < 40; ++i) s.lines.push_back(lines[i]);
    if (lines.size() > 40) s.lines.push_back("... and " + std::to_string(lines.size() - 40) + " more (check, run) pairs");
    for (const auto& x : ds)
        for (const auto& f : x.d.findings)
            if (dr::raises(f.level) && s.details.size() < 2000)
                s.details.push_back(x.label + "  " + f.check + " " + dr::severity_name(f.level) + ": " + f.summary);
    if (!s.details.empty()) s.details_summary = "every finding, dump by dump (" + std::to_string(s.details.size()) + ")";
    if (!ds.empty()) s.charts = {"doctor_position", "doctor_prob", "doctor_joint"};
    return s;
}

std::string doctor_chart_svg(const std::vector<dump_diagnosis>& ds, const std::string& chart) {
    if (ds.empty()) return "<p>No dumps.</p>\n";
    logratio::doctor::breakdowns all = ds.front().d.bd;
    for (std::size_t i = 1; i < ds.size(); ++i) all.merge(ds[i].d.bd);
    if (chart == "doctor_position") return svg_position_bars(all);
    if (chart == "doctor_prob") return svg_prob_bars(all);
    if (chart == "doctor_joint") return svg_joint_heatmap(all);
    return "<p>No chart " + xml_escape(chart) + ".</p>\n";
}

std::string doctor_chart_title(const std::string& chart) {
    if (chart == "doctor_position") return "mean |delta| by response position";
    if (chart == "doctor_prob") return "mean |delta| by rollout probability";
    if (chart == "doctor_joint") return "density of (p_T, p_E) on a log-odds scale";
    return chart;
}

}  // namespace logratio_cli
