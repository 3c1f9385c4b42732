#include "report_sections.hpp"

#include <algorithm>
#include <cmath>

#include <logratio/core/version.hpp>
#include <logratio/runs/runs.hpp>

#include "../model/dump_histogram.hpp"
#include "doctor_report.hpp"
#include "report_svg.hpp"
#include "runs_output.hpp"

namespace logratio_cli {

namespace {

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(' ');
    return a == std::string::npos ? "" : s.substr(a);
}

/// What the numeric-vs-lag split says of a group ("lag", "numeric", "" when
/// it has no split line). split_lines ends each line with its judgement.
std::string split_of(const report_inputs& r, const std::string& group) {
    for (const auto& l : r.split) {
        const std::string t = trim(l);
        if (t.compare(0, group.size() + 2, group + " (") != 0) continue;
        if (t.find("staleness dominates") != std::string::npos) return "lag";
        if (t.find("kernels/precision dominate") != std::string::npos) return "numeric";
    }
    return "";
}

std::string unit(const std::string& axis) { return axis_unit(axis); }

/// The count column's header: "updates", else "steps".
std::string count_header(const std::string& axis) { return axis == "update" ? "updates" : "steps"; }

std::string group_phrase(const logratio::group_stats& g, const std::string& axis) {
    const std::string slope = fmt(g.mean_slope.mean, "%.2g") + " per " + axis;
    const std::string runs = std::to_string(g.rising) + "/" + std::to_string(g.runs) + " runs";
    switch (logratio::verdict_of(g)) {
        case logratio::trend_verdict::grows: return g.group + ": mismatch grows " + slope + " in " + runs;
        case logratio::trend_verdict::probably_grows:
            return g.group + ": mismatch probably grows (" + slope + ", " + runs + " rise)";
        case logratio::trend_verdict::shrinks: return g.group + ": mismatch shrinks " + slope;
        case logratio::trend_verdict::no_clear_trend: break;
    }
    return g.group + " flat (no clear trend)";
}

/// "the difference is policy lag, not numerics": the split of the first
/// group whose mismatch grows, else of every group that has one.
std::string cause_phrase(const report_inputs& r) {
    if (r.split.empty() || !r.analysis) return "";
    for (const auto& g : r.analysis->groups) {
        const auto v = logratio::verdict_of(g);
        if (v != logratio::trend_verdict::grows && v != logratio::trend_verdict::probably_grows) continue;
        const std::string s = split_of(r, g.group);
        const std::string what = r.analysis->comparison ? "the difference" : "the growth";
        if (s == "lag") return what + " is policy lag, not numerics";
        if (s == "numeric") return what + " is numerics (kernels/precision), not policy lag";
    }
    std::string all;
    for (const auto& g : r.analysis->groups) {
        const std::string s = split_of(r, g.group);
        if (s.empty()) continue;
        if (all.empty()) all = s;
        if (all != s) return "";
    }
    if (all == "lag") return "the mismatch is mostly policy lag, not numerics";
    if (all == "numeric") return "the mismatch is mostly numerics, not policy lag";
    return "";
}

}  // namespace

std::string report_headline(const report_inputs& r) {
    if (!r.analysis || r.analysis->groups.empty()) return r.metric + ": no run has values";
    std::string s;
    for (const auto& g : r.analysis->groups) s += (s.empty() ? "" : "; ") + group_phrase(g, unit(r.axis));
    const std::string cause = cause_phrase(r);
    if (!cause.empty()) s += "; " + cause;
    return s;
}

namespace {

report_section verdict_section(const report_inputs& r) {
    report_section s;
    s.id = "verdict";
    s.title = "Verdict";
    s.paragraphs.push_back(report_headline(r));
    if (!r.source_line.empty()) s.paragraphs.push_back(r.source_line);
    // verdict_lines says "per update"; the report says per its axis
    for (const auto& l : r.verdict) {
        std::string t = trim(l);
        for (std::size_t p = 0; r.axis != "update" && (p = t.find(" per update", p)) != std::string::npos;) {
            t.replace(p, 11, " per " + unit(r.axis));
            p += 5;
        }
        s.details.push_back(t);
    }
    for (const auto& l : r.split) s.details.push_back(trim(l));
    s.details_summary = "the verdict in full, as logratio report prints it";
    return s;
}

report_table group_table(const report_inputs& r) {
    report_table t;
    t.caption = "Groups: mean of run means and mean OLS slope (per " + unit(r.axis) + "), 95% intervals";
    t.header = {"group", "runs", count_header(r.axis), "mean", "95% CI", "mean slope", "slope 95% CI", "rising runs"};
    t.numeric = {false, true, true, true, true, true, true, true};
    for (const auto& g : r.analysis->groups)
        t.rows.push_back({g.group, std::to_string(g.runs), std::to_string(g.updates), fmt(g.mean_of_means.mean),
                          "[" + fmt(g.mean_of_means.low) + ", " + fmt(g.mean_of_means.high) + "]",
                          fmt(g.mean_slope.mean, "%.3g"),
                          "[" + fmt(g.mean_slope.low, "%.3g") + ", " + fmt(g.mean_slope.high, "%.3g") + "]",
                          std::to_string(g.rising) + "/" + std::to_string(g.runs)});
    return t;
}

report_section trend_section(const report_inputs& r) {
    report_section s;
    s.id = "trend";
    s.title = r.metric + " per " + unit(r.axis) + ", and the groups";
    const std::size_t n = r.runs ? r.runs->size() : 0;
    s.paragraphs.push_back(n > many_runs ? std::to_string(n) + " runs: per group, the median and the 10-90% band of "
                                               "its runs at each " + unit(r.axis) + " (the page draws the runs on demand)."
                                         : "One line per run, coloured by group; a gap is a missing value, never "
                                           "interpolated. Right: each group's mean of run means with its 95% interval.");
    s.charts = {"trend", "group_means"};
    s.charts_first = true;
    s.tables.push_back(group_table(r));
    if (r.analysis->comparison) {
        const auto& c = *r.analysis->comparison;
        s.lines.push_back(c.a + " \u2212 " + c.b + ": mean difference " + fmt(c.means.mean_diff) + " [95% CI " +
                               fmt(c.means.ci_low) + ", " + fmt(c.means.ci_high) + "], Welch t = " + fmt(c.means.t) +
                               " (df " + fmt(c.means.df) + "), " + p_phrase(c.means.pvalue, "%.3g") +
                               "; Mann\u2013Whitney U = " + fmt(c.mann_whitney.u) + ", " +
                               p_phrase(c.mann_whitney.pvalue, "%.3g") + "; slopes: Welch " +
                               p_phrase(c.slopes.pvalue, "%.3g") + ".");
    }
    return s;
}

report_section runs_section(const report_inputs& r) {
    report_section s;
    s.id = "runs";
    s.title = "Runs";
    report_table t;
    t.header = {"run", "group", count_header(r.axis), "mean", "max", "OLS slope", "95% CI", "p", "Theil\u2013Sen",
                "Kendall \u03c4", "\u03c4 p"};
    t.numeric = {false, false, true, true, true, true, true, true, true, true, true};
    std::vector<const logratio::run_stats*> order;
    for (const auto& x : r.analysis->runs) order.push_back(&x);
    constexpr std::size_t top = 50;
    if (order.size() > top) {  // the steepest runs first (NaN slopes last)
        auto key = [](const logratio::run_stats* x) { return std::isfinite(x->ols.slope) ? std::fabs(x->ols.slope) : -1.0; };
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return key(a) > key(b); });
        t.shown = top;
        s.paragraphs.push_back(std::to_string(order.size()) + " runs, the " + std::to_string(top) +
                               " with the largest |OLS slope| first.");
    }
    for (const auto* x : order)
        t.rows.push_back({x->run, x->group, std::to_string(x->updates), fmt(x->summary.mean), fmt(x->summary.max),
                          fmt(x->ols.slope, "%.3g"),
                          "[" + fmt(x->ols.slope_ci_low, "%.3g") + ", " + fmt(x->ols.slope_ci_high, "%.3g") + "]",
                          p_cell(x->ols.pvalue, "%.2g"), fmt(x->theil_sen.slope, "%.3g"), fmt(x->kendall.tau, "%.3f"),
                          p_cell(x->kendall.pvalue, "%.2g")});
    t.caption = "Per run: OLS and Theil\u2013Sen slopes per " + unit(r.axis) + ", Kendall's \u03c4";
    s.tables.push_back(std::move(t));
    return s;
}

report_section histogram_section(const dump_histogram& h) {
    report_section s;
    s.id = "histogram";
    s.title = "\u03b4 in one dump";
    s.level = 3;
    s.paragraphs.push_back(h.path + ": " + std::to_string(h.tokens) + " tokens; " + std::to_string(h.below) +
                           " below and " + std::to_string(h.above) + " above the plotted range.");
    s.charts = {"histogram"};
    s.charts_first = true;
    report_table t;
    t.header = {"tail quantile", "value"};
    t.numeric = {false, true};
    for (const auto& q : h.quantiles) t.rows.push_back({q.first, fmt(q.second, "%.4g")});
    s.tables.push_back(std::move(t));
    return s;
}

/// The evidence heading and its parts (none: no section at all).
void add_evidence(const report_inputs& r, std::vector<report_section>& out) {
    std::vector<report_section> parts;
    if (r.doctor && !r.doctor->empty()) parts.push_back(doctor_section(*r.doctor));
    if (r.histogram) parts.push_back(histogram_section(*r.histogram));
    if (!r.split.empty()) {
        report_section s;
        s.id = "split";
        s.title = "Numeric mismatch vs policy lag";
        s.level = 3;
        s.paragraphs.push_back("Per token, delta = numeric + lag: numeric = l_T(old) - l_E, lag = l_T(new) - l_T(old) "
                               "(dumps with old_logprobs).");
        for (const auto& l : r.split) s.lines.push_back(trim(l));
        parts.push_back(std::move(s));
    }
    if (parts.empty() && r.doctor_html.empty()) return;
    report_section e;
    e.id = "evidence";
    e.title = "Evidence";
    e.paragraphs.push_back("What the verdict rests on: the doctor's checks of the dumps, the distribution of \u03b4 "
                           "in the worst dump, the split of the mismatch into numerics and policy lag.");
    out.push_back(std::move(e));
    for (auto& p : parts) out.push_back(std::move(p));
}

report_section zero_grad_section(const report_inputs& r) {
    report_section s;
    s.id = "zero-grad";
    s.title = "Updates with zero gradient norm";
    report_table t;
    t.header = {"run", count_header(r.axis)};
    for (const auto& x : *r.runs)
        if (!x.zero_grad_norm.empty()) {
            std::string v;
            for (std::size_t i = 0; i < x.zero_grad_norm.size(); ++i) v += (i ? ", " : "") + fmt(x.zero_grad_norm[i], "%g");
            t.rows.push_back({x.series.run, v});
        }
    if (t.rows.empty()) s.paragraphs.push_back("None recorded (no gradient-norm column, or no zero values).");
    else s.tables.push_back(std::move(t));
    return s;
}

report_section sources_section(const report_inputs& r) {
    report_section s;
    s.id = "sources";
    s.title = "Sources";
    s.paragraphs.push_back("Source: " + r.source);
    s.paragraphs.push_back("Generated by logratio " LOGRATIO_VERSION_STRING ".");
    return s;
}

}  // namespace

std::vector<report_section> report_sections(const report_inputs& r) {
    static const std::vector<run_input> no_runs;
    static const logratio::runs_analysis no_analysis;
    report_inputs in = r;  // a shallow copy: null pointers made empty
    if (!in.runs) in.runs = &no_runs;
    if (!in.analysis) in.analysis = &no_analysis;
    std::vector<report_section> out;
    out.push_back(verdict_section(in));
    out.push_back(trend_section(in));
    out.push_back(runs_section(in));
    for (const auto& s : in.analysis_sections) out.push_back(s);
    add_evidence(in, out);
    out.push_back(zero_grad_section(in));
    report_section notes;
    notes.id = "notes";
    notes.title = "Notes";
    for (const auto& x : *in.runs) notes.details.insert(notes.details.end(), x.notes.begin(), x.notes.end());
    notes.details.insert(notes.details.end(), in.analysis->notes.begin(), in.analysis->notes.end());
    if (!notes.details.empty()) {
        notes.details_summary = std::to_string(notes.details.size()) + " note(s) on missing or undefined statistics";
        out.push_back(std::move(notes));
    }
    out.push_back(sources_section(in));
    for (const auto& s : in.source_sections) out.push_back(s);
    return out;
}

}  // namespace logratio_cli
