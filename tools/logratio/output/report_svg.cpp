#include "report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include <logratio/runs/runs.hpp>

#include "../model/dump_histogram.hpp"
#include "doctor_report.hpp"
#include "html_svg.hpp"
#include "runs_output.hpp"

namespace logratio_cli {

std::vector<std::string> report_groups(const report_inputs& r) {
    std::vector<std::string> g;
    if (r.analysis)
        for (const auto& x : r.analysis->groups) g.push_back(x.group);
    if (r.runs)
        for (const auto& x : *r.runs)
            if (std::find(g.begin(), g.end(), x.series.group) == g.end()) g.push_back(x.series.group);
    return g;
}

std::string axis_unit(const std::string& axis) { return axis.substr(0, axis.find(" (")); }

std::size_t group_index(const std::vector<std::string>& groups, const std::string& group) {
    return static_cast<std::size_t>(std::find(groups.begin(), groups.end(), group) - groups.begin());
}

namespace {

/// numpy.quantile's default (linear) on sorted values.
double quantile_sorted(const std::vector<double>& v, double q) {
    const double h = q * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(h));
    if (i + 1 >= v.size()) return v.back();
    return v[i] + (h - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

}  // namespace

std::vector<group_band> trend_bands(const std::vector<run_input>& runs, const std::vector<std::string>& groups) {
    std::vector<std::map<double, std::vector<double>>> at(groups.size() + 1);
    for (const auto& r : runs) {
        auto& m = at[std::min(group_index(groups, r.series.group), groups.size())];
        for (std::size_t i = 0; i < r.series.value.size(); ++i)
            if (std::isfinite(r.series.value[i]) && std::isfinite(r.series.update[i]))
                m[r.series.update[i]].push_back(r.series.value[i]);
    }
    std::vector<group_band> out;
    for (std::size_t g = 0; g < at.size(); ++g) {
        if (at[g].empty()) continue;
        group_band b;
        b.group = g;
        for (auto& kv : at[g]) {
            std::sort(kv.second.begin(), kv.second.end());
            b.x.push_back(kv.first);
            b.lo.push_back(quantile_sorted(kv.second, 0.1));
            b.mid.push_back(quantile_sorted(kv.second, 0.5));
            b.hi.push_back(quantile_sorted(kv.second, 0.9));
            b.count.push_back(kv.second.size());
        }
        out.push_back(std::move(b));
    }
    return out;
}

namespace {

using namespace html_detail;

/// Data ranges of the runs' finite values (x0 > x1 when there is none).
frame trend_frame(const std::vector<run_input>& in) {
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (const auto& r : in)
        for (std::size_t i = 0; i < r.series.value.size(); ++i)
            if (std::isfinite(r.series.value[i]) && std::isfinite(r.series.update[i])) {
                x0 = std::min(x0, r.series.update[i]);
                x1 = std::max(x1, r.series.update[i]);
                y0 = std::min(y0, r.series.value[i]);
                y1 = std::max(y1, r.series.value[i]);
            }
    if (x1 == x0) x1 = x0 + 1;
    if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0) * 0.1);
    const double pad = (y1 - y0) * 0.05;
    return frame{x0, x1, y0 - pad, y1 + pad};
}

std::string polyline(const std::string& pts, const char* colour, const std::string& title, double width = 1.4) {
    return "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-opacity=\"0.7\" stroke-width=\"" +
           f(width) + "\" points=\"" + pts + "\"><title>" + xml_escape(title) + "</title></polyline>\n";
}

/// One line per run; missing values break the line (never interpolated).
std::string trend_lines(const frame& fr, const std::vector<run_input>& in, const std::vector<std::string>& groups) {
    std::string s;
    for (const auto& r : in) {
        const char* colour = palette(group_index(groups, r.series.group));
        std::string pts;
        for (std::size_t i = 0; i <= r.series.value.size(); ++i) {
            if (i < r.series.value.size() && std::isfinite(r.series.value[i])) {
                pts += f(fr.px(r.series.update[i])) + "," + f(fr.py(r.series.value[i])) + " ";
                continue;
            }
            if (!pts.empty()) s += polyline(pts, colour, r.series.run + " (" + r.series.group + ")");
            pts.clear();
        }
    }
    return s;
}

/// Per group: the 10-90% envelope (a filled polygon) and the median line.
std::string trend_band_shapes(const frame& fr, const std::vector<group_band>& bands,
                              const std::vector<std::string>& groups) {
    std::string s;
    for (const auto& b : bands) {
        const std::string name = b.group < groups.size() ? groups[b.group] : "?";
        std::string up, down, mid;
        for (std::size_t i = 0; i < b.x.size(); ++i) {
            up += f(fr.px(b.x[i])) + "," + f(fr.py(b.hi[i])) + " ";
            mid += f(fr.px(b.x[i])) + "," + f(fr.py(b.mid[i])) + " ";
        }
        for (std::size_t i = b.x.size(); i-- > 0;) down += f(fr.px(b.x[i])) + "," + f(fr.py(b.lo[i])) + " ";
        s += "<polygon fill=\"" + std::string(palette(b.group)) + "\" fill-opacity=\"0.18\" stroke=\"none\" points=\"" +
             up + down + "\"><title>" + xml_escape(name + ": 10-90% of runs") + "</title></polygon>\n";
        s += polyline(mid, palette(b.group), name + ": median of runs", 2.2);
    }
    return s;
}

std::string legend(const frame& fr, const std::vector<std::string>& groups) {
    std::string s;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const double y = fr.T + 16 + 16.0 * static_cast<double>(g);
        s += "<rect x=\"" + f(fr.W - fr.R - 120) + "\" y=\"" + f(y - 9) + "\" width=\"12\" height=\"12\" fill=\"" +
             palette(g) + "\"/><text x=\"" + f(fr.W - fr.R - 102) + "\" y=\"" + f(y + 1) + "\">" +
             xml_escape(groups[g]) + "</text>\n";
    }
    return s;
}

std::string svg_trend(const report_inputs& r) {
    static const std::vector<run_input> none;
    const auto& in = r.runs ? *r.runs : none;
    const frame fr = trend_frame(in);
    if (!(fr.x0 <= fr.x1)) return "<p>No values to plot.</p>\n";
    const auto groups = report_groups(r);
    std::string s = svg_open(fr, report_chart_title(r, "trend"));
    s += axes(fr, r.axis, r.metric);
    s += in.size() > many_runs ? trend_band_shapes(fr, trend_bands(in, groups), groups) : trend_lines(fr, in, groups);
    return s + legend(fr, groups) + "</svg>\n";
}

/// y range of the group means, their intervals and the run means.
bool group_range(const logratio::runs_analysis& a, double& y0, double& y1) {
    y0 = INFINITY;
    y1 = -INFINITY;
    auto take = [&](double v) {
        if (!std::isfinite(v)) return;
        y0 = std::min(y0, v);
        y1 = std::max(y1, v);
    };
    for (const auto& g : a.groups)
        for (double v : {g.mean_of_means.mean, g.mean_of_means.low, g.mean_of_means.high}) take(v);
    for (const auto& r : a.runs) take(r.summary.mean);
    if (!std::isfinite(y0)) return false;
    if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0) * 0.1);
    return true;
}

/// One group: its runs' means (jittered dots, at most 400 drawn), the mean
/// of means with its interval, the label.
std::string group_column(const frame& fr, const logratio::runs_analysis& a, std::size_t g) {
    const auto& G = a.groups[g];
    const double cx = fr.px(static_cast<double>(g) + 0.35), width = fr.px(1) - fr.px(0);
    std::string s;
    std::size_t k = 0;
    for (const auto& r : a.runs)
        if (r.group == G.group && std::isfinite(r.summary.mean) && k < 400) {
            const double jitter = (static_cast<double>(k++ % 9) - 4.0) * width * 0.025;
            s += "<circle cx=\"" + f(cx + width * 0.3 + jitter) + "\" cy=\"" + f(fr.py(r.summary.mean)) +
                 "\" r=\"3\" fill=\"" + palette(g) + "\" fill-opacity=\"0.5\"><title>" +
                 xml_escape(r.run + ": " + fmt(r.summary.mean)) + "</title></circle>\n";
        }
    if (std::isfinite(G.mean_of_means.low))
        s += "<line x1=\"" + f(cx) + "\" x2=\"" + f(cx) + "\" y1=\"" + f(fr.py(G.mean_of_means.low)) + "\" y2=\"" +
             f(fr.py(G.mean_of_means.high)) + "\" stroke=\"" + palette(g) + "\" stroke-width=\"3\"/>\n";
    if (std::isfinite(G.mean_of_means.mean))
        s += "<circle cx=\"" + f(cx) + "\" cy=\"" + f(fr.py(G.mean_of_means.mean)) + "\" r=\"6\" fill=\"" +
             palette(g) + "\"><title>" +
             xml_escape(G.group + ": mean " + fmt(G.mean_of_means.mean) + " [" + fmt(G.mean_of_means.low) + ", " +
                        fmt(G.mean_of_means.high) + "]") +
             "</title></circle>\n";
    s += "<text x=\"" + f(fr.px(static_cast<double>(g) + 0.5)) + "\" y=\"" + f(fr.H - fr.B + 18) +
         "\" text-anchor=\"middle\">" + xml_escape(G.group + " (" + std::to_string(G.runs) + (G.runs == 1 ? " run)" : " runs)")) + "</text>\n";
    return s;
}

/// Each group's mean of run means with its 95% interval (and the run means).
std::string svg_group_chart(const report_inputs& r) {
    double y0 = 0, y1 = 0;
    if (!r.analysis || !group_range(*r.analysis, y0, y1)) return "<p>No group means.</p>\n";
    const auto& a = *r.analysis;
    const double pad = (y1 - y0) * 0.08;
    frame fr{0, static_cast<double>(std::max<std::size_t>(1, a.groups.size())), y0 - pad, y1 + pad};
    fr.W = 440;
    std::string s = svg_open(fr, report_chart_title(r, "group_means"));
    s += "<rect x=\"" + f(fr.L) + "\" y=\"" + f(fr.T) + "\" width=\"" + f(fr.W - fr.L - fr.R) + "\" height=\"" +
         f(fr.H - fr.T - fr.B) + "\" fill=\"#fafafa\" stroke=\"#888\"/>\n";
    for (double v : ticks(fr.y0, fr.y1, 5))
        s += "<line x1=\"" + f(fr.L) + "\" x2=\"" + f(fr.W - fr.R) + "\" y1=\"" + f(fr.py(v)) + "\" y2=\"" +
             f(fr.py(v)) + "\" stroke=\"#e4e4e4\"/><text x=\"" + f(fr.L - 6) + "\" y=\"" + f(fr.py(v) + 4) +
             "\" text-anchor=\"end\">" + xml_escape(fmt(v, "%.3g")) + "</text>\n";
    s += "<text x=\"14\" y=\"" + f((fr.T + fr.H - fr.B) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         f((fr.T + fr.H - fr.B) / 2) + ")\">" + xml_escape("mean " + r.metric) + "</text>\n";
    for (std::size_t g = 0; g < a.groups.size(); ++g) s += group_column(fr, a, g);
    return s + "</svg>\n";
}

/// Histogram of one dump's delta on a log count axis.
std::string svg_histogram(const dump_histogram& h) {
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

std::string report_chart_svg(const report_inputs& r, const std::string& chart) {
    if (chart == "trend") return svg_trend(r);
    if (chart == "group_means") return svg_group_chart(r);
    if (chart == "histogram") return r.histogram ? svg_histogram(*r.histogram) : "<p>No dump.</p>\n";
    if (r.doctor) return doctor_chart_svg(*r.doctor, chart);
    return "<p>No chart " + xml_escape(chart) + ".</p>\n";
}

std::string report_chart_title(const report_inputs& r, const std::string& chart) {
    if (chart == "trend")
        return r.metric + " per " + axis_unit(r.axis) +
               (r.runs && r.runs->size() > many_runs ? ", median and 10-90% of runs per group" : ", one line per run");
    if (chart == "group_means") return "mean of run means per group with 95% confidence intervals";
    if (chart == "histogram") return r.histogram ? "histogram of delta in " + r.histogram->path : "histogram";
    return doctor_chart_title(chart);
}

}  // namespace logratio_cli
